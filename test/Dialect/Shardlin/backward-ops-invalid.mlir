// RUN: shardlin-opt %s -split-input-file -verify-diagnostics

// One case per verifier rule of the ops backward functions add
// (backward-ops.mlir).

func.func @all_reduce_world(%b: tensor<11xf32>) {
  // expected-error@+1 {{'shardlin.all_reduce' op attribute 'world_size' failed to satisfy constraint}}
  %0 = shardlin.all_reduce %b world_size = 0 : tensor<11xf32>
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

func.func @from_local_type(%a: tensor<11x5xf32>) {
  // expected-error@+1 {{'shardlin.from_local' op source type 'tensor<11x5xf32>' is not the local chunk type 'tensor<11x?xf32>' of the result}}
  %0 = shardlin.from_local %a : tensor<11x5xf32> -> !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>
  return
}
