// Col-wise (weight split along N = 11) over W = 4, uneven (chunks 3, 3, 3, 2)
// and permuted (held by ranks 3, 0, 2, 1), with a bias.
func.func @main(%x: tensor<5x19xf32>,
                %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [3, 0, 2, 1]>>,
                %b: tensor<11xf32>) -> tensor<5x11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<5x19xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [3, 0, 2, 1]>>, tensor<11xf32>) -> tensor<5x11xf32>
  return %y : tensor<5x11xf32>
}
