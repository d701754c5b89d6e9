// Col-wise linear on a 3-D activation (2 x 4 x 16, batch-sharded over 2)
// collapsed to rows around the matmul; batch-sharded result.
shard.grid @grid(shape = 2)

func.func @nd_collapse_expand(%x: tensor<2x4x16xf32>, %w: tensor<16x12xf32>) -> tensor<2x4x12xf32> {
  %sb = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %sn = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %x_s = shard.shard %x to %sb : tensor<2x4x16xf32>
  %x_u = shard.shard %x_s to %sb annotate_for_users : tensor<2x4x16xf32>
  %w_s = shard.shard %w to %sn : tensor<16x12xf32>
  %w_u = shard.shard %w_s to %sn annotate_for_users : tensor<16x12xf32>
  %x2 = tensor.collapse_shape %x_u [[0, 1], [2]] : tensor<2x4x16xf32> into tensor<8x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x12xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x12xf32>) -> tensor<8x12xf32>
  %y2 = linalg.matmul ins(%x2, %w_u : tensor<8x16xf32>, tensor<16x12xf32>) outs(%init : tensor<8x12xf32>) -> tensor<8x12xf32>
  %y = tensor.expand_shape %y2 [[0, 1], [2]] output_shape [2, 4, 12] : tensor<8x12xf32> into tensor<2x4x12xf32>
  %y_s = shard.shard %y to %sb : tensor<2x4x12xf32>
  %y_u = shard.shard %y_s to %sb annotate_for_users : tensor<2x4x12xf32>
  return %y_u : tensor<2x4x12xf32>
}
