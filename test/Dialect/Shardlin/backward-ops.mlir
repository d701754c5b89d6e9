// RUN: shardlin-opt %s | shardlin-opt | FileCheck %s
// RUN: shardlin-opt %s -mlir-print-op-generic | shardlin-opt | FileCheck %s
// RUN: shardlin-opt %s --verify-roundtrip | FileCheck %s

// Round trip of the ops that backward functions add to the lowered ops
// (docs/training.md): the all-reduce of a replicated value's gradient.

// CHECK-LABEL: func.func @all_reduce
// CHECK-SAME: (%[[B:.*]]: tensor<11xf32>, %[[X:.*]]: tensor<?x3xbf16>)
// CHECK-NEXT: %[[S:.*]] = shardlin.all_reduce %[[B]] : tensor<11xf32> -> tensor<11xf32>
// CHECK-NEXT: %[[T:.*]] = shardlin.all_reduce %[[X]] : tensor<?x3xbf16> -> tensor<?x3xbf16>
// CHECK-NEXT: return %[[S]], %[[T]]
func.func @all_reduce(%b: tensor<11xf32>, %x: tensor<?x3xbf16>) -> (tensor<11xf32>, tensor<?x3xbf16>) {
  %s = shardlin.all_reduce %b : tensor<11xf32> -> tensor<11xf32>
  %t = shardlin.all_reduce %x : tensor<?x3xbf16> -> tensor<?x3xbf16>
  return %s, %t : tensor<11xf32>, tensor<?x3xbf16>
}
