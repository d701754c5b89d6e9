shard.grid @grid(shape = 2x2)
func.func @not_divisible(%x: tensor<7x16xf32>) -> tensor<7x16xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<7x16xf32>
  return %xs : tensor<7x16xf32>
}
