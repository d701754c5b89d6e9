// Row-wise (K split), W = 2, permuted placements, with a bias.
func.func @main(%x: tensor<3x5xf32>,
                %w: !shardlin.sharded<tensor<4x5xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>,
                %b: tensor<4xf32>) -> tensor<3x4xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<3x5xf32>, !shardlin.sharded<tensor<4x5xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, tensor<4xf32>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}
