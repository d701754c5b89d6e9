// Two public functions and no `main`: the entry must be named with --entry.
// They differ in their signatures, so the files of one do not fit the other:
// @row_wise takes a 5 x 7 input, a 6 x 7 weight split along K over W = 2
// and a bias; @col_wise a 5 x 4 input and a 6 x 4 weight split along N over
// W = 2, without a bias.
func.func @row_wise(%x: tensor<5x7xf32>,
                    %w: !shardlin.sharded<tensor<6x7xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>,
                    %b: tensor<6xf32>) -> tensor<5x6xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<5x7xf32>, !shardlin.sharded<tensor<6x7xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, tensor<6xf32>) -> tensor<5x6xf32>
  return %y : tensor<5x6xf32>
}

func.func @col_wise(%x: tensor<5x4xf32>,
                    %w: !shardlin.sharded<tensor<6x4xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<5x6xf32> {
  %y = shardlin.linear %x, %w : (tensor<5x4xf32>, !shardlin.sharded<tensor<6x4xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<5x6xf32>
  return %y : tensor<5x6xf32>
}
