// Linears whose weights are split in whole heads of 4 (`block = 4`),
// 7 heads over 3 ranks: 3, 3 and 1 heads, chunks [0, 12), [12, 24),
// [24, 28), held by ranks 1, 2, 0 (the plain rule, [0, 10, 20, 28], would
// cut head 2 at 10).
// @col: N = 28 split by heads, no bias; @row: K = 28 split by heads, a bias.
func.func @col(%x: tensor<5x7xf32>,
               %w: !shardlin.sharded<tensor<28x7xf32>, #shardlin.chunk<dim = 0, placements = [1, 2, 0], block = 4>>) -> tensor<5x28xf32> {
  %y = shardlin.linear %x, %w : (tensor<5x7xf32>, !shardlin.sharded<tensor<28x7xf32>, #shardlin.chunk<dim = 0, placements = [1, 2, 0], block = 4>>) -> tensor<5x28xf32>
  return %y : tensor<5x28xf32>
}

func.func @row(%x: tensor<5x28xf32>,
               %w: !shardlin.sharded<tensor<6x28xf32>, #shardlin.chunk<dim = 1, placements = [1, 2, 0], block = 4>>,
               %b: tensor<6xf32>) -> tensor<5x6xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<5x28xf32>, !shardlin.sharded<tensor<6x28xf32>, #shardlin.chunk<dim = 1, placements = [1, 2, 0], block = 4>>, tensor<6xf32>) -> tensor<5x6xf32>
  return %y : tensor<5x6xf32>
}
