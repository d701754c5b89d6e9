// How the executor translates the elementwise ops of each accepted form into
// runtime `elementwise` instructions (a chain of ops becomes one
// instruction; a value is stored only where something outside the chain, a
// broadcast or two chains read it). --emit-program shows the program; the
// numbers are checked end to end by the e2e.blocks tests.

// RUN: rm -rf %t && split-file --leading-lines %s %t && mkdir %t/out
// RUN: shardlin-run %t/arith.mlir --emit-program=%t/out/arith.prog
// RUN: FileCheck %t/arith.mlir --input-file=%t/out/arith.prog
// RUN: shardlin-run %t/generic.mlir --emit-program=%t/out/generic.prog
// RUN: FileCheck %t/generic.mlir --input-file=%t/out/generic.prog
// RUN: shardlin-run %t/named.mlir --emit-program=%t/out/named.prog
// RUN: FileCheck %t/named.mlir --input-file=%t/out/named.prog
// RUN: shardlin-run %t/shared.mlir --emit-program=%t/out/shared.prog
// RUN: FileCheck %t/shared.mlir --input-file=%t/out/shared.prog

//--- arith.mlir
// GELU-tanh on tensors, splat constants folded in: one instruction over x
// only (constants are exact hex floats; f16's are its own values).
// x is read once (node 0) however many ops use it.
// CHECK: {{^}}instr elementwise result 1 operands 1 0 expr 14 input 0 mul 0 0 mul 1 0 const 0x1.6e4p-5 mul 2 3 add 0 4 const 0x1.988p-1 mul 5 6 tanh 7 const 0x1p+0 add 8 9 mul 0 10 const 0x1p-1 mul 11 12 loc {{.*}}arith.mlir:[[# @LINE + 15]]:8
// CHECK-NOT: instr
func.func @main(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %c1 = arith.constant dense<1.0> : tensor<4x8xf16>
  %ch = arith.constant dense<0.5> : tensor<4x8xf16>
  %cs = arith.constant dense<0.7978845608> : tensor<4x8xf16>
  %cc = arith.constant dense<0.044715> : tensor<4x8xf16>
  %x2 = arith.mulf %x, %x : tensor<4x8xf16>
  %x3 = arith.mulf %x2, %x : tensor<4x8xf16>
  %t0 = arith.mulf %x3, %cc : tensor<4x8xf16>
  %t1 = arith.addf %x, %t0 : tensor<4x8xf16>
  %t2 = arith.mulf %t1, %cs : tensor<4x8xf16>
  %t3 = math.tanh %t2 : tensor<4x8xf16>
  %t4 = arith.addf %t3, %c1 : tensor<4x8xf16>
  %t5 = arith.mulf %x, %t4 : tensor<4x8xf16>
  %y = arith.mulf %t5, %ch : tensor<4x8xf16>
  return %y : tensor<4x8xf16>
}

//--- generic.mlir
// A linalg.generic adding a bias vector by broadcast, then ReLU as
// cmpf + select with a scalar constant captured from outside its body.
// CHECK: {{^}}instr elementwise result 2 operands 2 0 1 expr 6 input 0 input 1 add 0 1 const 0x0p+0 cmp ugt 2 3 select 4 2 3 loc {{.*}}generic.mlir:[[# @LINE + 7]]:8
// CHECK-NOT: instr
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @main(%x: tensor<3x5xf32>, %b: tensor<5xf32>) -> tensor<3x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x5xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %b : tensor<3x5xf32>, tensor<5xf32>) outs(%e : tensor<3x5xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    %p = arith.cmpf ugt, %s, %zero : f32
    %r = arith.select %p, %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<3x5xf32>
  return %y : tensor<3x5xf32>
}

//--- named.mlir
// linalg.elementwise named ops and a linalg.fill constant: SiLU as
// x / (1 + exp(-x)), one instruction.
// CHECK: {{^}}instr elementwise result 1 operands 1 0 expr 6 input 0 const 0x1p+0 neg 0 exp 2 add 1 3 div 0 4 loc {{.*}}named.mlir:[[# @LINE + 9]]:8
// CHECK-NOT: instr
func.func @main(%x: tensor<6xf64>) -> tensor<6xf64> {
  %one = arith.constant 1.0 : f64
  %e = tensor.empty() : tensor<6xf64>
  %c = linalg.fill ins(%one : f64) outs(%e : tensor<6xf64>) -> tensor<6xf64>
  %n = linalg.elementwise kind=#linalg.elementwise_kind<negf> ins(%x : tensor<6xf64>) outs(%e : tensor<6xf64>) -> tensor<6xf64>
  %x1 = linalg.elementwise kind=#linalg.elementwise_kind<exp> ins(%n : tensor<6xf64>) outs(%e : tensor<6xf64>) -> tensor<6xf64>
  %d = linalg.elementwise kind=#linalg.elementwise_kind<add> ins(%c, %x1 : tensor<6xf64>, tensor<6xf64>) outs(%e : tensor<6xf64>) -> tensor<6xf64>
  %y = linalg.elementwise kind=#linalg.elementwise_kind<div> ins(%x, %d : tensor<6xf64>, tensor<6xf64>) outs(%e : tensor<6xf64>) -> tensor<6xf64>
  return %y : tensor<6xf64>
}

//--- shared.mlir
// %t feeds two returned values: it is stored once and both read it, instead
// of each computing it again. %dead is never stored.
// CHECK: {{^}}instr elementwise result 1 operands 1 0 expr 2 input 0 tanh 0 loc {{.*}}shared.mlir:[[# @LINE + 6]]:8
// CHECK-NEXT: {{^}}instr elementwise result 2 operands 1 1 expr 2 input 0 add 0 0 loc
// CHECK-NEXT: {{^}}instr elementwise result 3 operands 1 1 expr 2 input 0 mul 0 0 loc
// CHECK-NOT: instr
func.func @main(%x: tensor<2x3xbf16>) -> (tensor<2x3xbf16>, tensor<2x3xbf16>) {
  %dead = math.exp %x : tensor<2x3xbf16>
  %t = math.tanh %x : tensor<2x3xbf16>
  %a = arith.addf %t, %t : tensor<2x3xbf16>
  %m = arith.mulf %t, %t : tensor<2x3xbf16>
  return %a, %m : tensor<2x3xbf16>, tensor<2x3xbf16>
}
