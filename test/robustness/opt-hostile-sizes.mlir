// RUN: shardlin-opt %s --lower-sharded-linear -split-input-file -verify-diagnostics
// RUN: shardlin-opt %s --lower-sharded-linear=strategy=gather-weight -split-input-file -verify-diagnostics
// RUN: shardlin-opt %s --lower-sharded-linear=strategy=activations -split-input-file -verify-diagnostics

// Sizes that verify but that the lowering cannot represent: a clear error
// on the linear, under every strategy, and nothing computed with wrapped
// sizes. (test/Dialect/Shardlin/lower-errors.mlir has the element-count
// overflows; these are the byte counts.)

// 2^60 rows fit in int64, but not their 2^63 bytes (the cost model's byte
// counts multiply by the element size first; that product was unchecked,
// signed overflow that UBSan reports).
func.func @row_bytes_overflow(%x: tensor<1152921504606846976x1xf32>,
    %w: !shardlin.sharded<tensor<1x1xf32>, #shardlin.chunk<dim = 0, placements = [0]>>) -> tensor<1152921504606846976x1xf32> {
  // expected-error@+1 {{'shardlin.linear' op sizes overflow 64-bit byte counts: 1152921504606846976 rows x 1 ranks with a 1 x 1 weight}}
  %y = shardlin.linear %x, %w : (tensor<1152921504606846976x1xf32>,
      !shardlin.sharded<tensor<1x1xf32>, #shardlin.chunk<dim = 0, placements = [0]>>) -> tensor<1152921504606846976x1xf32>
  return %y : tensor<1152921504606846976x1xf32>
}

// -----

// N + K overflows (each alone fits, and so does N x K = 0 rows of work).
func.func @n_plus_k_overflow(%x: tensor<0x9223372036854775807xf32>,
    %w: !shardlin.sharded<tensor<1x9223372036854775807xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<0x1xf32> {
  // expected-error@+1 {{'shardlin.linear' op sizes overflow}}
  %y = shardlin.linear %x, %w : (tensor<0x9223372036854775807xf32>,
      !shardlin.sharded<tensor<1x9223372036854775807xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<0x1xf32>
  return %y : tensor<0x1xf32>
}

// -----

// The weight's bytes over W ranks: N x K fits, N x K x 8 x W does not.
func.func @weight_bytes_overflow(%x: tensor<1x1152921504606846976xf32>,
    %w: !shardlin.sharded<tensor<4x1152921504606846976xf32>, #shardlin.chunk<dim = 0, placements = [0, 1]>>) -> tensor<1x4xf32> {
  // expected-error@+1 {{'shardlin.linear' op sizes overflow 64-bit byte counts: 1 rows x 2 ranks with a 4 x 1152921504606846976 weight}}
  %y = shardlin.linear %x, %w : (tensor<1x1152921504606846976xf32>,
      !shardlin.sharded<tensor<4x1152921504606846976xf32>, #shardlin.chunk<dim = 0, placements = [0, 1]>>) -> tensor<1x4xf32>
  return %y : tensor<1x4xf32>
}

// -----

// The largest dim MLIR accepts, on a weight of W = 1.
func.func @int64_max_single_rank(%x: tensor<9223372036854775807x1xf32>,
    %w: !shardlin.sharded<tensor<1x1xf32>, #shardlin.chunk<dim = 1, placements = [0]>>) -> tensor<9223372036854775807x1xf32> {
  // expected-error@+1 {{'shardlin.linear' op sizes overflow}}
  %y = shardlin.linear %x, %w : (tensor<9223372036854775807x1xf32>,
      !shardlin.sharded<tensor<1x1xf32>, #shardlin.chunk<dim = 1, placements = [0]>>) -> tensor<9223372036854775807x1xf32>
  return %y : tensor<9223372036854775807x1xf32>
}
