// f64, row-wise over W = 3 (K = 8: chunks 3, 3, 2), with a bias.
func.func @main(%x: tensor<4x8xf64>,
                %w: !shardlin.sharded<tensor<5x8xf64>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>,
                %b: tensor<5xf64>) -> tensor<4x5xf64> {
  %y = shardlin.linear %x, %w, %b : (tensor<4x8xf64>, !shardlin.sharded<tensor<5x8xf64>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>, tensor<5xf64>) -> tensor<4x5xf64>
  return %y : tensor<4x5xf64>
}
