// auto decides for the assumed rows: few favour moving activations, many
// gathering the weight (a 1024 x 1024 weight over 4 ranks).
func.func @auto(%x: tensor<?x1024xf32>, %w: !shardlin.sharded<tensor<1024x1024xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>) -> tensor<?x1024xf32> {
  %y = shardlin.linear %x, %w : (tensor<?x1024xf32>, !shardlin.sharded<tensor<1024x1024xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>) -> tensor<?x1024xf32>
  return %y : tensor<?x1024xf32>
}
