shard.grid @grid(shape = 2)
func.func @unsupported_op(%x: tensor<4x8xf32>) -> tensor<2x8xf32> {
  %s = tensor.extract_slice %x[0, 0] [2, 8] [1, 1] : tensor<4x8xf32> to tensor<2x8xf32>
  return %s : tensor<2x8xf32>
}
