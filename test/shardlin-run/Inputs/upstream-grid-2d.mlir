// upstream-linears.mlir's col_uneven on a 2 x 4 grid (import-grid-2d.mlir):
// x's 20 rows split over both axes, each replica's 10 at [0, 0, 2, 5, 10] as
// there; the weight over the tensor-parallel axis 1 at [0, 4, 4, 8, 10],
// replicated over the data-parallel axis 0.
shard.grid @g(shape = 2x4)
#nk = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
#id = affine_map<(d0, d1) -> (d0, d1)>
#bc = affine_map<(d0, d1) -> (d1)>
func.func @col(%x: tensor<20x16xf32>, %w: tensor<10x16xf32>, %b: tensor<10xf32>) -> tensor<20x10xf32> {
  %rows = shard.sharding @g split_axes = [[0, 1]] sharded_dims_offsets = [0, 0, 2, 5, 10, 10, 12, 15, 20] : !shard.sharding
  %sn = shard.sharding @g split_axes = [[1]] sharded_dims_offsets = [0, 4, 4, 8, 10] : !shard.sharding
  %xs = shard.shard %x to %rows : tensor<20x16xf32>
  %ws = shard.shard %w to %sn : tensor<10x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<20x10xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<20x10xf32>) -> tensor<20x10xf32>
  %mm = linalg.matmul indexing_maps = #nk ins(%xs, %ws : tensor<20x16xf32>, tensor<10x16xf32>) outs(%i : tensor<20x10xf32>) -> tensor<20x10xf32>
  %e2 = tensor.empty() : tensor<20x10xf32>
  %y = linalg.generic {indexing_maps = [#id, #bc, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<20x10xf32>, tensor<10xf32>) outs(%e2 : tensor<20x10xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<20x10xf32>
  %ys = shard.shard %y to %rows : tensor<20x10xf32>
  return %ys : tensor<20x10xf32>
}

// A batch of rows known only at run time, split over the replicas alone
// ([[0]]: each replica's rows replicated over its 4 ranks, which split the
// weight's N): each replica runs on however many rows its own input has.
func.func @rows_dynamic(%x: tensor<?x16xf32>, %w: tensor<10x16xf32>) -> tensor<?x10xf32> {
  %batch = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %sn = shard.sharding @g split_axes = [[1]] sharded_dims_offsets = [0, 4, 4, 8, 10] : !shard.sharding
  %xs = shard.shard %x to %batch : tensor<?x16xf32>
  %ws = shard.shard %w to %sn : tensor<10x16xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %xs, %c0 : tensor<?x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x10xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<?x10xf32>) -> tensor<?x10xf32>
  %mm = linalg.matmul indexing_maps = #nk ins(%xs, %ws : tensor<?x16xf32>, tensor<10x16xf32>) outs(%i : tensor<?x10xf32>) -> tensor<?x10xf32>
  %ys = shard.shard %mm to %batch : tensor<?x10xf32>
  return %ys : tensor<?x10xf32>
}
