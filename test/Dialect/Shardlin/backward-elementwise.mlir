// RUN: shardlin-opt %s --shardlin-generate-backward | FileCheck %s

// The derivatives of elementwise ops (docs/training.md): for each tensor an
// op reads, one linalg.generic that rebuilds the op's scalar computation and
// runs reverse mode over it; the runtime fuses these chains as it does the
// forward's. A function of elementwise ops alone (W = 1) is differentiated
// like any other.

#id = affine_map<(d0, d1) -> (d0, d1)>

// ReLU as select(x > 0, x, 0): the gradient flows where the condition holds,
// so ReLU'(0) = 0. The comparison is recomputed and read by the derivative;
// the constant branch gets nothing.
// CHECK-LABEL: func.func @relu_select_backward
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x5xf32>, %[[DY:[^:]*]]: tensor<4x5xf32>) -> tensor<4x5xf32>
// CHECK: %[[C:.*]] = arith.cmpf ugt, %[[X]], %{{.*}} : tensor<4x5xf32>
// CHECK-NEXT: %[[D:.*]] = linalg.generic {{.*}} ins(%[[DY]], %[[C]] : tensor<4x5xf32>, tensor<4x5xi1>) outs(%[[DY]] : tensor<4x5xf32>)
// CHECK-NEXT: ^bb0(%[[G:.*]]: f32, %[[CV:.*]]: i1, %{{.*}}: f32):
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[S:.*]] = arith.select %[[CV]], %[[G]], %[[Z]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK: return %[[D]]
func.func @relu_select(%x: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %zero = arith.constant dense<0.0> : tensor<4x5xf32>
  %c = arith.cmpf ugt, %x, %zero : tensor<4x5xf32>
  %r = arith.select %c, %x, %zero : tensor<4x5xi1>, tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}

// GELU (erf form) in f16 on rows of run-time size: the product rule over
// 0.5 v (1 + erf(v / sqrt 2)), erf'(t) = 2/sqrt(pi) exp(-t^2). 2/sqrt(pi) is
// the sum of two f16 constants (1.1279 + 0.000449), which the runtime adds
// in f32: one f16 constant would round it to 11 bits.
// CHECK-LABEL: func.func @gelu_erf_backward
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x5xf16>, %[[DY:[^:]*]]: tensor<?x5xf16>) -> tensor<?x5xf16>
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[DY]], %[[X]] : tensor<?x5xf16>, tensor<?x5xf16>) outs(%[[DY]] : tensor<?x5xf16>)
// CHECK: math.erf
// CHECK-DAG: %[[LO:.*]] = arith.constant 4.494190e-04 : f16
// CHECK-DAG: %[[HI:.*]] = arith.constant 1.127930e+00 : f16
// CHECK: %[[K:.*]] = arith.addf %[[HI]], %[[LO]] : f16
// CHECK: %[[E:.*]] = math.exp
// CHECK: arith.mulf %[[K]], %[[E]] : f16
// CHECK: linalg.yield
func.func @gelu_erf(%x: tensor<?x5xf16>) -> tensor<?x5xf16> {
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x5xf16>) outs(%x : tensor<?x5xf16>) {
  ^bb0(%v: f16, %o: f16):
    %half = arith.constant 0.5 : f16
    %one = arith.constant 1.0 : f16
    %s = arith.constant 0.70710678 : f16
    %t = arith.mulf %v, %s : f16
    %e = math.erf %t : f16
    %p = arith.addf %one, %e : f16
    %h = arith.mulf %half, %v : f16
    %r = arith.mulf %h, %p : f16
    linalg.yield %r : f16
  } -> tensor<?x5xf16>
  return %a : tensor<?x5xf16>
}

// maximumf of two variables: the gradient goes to the operand equal to the
// result, half to each at a tie (torch.maximum's convention).
// CHECK-LABEL: func.func @max_two_backward
// CHECK-SAME: (%[[X:[^:]*]]: tensor<3xf64>, %[[Y:[^:]*]]: tensor<3xf64>, %[[DY:[^:]*]]: tensor<3xf64>)
// CHECK-NEXT: %[[DX:.*]] = linalg.generic {{.*}} ins(%[[DY]], %[[X]], %[[Y]] : {{.*}})
// CHECK-NEXT: ^bb0(%[[G:[^:]*]]: f64, %[[A:[^:]*]]: f64, %[[B:[^:]*]]: f64, %{{.*}}: f64):
// CHECK-NEXT: %[[R:.*]] = arith.maximumf %[[A]], %[[B]] : f64
// CHECK-NEXT: %[[ISA:.*]] = arith.cmpf oeq, %[[A]], %[[R]] : f64
// CHECK-NEXT: %[[ISB:.*]] = arith.cmpf oeq, %[[B]], %[[R]] : f64
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT: %[[H:.*]] = arith.constant 5.000000e-01 : f64
// CHECK-NEXT: %[[HALF:.*]] = arith.mulf %[[G]], %[[H]] : f64
// CHECK-NEXT: %[[TIE:.*]] = arith.select %[[ISB]], %[[HALF]], %[[G]] : f64
// CHECK-NEXT: %[[D:.*]] = arith.select %[[ISA]], %[[TIE]], %[[Z]] : f64
// CHECK-NEXT: linalg.yield %[[D]] : f64
// CHECK: %[[DYY:.*]] = linalg.generic
// CHECK: return %[[DX]], %[[DYY]]
func.func @max_two(%x: tensor<3xf64>, %y: tensor<3xf64>) -> tensor<3xf64> {
  %m = arith.maximumf %x, %y : tensor<3xf64>
  return %m : tensor<3xf64>
}

// A residual add passes the gradient on as it is: no op.
// CHECK-LABEL: func.func @residual_backward
// CHECK-SAME: %[[DY:[^:]*]]: tensor<3xf64>)
// CHECK-NEXT: return %[[DY]], %[[DY]]
func.func @residual(%x: tensor<3xf64>, %y: tensor<3xf64>) -> tensor<3xf64> {
  %m = arith.addf %x, %y : tensor<3xf64>
  return %m : tensor<3xf64>
}

// A vector broadcast along the last dim: its gradient is the sum of the rows
// of the contributions (N-D collapsed to rows first).
// CHECK-LABEL: func.func @broadcast_backward
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x3x4xf32>, %[[V:[^:]*]]: tensor<4xf32>, %[[DY:[^:]*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[DX:.*]] = linalg.generic {indexing_maps = [#[[ID:.*]], #[[ID]], #[[ROW:.*]], #[[ID]]], {{.*}} ins(%[[DY]], %[[X]], %[[V]] : {{.*}})
// CHECK: math.tanh
// CHECK: %[[C:.*]] = linalg.generic {{.*}} ins(%[[DY]], %[[X]] : {{.*}}) outs(%[[DY]] : tensor<2x3x4xf32>)
// CHECK: %[[R:.*]] = tensor.collapse_shape %[[C]] {{\[}}[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK-NEXT: %[[DV:.*]] = shardlin.sum_rows %[[R]] : tensor<6x4xf32> -> tensor<4xf32>
// CHECK-NEXT: return %[[DX]], %[[DV]]
func.func @broadcast(%x: tensor<2x3x4xf32>, %v: tensor<4xf32>) -> tensor<2x3x4xf32> {
  %e = tensor.empty() : tensor<2x3x4xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %v : tensor<2x3x4xf32>, tensor<4xf32>) outs(%e : tensor<2x3x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = math.tanh %a : f32
    %r = arith.mulf %t, %b : f32
    linalg.yield %r : f32
  } -> tensor<2x3x4xf32>
  return %m : tensor<2x3x4xf32>
}

// An argument nothing reads has a zero gradient: its own elements selected
// away by an always-true comparison (the runtime's elementwise op needs a
// tensor to read, and x * 0 would keep NaN and infinities).
// CHECK-LABEL: func.func @unused_backward
// CHECK-SAME: (%[[X:[^:]*]]: tensor<3xf32>, %[[Y:[^:]*]]: tensor<3xf32>, %[[DY:[^:]*]]: tensor<3xf32>)
// CHECK: %[[DX:.*]] = linalg.generic {{.*}} ins(%[[DY]], %[[X]] : {{.*}})
// CHECK: math.sqrt
// CHECK: %[[DYY:.*]] = linalg.generic {{.*}} ins(%[[Y]] : tensor<3xf32>) outs(%[[Y]] : tensor<3xf32>)
// CHECK-NEXT: ^bb0(%[[A:[^:]*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[T:.*]] = arith.cmpf true, %[[A]], %[[A]] : f32
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[S:.*]] = arith.select %[[T]], %[[Z]], %[[A]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK: return %[[DX]], %[[DYY]]
func.func @unused(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %s = math.sqrt %x : tensor<3xf32>
  return %s : tensor<3xf32>
}

// x^3 as torch-mlir writes it (math.fpowi of a captured i64): the
// derivative 3 x^2, itself an fpowi whose exponent is an i64 constant; the
// forward's x^3 is not needed.
// CHECK-LABEL: func.func @cube_backward
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x5xf32>, %[[DY:[^:]*]]: tensor<4x5xf32>) -> tensor<4x5xf32>
// CHECK-NEXT: %[[D:.*]] = linalg.generic {{.*}} ins(%[[DY]], %[[X]] : tensor<4x5xf32>, tensor<4x5xf32>) outs(%[[DY]] : tensor<4x5xf32>)
// CHECK-NEXT: ^bb0(%[[G:.*]]: f32, %[[XV:.*]]: f32, %{{.*}}: f32):
// CHECK-NOT: arith.constant 3 : i64
// CHECK-DAG: %[[TWO:.*]] = arith.constant 2 : i64
// CHECK-DAG: %[[SQ:.*]] = math.fpowi %[[XV]], %[[TWO]] : f32, i64
// CHECK-DAG: %[[THREE:.*]] = arith.constant 3.000000e+00 : f32
// CHECK: %[[N:.*]] = arith.mulf %[[THREE]], %[[SQ]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[G]], %[[N]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK: return %[[D]]
func.func @cube(%x: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %c3 = arith.constant 3 : i64
  %e = tensor.empty() : tensor<4x5xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x5xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %p = math.fpowi %in, %c3 : f32, i64
    linalg.yield %p : f32
  } -> tensor<4x5xf32>
  return %y : tensor<4x5xf32>
}

// A norm's pieces (docs/training.md, "Norms"): y = x * s, s the sum of each
// row of x (R x 1) broadcast along the rows. s's gradient is the sum of each
// row of dy * x (a reduction into R x 1, the runtime's reduce_last); x's is
// dy * s plus ds broadcast along the rows, which reads x by an always-true
// comparison alone (the runtime's elementwise ops take their shape from an
// operand of the result's shape).
// CHECK-LABEL: func.func @row_scale_backward
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x5xf32>, %[[DY:[^:]*]]: tensor<4x5xf32>) -> tensor<4x5xf32>
// CHECK: %[[S:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<4x5xf32>) outs(%{{.*}} : tensor<4x1xf32>)
// CHECK: %[[DXS:.*]] = linalg.generic {{.*}} ins(%[[DY]], %[[S]] : tensor<4x5xf32>, tensor<4x1xf32>) outs(%[[DY]] : tensor<4x5xf32>)
// CHECK: arith.mulf
// CHECK: %[[DYX:.*]] = linalg.generic {{.*}} ins(%[[DY]], %[[X]] : tensor<4x5xf32>, tensor<4x5xf32>) outs(%[[DY]] : tensor<4x5xf32>)
// CHECK: %[[DS:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[DYX]] : tensor<4x5xf32>) outs(%{{.*}} : tensor<4x1xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[T:.*]] = arith.addf %[[A]], %[[ACC]] : f32
// CHECK-NEXT: linalg.yield %[[T]] : f32
// CHECK: %[[B:.*]] = linalg.generic {indexing_maps = [#[[ROW:map[0-9]*]], #{{map[0-9]*}}, #{{map[0-9]*}}], iterator_types = ["parallel", "parallel"]} ins(%[[DS]], %[[X]] : tensor<4x1xf32>, tensor<4x5xf32>)
// CHECK-NEXT: ^bb0(%[[R:.*]]: f32, %[[XV:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[TRUE:.*]] = arith.cmpf true, %[[XV]], %[[XV]] : f32
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[SEL:.*]] = arith.select %[[TRUE]], %[[R]], %[[Z]] : f32
// CHECK-NEXT: linalg.yield %[[SEL]] : f32
// CHECK: %[[DX:.*]] = arith.addf %[[DXS]], %[[B]] : tensor<4x5xf32>
// CHECK: return %[[DX]]
func.func @row_scale(%x: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4x1xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x1xf32>) -> tensor<4x1xf32>
  %s = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d0, 0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x5xf32>) outs(%i : tensor<4x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %a, %acc : f32
    linalg.yield %t : f32
  } -> tensor<4x1xf32>
  %e = tensor.empty() : tensor<4x5xf32>
  %y = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d0, 0)>, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %s : tensor<4x5xf32>, tensor<4x1xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%a: f32, %r: f32, %o: f32):
    %t = arith.mulf %a, %r : f32
    linalg.yield %t : f32
  } -> tensor<4x5xf32>
  return %y : tensor<4x5xf32>
}
