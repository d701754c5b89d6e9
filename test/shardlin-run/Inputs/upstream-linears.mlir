// Upstream-form linears (issue 29) for import.mlir and import-mpi.mlir: N x K
// weights (MLIR 22's transposing indexing_maps, npytool's w.npy as it is)
// split at uneven sharded_dims_offsets with an empty shard, a bias added by
// a broadcasting linalg.generic.
shard.grid @tp(shape = 4)
#nk = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
#id = affine_map<(d0, d1) -> (d0, d1)>
#bc = affine_map<(d0, d1) -> (d1)>

// Col-wise: 10 sequence-sharded rows at [0, 0, 2, 5, 10] (rank 0 has none),
// N = 10 at [0, 4, 4, 8, 10] (rank 1 holds no feature); the result split
// as x.
func.func @col_uneven(%x: tensor<10x16xf32>, %w: tensor<10x16xf32>, %b: tensor<10xf32>) -> tensor<10x10xf32> {
  %rows = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 0, 2, 5, 10] : !shard.sharding
  %sn = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 4, 4, 8, 10] : !shard.sharding
  %xs = shard.shard %x to %rows : tensor<10x16xf32>
  %ws = shard.shard %w to %sn : tensor<10x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<10x10xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<10x10xf32>) -> tensor<10x10xf32>
  %mm = linalg.matmul indexing_maps = #nk ins(%xs, %ws : tensor<10x16xf32>, tensor<10x16xf32>) outs(%i : tensor<10x10xf32>) -> tensor<10x10xf32>
  %e2 = tensor.empty() : tensor<10x10xf32>
  %y = linalg.generic {indexing_maps = [#id, #bc, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<10x10xf32>, tensor<10xf32>) outs(%e2 : tensor<10x10xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<10x10xf32>
  %ys = shard.shard %y to %rows : tensor<10x10xf32>
  return %ys : tensor<10x10xf32>
}

// Row-wise: x replicated, K = 16 at [0, 7, 7, 12, 16], the result
// replicated: an all_reduce of the partial products, then the bias.
func.func @row_uneven(%x: tensor<10x16xf32>, %w: tensor<10x16xf32>, %b: tensor<10xf32>) -> tensor<10x10xf32> {
  %repl = shard.sharding @tp split_axes = [[]] : !shard.sharding
  %sk = shard.sharding @tp split_axes = [[], [0]] sharded_dims_offsets = [0, 7, 7, 12, 16] : !shard.sharding
  %xs = shard.shard %x to %repl : tensor<10x16xf32>
  %ws = shard.shard %w to %sk : tensor<10x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<10x10xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<10x10xf32>) -> tensor<10x10xf32>
  %mm = linalg.matmul indexing_maps = #nk ins(%xs, %ws : tensor<10x16xf32>, tensor<10x16xf32>) outs(%i : tensor<10x10xf32>) -> tensor<10x10xf32>
  %e2 = tensor.empty() : tensor<10x10xf32>
  %y = linalg.generic {indexing_maps = [#id, #bc, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<10x10xf32>, tensor<10xf32>) outs(%e2 : tensor<10x10xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<10x10xf32>
  %ys = shard.shard %y to %repl : tensor<10x10xf32>
  return %ys : tensor<10x10xf32>
}

// Col-wise with the weight annotated for its users (annotate_for_users on an
// argument): the argument is the whole weight on every rank, of which the
// linear takes the rank's chunk (local_chunk, then from_local: the lowering's
// local_shard of it is that chunk). x and the result replicated.
func.func @col_for_users(%x: tensor<10x16xf32>, %w: tensor<10x16xf32>, %b: tensor<10xf32>) -> tensor<10x10xf32> {
  %repl = shard.sharding @tp split_axes = [[]] : !shard.sharding
  %sn = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 4, 4, 8, 10] : !shard.sharding
  %xs = shard.shard %x to %repl : tensor<10x16xf32>
  %ws = shard.shard %w to %sn annotate_for_users : tensor<10x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<10x10xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<10x10xf32>) -> tensor<10x10xf32>
  %mm = linalg.matmul indexing_maps = #nk ins(%xs, %ws : tensor<10x16xf32>, tensor<10x16xf32>) outs(%i : tensor<10x10xf32>) -> tensor<10x10xf32>
  %e2 = tensor.empty() : tensor<10x10xf32>
  %y = linalg.generic {indexing_maps = [#id, #bc, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<10x10xf32>, tensor<10xf32>) outs(%e2 : tensor<10x10xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<10x10xf32>
  %ys = shard.shard %y to %repl : tensor<10x10xf32>
  return %ys : tensor<10x10xf32>
}
