// Upstream-form col-wise linears on a grid of 3 whose x is replicated (no
// split: the same x on every rank) and whose result is replicated, for
// replicated-check.mlir and replicated-check-mpi.mlir: N x K weights split
// on N (the rows of w.npy), a broadcasting bias. The import marks x and b
// `shardlin.replicated`; the runtime checks that every rank passes the same.
shard.grid @tp(shape = 3)
#nk = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
#id = affine_map<(d0, d1) -> (d0, d1)>
#bc = affine_map<(d0, d1) -> (d1)>

// 4 rows of x, N = 12 over 3 ranks.
func.func @col_replicated(%x: tensor<4x16xf32>, %w: tensor<12x16xf32>, %b: tensor<12xf32>) -> tensor<4x12xf32> {
  %repl = shard.sharding @tp split_axes = [[]] : !shard.sharding
  %sn = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %repl : tensor<4x16xf32>
  %ws = shard.shard %w to %sn : tensor<12x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x12xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<4x12xf32>) -> tensor<4x12xf32>
  %mm = linalg.matmul indexing_maps = #nk ins(%xs, %ws : tensor<4x16xf32>, tensor<12x16xf32>) outs(%i : tensor<4x12xf32>) -> tensor<4x12xf32>
  %e2 = tensor.empty() : tensor<4x12xf32>
  %y = linalg.generic {indexing_maps = [#id, #bc, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<4x12xf32>, tensor<12xf32>) outs(%e2 : tensor<4x12xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<4x12xf32>
  %ys = shard.shard %y to %repl : tensor<4x12xf32>
  return %ys : tensor<4x12xf32>
}

// The same with a dynamic row count: every rank must give the same number.
func.func @col_replicated_rows(%x: tensor<?x16xf32>, %w: tensor<12x16xf32>, %b: tensor<12xf32>) -> tensor<?x12xf32> {
  %repl = shard.sharding @tp split_axes = [[]] : !shard.sharding
  %sn = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %repl : tensor<?x16xf32>
  %ws = shard.shard %w to %sn : tensor<12x16xf32>
  %c0 = arith.constant 0 : index
  %rows = tensor.dim %x, %c0 : tensor<?x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%rows) : tensor<?x12xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<?x12xf32>) -> tensor<?x12xf32>
  %mm = linalg.matmul indexing_maps = #nk ins(%xs, %ws : tensor<?x16xf32>, tensor<12x16xf32>) outs(%i : tensor<?x12xf32>) -> tensor<?x12xf32>
  %e2 = tensor.empty(%rows) : tensor<?x12xf32>
  %y = linalg.generic {indexing_maps = [#id, #bc, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<?x12xf32>, tensor<12xf32>) outs(%e2 : tensor<?x12xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<?x12xf32>
  %ys = shard.shard %y to %repl : tensor<?x12xf32>
  return %ys : tensor<?x12xf32>
}
