shard.grid @grid(shape = 4)
// A result the module states: a K split of a replicated x whose result is
// annotated sequence-sharded is one linear that reduce-scatters the rows
// (at the annotation's offsets), not an all_reduce and a slice.
func.func @stated_rows(%x: tensor<10x16xf32>, %w: tensor<16x12xf32>) -> tensor<10x12xf32> {
  %sk = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %rows = shard.sharding @grid split_axes = [[0]] sharded_dims_offsets = [0, 4, 4, 8, 10] : !shard.sharding
  %ws = shard.shard %w to %sk : tensor<16x12xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<10x12xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<10x12xf32>) -> tensor<10x12xf32>
  %y = linalg.matmul ins(%x, %ws : tensor<10x16xf32>, tensor<16x12xf32>) outs(%i : tensor<10x12xf32>) -> tensor<10x12xf32>
  %ys = shard.shard %y to %rows : tensor<10x12xf32>
  return %ys : tensor<10x12xf32>
}
