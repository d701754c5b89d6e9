// Linear layers as producers write them, imported: each linalg.matmul whose
// weight is split is one shardlin.linear on the sharded weight argument,
// with the orientation (weight_kn), the bias and the layouts recognized;
// nothing else of the matmul's form is left.

shard.grid @grid(shape = 4)
// K x N weight split on N; x unannotated, so replicated: replicated ->
// features. The result keeps the sharding that follows (split along its
// features), so the function returns the global tensor of which each rank
// holds its columns.
func.func @kn(%x: tensor<8x16xf32>, %w: tensor<16x12xf32>) -> tensor<8x12xf32> {
  %sn = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %ws = shard.shard %w to %sn : tensor<16x12xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x12xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<8x12xf32>) -> tensor<8x12xf32>
  %y = linalg.matmul ins(%x, %ws : tensor<8x16xf32>, tensor<16x12xf32>) outs(%i : tensor<8x12xf32>) -> tensor<8x12xf32>
  return %y : tensor<8x12xf32>
}
