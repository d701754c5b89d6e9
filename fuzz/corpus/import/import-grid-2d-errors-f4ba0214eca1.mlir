shard.grid @grid(shape = 2x2)
func.func @unsupported(%x: tensor<8x16xf32>) -> tensor<2x16xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<8x16xf32>
  %e = tensor.extract_slice %xs[0, 0] [2, 16] [1, 1] : tensor<8x16xf32> to tensor<2x16xf32>
  return %e : tensor<2x16xf32>
}
