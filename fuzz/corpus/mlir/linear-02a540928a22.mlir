// A linear layer y = x A^T + b whose weight A (11 x 19) is split row-wise
// (along K = 19) over 4 ranks: chunks of 5, 5, 5 and 4 columns, held by
// ranks 2, 3, 0 and 1. Each rank has its own 5 x 19 input x.
func.func @main(%x: tensor<5x19xf32>,
                %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>,
                %b: tensor<11xf32>) -> tensor<5x11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<5x19xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>, tensor<11xf32>) -> tensor<5x11xf32>
  return %y : tensor<5x11xf32>
}
