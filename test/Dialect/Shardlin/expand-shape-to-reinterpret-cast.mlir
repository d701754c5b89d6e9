// RUN: shardlin-opt %s --shardlin-expand-shape-to-reinterpret-cast | FileCheck %s
// RUN: shardlin-opt %s --shardlin-expand-shape-to-reinterpret-cast --expand-strided-metadata | FileCheck %s --check-prefix=EXPANDED

// MLIR 22's --expand-strided-metadata crashes on a memref.expand_shape that
// splits one dim into several dynamic ones (issue 27, finding 1: the rows
// of a linear on tensor<?x?xKxT> put back into their batch dims). The pass
// writes those as a reinterpret_cast of the source's base buffer, with the
// output sizes and the strides of the expansion; after it the upstream pass
// runs (second RUN line) and leaves no expand_shape.

// EXPANDED-NOT: memref.expand_shape

// Two dynamic dims from one (batch x sequence): the inner one keeps the
// source dim's stride (10), the outer one has 10 x the inner size.
// CHECK-LABEL: func.func @two_dynamic(
// CHECK-SAME: %[[A:.*]]: memref<?x10xf32>, %[[B:.*]]: index, %[[S:.*]]: index)
// CHECK-DAG: %[[C10:.*]] = arith.constant 10 : index
// CHECK-DAG: %[[BASE:.*]], %{{.*}}, %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[A]]
// CHECK: %[[OUTER:.*]] = arith.muli %[[S]], %[[C10]] : index
// CHECK: memref.reinterpret_cast %[[BASE]] to offset: [0], sizes: [%[[B]], %[[S]], 10], strides: [%[[OUTER]], 10, 1] : memref<f32> to memref<?x?x10xf32>
// CHECK-NOT: memref.expand_shape
func.func @two_dynamic(%a: memref<?x10xf32>, %b: index, %s: index) -> memref<?x?x10xf32> {
  %0 = memref.expand_shape %a [[0, 1], [2]] output_shape [%b, %s, 10] : memref<?x10xf32> into memref<?x?x10xf32>
  return %0 : memref<?x?x10xf32>
}

// Three dynamic dims and a static one in the same group: each outer stride
// is the next inner one times its size.
// CHECK-LABEL: func.func @three_dynamic(
// CHECK-SAME: %[[A:.*]]: memref<?x7xf64>, %[[P:.*]]: index, %[[Q:.*]]: index, %[[R:.*]]: index)
// CHECK-DAG: %[[C14:.*]] = arith.constant 14 : index
// CHECK-DAG: %[[BASE:.*]], %{{.*}}, %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[A]]
// CHECK: %[[S2:.*]] = arith.muli %[[R]], %[[C14]] : index
// CHECK: %[[S1:.*]] = arith.muli %[[S2]], %[[Q]] : index
// CHECK: memref.reinterpret_cast %[[BASE]] to offset: [0], sizes: [%[[P]], %[[Q]], %[[R]], 2, 7], strides: [%[[S1]], %[[S2]], 14, 7, 1] : memref<f64> to memref<?x?x?x2x7xf64>
func.func @three_dynamic(%a: memref<?x7xf64>, %p: index, %q: index, %r: index) -> memref<?x?x?x2x7xf64> {
  %0 = memref.expand_shape %a [[0, 1, 2, 3], [4]] output_shape [%p, %q, %r, 2, 7] : memref<?x7xf64> into memref<?x?x?x2x7xf64>
  return %0 : memref<?x?x?x2x7xf64>
}

// A strided source with an offset: the source's dynamic offset and stride
// are carried over.
// CHECK-LABEL: func.func @strided_source(
// CHECK: %[[BASE:.*]], %[[OFF:.*]], %{{.*}}:2, %[[ST:.*]]:2 = memref.extract_strided_metadata
// CHECK: %[[OUTER:.*]] = arith.muli %[[ST]]#0, %{{.*}} : index
// CHECK: memref.reinterpret_cast %[[BASE]] to offset: [%[[OFF]]], sizes: [%{{.*}}, %{{.*}}, 4], strides: [%[[OUTER]], %[[ST]]#0, 1]
func.func @strided_source(%a: memref<?x4xf32, strided<[?, 1], offset: ?>>, %b: index, %s: index) -> memref<?x?x4xf32, strided<[?, ?, 1], offset: ?>> {
  %0 = memref.expand_shape %a [[0, 1], [2]] output_shape [%b, %s, 4] : memref<?x4xf32, strided<[?, 1], offset: ?>> into memref<?x?x4xf32, strided<[?, ?, 1], offset: ?>>
  return %0 : memref<?x?x4xf32, strided<[?, ?, 1], offset: ?>>
}

// One dynamic dim per group is upstream's own business: left as it is.
// CHECK-LABEL: func.func @one_dynamic_per_group(
// CHECK: memref.expand_shape
// CHECK-NOT: memref.reinterpret_cast
func.func @one_dynamic_per_group(%a: memref<?x10xf32>, %b: index) -> memref<?x3x10xf32> {
  %0 = memref.expand_shape %a [[0, 1], [2]] output_shape [%b, 3, 10] : memref<?x10xf32> into memref<?x3x10xf32>
  return %0 : memref<?x3x10xf32>
}
