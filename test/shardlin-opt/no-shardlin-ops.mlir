// --lower-sharded-linear is the identity on a module without shardlin ops:
// its output is exactly the plain round trip's.
// RUN: shardlin-opt %s > %t.plain
// RUN: shardlin-opt %s --lower-sharded-linear > %t.lowered
// RUN: diff %t.plain %t.lowered
// RUN: shardlin-opt %s --lower-sharded-linear | FileCheck %s

// CHECK-LABEL: func.func @mixed
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x8xf32>, %[[S:.*]]: f32)
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<2x3x8xf32>
// CHECK-NEXT: %[[F:.*]] = tensor.splat %[[S]] : tensor<2x3x8xf32>
// CHECK-NEXT: %[[A:.*]] = arith.addf %[[X]], %[[F]] : tensor<2x3x8xf32>
// CHECK-NEXT: %[[C:.*]] = tensor.collapse_shape %[[A]] {{\[}}[0, 1], [2]] : tensor<2x3x8xf32> into tensor<6x8xf32>
// CHECK-NEXT: return %[[C]], %[[E]] : tensor<6x8xf32>, tensor<2x3x8xf32>
func.func @mixed(%x: tensor<2x3x8xf32>, %s: f32) -> (tensor<6x8xf32>, tensor<2x3x8xf32>) {
  %e = tensor.empty() : tensor<2x3x8xf32>
  %f = tensor.splat %s : tensor<2x3x8xf32>
  %a = arith.addf %x, %f : tensor<2x3x8xf32>
  %c = tensor.collapse_shape %a [[0, 1], [2]] : tensor<2x3x8xf32> into tensor<6x8xf32>
  return %c, %e : tensor<6x8xf32>, tensor<2x3x8xf32>
}

// CHECK-LABEL: func.func private @decl
// CHECK-SAME: (tensor<4xf32>) -> tensor<4xf32>
func.func private @decl(tensor<4xf32>) -> tensor<4xf32>
