shard.grid @grid(shape = 2)
// A 3-D activation split along its batch, collapsed to rows around the
// matmul: one linear on the rank's 3-D part (rows -> rows), no reshape.
func.func @nd(%x: tensor<2x4x16xf32>, %w: tensor<16x12xf32>) -> tensor<2x4x12xf32> {
  %sb = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %sn = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %sb : tensor<2x4x16xf32>
  %ws = shard.shard %w to %sn : tensor<16x12xf32>
  %x2 = tensor.collapse_shape %xs [[0, 1], [2]] : tensor<2x4x16xf32> into tensor<8x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x12xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<8x12xf32>) -> tensor<8x12xf32>
  %y2 = linalg.matmul ins(%x2, %ws : tensor<8x16xf32>, tensor<16x12xf32>) outs(%i : tensor<8x12xf32>) -> tensor<8x12xf32>
  %y = tensor.expand_shape %y2 [[0, 1], [2]] output_shape [2, 4, 12] : tensor<8x12xf32> into tensor<2x4x12xf32>
  return %y : tensor<2x4x12xf32>
}
