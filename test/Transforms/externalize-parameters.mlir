// --shardlin-externalize-parameters: each large tensor constant of a public
// function becomes an appended argument marked shardlin.parameter, its value
// a tensor of the safetensors file, named by its dense_resource key or
// <func>.cst<i>. Every dtype the format has; one value is one tensor; a
// splat is written expanded; small constants, vectors and private
// functions stay as they are; unreferenced blobs leave dialect_resources.

// RUN: rm -rf %t && mkdir -p %t
// RUN: shardlin-opt %s --allow-unregistered-dialect --shardlin-externalize-parameters="file=%t/p.safetensors" | FileCheck %s
// RUN: %python %S/Inputs/check_safetensors.py %t/p.safetensors | FileCheck %s --check-prefix=FILE

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32>,
// CHECK-SAME: %[[W:.*]]: tensor<8x4xf32> {shardlin.parameter = "fc.weight"},
// CHECK-SAME: %[[D:.*]]: tensor<2x8xf16> {shardlin.parameter = "main.cst0"},
// CHECK-SAME: %[[S:.*]]: tensor<4x8xf32> {shardlin.parameter = "main.cst1"})
// CHECK-NOT: arith.constant dense
// CHECK: arith.constant dense<1.000000e+00> : tensor<3xf32>
// CHECK: arith.constant dense<2.000000e+00> : vector<32xf32>
// CHECK: arith.addf %[[X]], %[[S]]
// CHECK: arith.addf %[[S]], %[[S]]
// CHECK: linalg.matmul ins(%[[X]], %[[W]] :
// CHECK: "test.use"(%[[D]], %[[D]],
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  %w = arith.constant dense_resource<fc.weight> : tensor<8x4xf32>
  %d = arith.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, -8.5]]> : tensor<2x8xf16>
  %s = arith.constant dense<0.5> : tensor<4x8xf32>
  %d2 = arith.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, -8.5]]> : tensor<2x8xf16>
  %small = arith.constant dense<1.0> : tensor<3xf32>
  %vec = arith.constant dense<2.0> : vector<32xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %xs = arith.addf %x, %s : tensor<4x8xf32>
  %xx = arith.addf %s, %s : tensor<4x8xf32>
  %m = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x4xf32>) outs(%i : tensor<4x4xf32>) -> tensor<4x4xf32>
  "test.use"(%d, %d2, %small, %vec, %xs, %xx) : (tensor<2x8xf16>, tensor<2x8xf16>, tensor<3xf32>, vector<32xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> ()
  return %m : tensor<4x4xf32>
}

// The same dense value in a second function: one tensor (the first
// function's name), an argument of each function. Integer and other float
// dtypes, and a resource used twice (one argument).
// CHECK-LABEL: func.func @second(
// CHECK-SAME: tensor<2x8xf16> {shardlin.parameter = "main.cst0"}
// CHECK-SAME: tensor<16xbf16> {shardlin.parameter = "second.cst0"}
// CHECK-SAME: tensor<16xf64> {shardlin.parameter = "second.cst1"}
// CHECK-SAME: tensor<4x4xi32> {shardlin.parameter = "second.cst2"}
// CHECK-SAME: tensor<16xi1> {shardlin.parameter = "second.cst3"}
// CHECK-SAME: tensor<16xui8> {shardlin.parameter = "second.cst4"}
// CHECK-SAME: tensor<16xi64> {shardlin.parameter = "second.cst5"}
// CHECK-SAME: tensor<8x4xf32> {shardlin.parameter = "fc.weight"})
func.func @second() {
  %d = arith.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, -8.5]]> : tensor<2x8xf16>
  %b = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, -1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, 1.5]> : tensor<16xbf16>
  %f = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, -1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, 0.1]> : tensor<16xf64>
  %i = arith.constant dense<[[1, 2, 3, 4], [5, 6, 7, 8], [-1, -2, -3, -4], [-5, -6, -7, 2147483647]]> : tensor<4x4xi32>
  %p = arith.constant dense<[true, false, true, true, false, false, true, false, true, true, true, false, false, false, false, true]> : tensor<16xi1>
  %u = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 255]> : tensor<16xui8>
  %l = arith.constant dense<-3> : tensor<16xi64>
  %w = arith.constant dense_resource<fc.weight> : tensor<8x4xf32>
  %w2 = arith.constant dense_resource<fc.weight> : tensor<8x4xf32>
  "test.use"(%d, %b, %f, %i, %p, %u, %l, %w, %w2) : (tensor<2x8xf16>, tensor<16xbf16>, tensor<16xf64>, tensor<4x4xi32>, tensor<16xi1>, tensor<16xui8>, tensor<16xi64>, tensor<8x4xf32>, tensor<8x4xf32>) -> ()
  return
}

// A private function keeps its constants (its callers' signatures do not
// change): the resource it uses stays in dialect_resources; fc.weight,
// which nothing references any more, does not.
// CHECK-LABEL: func.func private @helper()
// CHECK: arith.constant dense_resource<kept> : tensor<16xf32>
func.func private @helper() -> tensor<16xf32> {
  %k = arith.constant dense_resource<kept> : tensor<16xf32>
  return %k : tensor<16xf32>
}

// CHECK: dialect_resources
// CHECK-NOT: fc.weight
// CHECK: kept:
// CHECK-NOT: fc.weight

// The file: every tensor once, in order of first use, with its bytes
// (check_safetensors.py prints each tensor's dtype, shape and values).
// FILE: fc.weight F32 [8, 4] [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0]
// FILE-NEXT: main.cst0 F16 [2, 8] [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, -1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, -8.5]
// FILE-NEXT: main.cst1 F32 [4, 8] [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]
// FILE-NEXT: second.cst0 BF16 [16] [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, -1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, 1.5]
// FILE-NEXT: second.cst1 F64 [16] [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, -1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, 0.1]
// FILE-NEXT: second.cst2 I32 [4, 4] [1, 2, 3, 4, 5, 6, 7, 8, -1, -2, -3, -4, -5, -6, -7, 2147483647]
// FILE-NEXT: second.cst3 BOOL [16] [1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1, 0, 0, 0, 0, 1]
// FILE-NEXT: second.cst4 U8 [16] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 255]
// FILE-NEXT: second.cst5 I64 [16] [-3, -3, -3, -3, -3, -3, -3, -3, -3, -3, -3, -3, -3, -3, -3, -3]
// FILE-NEXT: tensors: 9

// min-elements=32 moves @main's 32-element constants and leaves its
// 16-element one; with more than any constant has, nothing moves and no
// file is written.
// RUN: shardlin-opt %s --allow-unregistered-dialect --shardlin-externalize-parameters="file=%t/big.safetensors min-elements=32" | FileCheck %s --check-prefix=MIN
// RUN: %python %S/Inputs/check_safetensors.py %t/big.safetensors | FileCheck %s --check-prefix=MINFILE
// MIN-LABEL: func.func @main(
// MIN-SAME: %{{.*}}: tensor<4x8xf32>, %{{.*}}: tensor<8x4xf32> {shardlin.parameter = "fc.weight"}, %{{.*}}: tensor<4x8xf32> {shardlin.parameter = "main.cst0"}) ->
// MIN: arith.constant dense<{{.*}}> : tensor<2x8xf16>
// MINFILE: fc.weight F32 [8, 4]
// MINFILE-NEXT: main.cst0 F32 [4, 8]
// MINFILE-NEXT: tensors: 2
// RUN: shardlin-opt %s --allow-unregistered-dialect --shardlin-externalize-parameters="file=%t/none.safetensors min-elements=1000" | FileCheck %s --check-prefix=NONE
// RUN: not test -e %t/none.safetensors
// NONE-LABEL: func.func @main(%{{.*}}: tensor<4x8xf32>) -> tensor<4x4xf32>
// NONE: dense_resource<fc.weight>
// NONE: fc.weight: "0x

{-#
  dialect_resources: {
    builtin: {
      fc.weight: "0x04000000000000000000803F0000004000004040000080400000A0400000C0400000E0400000004100001041000020410000304100004041000050410000604100007041000080410000884100009041000098410000A0410000A8410000B0410000B8410000C0410000C8410000D0410000D8410000E0410000E8410000F0410000F841",
      kept: "0x040000000000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F"
    }
  }
#-}
