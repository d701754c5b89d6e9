// RUN: shardlin-opt %s -split-input-file --shardlin-convert-to-llvm | FileCheck %s

// Explicit chunk bounds and all_reduce on the native path: a collective one
// of whose specs has bounds other than the ceil rule's calls the *_bounds
// form of the C ABI with a pointer to a constant global of the bounds (and a
// null pointer for a spec that is the ceil rule's); bounds equal to the ceil
// rule's are the plain call. all_reduce calls shardlin_all_reduce, its world
// size checked at the entry as a spec's is.

// CHECK-DAG: llvm.mlir.global private constant @[[B:__shardlin_bounds_[0-9]+]](dense<[0, 4, 4, 8, 10]> : tensor<5xi64>) {addr_space = 0 : i32} : !llvm.array<5 x i64>
// CHECK-DAG: llvm.mlir.global private constant @[[P:__shardlin_placements_[0-9]+]](dense<[0, 1, 2, 3]> : tensor<4xi64>) {addr_space = 0 : i32} : !llvm.array<4 x i64>
// CHECK-DAG: llvm.mlir.global private constant @[[PP:__shardlin_placements_[0-9]+]](dense<[3, 1, 0, 2]> : tensor<4xi64>) {addr_space = 0 : i32} : !llvm.array<4 x i64>
// CHECK-DAG: llvm.func @shardlin_all_gather_bounds(!llvm.ptr, i32, !llvm.ptr, !llvm.ptr, i64, !llvm.ptr, !llvm.ptr) -> i32
// CHECK-DAG: llvm.func @shardlin_all_to_all_bounds(!llvm.ptr, i32, !llvm.ptr, !llvm.ptr, i64, !llvm.ptr, !llvm.ptr, i64, !llvm.ptr, !llvm.ptr) -> i32
// CHECK-DAG: llvm.func @shardlin_reduce_scatter_bounds(!llvm.ptr, i32, !llvm.ptr, !llvm.ptr, i64, !llvm.ptr, !llvm.ptr) -> i32
// CHECK-DAG: llvm.func @shardlin_reduce_scatter(!llvm.ptr, i32, !llvm.ptr, !llvm.ptr, i64, !llvm.ptr) -> i32
// CHECK-DAG: llvm.func @shardlin_all_reduce(!llvm.ptr, i32, !llvm.ptr, !llvm.ptr) -> i32
// CHECK-NOT: __shardlin_bounds_

// CHECK-LABEL: func.func @bounded
// CHECK: %[[CTX:.*]] = llvm.call @shardlin_thread_context()
// CHECK: %[[WS:.*]] = llvm.call @shardlin_context_world_size(%[[CTX]])
// CHECK-NEXT: llvm.mlir.constant(4 : i32) : i32
// all_gather along dim 1 by [0, 4, 4, 8, 10] (rank 1's chunk is empty):
// dtype, dim, placements, bounds, then the views.
// CHECK: llvm.intr.stacksave
// CHECK-NEXT: %[[F32:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT: %[[DIM:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: %[[PL:.*]] = llvm.mlir.addressof @[[P]] : !llvm.ptr
// CHECK-NEXT: %[[BD:.*]] = llvm.mlir.addressof @[[B]] : !llvm.ptr
// CHECK: %[[IN:.*]] = llvm.alloca {{.*}} x !llvm.struct<(i64, ptr)>
// CHECK: %[[OUT:.*]] = llvm.alloca {{.*}} x !llvm.struct<(i64, ptr)>
// CHECK-NEXT: llvm.store
// CHECK-NEXT: llvm.call @shardlin_all_gather_bounds(%[[CTX]], %[[F32]], %[[IN]], %[[OUT]], %[[DIM]], %[[PL]], %[[BD]]) : (!llvm.ptr, i32, !llvm.ptr, !llvm.ptr, i64, !llvm.ptr, !llvm.ptr) -> i32
// CHECK-NEXT: llvm.intr.stackrestore
// all_to_all split by the bounds, concatenated by the ceil rule: a null
// pointer for the concat spec's bounds.
// CHECK-NEXT: llvm.intr.stacksave
// CHECK-NEXT: llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT: %[[SD:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: %[[SPL:.*]] = llvm.mlir.addressof @[[PP]] : !llvm.ptr
// CHECK-NEXT: %[[SB:.*]] = llvm.mlir.addressof @[[B]] : !llvm.ptr
// CHECK-NEXT: %[[CD:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT: %[[CPL:.*]] = llvm.mlir.addressof @[[P]] : !llvm.ptr
// CHECK-NEXT: %[[CB:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: llvm.call @shardlin_all_to_all_bounds(%[[CTX]], %{{.*}}, %{{.*}}, %{{.*}}, %[[SD]], %[[SPL]], %[[SB]], %[[CD]], %[[CPL]], %[[CB]])
// CHECK-NEXT: llvm.intr.stackrestore
// reduce_scatter of rows by uneven bounds.
// CHECK: llvm.call @shardlin_reduce_scatter_bounds(%[[CTX]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
// reduce_scatter whose bounds are the ceil rule's: the plain call.
// CHECK: llvm.call @shardlin_reduce_scatter(%[[CTX]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, i32, !llvm.ptr, !llvm.ptr, i64, !llvm.ptr) -> i32
// all_reduce of bf16 (1): dtype, then in and out.
// CHECK: llvm.intr.stacksave
// CHECK-NEXT: %[[BF16:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: %[[SIN:.*]] = llvm.alloca {{.*}} x !llvm.struct<(i64, ptr)>
// CHECK: %[[SOUT:.*]] = llvm.alloca {{.*}} x !llvm.struct<(i64, ptr)>
// CHECK-NEXT: llvm.store
// CHECK-NEXT: llvm.call @shardlin_all_reduce(%[[CTX]], %[[BF16]], %[[SIN]], %[[SOUT]]) : (!llvm.ptr, i32, !llvm.ptr, !llvm.ptr) -> i32
// CHECK-NEXT: llvm.intr.stackrestore
func.func @bounded(%x: memref<8x?xf32>, %g: memref<8x10xf32>, %xs: memref<32x?xf32>,
                   %p: memref<10x3xf32>, %y: memref<?x3xf32>, %q: memref<12x3xf32>, %z: memref<3x3xf32>,
                   %s: memref<8x11xbf16>, %t: memref<8x11xbf16>) {
  shardlin.buffer.all_gather %x into %g along <dim = 1, placements = [0, 1, 2, 3], bounds = [0, 4, 4, 8, 10]> : memref<8x?xf32> into memref<8x10xf32>
  shardlin.buffer.all_to_all %g into %xs split <dim = 1, placements = [3, 1, 0, 2], bounds = [0, 4, 4, 8, 10]> concat <dim = 0, placements = [0, 1, 2, 3]> : memref<8x10xf32> into memref<32x?xf32>
  shardlin.buffer.reduce_scatter %p into %y along <dim = 0, placements = [0, 1, 2, 3], bounds = [0, 4, 4, 8, 10]> : memref<10x3xf32> into memref<?x3xf32>
  shardlin.buffer.reduce_scatter %q into %z along <dim = 0, placements = [0, 1, 2, 3], bounds = [0, 3, 6, 9, 12]> : memref<12x3xf32> into memref<3x3xf32>
  shardlin.buffer.all_reduce %s into %t world_size = 4 : memref<8x11xbf16> into memref<8x11xbf16>
  return
}

// -----

// all_reduce alone: its world size is the prologue's.
// CHECK-LABEL: func.func @sum
// CHECK: %[[CTX:.*]] = llvm.call @shardlin_thread_context()
// CHECK: llvm.call @shardlin_context_world_size(%[[CTX]])
// CHECK-NEXT: llvm.mlir.constant(3 : i32) : i32
// CHECK-NOT: shardlin_context_rank
// CHECK: llvm.call @shardlin_all_reduce(%[[CTX]]
func.func @sum(%p: memref<?x5xf64>, %s: memref<?x5xf64>) {
  shardlin.buffer.all_reduce %p into %s world_size = 3 : memref<?x5xf64> into memref<?x5xf64>
  return
}
