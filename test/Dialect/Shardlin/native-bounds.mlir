// RUN: shardlin-opt %s -split-input-file --shardlin-prepare-native --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --canonicalize --cse | FileCheck %s
// RUN: shardlin-opt %s -split-input-file --shardlin-prepare-native --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --canonicalize --cse --shardlin-convert-to-llvm | FileCheck %s --check-prefix=LLVM

// shardlin-prepare-native accepts chunk bounds that are not the ceil rule's and
// all_reduce (it refused both before the C ABI had them): the bufferization
// sizes the rank's chunk from the bounds, and the conversion calls the
// *_bounds collectives and shardlin_all_reduce.

// The gathered buffer is whole; the rank's rows of [0, 4, 4, 8, 10] (4, 0,
// 4 or 2) are a table lookup on the rank, one compare and select per chunk.
// CHECK-LABEL: func.func @uneven_bounds
// CHECK: %[[G:.*]] = memref.alloc() {{.*}}: memref<8x10xf32>
// CHECK: shardlin.buffer.all_gather %{{.*}} into %[[G]] along <dim = 1, placements = [0, 1, 2, 3], bounds = [0, 4, 4, 8, 10]>
// CHECK: %[[RANK:.*]] = shardlin.rank world_size = 4
// CHECK: arith.cmpi eq, %[[RANK]], %c0
// CHECK: arith.cmpi eq, %[[RANK]], %c1
// CHECK: arith.cmpi eq, %[[RANK]], %c2
// CHECK: arith.cmpi eq, %[[RANK]], %c3
// CHECK-NEXT: %[[SIZE:.*]] = arith.select %{{.*}}, %c2, %{{.*}} : index
// CHECK: %[[R:.*]] = memref.alloc(%[[SIZE]]) {{.*}}: memref<?x12xf32>
// CHECK: shardlin.buffer.reduce_scatter %{{.*}} into %[[R]] along <dim = 0, placements = [0, 1, 2, 3], bounds = [0, 4, 4, 8, 10]>
// LLVM-LABEL: func.func @uneven_bounds
// LLVM: llvm.call @shardlin_all_gather_bounds(
// LLVM: llvm.call @shardlin_reduce_scatter_bounds(
func.func @uneven_bounds(%a: tensor<8x?xf32>, %p: tensor<10x12xf32>) -> (tensor<8x10xf32>, tensor<?x12xf32>) {
  %g = shardlin.all_gather %a along <dim = 1, placements = [0, 1, 2, 3], bounds = [0, 4, 4, 8, 10]> : tensor<8x?xf32> -> tensor<8x10xf32>
  %r = shardlin.reduce_scatter %p along <dim = 0, placements = [0, 1, 2, 3], bounds = [0, 4, 4, 8, 10]> : tensor<10x12xf32> -> tensor<?x12xf32>
  return %g, %r : tensor<8x10xf32>, tensor<?x12xf32>
}

// -----

// all_reduce writes a new buffer of its input's shape.
// CHECK-LABEL: func.func @all_reduce
// CHECK: %[[S:.*]] = memref.alloc() {{.*}}: memref<8x12xf32>
// CHECK: shardlin.buffer.all_reduce %{{.*}} into %[[S]] world_size = 4 : memref<8x12xf32> into memref<8x12xf32>
// CHECK: return %[[S]]
// LLVM-LABEL: func.func @all_reduce
// LLVM: llvm.call @shardlin_all_reduce(
func.func @all_reduce(%p: tensor<8x12xf32>) -> tensor<8x12xf32> {
  %s = shardlin.all_reduce %p world_size = 4 : tensor<8x12xf32>
  return %s : tensor<8x12xf32>
}
