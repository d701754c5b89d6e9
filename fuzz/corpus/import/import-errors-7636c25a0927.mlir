shard.grid @grid(shape = 2)
func.func @integer_argument(%x: tensor<4x8xi32>) -> tensor<4x8xi32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x8xi32>
  return %xs : tensor<4x8xi32>
}
