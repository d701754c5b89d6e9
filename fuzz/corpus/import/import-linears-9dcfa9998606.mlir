shard.grid @grid(shape = 4)
// N x K through a linalg.transpose, split on N with explicit offsets (an
// empty chunk); the bias added by linalg.broadcast + linalg.add.
func.func @nk_transpose_broadcast_add(%x: tensor<8x16xf32>, %w: tensor<10x16xf32>, %b: tensor<10xf32>) -> tensor<8x10xf32> {
  %sn = shard.sharding @grid split_axes = [[0]] sharded_dims_offsets = [0, 4, 4, 8, 10] : !shard.sharding
  %ws = shard.shard %w to %sn : tensor<10x16xf32>
  %te = tensor.empty() : tensor<16x10xf32>
  %wt = linalg.transpose ins(%ws : tensor<10x16xf32>) outs(%te : tensor<16x10xf32>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x10xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<8x10xf32>) -> tensor<8x10xf32>
  %mm = linalg.matmul ins(%x, %wt : tensor<8x16xf32>, tensor<16x10xf32>) outs(%i : tensor<8x10xf32>) -> tensor<8x10xf32>
  %e2 = tensor.empty() : tensor<8x10xf32>
  %bb = linalg.broadcast ins(%b : tensor<10xf32>) outs(%e2 : tensor<8x10xf32>) dimensions = [0]
  %e3 = tensor.empty() : tensor<8x10xf32>
  %y = linalg.add ins(%mm, %bb : tensor<8x10xf32>, tensor<8x10xf32>) outs(%e3 : tensor<8x10xf32>) -> tensor<8x10xf32>
  return %y : tensor<8x10xf32>
}
