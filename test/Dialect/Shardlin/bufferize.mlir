// RUN: shardlin-opt %s -split-input-file --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --canonicalize --cse | FileCheck %s
// RUN: shardlin-opt %s -split-input-file --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --canonicalize --cse | FileCheck %s --check-prefix=NOCOPY

// Each shardlin op alone through One-Shot Bufferize. Collectives, gemm and
// convert write a new identity-layout buffer, its `?` sizes from the input
// buffers' dims or from the rank's chunk (shardlin.rank and the chunk rule);
// bias_add works in place; local_chunk is a subview. No memref.copy where
// none is needed (NOCOPY checks every case but the two marked).

// NOCOPY-NOT: memref.copy
// NOCOPY: func.func @bias_add_input_read_later

// all_gather: the input's `?` rows come from the caller; the result is whole.
// CHECK-LABEL: func.func @all_gather
// CHECK-SAME: (%[[X:.*]]: memref<?x4xf32>) -> memref<7x4xf32>
// CHECK-NEXT: %[[G:.*]] = memref.alloc() {{.*}} : memref<7x4xf32>
// CHECK-NEXT: shardlin.buffer.all_gather %[[X]] into %[[G]] along <dim = 0, placements = [2, 0, 1]> : memref<?x4xf32> into memref<7x4xf32>
// CHECK-NEXT: return %[[G]]
func.func @all_gather(%x: tensor<?x4xf32>) -> tensor<7x4xf32> {
  %g = shardlin.all_gather %x along <dim = 0, placements = [2, 0, 1]> : tensor<?x4xf32> -> tensor<7x4xf32>
  return %g : tensor<7x4xf32>
}

// -----

// all_to_all: the split dim is the rank's chunk of 7 under [2, 0, 1]:
// c = the chunk the rank holds (compare-and-select over the placements),
// size = min(c*3 + 3, 7) - min(c*3, 7).
// CHECK-LABEL: func.func @all_to_all
// CHECK-SAME: (%[[X:.*]]: memref<5x7xf32>) -> memref<15x?xf32>
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C7:.*]] = arith.constant 7 : index
// CHECK: %[[R:.*]] = shardlin.rank world_size = 3
// CHECK-NEXT: %[[E0:.*]] = arith.cmpi eq, %[[R]], %[[C2]]
// CHECK-NEXT: %[[S0:.*]] = arith.select %[[E0]], %[[C0]], %[[C3]]
// CHECK-NEXT: %[[E1:.*]] = arith.cmpi eq, %[[R]], %[[C0]]
// CHECK-NEXT: %[[S1:.*]] = arith.select %[[E1]], %[[C1]], %[[S0]]
// CHECK-NEXT: %[[E2:.*]] = arith.cmpi eq, %[[R]], %[[C1]]
// CHECK-NEXT: %[[C:.*]] = arith.select %[[E2]], %[[C2]], %[[S1]]
// CHECK-NEXT: %[[M:.*]] = arith.muli %[[C]], %[[C3]]
// CHECK-NEXT: %[[OFF:.*]] = arith.minsi %[[M]], %[[C7]]
// CHECK-NEXT: %[[E:.*]] = arith.addi %[[OFF]], %[[C3]]
// CHECK-NEXT: %[[END:.*]] = arith.minsi %[[E]], %[[C7]]
// CHECK-NEXT: %[[N:.*]] = arith.subi %[[END]], %[[OFF]]
// CHECK-NEXT: %[[Y:.*]] = memref.alloc(%[[N]]) {{.*}} : memref<15x?xf32>
// CHECK-NEXT: shardlin.buffer.all_to_all %[[X]] into %[[Y]] split <dim = 1, placements = [2, 0, 1]> concat <dim = 0, placements = [0, 1, 2]> : memref<5x7xf32> into memref<15x?xf32>
// CHECK-NEXT: return %[[Y]]
func.func @all_to_all(%x: tensor<5x7xf32>) -> tensor<15x?xf32> {
  %y = shardlin.all_to_all %x split <dim = 1, placements = [2, 0, 1]> concat <dim = 0, placements = [0, 1, 2]> : tensor<5x7xf32> -> tensor<15x?xf32>
  return %y : tensor<15x?xf32>
}

// -----

// reduce_scatter with identity placements: the chunk is the rank itself
// (W for a rank outside [0, W), whose chunk is empty).
// CHECK-LABEL: func.func @reduce_scatter
// CHECK-SAME: (%[[P:.*]]: memref<7x2xbf16>) -> memref<?x2xbf16>
// CHECK: %[[R:.*]] = shardlin.rank world_size = 2
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[R]]
// CHECK: %[[C:.*]] = arith.select %[[IN]], %[[R]]
// CHECK: %[[N:.*]] = arith.subi
// CHECK: %[[Y:.*]] = memref.alloc(%[[N]]) {{.*}} : memref<?x2xbf16>
// CHECK-NEXT: shardlin.buffer.reduce_scatter %[[P]] into %[[Y]] along <dim = 0, placements = [0, 1]> : memref<7x2xbf16> into memref<?x2xbf16>
func.func @reduce_scatter(%p: tensor<7x2xbf16>) -> tensor<?x2xbf16> {
  %y = shardlin.reduce_scatter %p along <dim = 0, placements = [0, 1]> : tensor<7x2xbf16> -> tensor<?x2xbf16>
  return %y : tensor<?x2xbf16>
}

// -----

// Even chunks: static sizes, no rank needed.
// CHECK-LABEL: func.func @reduce_scatter_even
// CHECK-NOT: shardlin.rank
// CHECK: %[[Y:.*]] = memref.alloc() {{.*}} : memref<4x2xf32>
// CHECK-NEXT: shardlin.buffer.reduce_scatter %{{.*}} into %[[Y]]
func.func @reduce_scatter_even(%p: tensor<8x2xf32>) -> tensor<4x2xf32> {
  %y = shardlin.reduce_scatter %p along <dim = 0, placements = [1, 0]> : tensor<8x2xf32> -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// gemm: m from lhs, n from rhs (through the transpose flags); a bias.
// CHECK-LABEL: func.func @gemm
// CHECK-SAME: (%[[A:.*]]: memref<20x19xf32>, %[[W:.*]]: memref<?x19xf32>, %[[B:.*]]: memref<?xf32>) -> memref<20x?xf32>
// CHECK: %[[N:.*]] = memref.dim %[[W]], %c0
// CHECK-NEXT: %[[Q:.*]] = memref.alloc(%[[N]]) {{.*}} : memref<20x?xf32>
// CHECK-NEXT: shardlin.buffer.gemm %[[A]], %[[W]] bias %[[B]] transpose_rhs into %[[Q]] : memref<20x19xf32>, memref<?x19xf32>, memref<?xf32> into memref<20x?xf32>
func.func @gemm(%a: tensor<20x19xf32>, %w: tensor<?x19xf32>, %b: tensor<?xf32>) -> tensor<20x?xf32> {
  %q = shardlin.gemm %a, %w bias %b transpose_rhs : (tensor<20x19xf32>, tensor<?x19xf32>, tensor<?xf32>) -> tensor<20x?xf32>
  return %q : tensor<20x?xf32>
}

// -----

// gemm of f16 with an f32 result (a K split's partial products), lhs
// transposed: m is lhs's dim 1.
// CHECK-LABEL: func.func @gemm_partial
// CHECK-SAME: (%[[A:.*]]: memref<?x6xf16>, %[[W:.*]]: memref<?x3xf16>) -> memref<6x3xf32>
// CHECK-NEXT: %[[P:.*]] = memref.alloc() {{.*}} : memref<6x3xf32>
// CHECK-NEXT: shardlin.buffer.gemm %[[A]], %[[W]] transpose_lhs into %[[P]] : memref<?x6xf16>, memref<?x3xf16> into memref<6x3xf32>
func.func @gemm_partial(%a: tensor<?x6xf16>, %w: tensor<?x3xf16>) -> tensor<6x3xf32> {
  %p = shardlin.gemm %a, %w transpose_lhs : (tensor<?x6xf16>, tensor<?x3xf16>) -> tensor<6x3xf32>
  return %p : tensor<6x3xf32>
}

// -----

// convert: a new buffer of the other element type, `?` dims from the input.
// CHECK-LABEL: func.func @convert
// CHECK-SAME: (%[[X:.*]]: memref<?x3xf32>) -> memref<?x3xf16>
// CHECK: %[[N:.*]] = memref.dim %[[X]], %c0
// CHECK-NEXT: %[[Y:.*]] = memref.alloc(%[[N]]) {{.*}} : memref<?x3xf16>
// CHECK-NEXT: shardlin.buffer.convert %[[X]] into %[[Y]] : memref<?x3xf32> into memref<?x3xf16>
func.func @convert(%x: tensor<?x3xf32>) -> tensor<?x3xf16> {
  %y = shardlin.convert %x : tensor<?x3xf32> -> tensor<?x3xf16>
  return %y : tensor<?x3xf16>
}

// -----

// bias_add on a new buffer (a reduce_scatter's result): in place.
// CHECK-LABEL: func.func @bias_add_in_place
// CHECK: %[[Y:.*]] = memref.alloc() {{.*}} : memref<4x3xf32>
// CHECK-NEXT: shardlin.buffer.reduce_scatter %{{.*}} into %[[Y]]
// CHECK-NEXT: shardlin.buffer.bias_add %[[Y]], %{{.*}} into %[[Y]] : memref<4x3xf32>, memref<3xf32> into memref<4x3xf32>
// CHECK-NEXT: return %[[Y]]
func.func @bias_add_in_place(%p: tensor<8x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %y = shardlin.reduce_scatter %p along <dim = 0, placements = [0, 1]> : tensor<8x3xf32> -> tensor<4x3xf32>
  %z = shardlin.bias_add %y, %b : tensor<4x3xf32>, tensor<3xf32>
  return %z : tensor<4x3xf32>
}

// -----

// A vector is one row (1 x n), an N-D input its rows (leading dims
// collapsed): views of the same buffer.
// CHECK-LABEL: func.func @bias_add_ranks
// CHECK-SAME: (%[[V:.*]]: memref<5xf32>, %[[T:.*]]: memref<2x3x5xf32>, %[[B:.*]]: memref<5xf32>)
// CHECK: %[[ROW:.*]] = memref.expand_shape %[[V]] {{\[}}[0, 1]] output_shape [1, 5] : memref<5xf32> into memref<1x5xf32>
// CHECK-NEXT: shardlin.buffer.bias_add %[[ROW]], %[[B]] into %[[ROW]] : memref<1x5xf32>
// CHECK: %[[ROWS:.*]] = memref.collapse_shape %[[T]] {{\[}}[0, 1], [2]] : memref<2x3x5xf32> into memref<6x5xf32>
// CHECK-NEXT: shardlin.buffer.bias_add %[[ROWS]], %[[B]] into %[[ROWS]] : memref<6x5xf32>
// CHECK-NEXT: return %[[V]], %[[T]]
func.func @bias_add_ranks(%v: tensor<5xf32>, %t: tensor<2x3x5xf32>, %b: tensor<5xf32>) -> (tensor<5xf32>, tensor<2x3x5xf32>) {
  %v2 = shardlin.bias_add %v, %b : tensor<5xf32>, tensor<5xf32>
  %t2 = shardlin.bias_add %t, %b : tensor<2x3x5xf32>, tensor<5xf32>
  return %v2, %t2 : tensor<5xf32>, tensor<2x3x5xf32>
}

// -----

// local_chunk: a subview at the rank's offset, read in place by its user (a
// gemm's bias, a convert); its size is static when the chunks are even.
// CHECK-LABEL: func.func @local_chunk
// CHECK-SAME: (%[[X:.*]]: memref<4x5xf32>, %[[W:.*]]: memref<?x5xf32>, %[[B:.*]]: memref<7xf32>, %[[C:.*]]: memref<8x3xf32>)
// CHECK: %[[R:.*]] = shardlin.rank world_size = 3
// CHECK: %[[OFF:.*]] = arith.minsi
// CHECK: %[[N:.*]] = arith.subi
// CHECK: %[[V:.*]] = memref.subview %[[B]][%[[OFF]]] [%[[N]]] [1] : memref<7xf32> to memref<?xf32, strided<[1], offset: ?>>
// CHECK: shardlin.buffer.gemm %[[X]], %[[W]] bias %[[V]] transpose_rhs into %{{.*}} : memref<4x5xf32>, memref<?x5xf32>, memref<?xf32, strided<[1], offset: ?>> into memref<4x?xf32>
// CHECK: %[[R2:.*]] = shardlin.rank world_size = 2
// CHECK: %[[OFF2:.*]] = arith.minsi
// CHECK: %[[V2:.*]] = memref.subview %[[C]][%[[OFF2]], 0] [4, 3] [1, 1] : memref<8x3xf32> to memref<4x3xf32, strided<[3, 1], offset: ?>>
// CHECK: shardlin.buffer.convert %[[V2]] into %{{.*}} : memref<4x3xf32, strided<[3, 1], offset: ?>> into memref<4x3xf16>
func.func @local_chunk(%x: tensor<4x5xf32>, %w: tensor<?x5xf32>, %b: tensor<7xf32>, %c: tensor<8x3xf32>) -> (tensor<4x?xf32>, tensor<4x3xf16>) {
  %v = shardlin.local_chunk %b along <dim = 0, placements = [1, 2, 0]> : tensor<7xf32> -> tensor<?xf32>
  %q = shardlin.gemm %x, %w bias %v transpose_rhs : (tensor<4x5xf32>, tensor<?x5xf32>, tensor<?xf32>) -> tensor<4x?xf32>
  %v2 = shardlin.local_chunk %c along <dim = 0, placements = [1, 0]> : tensor<8x3xf32> -> tensor<4x3xf32>
  %h = shardlin.convert %v2 : tensor<4x3xf32> -> tensor<4x3xf16>
  return %q, %h : tensor<4x?xf32>, tensor<4x3xf16>
}

// -----

// The copies that are needed, and only they (no NOCOPY checks below).

// bias_add on an input read again later: the add goes to a copy.
// CHECK-LABEL: func.func @bias_add_input_read_later
// CHECK-SAME: (%[[Y:.*]]: memref<4x3xf32>, %[[B:.*]]: memref<3xf32>)
// CHECK: %[[COPY:.*]] = memref.alloc() {{.*}} : memref<4x3xf32>
// CHECK-NEXT: memref.copy %[[Y]], %[[COPY]]
// CHECK-NEXT: shardlin.buffer.bias_add %[[COPY]], %[[B]] into %[[COPY]]
// CHECK-NEXT: return %[[COPY]], %[[Y]]
func.func @bias_add_input_read_later(%y: tensor<4x3xf32>, %b: tensor<3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %z = shardlin.bias_add %y, %b : tensor<4x3xf32>, tensor<3xf32>
  return %z, %y : tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// An N-D input whose rows cannot be collapsed (a strided view): the add
// runs on a contiguous copy, copied back into the view.
// CHECK-LABEL: func.func @bias_add_strided
// CHECK: %[[S:.*]] = memref.subview %{{.*}}[0, 0, 0] [2, 3, 4] [1, 1, 1]
// CHECK: %[[TMP:.*]] = memref.alloc() {{.*}} : memref<2x3x4xf32>
// CHECK-NEXT: memref.copy %[[S]], %[[TMP]]
// CHECK-NEXT: %[[ROWS:.*]] = memref.collapse_shape %[[TMP]] {{\[}}[0, 1], [2]]
// CHECK-NEXT: shardlin.buffer.bias_add %[[ROWS]], %{{.*}} into %[[ROWS]] : memref<6x4xf32>
// CHECK-NEXT: memref.copy %[[TMP]], %[[S]]
func.func @bias_add_strided(%t: tensor<2x5x4xf32>, %b: tensor<4xf32>) -> tensor<2x3x4xf32> {
  %s = tensor.extract_slice %t[0, 0, 0] [2, 3, 4] [1, 1, 1] : tensor<2x5x4xf32> to tensor<2x3x4xf32>
  %z = shardlin.bias_add %s, %b : tensor<2x3x4xf32>, tensor<4xf32>
  return %z : tensor<2x3x4xf32>
}
