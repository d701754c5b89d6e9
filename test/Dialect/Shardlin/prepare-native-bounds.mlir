// RUN: shardlin-opt %s -split-input-file -verify-diagnostics --prepare-native

// The native path's C ABI places chunks by the ceil rule from placements
// alone: chunk bounds that are another split are refused before any code
// is generated; bounds equal to the ceil rule's are the same chunks.

func.func @uneven_bounds(%a: tensor<8x?xf32>) -> tensor<8x10xf32> {
  // expected-error@+1 {{'shardlin.all_gather' op uses #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3], bounds = [0, 4, 4, 8, 10]>: chunk bounds other than the ceil rule's are not supported on the native path yet (the runtime's C ABI places chunks by the ceil rule from placements alone)}}
  %g = shardlin.all_gather %a along <dim = 1, placements = [0, 1, 2, 3], bounds = [0, 4, 4, 8, 10]> : tensor<8x?xf32> -> tensor<8x10xf32>
  return %g : tensor<8x10xf32>
}

// -----

func.func @ceil_bounds(%a: tensor<8x?xf32>) -> tensor<8x10xf32> {
  %g = shardlin.all_gather %a along <dim = 1, placements = [0, 1, 2, 3], bounds = [0, 3, 6, 9, 10]> : tensor<8x?xf32> -> tensor<8x10xf32>
  return %g : tensor<8x10xf32>
}

// -----

func.func @all_reduce(%p: tensor<8x12xf32>) -> tensor<8x12xf32> {
  // expected-error@+1 {{'shardlin.all_reduce' op is not supported on the native path yet (the runtime's C ABI has no all-reduce)}}
  %s = shardlin.all_reduce %p world_size = 4 : tensor<8x12xf32>
  return %s : tensor<8x12xf32>
}
