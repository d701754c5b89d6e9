func.func @bias_add_input_rank0(%y: tensor<f32>, %b: tensor<1xf32>) {
  // expected-error@+1 {{'shardlin.bias_add' op expects an input of rank >= 1, got 'tensor<f32>'}}
  %0 = shardlin.bias_add %y, %b : tensor<f32>, tensor<1xf32>
  return
}
