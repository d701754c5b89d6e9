// RUN: shardlin-opt %s -split-input-file | shardlin-opt -split-input-file | FileCheck %s --check-prefix=ROUND
// RUN: shardlin-opt %s -split-input-file --shardlin-localize-sharded | FileCheck %s --check-prefix=LOCAL
// RUN: shardlin-opt %s -split-input-file --shardlin-localize-sharded --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --canonicalize --cse | FileCheck %s --check-prefix=BUF
// RUN: shardlin-opt %s -split-input-file --shardlin-localize-sharded --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --canonicalize --cse --shardlin-convert-to-llvm | FileCheck %s --check-prefix=LLVM

// The native path (docs/native.md) of the two ops backward functions add to
// the lowered forward's (docs/training.md): sum_rows bufferizes to
// shardlin.buffer.sum_rows into a new buffer (its `?` size the input's
// columns) and becomes one call of shardlin_sum_rows (in, dtype, out,
// out_dtype: f16 is 0, f32 2); from_local, the inverse of local_shard, is
// dropped by shardlin-localize-sharded: a sharded result is the rank's chunk it is
// made of.

!w = !shardlin.sharded<tensor<10x7xf32>, #shardlin.chunk<dim = 0, placements = [1, 2, 0]>>

// ROUND-LABEL: func.func @grads
// ROUND: shardlin.from_local %{{.*}} : tensor<?x7xf32> -> !shardlin.sharded<tensor<10x7xf32>, #shardlin.chunk<dim = 0, placements = [1, 2, 0]>>
// ROUND: shardlin.sum_rows %{{.*}} : tensor<?x7xf16> -> tensor<7xf32>
// LOCAL-LABEL: func.func @grads
// LOCAL-SAME: (%[[DA:.*]]: tensor<?x7xf32>, %[[DY:.*]]: tensor<?x7xf16>) -> (tensor<?x7xf32>, tensor<7xf32>)
// LOCAL-NEXT: %[[DB:.*]] = shardlin.sum_rows %[[DY]] : tensor<?x7xf16> -> tensor<7xf32>
// LOCAL-NEXT: return %[[DA]], %[[DB]] : tensor<?x7xf32>, tensor<7xf32>
// BUF-LABEL: func.func @grads
// BUF-SAME: (%[[DA:.*]]: memref<?x7xf32>, %[[DY:.*]]: memref<?x7xf16>) -> (memref<?x7xf32>, memref<7xf32>)
// BUF: %[[DB:.*]] = memref.alloc() {{.*}}: memref<7xf32>
// BUF-NEXT: shardlin.buffer.sum_rows %[[DY]] into %[[DB]] : memref<?x7xf16> into memref<7xf32>
// BUF: return %{{.*}}, %[[DB]]
// LLVM-DAG: llvm.func @shardlin_sum_rows(!llvm.ptr, i32, !llvm.ptr, i32, !llvm.ptr) -> i32
// LLVM-LABEL: func.func @grads
// LLVM: %[[CTX:.*]] = llvm.call @shardlin_thread_context()
// LLVM-NOT: shardlin_context_world_size
// LLVM: llvm.intr.stacksave
// LLVM-NEXT: %[[FROM:.*]] = llvm.mlir.constant(0 : i32) : i32
// LLVM-NEXT: %[[TO:.*]] = llvm.mlir.constant(2 : i32) : i32
// LLVM: %[[IN:.*]] = llvm.alloca {{.*}} x !llvm.struct<(i64, ptr)>
// LLVM: %[[OUT:.*]] = llvm.alloca {{.*}} x !llvm.struct<(i64, ptr)>
// LLVM-NEXT: llvm.store
// LLVM-NEXT: llvm.call @shardlin_sum_rows(%[[CTX]], %[[FROM]], %[[IN]], %[[TO]], %[[OUT]])
func.func @grads(%da: tensor<?x7xf32>, %dy: tensor<?x7xf16>) -> (!w, tensor<7xf32>) {
  %w = shardlin.from_local %da : tensor<?x7xf32> -> !w
  %db = shardlin.sum_rows %dy : tensor<?x7xf16> -> tensor<7xf32>
  return %w, %db : !w, tensor<7xf32>
}

// -----

// A dynamic column count: the new buffer's size is the input's dim 1.
// ROUND-LABEL: func.func @columns
// ROUND: shardlin.sum_rows %{{.*}} : tensor<?x?xf64> -> tensor<?xf64>
// BUF-LABEL: func.func @columns
// BUF-SAME: (%[[X:.*]]: memref<?x?xf64>)
// BUF: %[[N:.*]] = memref.dim %[[X]], %{{.*}} : memref<?x?xf64>
// BUF: %[[S:.*]] = memref.alloc(%[[N]]) {{.*}}: memref<?xf64>
// BUF-NEXT: shardlin.buffer.sum_rows %[[X]] into %[[S]] : memref<?x?xf64> into memref<?xf64>
func.func @columns(%x: tensor<?x?xf64>) -> tensor<?xf64> {
  %s = shardlin.sum_rows %x : tensor<?x?xf64> -> tensor<?xf64>
  return %s : tensor<?xf64>
}
