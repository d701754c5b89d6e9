func.func @stacked_rows(%x: tensor<?x4xf32>) -> (tensor<?x8xf32>, tensor<?x4xf32>) {
  %b = shardlin.gather_bounds %x along <dim = 0, placements = [1, 0]> : tensor<?x4xf32> -> tensor<3xi64>
  %g = shardlin.all_gather %x along <dim = 0, placements = [1, 0]> bounds(%b : tensor<3xi64>) : tensor<?x4xf32> -> tensor<?x4xf32>
  %t = shardlin.all_to_all %g split <dim = 0, placements = [1, 0]> bounds(%b : tensor<3xi64>) concat <dim = 1, placements = [0, 1]> : tensor<?x4xf32> -> tensor<?x8xf32>
  %s = shardlin.reduce_scatter %g along <dim = 0, placements = [1, 0]> bounds(%b : tensor<3xi64>) : tensor<?x4xf32> -> tensor<?x4xf32>
  return %t, %s : tensor<?x8xf32>, tensor<?x4xf32>
}
