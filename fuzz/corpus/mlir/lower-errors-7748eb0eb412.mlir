// Linears that verify but whose lowering would need sizes beyond int64: the
// pass reports them instead of emitting wrapped-around shapes.

// 2^62 x 2 batch rows do not fit in int64 once flattened.
func.func @batch_overflow(%x: tensor<4611686018427387904x2x19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<4611686018427387904x2x11xf32> {
  // expected-error@+1 {{'shardlin.linear' op the input's batch dims ('tensor<4611686018427387904x2x19xf32>') overflow a 64-bit row count}}
  %y = shardlin.linear %x, %w : (tensor<4611686018427387904x2x19xf32>,
      !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<4611686018427387904x2x11xf32>
  return %y : tensor<4611686018427387904x2x11xf32>
}
