shard.grid @grid(shape = 4)
// N x K through a transposing indexing_maps (MLIR 22's form), split on K:
// replicated -> replicated with an all_reduce in the lowering.
func.func @nk_map(%x: tensor<8x16xf32>, %w: tensor<12x16xf32>) -> tensor<8x12xf32> {
  %sk = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %ws = shard.shard %w to %sk : tensor<12x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x12xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<8x12xf32>) -> tensor<8x12xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%x, %ws : tensor<8x16xf32>, tensor<12x16xf32>) outs(%i : tensor<8x12xf32>) -> tensor<8x12xf32>
  return %y : tensor<8x12xf32>
}
