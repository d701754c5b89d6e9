shard.grid @grid(shape = 2)
func.func @middle_dim(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<2x4x8xf32>
  %y = math.exp %xs : tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}
