// Col-wise (N = 11 over W = 3 in chunks 4, 4, 3 held by ranks 1, 2, 0) with
// rows known only at run time.
func.func @main(%x: tensor<?x19xf32>,
                %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [1, 2, 0]>>,
                %b: tensor<11xf32>) -> tensor<?x11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<?x19xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [1, 2, 0]>>, tensor<11xf32>) -> tensor<?x11xf32>
  return %y : tensor<?x11xf32>
}
