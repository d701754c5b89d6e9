// The elementwise ops the runtime cannot execute, or values of a chain it
// cannot store, get one located error naming the op and what is supported,
// and exit status 1 (`not` also fails on a crash). --emit-program runs
// nothing, so no data is needed.

// RUN: rm -rf %t && split-file --leading-lines %s %t && mkdir %t/out
// RUN: not shardlin-run %t/sin.mlir --emit-program=%t/out/p 2>&1 | FileCheck %t/sin.mlir
// RUN: not shardlin-run %t/extf.mlir --emit-program=%t/out/p 2>&1 | FileCheck %t/extf.mlir
// RUN: not shardlin-run %t/transpose.mlir --emit-program=%t/out/p 2>&1 | FileCheck %t/transpose.mlir
// RUN: not shardlin-run %t/index.mlir --emit-program=%t/out/p 2>&1 | FileCheck %t/index.mlir
// RUN: not shardlin-run %t/body-sin.mlir --emit-program=%t/out/p 2>&1 | FileCheck %t/body-sin.mlir
// RUN: not shardlin-run %t/empty.mlir --emit-program=%t/out/p 2>&1 | FileCheck %t/empty.mlir
// RUN: not shardlin-run %t/read-init.mlir --emit-program=%t/out/p 2>&1 | FileCheck %t/read-init.mlir
// RUN: not shardlin-run %t/bool.mlir --emit-program=%t/out/p 2>&1 | FileCheck %t/bool.mlir
// RUN: not shardlin-run %t/constant.mlir --emit-program=%t/out/p 2>&1 | FileCheck %t/constant.mlir
// RUN: not shardlin-run %t/non-splat.mlir --emit-program=%t/out/p 2>&1 | FileCheck %t/non-splat.mlir
// RUN: not shardlin-run %t/scalar.mlir --emit-program=%t/out/p 2>&1 | FileCheck %t/scalar.mlir
// RUN: not shardlin-run %t/fpowi.mlir --emit-program=%t/out/p 2>&1 | FileCheck %t/fpowi.mlir
// RUN: not shardlin-run %t/body-fpowi.mlir --emit-program=%t/out/p 2>&1 | FileCheck %t/body-fpowi.mlir
// RUN: not shardlin-run %t/divui.mlir --emit-program=%t/out/p 2>&1 | FileCheck %t/divui.mlir
// Nothing was written.
// RUN: not test -e %t/out/p

//--- sin.mlir
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK: sin.mlir:[[@LINE+1]]:8: error: the shardlin runtime cannot execute 'math.sin' (elementwise ops it executes: arith.addf, subf, mulf, divf, negf, maximumf, minimumf, maxnumf, minnumf, cmpf, select and splat float constants; math.tanh, erf, exp, log, sqrt, rsqrt, absf, and fpowi with a constant integer exponent; linalg ops with parallel iterators
  %0 = math.sin %x : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

//--- extf.mlir
// An input read in f32 before the narrowing that stores the chain's value
// (an input read only through conversions to the stored type runs:
// local-ops.mlir).
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf16> {
  %0 = arith.mulf %x, %x : tensor<4x8xf32>
  // CHECK: extf.mlir:[[@LINE+1]]:8: error: the shardlin runtime cannot execute 'arith.truncf' (elementwise ops it executes: {{.*}}): here a chain of 'f16' values would read a 'f32' tensor; an instruction reads and stores one element type, so a conversion runs only between a widening and the narrowing that stores its value, or on an input that the chain reads only through conversions to the stored type
  %1 = arith.truncf %0 : tensor<4x8xf32> to tensor<4x8xf16>
  return %1 : tensor<4x8xf16>
}

//--- transpose.mlir
func.func @main(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  // CHECK: transpose.mlir:[[@LINE+1]]:8: error: the shardlin runtime cannot execute 'linalg.generic': input #0's indexing map is neither the identity nor a vector broadcast along the last dim
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

//--- index.mlir
func.func @main(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  // CHECK: index.mlir:[[@LINE+1]]:8: error: the shardlin runtime cannot execute 'linalg.generic': its body reads linalg.index
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i32
    %f = arith.sitofp %c : i32 to f32
    %s = arith.addf %in, %f : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

//--- body-sin.mlir
func.func @main(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  // CHECK: body-sin.mlir:[[@LINE+1]]:8: error: the shardlin runtime cannot execute 'linalg.generic': its body holds 'math.sin'
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = math.sin %in : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

//--- empty.mlir
func.func @main(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  // CHECK: empty.mlir:[[@LINE+1]]:3: error: reads a tensor.empty, whose contents are undefined (the shardlin runtime takes tensor.empty only as the unread init of an elementwise linalg op)
  return %e : tensor<4x4xf32>
}

//--- read-init.mlir
func.func @main(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  // CHECK: read-init.mlir:[[@LINE+1]]:8: error: reads its tensor.empty init, whose contents are undefined
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

//--- bool.mlir
func.func @main(%x: tensor<4x4xf32>) -> tensor<4x4xi1> {
  // CHECK: bool.mlir:[[@LINE+1]]:8: error: a boolean tensor cannot be stored: the shardlin runtime uses comparisons only as the condition of a select in the same chain
  %0 = arith.cmpf ogt, %x, %x : tensor<4x4xf32>
  return %0 : tensor<4x4xi1>
}

//--- constant.mlir
func.func @main(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // CHECK: constant.mlir:[[@LINE+1]]:8: error: a constant tensor is supported only as an operand of elementwise ops (the runtime folds it into them)
  %0 = arith.constant dense<1.0> : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

//--- non-splat.mlir
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  // CHECK: non-splat.mlir:[[@LINE+1]]:8: error: the shardlin runtime cannot execute this constant: only float scalars and splat float tensors are supported
  %c = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = arith.addf %x, %c : tensor<2xf32>
  return %0 : tensor<2xf32>
}

//--- scalar.mlir
// (The scalar is returned: an op nothing reads is dropped before the
// translation, issue 27.)
func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32>, f32) {
  %c = arith.constant 1.0 : f32
  // CHECK: scalar.mlir:[[@LINE+1]]:8: error: the shardlin runtime executes 'arith.addf' on tensors, not on 'f32' (scalars only inside a linalg body)
  %0 = arith.addf %c, %c : f32
  return %x, %0 : tensor<2xf32>, f32
}

//--- fpowi.mlir
// An exponent that is not a constant has no runtime value.
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<4xf32>
  %i = arith.index_cast %d : index to i32
  %n = tensor.splat %i : tensor<4xi32>
  // CHECK: fpowi.mlir:[[@LINE+1]]:8: error: the shardlin runtime executes 'math.fpowi' only with a constant integer exponent (a scalar or splat arith.constant)
  %0 = math.fpowi %x, %n : tensor<4xf32>, tensor<4xi32>
  return %0 : tensor<4xf32>
}

//--- body-fpowi.mlir
#id = affine_map<(d0) -> (d0)>
#sc = affine_map<(d0) -> ()>
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<4xf32>
  %n = arith.index_cast %d : index to i32
  %e = tensor.empty() : tensor<4xf32>
  // CHECK: body-fpowi.mlir:[[@LINE+1]]:8: error: the shardlin runtime cannot execute 'linalg.generic': its body's math.fpowi has an exponent that is not a constant
  %0 = linalg.generic {indexing_maps = [#id, #sc, #id], iterator_types = ["parallel"]} ins(%x, %n : tensor<4xf32>, i32) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: i32, %o: f32):
    %p = math.fpowi %a, %b : f32, i32
    linalg.yield %p : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

//--- divui.mlir
// Index math sizes shapes only: a user that needs its value at run time
// (here, the return) is reported.
func.func @main(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, index) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %d = tensor.dim %x, %c0 : tensor<?x4xf32>
  %h = arith.divui %d, %c2 : index
  // CHECK: divui.mlir:[[@LINE+1]]:3: error: cannot return this value
  return %x, %h : tensor<?x4xf32>, index
}
