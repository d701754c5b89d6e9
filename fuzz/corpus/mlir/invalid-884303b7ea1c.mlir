// The message names the input's last dim, not its first (the first
// implementation printed the wrong one).
func.func @linear_input_k_mismatch_3d(%x: tensor<2x3x7xf32>, %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) {
  // expected-error@+1 {{'shardlin.linear' op input's last dim (7) must equal the weight's dim 1 (K = 19)}}
  %y = shardlin.linear %x, %w : (tensor<2x3x7xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<2x3x11xf32>
  return
}
