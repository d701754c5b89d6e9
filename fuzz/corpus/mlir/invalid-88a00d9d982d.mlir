func.func @linear_result_shape(%x: tensor<5x19xf32>, %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) {
  // expected-error@+1 {{'shardlin.linear' op result shape [5, 19] does not match the expected [5, 11] (input shape with the last dim replaced by N = 11)}}
  %y = shardlin.linear %x, %w : (tensor<5x19xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<5x19xf32>
  return
}
