// 2^61 rows fit, but stacking them over W = 4 ranks does not.
func.func @stacked_overflow_row_wise(%x: tensor<2305843009213693952x19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>) -> tensor<2305843009213693952x11xf32> {
  // expected-error@+1 {{'shardlin.linear' op sizes overflow 64-bit arithmetic: 2305843009213693952 rows x 4 ranks with a 11 x 19 weight}}
  %y = shardlin.linear %x, %w : (tensor<2305843009213693952x19xf32>,
      !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>) -> tensor<2305843009213693952x11xf32>
  return %y : tensor<2305843009213693952x11xf32>
}
