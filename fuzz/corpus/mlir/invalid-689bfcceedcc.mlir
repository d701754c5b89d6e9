func.func @linear_weight_not_sharded(%x: tensor<5x19xf32>, %w: tensor<11x19xf32>) {
  // expected-error@+1 {{'shardlin.linear' op operand #1 must be A global tensor of which each rank holds one chunk, but got 'tensor<11x19xf32>'}}
  %y = shardlin.linear %x, %w : (tensor<5x19xf32>, tensor<11x19xf32>) -> tensor<5x11xf32>
  return
}
