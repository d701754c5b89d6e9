// RUN: shardlin-opt %s -split-input-file --shardlin-convert-to-llvm | FileCheck %s

// shardlin.buffer.attention and buffer.rope become one call each of the C
// ABI (shardlin_attention, shardlin_rope); a rank-local attention's head
// tables are constant globals and its W is the function's world size.

// CHECK-DAG: llvm.mlir.global private constant @[[QH:__shardlin_heads_[0-9]+]](dense<[0, 2, 2, 4, 4, 4]> : tensor<6xi64>) {addr_space = 0 : i32} : !llvm.array<6 x i64>
// CHECK-DAG: llvm.mlir.global private constant @[[KVH:__shardlin_heads_[0-9]+]](dense<[0, 1, 0, 2, 0, 0]> : tensor<6xi64>) {addr_space = 0 : i32} : !llvm.array<6 x i64>
// CHECK-DAG: llvm.func @shardlin_attention(!llvm.ptr, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, !llvm.ptr, !llvm.ptr, f64, i32) -> i32
// CHECK-LABEL: func.func @rank_local
// CHECK: %[[CTX:.*]] = llvm.call @shardlin_thread_context()
// CHECK: cf.assert %{{.*}}, "shardlin: @rank_local was compiled for 3 ranks but the calling thread's context has another world size"
// CHECK: %[[SP:.*]] = llvm.intr.stacksave
// CHECK-NEXT: %[[F32:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT: %[[D:.*]] = llvm.mlir.constant(4 : i64) : i64
// CHECK-NEXT: %[[G:.*]] = llvm.mlir.constant(3 : i64) : i64
// CHECK-NEXT: %[[QT:.*]] = llvm.mlir.addressof @[[QH]] : !llvm.ptr
// CHECK-NEXT: %[[KVT:.*]] = llvm.mlir.addressof @[[KVH]] : !llvm.ptr
// CHECK-NEXT: %[[S:.*]] = llvm.mlir.constant(5.000000e-01 : f64) : f64
// CHECK-NEXT: %[[C:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: %[[NOMASK:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: llvm.call @shardlin_attention(%[[CTX]], %[[F32]], %{{.*}}, %{{.*}}, %{{.*}}, %[[NOMASK]], %{{.*}}, %[[D]], %[[G]], %[[QT]], %[[KVT]], %[[S]], %[[C]])
// CHECK-NEXT: llvm.intr.stackrestore %[[SP]]
func.func @rank_local(%q: memref<2x4x?xf32>, %k: memref<2x4x?xf32>, %o: memref<2x4x?xf32>) {
  shardlin.buffer.attention %q, %k, %k into %o {causal, group = 3 : i64, head_dim = 4 : i64, q_heads = array<i64: 0, 2, 2, 4, 4, 4>, kv_heads = array<i64: 0, 1, 0, 2, 0, 0>, scale = 0.5 : f64} : memref<2x4x?xf32>, memref<2x4x?xf32>, memref<2x4x?xf32> into memref<2x4x?xf32>
  return
}

// -----

// The global form: NULL tables and no world-size check; rope's table dtype
// and `inverse`.
// CHECK-DAG: llvm.func @shardlin_rope(!llvm.ptr, i32, !llvm.ptr, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i32) -> i32
// CHECK-LABEL: func.func @global_mask_rope
// CHECK-NOT: shardlin_context_world_size
// CHECK: %[[BF16:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[TBF16:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[D:.*]] = llvm.mlir.constant(4 : i64) : i64
// CHECK-NEXT: %[[INV:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: llvm.call @shardlin_rope(%{{.*}}, %[[BF16]], %{{.*}}, %[[TBF16]], %{{.*}}, %{{.*}}, %{{.*}}, %[[D]], %[[INV]])
// CHECK: %[[G:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-NEXT: %[[NQ:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: %[[NKV:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: %[[S:.*]] = llvm.mlir.constant(2.500000e-01 : f64) : f64
// CHECK-NEXT: %[[NC:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK: llvm.call @shardlin_attention(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[G]], %[[NQ]], %[[NKV]], %[[S]], %[[NC]])
func.func @global_mask_rope(%q: memref<3x16xbf16>, %k: memref<3x8xbf16>, %m: memref<3x3xbf16>, %c: memref<3x2xbf16>, %r: memref<3x16xbf16>, %o: memref<3x16xbf16>) {
  shardlin.buffer.rope %q, %c, %c into %r {head_dim = 4 : i64, inverse} : memref<3x16xbf16>, memref<3x2xbf16>, memref<3x2xbf16> into memref<3x16xbf16>
  shardlin.buffer.attention %r, %k, %k mask %m into %o {group = 2 : i64, head_dim = 4 : i64, scale = 0.25 : f64} : memref<3x16xbf16>, memref<3x8xbf16>, memref<3x8xbf16>, memref<3x3xbf16> into memref<3x16xbf16>
  return
}

// -----

// attention_grad: dout after v, wrt (1: dk) after out; the default scale
// 1 / sqrt(4) and the global form's group Hq / Hkv = 2.
// CHECK-DAG: llvm.func @shardlin_attention_grad(!llvm.ptr, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i32, i64, i64, !llvm.ptr, !llvm.ptr, f64, i32) -> i32
// CHECK-LABEL: func.func @grad
// CHECK: llvm.intr.stacksave
// CHECK-NEXT: llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT: %[[WRT:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[D:.*]] = llvm.mlir.constant(4 : i64) : i64
// CHECK-NEXT: %[[G:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-NEXT: %[[NQ:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: %[[NKV:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: %[[S:.*]] = llvm.mlir.constant(5.000000e-01 : f64) : f64
// CHECK-NEXT: %[[C:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: %[[NOMASK:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: llvm.call @shardlin_attention_grad(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[NOMASK]], %{{.*}}, %[[WRT]], %[[D]], %[[G]], %[[NQ]], %[[NKV]], %[[S]], %[[C]])
func.func @grad(%q: memref<3x16xf32>, %k: memref<3x8xf32>, %do: memref<3x16xf32>, %dk: memref<3x8xf32>) {
  shardlin.buffer.attention_grad %q, %k, %k, %do into %dk {causal, head_dim = 4 : i64, wrt = "k"} : memref<3x16xf32>, memref<3x8xf32>, memref<3x8xf32>, memref<3x16xf32> into memref<3x8xf32>
  return
}
