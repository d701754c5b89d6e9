// The weight's N x K element count overflows.
func.func @weight_overflow(%x: tensor<1x4611686018427387904xf32>,
    %w: !shardlin.sharded<tensor<4x4611686018427387904xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<1x4xf32> {
  // expected-error@+1 {{'shardlin.linear' op sizes overflow 64-bit arithmetic: 1 rows x 2 ranks with a 4 x 4611686018427387904 weight}}
  %y = shardlin.linear %x, %w : (tensor<1x4611686018427387904xf32>,
      !shardlin.sharded<tensor<4x4611686018427387904xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<1x4xf32>
  return %y : tensor<1x4xf32>
}
