// RUN: shardlin-opt %s -split-input-file --shardlin-convert-to-llvm -verify-diagnostics

// What shardlin-convert-to-llvm rejects, naming what must run first.

func.func @on_tensors(%x: tensor<4x3xf32>) -> tensor<8x3xf32> {
  // expected-error@+1 {{'shardlin.all_gather' op operates on tensors: bufferize it first (run one-shot-bufferize, or the whole --shardlin-lower-to-llvm pipeline)}}
  %g = shardlin.all_gather %x along <dim = 0, placements = [0, 1]> : tensor<4x3xf32> -> tensor<8x3xf32>
  return %g : tensor<8x3xf32>
}

// -----

func.func @unlowered(%x: tensor<5x19xf32>, %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<5x11xf32> {
  // expected-error@+1 {{'shardlin.linear' op must be lowered first (run --lower-sharded-linear, or the whole --shardlin-lower-to-llvm pipeline)}}
  %y = shardlin.linear %x, %w : (tensor<5x19xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<5x11xf32>
  return %y : tensor<5x11xf32>
}

// -----

func.func @local_shard(%w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<11x?xf32> {
  // expected-error@+1 {{'shardlin.local_shard' op must be removed first (run --shardlin-localize-sharded, or the whole --shardlin-lower-to-llvm pipeline)}}
  %a = shardlin.local_shard %w : !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>> -> tensor<11x?xf32>
  return %a : tensor<11x?xf32>
}

// -----

// One function, one world size: its prologue checks the context against it.
// expected-error@+1 {{mixes world sizes (2, 3) in one function; its code checks the calling thread's context against one}}
func.func @mixed(%x: memref<4x3xf32>, %g: memref<8x3xf32>, %h: memref<12x3xf32>) {
  shardlin.buffer.all_gather %x into %g along <dim = 0, placements = [0, 1]> : memref<4x3xf32> into memref<8x3xf32>
  shardlin.buffer.all_gather %x into %h along <dim = 0, placements = [0, 1, 2]> : memref<4x3xf32> into memref<12x3xf32>
  return
}

// -----

// A declaration of an ABI function with another type is reported, not
// silently called with the wrong arguments.
// expected-error@+1 {{redefinition of function 'shardlin_convert' of different type '!llvm.func<i32 (ptr, ptr, i32, ptr, i32)>' is prohibited}}
llvm.func @shardlin_convert(!llvm.ptr) -> i32

func.func @clash(%x: memref<4xf32>, %y: memref<4xf16>) {
  shardlin.buffer.convert %x into %y : memref<4xf32> into memref<4xf16>
  return
}
