shard.grid @grid(shape = 2)
// A replicated 3-D activation: the reshapes stay, rank-local, around a 2-D
// linear.
func.func @nd_replicated(%x: tensor<2x4x16xf32>, %w: tensor<16x12xf32>) -> tensor<2x4x12xf32> {
  %sk = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %ws = shard.shard %w to %sk : tensor<16x12xf32>
  %x2 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x4x16xf32> into tensor<8x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x12xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<8x12xf32>) -> tensor<8x12xf32>
  %y2 = linalg.matmul ins(%x2, %ws : tensor<8x16xf32>, tensor<16x12xf32>) outs(%i : tensor<8x12xf32>) -> tensor<8x12xf32>
  %y = tensor.expand_shape %y2 [[0, 1], [2]] output_shape [2, 4, 12] : tensor<8x12xf32> into tensor<2x4x12xf32>
  return %y : tensor<2x4x12xf32>
}
