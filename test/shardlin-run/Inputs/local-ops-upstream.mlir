// The import of an N-D linear whose features the grid does not divide
// (sharded_dims_offsets [0, 6, 9, 15, 15]: 6, 3, 6 and 0 features),
// reshaped after: the import sizes the rank's chunk of the expanded
// features with `arith.divui` of a `tensor.dim` (for local-ops.mlir).
shard.grid @tp(shape = 4)
#nk = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
#id = affine_map<(d0, d1) -> (d0, d1)>
#bc = affine_map<(d0, d1) -> (d1)>
func.func @expand_features(%x: tensor<2x3x8xf32>, %w: tensor<15x8xf32>, %b: tensor<15xf32>) -> tensor<2x3x5x3xf32> {
  %repl = shard.sharding @tp split_axes = [[]] : !shard.sharding
  %sn = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 6, 9, 15, 15] : !shard.sharding
  %sf = shard.sharding @tp split_axes = [[], [], [0]] sharded_dims_offsets = [0, 6, 9, 15, 15] : !shard.sharding
  %se = shard.sharding @tp split_axes = [[], [], [0]] sharded_dims_offsets = [0, 2, 3, 5, 5] : !shard.sharding
  %xs = shard.shard %x to %repl : tensor<2x3x8xf32>
  %ws = shard.shard %w to %sn : tensor<15x8xf32>
  %x2 = tensor.collapse_shape %xs [[0, 1], [2]] : tensor<2x3x8xf32> into tensor<6x8xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6x15xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<6x15xf32>) -> tensor<6x15xf32>
  %mm = linalg.matmul indexing_maps = #nk ins(%x2, %ws : tensor<6x8xf32>, tensor<15x8xf32>) outs(%i : tensor<6x15xf32>) -> tensor<6x15xf32>
  %e2 = tensor.empty() : tensor<6x15xf32>
  %y = linalg.generic {indexing_maps = [#id, #bc, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<6x15xf32>, tensor<15xf32>) outs(%e2 : tensor<6x15xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<6x15xf32>
  %y3 = tensor.expand_shape %y [[0, 1], [2]] output_shape [2, 3, 15] : tensor<6x15xf32> into tensor<2x3x15xf32>
  %ys = shard.shard %y3 to %sf : tensor<2x3x15xf32>
  %z = tensor.expand_shape %ys [[0], [1], [2, 3]] output_shape [2, 3, 5, 3] : tensor<2x3x15xf32> into tensor<2x3x5x3xf32>
  %zs = shard.shard %z to %se : tensor<2x3x5x3xf32>
  return %zs : tensor<2x3x5x3xf32>
}
