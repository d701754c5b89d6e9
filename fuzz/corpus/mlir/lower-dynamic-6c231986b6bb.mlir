// Batch dims known only at run time stay dynamic through the lowering, for
// both sharding dims, both strategies, W = 1 and a fused block: the rows and
// the stacked rows of every rank are `?`, and the result gets its batch
// dims back from the input's (tensor.dim into tensor.expand_shape's output
// sizes). The cost model assumes `assumed-rows` rows and says so.

// ZERO: error: lower-sharded-linear: assumed-rows must be >= 1, got 0
// NOTINT: error: lower-sharded-linear: invalid value 'many' for option 'assumed-rows': expected an integer

// Row-wise, N-D input with a dynamic batch dim and a static one, uneven and
// permuted K chunks.


func.func @row(%x: tensor<?x3x19xf32>, %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>, %b: tensor<11xf32>) -> tensor<?x3x11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<?x3x19xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>, tensor<11xf32>) -> tensor<?x3x11xf32>
  return %y : tensor<?x3x11xf32>
}
