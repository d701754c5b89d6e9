// RUN: shardlin-opt %s '--shardlin-lower-to-llvm=results-as-out-params=true' | FileCheck %s
// RUN: shardlin-opt %s '--shardlin-lower-to-llvm=results-as-out-params=true' | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVMIR

// --shardlin-lower-to-llvm=results-as-out-params: public functions whose
// results all have static shapes take buffers for them after their
// arguments (what shardlin-run --jit calls); the op that computes a result
// writes the caller's buffer, with no allocation and no copy of it.

// The GEMM's output is the out-param: one allocation is left, the
// all_gather's, freed before the return.
// CHECK-LABEL: llvm.func @col_wise(
// CHECK-NOT: -> !llvm.struct
// CHECK-SAME: attributes {llvm.emit_c_interface}
// CHECK-COUNT-1: llvm.call @malloc
// CHECK: llvm.call @shardlin_all_gather
// CHECK: llvm.call @shardlin_gemm
// CHECK-NOT: llvm.call @malloc
// CHECK-NOT: llvm.intr.memcpy
// CHECK: llvm.call @free
// CHECK: llvm.return{{$}}
// LLVMIR-LABEL: define void @_mlir_ciface_col_wise(ptr %0, ptr %1, ptr %2)
func.func @col_wise(%x: tensor<5x7xf32>,
    %w: !shardlin.sharded<tensor<10x7xf32>, #shardlin.chunk<dim = 0, placements = [1, 2, 0]>>) -> tensor<5x10xf32> {
  %y = shardlin.linear %x, %w : (tensor<5x7xf32>, !shardlin.sharded<tensor<10x7xf32>, #shardlin.chunk<dim = 0, placements = [1, 2, 0]>>) -> tensor<5x10xf32>
  return %y : tensor<5x10xf32>
}

// A value returned twice: the first out-param is written by the GEMM, the
// second is a copy of it (upstream's hoisting alone crashed on this).
// CHECK-LABEL: llvm.func @twice(
// CHECK: llvm.call @shardlin_gemm
// CHECK: "llvm.intr.memcpy"
// CHECK: llvm.return{{$}}
// LLVMIR-LABEL: define void @_mlir_ciface_twice(ptr %0, ptr %1, ptr %2, ptr %3)
func.func @twice(%x: tensor<5x7xf32>,
    %w: !shardlin.sharded<tensor<10x7xf32>, #shardlin.chunk<dim = 0, placements = [1, 2, 0]>>) -> (tensor<5x10xf32>, tensor<5x10xf32>) {
  %y = shardlin.linear %x, %w : (tensor<5x7xf32>, !shardlin.sharded<tensor<10x7xf32>, #shardlin.chunk<dim = 0, placements = [1, 2, 0]>>) -> tensor<5x10xf32>
  return %y, %y : tensor<5x10xf32>, tensor<5x10xf32>
}

// A dynamic result keeps being returned (its caller cannot size a buffer).
// CHECK-LABEL: llvm.func @dynamic(
// CHECK-SAME: -> !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// LLVMIR-LABEL: define void @_mlir_ciface_dynamic(ptr %0, ptr %1)
func.func @dynamic(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %e = math.exp %x : tensor<?x4xf32>
  return %e : tensor<?x4xf32>
}
