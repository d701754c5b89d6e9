// RUN: shardlin-opt %s -split-input-file -verify-diagnostics

// Every rule of explicit chunk boundaries, on the attribute, the sharded
// type and the ops that split a dim with one.

// expected-error@+1 {{chunk bounds [0, 4] are invalid: bounds of 2 chunks need 3 values, got 2}}
func.func @too_few() attributes {s = #shardlin.chunk<dim = 0, placements = [0, 1], bounds = [0, 4]>} {
  return
}

// -----

// expected-error@+1 {{chunk bounds [1, 4, 8] are invalid: bounds must start at 0, got 1}}
func.func @not_from_zero() attributes {s = #shardlin.chunk<dim = 0, placements = [0, 1], bounds = [1, 4, 8]>} {
  return
}

// -----

// expected-error@+1 {{chunk bounds [0, 4, 3] are invalid: bounds must be non-decreasing, but bound 2 (3) is less than bound 1 (4)}}
func.func @decreasing() attributes {s = #shardlin.chunk<dim = 0, placements = [0, 1], bounds = [0, 4, 3]>} {
  return
}

// -----

// expected-error@+1 {{dim 1 of the sharded tensor 'tensor<11x11xf32>' has 11 elements, but the chunk bounds [0, 4, 4, 8, 10] end at 10}}
func.func @type_size(%w: !shardlin.sharded<tensor<11x11xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3], bounds = [0, 4, 4, 8, 10]>>) {
  return
}

// -----

func.func @collective_dynamic(%a: tensor<?x4xf32>) {
  // expected-error@+1 {{'shardlin.all_gather' op result dim 0 is dynamic, but the chunk bounds [0, 4, 8] need a static size}}
  %g = shardlin.all_gather %a along <dim = 0, placements = [0, 1], bounds = [0, 4, 8]> : tensor<?x4xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @collective_size(%a: tensor<?x4xf32>) {
  // expected-error@+1 {{'shardlin.all_gather' op result dim 0 has 9 elements, but the chunk bounds [0, 4, 8] end at 8}}
  %g = shardlin.all_gather %a along <dim = 0, placements = [0, 1], bounds = [0, 4, 8]> : tensor<?x4xf32> -> tensor<9x4xf32>
  return
}

// -----

func.func @local_chunk_static(%b: tensor<10xf32>) {
  // Uneven chunks: the rank's size is `?`.
  // expected-error@+1 {{'shardlin.local_chunk' op result dim 0 is 4 but the local chunk of 10 over 2 ranks is ? (chunks are uneven)}}
  %c = shardlin.local_chunk %b along <dim = 0, placements = [0, 1], bounds = [0, 4, 10]> : tensor<10xf32> -> tensor<4xf32>
  return
}
