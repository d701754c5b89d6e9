// RUN: shardlin-opt %s -split-input-file -verify-diagnostics

// Every rule of chunks of whole blocks, on the attribute, the sharded type
// and the ops that split a dim with one.

// expected-error@+1 {{chunk block must be positive, got 0}}
func.func @zero_block() attributes {s = #shardlin.chunk<dim = 0, placements = [0, 1], block = 0>} {
  return
}

// -----

// expected-error@+1 {{chunk bound 6 in [0, 6, 12] splits a block of 4 (every bound must be a multiple of the block)}}
func.func @bound_splits_head() attributes {s = #shardlin.chunk<dim = 0, placements = [0, 1], bounds = [0, 6, 12], block = 4>} {
  return
}

// -----

// expected-error@+1 {{expected `bounds` or `block` (once each, in this order), got `blocks`}}
func.func @bad_key() attributes {s = #shardlin.chunk<dim = 0, placements = [0, 1], blocks = 4>} {
  return
}

// -----

// expected-error@+1 {{expected `bounds` or `block` (once each, in this order), got `bounds`}}
func.func @out_of_order() attributes {s = #shardlin.chunk<dim = 0, placements = [0, 1], block = 4, bounds = [0, 4, 8]>} {
  return
}

// -----

// 30 features are not whole heads of 4.
// expected-error@+1 {{dim 0 of the sharded tensor 'tensor<30x8xf32>' has 30 elements, not a whole number of blocks of 4 (the chunks would split a block)}}
func.func @type_not_whole_heads(%w: !shardlin.sharded<tensor<30x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2], block = 4>>) {
  return
}

// -----

func.func @op_dynamic(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error@+1 {{'shardlin.local_chunk' op source dim 0 is dynamic, but the chunk block 4 needs a static size}}
  %c = shardlin.local_chunk %x along <dim = 0, placements = [0, 1], block = 4> : tensor<?x8xf32> -> tensor<?x8xf32>
  return %c : tensor<?x8xf32>
}

// -----

func.func @op_not_whole(%x: tensor<10x8xf32>) -> tensor<?x8xf32> {
  // expected-error@+1 {{'shardlin.local_chunk' op source dim 0 has 10 elements, not a whole number of blocks of 4 (the chunks would split a block)}}
  %c = shardlin.local_chunk %x along <dim = 0, placements = [0, 1], block = 4> : tensor<10x8xf32> -> tensor<?x8xf32>
  return %c : tensor<?x8xf32>
}
