func.func @linear_input_rank0(%x: tensor<f32>, %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) {
  // expected-error@+1 {{'shardlin.linear' op expects an input of rank >= 1, got 'tensor<f32>'}}
  %y = shardlin.linear %x, %w : (tensor<f32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<11xf32>
  return
}
