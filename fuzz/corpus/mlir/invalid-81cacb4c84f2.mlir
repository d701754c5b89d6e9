func.func @linear_bias_type(%x: tensor<5x19xbf16>, %w: !shardlin.sharded<tensor<11x19xbf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, %b: tensor<11xf32>) {
  // expected-error@+1 {{'shardlin.linear' op bias element type 'f32' differs from input element type 'bf16'}}
  %y = shardlin.linear %x, %w, %b : (tensor<5x19xbf16>, !shardlin.sharded<tensor<11x19xbf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, tensor<11xf32>) -> tensor<5x11xbf16>
  return
}
