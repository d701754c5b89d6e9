// Several public functions, one named `main`: it is the default entry.
// @first takes a different input shape (5 x 3), so running it by mistake
// with main's files fails on the shape check.
func.func @first(%x: tensor<5x3xf32>,
                 %w: !shardlin.sharded<tensor<6x3xf32>, #shardlin.chunk<dim = 1, placements = [0, 1]>>) -> tensor<5x6xf32> {
  %y = shardlin.linear %x, %w : (tensor<5x3xf32>, !shardlin.sharded<tensor<6x3xf32>, #shardlin.chunk<dim = 1, placements = [0, 1]>>) -> tensor<5x6xf32>
  return %y : tensor<5x6xf32>
}

func.func @main(%x: tensor<5x7xf32>,
                %w: !shardlin.sharded<tensor<6x7xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>,
                %b: tensor<6xf32>) -> tensor<5x6xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<5x7xf32>, !shardlin.sharded<tensor<6x7xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, tensor<6xf32>) -> tensor<5x6xf32>
  return %y : tensor<5x6xf32>
}

func.func @last(%x: tensor<5x7xf32>) -> tensor<5x7xf32> {
  return %x : tensor<5x7xf32>
}
