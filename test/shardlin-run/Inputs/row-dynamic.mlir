// Row-wise (K = 19 over W = 4 in chunks 5, 5, 5, 4 held by ranks 2, 3, 0, 1)
// with a batch dim known only at run time: each rank's input file gives its
// own size (they may differ, and be 0).
func.func @main(%x: tensor<?x3x19xf32>,
                %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>,
                %b: tensor<11xf32>) -> tensor<?x3x11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<?x3x19xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>, tensor<11xf32>) -> tensor<?x3x11xf32>
  return %y : tensor<?x3x11xf32>
}
