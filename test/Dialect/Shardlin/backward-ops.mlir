// RUN: shardlin-opt %s | shardlin-opt | FileCheck %s
// RUN: shardlin-opt %s -mlir-print-op-generic | shardlin-opt | FileCheck %s
// RUN: shardlin-opt %s --verify-roundtrip | FileCheck %s

// Round trip of the ops that backward functions add to the lowered ops
// (docs/training.md): the all-reduce of a replicated value's gradient, the
// sum of a matrix's rows and a rank's chunk as a sharded tensor.

// CHECK-LABEL: func.func @all_reduce
// CHECK-SAME: (%[[B:.*]]: tensor<11xf32>, %[[X:.*]]: tensor<?x3xbf16>)
// CHECK-NEXT: %[[S:.*]] = shardlin.all_reduce %[[B]] world_size = 4 : tensor<11xf32>
// CHECK-NEXT: %[[T:.*]] = shardlin.all_reduce %[[X]] world_size = 3 : tensor<?x3xbf16>
// CHECK-NEXT: return %[[S]], %[[T]]
func.func @all_reduce(%b: tensor<11xf32>, %x: tensor<?x3xbf16>) -> (tensor<11xf32>, tensor<?x3xbf16>) {
  %s = shardlin.all_reduce %b world_size = 4 : tensor<11xf32>
  %t = shardlin.all_reduce %x world_size = 3 : tensor<?x3xbf16>
  return %s, %t : tensor<11xf32>, tensor<?x3xbf16>
}

// The sum of a matrix's rows, in the input's type or, for f16/bf16, in f32.
// CHECK-LABEL: func.func @sum_rows
// CHECK-SAME: (%[[A:.*]]: tensor<20x11xf32>, %[[B:.*]]: tensor<?x?xbf16>)
// CHECK-NEXT: %[[S:.*]] = shardlin.sum_rows %[[A]] : tensor<20x11xf32> -> tensor<11xf32>
// CHECK-NEXT: %[[T:.*]] = shardlin.sum_rows %[[B]] : tensor<?x?xbf16> -> tensor<?xf32>
// CHECK-NEXT: %[[U:.*]] = shardlin.sum_rows %[[B]] : tensor<?x?xbf16> -> tensor<?xbf16>
// CHECK-NEXT: return %[[S]], %[[T]], %[[U]]
func.func @sum_rows(%a: tensor<20x11xf32>, %b: tensor<?x?xbf16>) -> (tensor<11xf32>, tensor<?xf32>, tensor<?xbf16>) {
  %s = shardlin.sum_rows %a : tensor<20x11xf32> -> tensor<11xf32>
  %t = shardlin.sum_rows %b : tensor<?x?xbf16> -> tensor<?xf32>
  %u = shardlin.sum_rows %b : tensor<?x?xbf16> -> tensor<?xbf16>
  return %s, %t, %u : tensor<11xf32>, tensor<?xf32>, tensor<?xbf16>
}

// A rank's chunk as the sharded tensor (uneven chunks: `?`).
// CHECK-LABEL: func.func @from_local
// CHECK-SAME: (%[[A:.*]]: tensor<11x?xf32>)
// CHECK-NEXT: %[[W:.*]] = shardlin.from_local %[[A]] : tensor<11x?xf32> -> !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>
// CHECK-NEXT: return %[[W]]
func.func @from_local(%a: tensor<11x?xf32>) -> !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>> {
  %w = shardlin.from_local %a : tensor<11x?xf32> -> !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>
  return %w : !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>
}
