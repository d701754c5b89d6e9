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

// -----

func.func @sum_rows_rank(%a: tensor<2x3x4xf32>) {
  // expected-error@+1 {{'shardlin.sum_rows' op expects a rank-2 input and a rank-1 result, got 'tensor<2x3x4xf32>' and 'tensor<4xf32>'}}
  %0 = shardlin.sum_rows %a : tensor<2x3x4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @sum_rows_size(%a: tensor<2x4xf32>) {
  // expected-error@+1 {{'shardlin.sum_rows' op result size 5 differs from the input's 4 columns}}
  %0 = shardlin.sum_rows %a : tensor<2x4xf32> -> tensor<5xf32>
  return
}

// -----

func.func @sum_rows_type(%a: tensor<2x4xf32>) {
  // expected-error@+1 {{'shardlin.sum_rows' op result element type 'f16' must be the input's ('f32'), or f32 when the input is f16 or bf16}}
  %0 = shardlin.sum_rows %a : tensor<2x4xf32> -> tensor<4xf16>
  return
}

// -----

func.func @from_local_shard_type(%a: tensor<11x5xf32>) {
  // expected-error@+1 {{'shardlin.from_local_shard' op source type 'tensor<11x5xf32>' is not the local chunk type 'tensor<11x?xf32>' of '!shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>'}}
  %0 = shardlin.from_local_shard %a : tensor<11x5xf32> -> !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>
  return
}
