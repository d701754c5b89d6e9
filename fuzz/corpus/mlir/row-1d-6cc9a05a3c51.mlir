// A 1-D input (no batch dims): row-wise over W = 4, K = 9 (chunks 3, 3, 3, 0:
// rank 2 holds an empty chunk), with a bias.
func.func @main(%x: tensor<9xf32>,
                %w: !shardlin.sharded<tensor<6x9xf32>, #shardlin.chunk<dim = 1, placements = [3, 1, 0, 2]>>,
                %b: tensor<6xf32>) -> tensor<6xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<9xf32>, !shardlin.sharded<tensor<6x9xf32>, #shardlin.chunk<dim = 1, placements = [3, 1, 0, 2]>>, tensor<6xf32>) -> tensor<6xf32>
  return %y : tensor<6xf32>
}
