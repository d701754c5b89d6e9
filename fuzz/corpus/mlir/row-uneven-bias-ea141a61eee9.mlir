// Row-wise (weight split along K = 19) over W = 4, uneven (chunks 5, 5, 5, 4)
// and permuted (held by ranks 2, 3, 0, 1), with a bias.
func.func @main(%x: tensor<5x19xf32>,
                %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>,
                %b: tensor<11xf32>) -> tensor<5x11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<5x19xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>, tensor<11xf32>) -> tensor<5x11xf32>
  return %y : tensor<5x11xf32>
}
