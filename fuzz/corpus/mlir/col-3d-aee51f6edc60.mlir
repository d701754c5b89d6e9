// A 3-D input (batch dims 2 x 3): col-wise over W = 4, N = 7 (chunks 2, 2,
// 2, 1), with a bias.
func.func @main(%x: tensor<2x3x8xf32>,
                %w: !shardlin.sharded<tensor<7x8xf32>, #shardlin.chunk<dim = 0, placements = [1, 0, 3, 2]>>,
                %b: tensor<7xf32>) -> tensor<2x3x7xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<2x3x8xf32>, !shardlin.sharded<tensor<7x8xf32>, #shardlin.chunk<dim = 0, placements = [1, 0, 3, 2]>>, tensor<7xf32>) -> tensor<2x3x7xf32>
  return %y : tensor<2x3x7xf32>
}
