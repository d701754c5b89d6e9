// One rank: the whole weight on rank 0, with a bias.
func.func @main(%x: tensor<5x7xf32>,
                %w: !shardlin.sharded<tensor<6x7xf32>, #shardlin.chunk<dim = 1, placements = [0]>>,
                %b: tensor<6xf32>) -> tensor<5x6xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<5x7xf32>, !shardlin.sharded<tensor<6x7xf32>, #shardlin.chunk<dim = 1, placements = [0]>>, tensor<6xf32>) -> tensor<5x6xf32>
  return %y : tensor<5x6xf32>
}
