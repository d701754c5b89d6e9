// RUN: shardlin-opt %s --lower-sharded-linear -split-input-file -verify-diagnostics

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

// -----

// 2^61 rows fit, but stacking them over W = 4 ranks does not.
func.func @stacked_overflow_row_wise(%x: tensor<2305843009213693952x19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>) -> tensor<2305843009213693952x11xf32> {
  // expected-error@+1 {{'shardlin.linear' op sizes overflow 64-bit arithmetic: 2305843009213693952 rows x 4 ranks with a 11 x 19 weight}}
  %y = shardlin.linear %x, %w : (tensor<2305843009213693952x19xf32>,
      !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>) -> tensor<2305843009213693952x11xf32>
  return %y : tensor<2305843009213693952x11xf32>
}

// -----

func.func @stacked_overflow_col_wise(%x: tensor<2x1152921504606846976x19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [3, 1, 0, 2]>>) -> tensor<2x1152921504606846976x11xf32> {
  // expected-error@+1 {{'shardlin.linear' op sizes overflow 64-bit arithmetic: 2305843009213693952 rows x 4 ranks with a 11 x 19 weight}}
  %y = shardlin.linear %x, %w : (tensor<2x1152921504606846976x19xf32>,
      !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [3, 1, 0, 2]>>) -> tensor<2x1152921504606846976x11xf32>
  return %y : tensor<2x1152921504606846976x11xf32>
}

// -----

// The weight's N x K element count overflows.
func.func @weight_overflow(%x: tensor<1x4611686018427387904xf32>,
    %w: !shardlin.sharded<tensor<4x4611686018427387904xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<1x4xf32> {
  // expected-error@+1 {{'shardlin.linear' op sizes overflow 64-bit arithmetic: 1 rows x 2 ranks with a 4 x 4611686018427387904 weight}}
  %y = shardlin.linear %x, %w : (tensor<1x4611686018427387904xf32>,
      !shardlin.sharded<tensor<4x4611686018427387904xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<1x4xf32>
  return %y : tensor<1x4xf32>
}

// -----

// Also with W = 1: the B x N result alone overflows.
func.func @single_rank_overflow(%x: tensor<4611686018427387904x19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [0]>>) -> tensor<4611686018427387904x11xf32> {
  // expected-error@+1 {{'shardlin.linear' op sizes overflow 64-bit arithmetic: 4611686018427387904 rows x 1 ranks with a 11 x 19 weight}}
  %y = shardlin.linear %x, %w : (tensor<4611686018427387904x19xf32>,
      !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [0]>>) -> tensor<4611686018427387904x11xf32>
  return %y : tensor<4611686018427387904x11xf32>
}
