// RUN: shardlin-opt %s -split-input-file -verify-diagnostics

// One case per verifier rule of the ops backward functions add
// (backward-ops.mlir).

func.func @all_reduce_shape(%b: tensor<11xf32>) {
  // expected-error@+1 {{'shardlin.all_reduce' op failed to verify that all of {input, result} have same type}}
  %0 = shardlin.all_reduce %b : tensor<11xf32> -> tensor<10xf32>
  return
}

// -----

func.func @all_reduce_type(%b: tensor<11xf32>) {
  // expected-error@+1 {{'shardlin.all_reduce' op failed to verify that all of {input, result} have same element type}}
  %0 = shardlin.all_reduce %b : tensor<11xf32> -> tensor<11xf16>
  return
}
