// Col-wise (weight split along N = 10) over W = 3, uneven (chunks 4, 4, 2)
// and permuted (held by ranks 1, 2, 0), without a bias.
func.func @main(%x: tensor<5x7xf32>,
                %w: !shardlin.sharded<tensor<10x7xf32>, #shardlin.chunk<dim = 0, placements = [1, 2, 0]>>) -> tensor<5x10xf32> {
  %y = shardlin.linear %x, %w : (tensor<5x7xf32>, !shardlin.sharded<tensor<10x7xf32>, #shardlin.chunk<dim = 0, placements = [1, 2, 0]>>) -> tensor<5x10xf32>
  return %y : tensor<5x10xf32>
}
