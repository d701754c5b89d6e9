// col-w3.mlir's layer, returning its result twice (two outputs).
func.func @main(%x: tensor<5x7xf32>,
                %w: !shardlin.sharded<tensor<10x7xf32>, #shardlin.chunk<dim = 0, placements = [1, 2, 0]>>) -> (tensor<5x10xf32>, tensor<5x10xf32>) {
  %y = shardlin.linear %x, %w : (tensor<5x7xf32>, !shardlin.sharded<tensor<10x7xf32>, #shardlin.chunk<dim = 0, placements = [1, 2, 0]>>) -> tensor<5x10xf32>
  return %y, %y : tensor<5x10xf32>, tensor<5x10xf32>
}
