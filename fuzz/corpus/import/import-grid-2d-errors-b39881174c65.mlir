shard.grid @grid(shape = 2x2)
func.func @axis0_minor(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %s = shard.sharding @grid split_axes = [[1, 0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<8x16xf32>
  return %xs : tensor<8x16xf32>
}
