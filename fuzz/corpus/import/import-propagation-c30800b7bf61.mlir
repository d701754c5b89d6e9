shard.grid @grid(shape = 2)
// The hidden values of a sequence-parallel MLP annotated split along their
// features: rows -> features and features -> rows, one all_gather and one
// reduce_scatter in the lowering.
func.func @stated_features(%x: tensor<4x8xf32>, %w1: tensor<8x12xf32>, %w2: tensor<12x8xf32>) -> tensor<4x8xf32> {
  %rows = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %sn = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %sk = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %rows : tensor<4x8xf32>
  %w1s = shard.shard %w1 to %sn : tensor<8x12xf32>
  %w2s = shard.shard %w2 to %sk : tensor<12x8xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x12xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<4x12xf32>) -> tensor<4x12xf32>
  %h = linalg.matmul ins(%xs, %w1s : tensor<4x8xf32>, tensor<8x12xf32>) outs(%i : tensor<4x12xf32>) -> tensor<4x12xf32>
  %hs = shard.shard %h to %sn : tensor<4x12xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%hs, %w2s : tensor<4x12xf32>, tensor<12x8xf32>) outs(%i2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %ys = shard.shard %y to %rows : tensor<4x8xf32>
  return %ys : tensor<4x8xf32>
}
