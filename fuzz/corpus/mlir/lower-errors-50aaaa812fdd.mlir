// Also with W = 1: the B x N result alone overflows.
func.func @single_rank_overflow(%x: tensor<4611686018427387904x19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [0]>>) -> tensor<4611686018427387904x11xf32> {
  // expected-error@+1 {{'shardlin.linear' op sizes overflow 64-bit arithmetic: 4611686018427387904 rows x 1 ranks with a 11 x 19 weight}}
  %y = shardlin.linear %x, %w : (tensor<4611686018427387904x19xf32>,
      !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [0]>>) -> tensor<4611686018427387904x11xf32>
  return %y : tensor<4611686018427387904x11xf32>
}
