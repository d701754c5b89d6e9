func.func @stacked_overflow_col_wise(%x: tensor<2x1152921504606846976x19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [3, 1, 0, 2]>>) -> tensor<2x1152921504606846976x11xf32> {
  // expected-error@+1 {{'shardlin.linear' op sizes overflow 64-bit arithmetic: 2305843009213693952 rows x 4 ranks with a 11 x 19 weight}}
  %y = shardlin.linear %x, %w : (tensor<2x1152921504606846976x19xf32>,
      !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [3, 1, 0, 2]>>) -> tensor<2x1152921504606846976x11xf32>
  return %y : tensor<2x1152921504606846976x11xf32>
}
