// RUN: shardlin-opt %s -split-input-file --shardlin-convert-to-llvm | FileCheck %s

// Each shardlin.buffer.* op becomes one call of the runtime's C ABI
// (runtime/include/shardlin-c/Runtime.h); memrefs stay memrefs (unrealized
// casts to their descriptors) for finalize-memref-to-llvm.

// The ABI functions the module uses are declared once; each placement list
// is one private constant global.
// CHECK-DAG: llvm.mlir.global private constant @[[P201:__shardlin_placements_[0-9]+]](dense<[2, 0, 1]> : tensor<3xi64>) {addr_space = 0 : i32} : !llvm.array<3 x i64>
// CHECK-DAG: llvm.mlir.global private constant @[[P012:__shardlin_placements_[0-9]+]](dense<[0, 1, 2]> : tensor<3xi64>) {addr_space = 0 : i32} : !llvm.array<3 x i64>
// CHECK-DAG: llvm.func @shardlin_thread_context() -> !llvm.ptr
// CHECK-DAG: llvm.func @shardlin_context_world_size(!llvm.ptr) -> i32
// CHECK-DAG: llvm.func @shardlin_context_rank(!llvm.ptr) -> i32
// CHECK-DAG: llvm.func @shardlin_all_gather(!llvm.ptr, i32, !llvm.ptr, !llvm.ptr, i64, !llvm.ptr) -> i32
// CHECK-DAG: llvm.func @shardlin_all_to_all(!llvm.ptr, i32, !llvm.ptr, !llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr) -> i32
// CHECK-DAG: llvm.func @shardlin_reduce_scatter(!llvm.ptr, i32, !llvm.ptr, !llvm.ptr, i64, !llvm.ptr) -> i32

// The prologue reads the thread's context once, asserts it is set and has
// the world size of the function's specs, and reads the rank, which replaces
// shardlin.rank.
// CHECK-LABEL: func.func @collectives
// CHECK-SAME: (%[[X:.*]]: memref<5x?xf32>, %[[G:.*]]: memref<5x7xf32>, %[[XS:.*]]: memref<15x?xf32>, %[[P:.*]]: memref<15x4xbf16>, %[[Y:.*]]: memref<5x4xbf16>)
// CHECK-DAG: %[[XD:.*]] = builtin.unrealized_conversion_cast %[[X]] : memref<5x?xf32> to !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK-DAG: %[[GD:.*]] = builtin.unrealized_conversion_cast %[[G]] : memref<5x7xf32> to !llvm.struct
// CHECK: %[[CTX:.*]] = llvm.call @shardlin_thread_context() : () -> !llvm.ptr
// CHECK-NEXT: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: %[[SET:.*]] = llvm.icmp "ne" %[[CTX]], %[[NULL]] : !llvm.ptr
// CHECK-NEXT: cf.assert %[[SET]], "shardlin: @collectives needs the calling thread's context: call shardlin_set_thread_context before the entry"
// CHECK-NEXT: %[[WS:.*]] = llvm.call @shardlin_context_world_size(%[[CTX]]) : (!llvm.ptr) -> i32
// CHECK-NEXT: %[[W3:.*]] = llvm.mlir.constant(3 : i32) : i32
// CHECK-NEXT: %[[SAME:.*]] = llvm.icmp "eq" %[[WS]], %[[W3]] : i32
// CHECK-NEXT: cf.assert %[[SAME]], "shardlin: @collectives was compiled for 3 ranks but the calling thread's context has another world size"
// CHECK-NEXT: %[[R32:.*]] = llvm.call @shardlin_context_rank(%[[CTX]]) : (!llvm.ptr) -> i32
// CHECK-NEXT: %[[R64:.*]] = llvm.sext %[[R32]] : i32 to i64
// CHECK-NEXT: %[[RANK:.*]] = builtin.unrealized_conversion_cast %[[R64]] : i64 to index
// all_gather: the scalars (element type, dim, placements), then the views:
// pointers to unranked descriptors {rank, ptr to the ranked descriptor} on
// the stack, which is saved and restored around the call.
// CHECK-NEXT: %[[SP:.*]] = llvm.intr.stacksave : !llvm.ptr
// CHECK-NEXT: %[[F32:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT: %[[DIM:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: %[[PL:.*]] = llvm.mlir.addressof @[[P201]] : !llvm.ptr
// CHECK-NEXT: %[[ONE:.*]] = llvm.mlir.constant(1 : index) : i64
// CHECK-NEXT: %[[XR:.*]] = llvm.alloca %[[ONE]] x !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK-NEXT: llvm.store %[[XD]], %[[XR]]
// CHECK-NEXT: %[[U0:.*]] = llvm.mlir.poison : !llvm.struct<(i64, ptr)>
// CHECK-NEXT: %[[RK:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-NEXT: %[[U1:.*]] = llvm.insertvalue %[[RK]], %[[U0]][0]
// CHECK-NEXT: %[[U2:.*]] = llvm.insertvalue %[[XR]], %[[U1]][1]
// CHECK-NEXT: %[[ONE2:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: %[[XV:.*]] = llvm.alloca %[[ONE2]] x !llvm.struct<(i64, ptr)>
// CHECK-NEXT: llvm.store %[[U2]], %[[XV]]
// CHECK-NEXT: %[[ONE3:.*]] = llvm.mlir.constant(1 : index) : i64
// CHECK-NEXT: %[[GR:.*]] = llvm.alloca %[[ONE3]] x !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK-NEXT: llvm.store %[[GD]], %[[GR]]
// CHECK: %[[GV:.*]] = llvm.alloca {{.*}} x !llvm.struct<(i64, ptr)>
// CHECK-NEXT: llvm.store
// CHECK-NEXT: llvm.call @shardlin_all_gather(%[[CTX]], %[[F32]], %[[XV]], %[[GV]], %[[DIM]], %[[PL]]) : (!llvm.ptr, i32, !llvm.ptr, !llvm.ptr, i64, !llvm.ptr) -> i32
// CHECK-NEXT: llvm.intr.stackrestore %[[SP]]
// all_to_all: split spec, then concat spec; the same placement list shares
// its global.
// CHECK-NEXT: llvm.intr.stacksave
// CHECK-NEXT: llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT: %[[SD:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: %[[SPL:.*]] = llvm.mlir.addressof @[[P201]] : !llvm.ptr
// CHECK-NEXT: %[[CD:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT: %[[CPL:.*]] = llvm.mlir.addressof @[[P012]] : !llvm.ptr
// CHECK: llvm.call @shardlin_all_to_all(%[[CTX]], %{{.*}}, %{{.*}}, %{{.*}}, %[[SD]], %[[SPL]], %[[CD]], %[[CPL]])
// CHECK-NEXT: llvm.intr.stackrestore
// reduce_scatter of bf16: dtype 1.
// CHECK-NEXT: llvm.intr.stacksave
// CHECK-NEXT: %[[BF16:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: llvm.call @shardlin_reduce_scatter(%[[CTX]], %[[BF16]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
// CHECK: return %[[RANK]]
func.func @collectives(%x: memref<5x?xf32>, %g: memref<5x7xf32>, %xs: memref<15x?xf32>,
                       %p: memref<15x4xbf16>, %y: memref<5x4xbf16>) -> index {
  %r = shardlin.rank world_size = 3
  shardlin.buffer.all_gather %x into %g along <dim = 1, placements = [2, 0, 1]> : memref<5x?xf32> into memref<5x7xf32>
  shardlin.buffer.all_to_all %g into %xs split <dim = 1, placements = [2, 0, 1]> concat <dim = 0, placements = [0, 1, 2]> : memref<5x7xf32> into memref<15x?xf32>
  shardlin.buffer.reduce_scatter %p into %y along <dim = 0, placements = [0, 1, 2]> : memref<15x4xbf16> into memref<5x4xbf16>
  return %r : index
}

// -----

// Local compute needs the context but no world size: no world-size check,
// no rank.
// CHECK-DAG: llvm.func @shardlin_gemm(!llvm.ptr, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i32, !llvm.ptr, i32, i32) -> i32
// CHECK-DAG: llvm.func @shardlin_bias_add(!llvm.ptr, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// CHECK-DAG: llvm.func @shardlin_convert(!llvm.ptr, !llvm.ptr, i32, !llvm.ptr, i32) -> i32
// CHECK-LABEL: func.func @local_compute
// CHECK: %[[CTX:.*]] = llvm.call @shardlin_thread_context()
// CHECK-NOT: shardlin_context_world_size
// CHECK-NOT: shardlin_context_rank
// gemm with a strided bias view and transpose_rhs: f32 (2), out f32 (2),
// flags 0 and 1; the views lhs, rhs, bias, out.
// CHECK: llvm.intr.stacksave
// CHECK-NEXT: %[[DT:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT: %[[ODT:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT: %[[TL:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: %[[TR:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: %[[LHS:.*]] = llvm.alloca {{.*}} x !llvm.struct<(i64, ptr)>
// CHECK: %[[RHS:.*]] = llvm.alloca {{.*}} x !llvm.struct<(i64, ptr)>
// CHECK: %[[BIAS:.*]] = llvm.alloca {{.*}} x !llvm.struct<(i64, ptr)>
// CHECK: %[[OUT:.*]] = llvm.alloca {{.*}} x !llvm.struct<(i64, ptr)>
// CHECK-NEXT: llvm.store
// CHECK-NEXT: llvm.call @shardlin_gemm(%[[CTX]], %[[DT]], %[[LHS]], %[[RHS]], %[[BIAS]], %[[ODT]], %[[OUT]], %[[TL]], %[[TR]])
// gemm of f16 operands (0) into f32 (2) without a bias: a null bias;
// transpose_lhs.
// CHECK: llvm.intr.stacksave
// CHECK-NEXT: %[[DT16:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: %[[ODT32:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT: %[[TL1:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[TR0:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK: %[[NOBIAS:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: llvm.call @shardlin_gemm(%[[CTX]], %[[DT16]], %{{.*}}, %{{.*}}, %[[NOBIAS]], %[[ODT32]], %{{.*}}, %[[TL1]], %[[TR0]])
// bias_add in place: one view for input and output.
// CHECK: %[[YV:.*]] = llvm.alloca {{.*}} x !llvm.struct<(i64, ptr)>
// CHECK: %[[BV:.*]] = llvm.alloca {{.*}} x !llvm.struct<(i64, ptr)>
// CHECK-NEXT: llvm.store
// CHECK-NEXT: llvm.call @shardlin_bias_add(%[[CTX]], %{{.*}}, %[[YV]], %[[BV]], %[[YV]])
// convert f32 (2) -> f16 (0): in, from, out, to.
// CHECK: llvm.intr.stacksave
// CHECK-NEXT: %[[FROM:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT: %[[TO:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK: %[[CIN:.*]] = llvm.alloca {{.*}} x !llvm.struct<(i64, ptr)>
// CHECK: %[[COUT:.*]] = llvm.alloca {{.*}} x !llvm.struct<(i64, ptr)>
// CHECK-NEXT: llvm.store
// CHECK-NEXT: llvm.call @shardlin_convert(%[[CTX]], %[[CIN]], %[[FROM]], %[[COUT]], %[[TO]])
func.func @local_compute(%g: memref<20x19xf32>, %a: memref<?x19xf32>,
                         %b: memref<?xf32, strided<[1], offset: ?>>, %q: memref<20x?xf32>,
                         %l: memref<19x20xf16>, %r: memref<19x3xf16>, %p: memref<20x3xf32>,
                         %y: memref<5x11xf32>, %bb: memref<11xf32>, %h: memref<5x11xf16>) {
  shardlin.buffer.gemm %g, %a bias %b transpose_rhs into %q : memref<20x19xf32>, memref<?x19xf32>, memref<?xf32, strided<[1], offset: ?>> into memref<20x?xf32>
  shardlin.buffer.gemm %l, %r transpose_lhs into %p : memref<19x20xf16>, memref<19x3xf16> into memref<20x3xf32>
  shardlin.buffer.bias_add %y, %bb into %y : memref<5x11xf32>, memref<11xf32> into memref<5x11xf32>
  shardlin.buffer.convert %y into %h : memref<5x11xf32> into memref<5x11xf16>
  return
}

// -----

// A function without shardlin ops gets no prologue; one with calls in a loop
// restores the stack after each call.
// CHECK-LABEL: func.func @plain
// CHECK-NOT: llvm.call
// CHECK: return
func.func @plain(%x: memref<4xf32>) {
  return
}

// CHECK-LABEL: func.func @in_loop
// CHECK: llvm.call @shardlin_thread_context
// CHECK: scf.for
// CHECK-NEXT: %[[SP:.*]] = llvm.intr.stacksave
// CHECK: llvm.call @shardlin_convert
// CHECK-NEXT: llvm.intr.stackrestore %[[SP]]
// CHECK-NEXT: }
func.func @in_loop(%x: memref<4xf32>, %y: memref<4xf16>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    shardlin.buffer.convert %x into %y : memref<4xf32> into memref<4xf16>
  }
  return
}
