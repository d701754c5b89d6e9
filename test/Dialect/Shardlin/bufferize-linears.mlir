// RUN: shardlin-opt %s --lower-sharded-linear=strategy=activations --shardlin-localize-sharded --shardlin-prepare-native --convert-elementwise-to-linalg --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --canonicalize --cse | FileCheck %s
// RUN: shardlin-opt %s --lower-sharded-linear=strategy=gather-weight --shardlin-localize-sharded --shardlin-prepare-native --convert-elementwise-to-linalg --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --canonicalize --cse | FileCheck %s --check-prefix=GATHER

// Lowered linears through shardlin-localize-sharded and One-Shot Bufferize, as
// --shardlin-lower-to-llvm runs them: every collective and GEMM writes its
// result buffer directly, the bias is added in place, a sharded argument is
// the rank's chunk with its `?` size checked at the entry, and nothing is
// copied (the entries' arguments are read-only, so a copy would show up
// wherever something wrote into them).

// CHECK-NOT: memref.copy
// GATHER-NOT: memref.copy

// Row-wise, uneven K chunks (9 over 4: 3, 3, 3, 0) in permuted placements,
// a 1-D input (one row).
// CHECK-LABEL: func.func @row_wise_1d
// CHECK-SAME: (%[[X:.*]]: memref<9xf32>, %[[W:.*]]: memref<6x?xf32>, %[[B:.*]]: memref<6xf32>) -> memref<6xf32> attributes {llvm.emit_c_interface}
// CHECK: %[[K:.*]] = memref.dim %[[W]], %c1
// CHECK: %[[R:.*]] = shardlin.rank world_size = 4
// CHECK: %[[KR:.*]] = arith.subi
// CHECK: %[[OK:.*]] = arith.cmpi eq, %[[K]], %[[KR]]
// CHECK: cf.assert %[[OK]], "shardlin: argument 1 of @row_wise_1d must be the calling rank's chunk of tensor<6x9xf32> under #shardlin.chunk<dim = 1, placements = [3, 1, 0, 2]>: its dim 1 has another size"
// CHECK: %[[ROW:.*]] = memref.expand_shape %[[X]] {{\[}}[0, 1]] output_shape [1, 9]
// CHECK: %[[XS:.*]] = memref.alloc(%[[KR]]) {{.*}} : memref<4x?xf32>
// CHECK-NEXT: shardlin.buffer.all_to_all %[[ROW]] into %[[XS]] split <dim = 1, placements = [3, 1, 0, 2]> concat <dim = 0, placements = [0, 1, 2, 3]>
// CHECK-NEXT: %[[P:.*]] = memref.alloc() {{.*}} : memref<4x6xf32>
// CHECK-NEXT: shardlin.buffer.gemm %[[XS]], %[[W]] transpose_rhs into %[[P]]
// CHECK-NEXT: %[[Y:.*]] = memref.alloc() {{.*}} : memref<1x6xf32>
// CHECK-NEXT: shardlin.buffer.reduce_scatter %[[P]] into %[[Y]] along <dim = 0, placements = [0, 1, 2, 3]>
// CHECK-NEXT: shardlin.buffer.bias_add %[[Y]], %[[B]] into %[[Y]]
// CHECK-NEXT: %[[Y1:.*]] = memref.collapse_shape %[[Y]] {{\[}}[0, 1]] : memref<1x6xf32> into memref<6xf32>
// CHECK-NEXT: return %[[Y1]]
// GATHER-LABEL: func.func @row_wise_1d
// GATHER: %[[A:.*]] = memref.alloc() {{.*}} : memref<6x9xf32>
// GATHER-NEXT: shardlin.buffer.all_gather %{{.*}} into %[[A]] along <dim = 1, placements = [3, 1, 0, 2]> : memref<6x?xf32> into memref<6x9xf32>
// GATHER-NEXT: %[[Y:.*]] = memref.alloc() {{.*}} : memref<1x6xf32>
// GATHER-NEXT: shardlin.buffer.gemm %{{.*}}, %[[A]] bias %{{.*}} transpose_rhs into %[[Y]]
func.func @row_wise_1d(%x: tensor<9xf32>,
    %w: !shardlin.sharded<tensor<6x9xf32>, #shardlin.chunk<dim = 1, placements = [3, 1, 0, 2]>>,
    %b: tensor<6xf32>) -> tensor<6xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<9xf32>, !shardlin.sharded<tensor<6x9xf32>, #shardlin.chunk<dim = 1, placements = [3, 1, 0, 2]>>, tensor<6xf32>) -> tensor<6xf32>
  return %y : tensor<6xf32>
}

// Col-wise, uneven N chunks (7 over 4: 2, 2, 2, 1), a 3-D input: the bias
// chunk is a subview read by the GEMM; the GEMM's `?` width is the weight
// argument's (checked) rows.
// CHECK-LABEL: func.func @col_wise_3d
// CHECK-SAME: (%[[X:.*]]: memref<2x3x8xf32>, %[[W:.*]]: memref<?x8xf32>, %[[B:.*]]: memref<7xf32>) -> memref<2x3x7xf32>
// CHECK: %[[N:.*]] = memref.dim %[[W]], %c0
// CHECK: cf.assert
// CHECK: %[[ROWS:.*]] = memref.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : memref<2x3x8xf32> into memref<6x8xf32>
// CHECK-NEXT: %[[G:.*]] = memref.alloc() {{.*}} : memref<24x8xf32>
// CHECK-NEXT: shardlin.buffer.all_gather %[[ROWS]] into %[[G]] along <dim = 0, placements = [0, 1, 2, 3]>
// CHECK-NEXT: %[[BC:.*]] = memref.subview %[[B]][%{{.*}}] [%{{.*}}] [1] : memref<7xf32> to memref<?xf32, strided<[1], offset: ?>>
// CHECK-NEXT: %[[Q:.*]] = memref.alloc(%[[N]]) {{.*}} : memref<24x?xf32>
// CHECK-NEXT: shardlin.buffer.gemm %[[G]], %[[W]] bias %[[BC]] transpose_rhs into %[[Q]]
// CHECK-NEXT: %[[Y:.*]] = memref.alloc() {{.*}} : memref<6x7xf32>
// CHECK-NEXT: shardlin.buffer.all_to_all %[[Q]] into %[[Y]] split <dim = 0, placements = [0, 1, 2, 3]> concat <dim = 1, placements = [1, 0, 3, 2]> : memref<24x?xf32> into memref<6x7xf32>
// CHECK-NEXT: %[[Y3:.*]] = memref.expand_shape %[[Y]]
// CHECK-NEXT: return %[[Y3]]
func.func @col_wise_3d(%x: tensor<2x3x8xf32>,
    %w: !shardlin.sharded<tensor<7x8xf32>, #shardlin.chunk<dim = 0, placements = [1, 0, 3, 2]>>,
    %b: tensor<7xf32>) -> tensor<2x3x7xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<2x3x8xf32>, !shardlin.sharded<tensor<7x8xf32>, #shardlin.chunk<dim = 0, placements = [1, 0, 3, 2]>>, tensor<7xf32>) -> tensor<2x3x7xf32>
  return %y : tensor<2x3x7xf32>
}

// f16, K split: the partial products, their reduction and the bias are f32,
// rounded once by a convert into the result buffer.
// CHECK-LABEL: func.func @row_wise_f16
// CHECK: shardlin.buffer.all_to_all %{{.*}} into %[[XS:.*]] split
// CHECK: %[[P:.*]] = memref.alloc() {{.*}} : memref<8x3xf32>
// CHECK-NEXT: shardlin.buffer.gemm %[[XS]], %{{.*}} transpose_rhs into %[[P]] : memref<8x1xf16>, memref<3x1xf16> into memref<8x3xf32>
// CHECK-NEXT: %[[S:.*]] = memref.alloc() {{.*}} : memref<4x3xf32>
// CHECK-NEXT: shardlin.buffer.reduce_scatter %[[P]] into %[[S]]
// CHECK-NEXT: %[[B32:.*]] = memref.alloc() {{.*}} : memref<3xf32>
// CHECK-NEXT: shardlin.buffer.convert %{{.*}} into %[[B32]] : memref<3xf16> into memref<3xf32>
// CHECK-NEXT: shardlin.buffer.bias_add %[[S]], %[[B32]] into %[[S]] : memref<4x3xf32>
// CHECK-NEXT: %[[Y:.*]] = memref.alloc() {{.*}} : memref<4x3xf16>
// CHECK-NEXT: shardlin.buffer.convert %[[S]] into %[[Y]] : memref<4x3xf32> into memref<4x3xf16>
// CHECK-NEXT: return %[[Y]]
func.func @row_wise_f16(%x: tensor<4x2xf16>,
    %w: !shardlin.sharded<tensor<3x2xf16>, #shardlin.chunk<dim = 1, placements = [0, 1]>>,
    %b: tensor<3xf16>) -> tensor<4x3xf16> {
  %y = shardlin.linear %x, %w, %b : (tensor<4x2xf16>, !shardlin.sharded<tensor<3x2xf16>, #shardlin.chunk<dim = 1, placements = [0, 1]>>, tensor<3xf16>) -> tensor<4x3xf16>
  return %y : tensor<4x3xf16>
}

// A fused MLP block (F = 10 over 3 ranks: a `?`-wide block): the
// elementwise chain writes into the first GEMM's buffer.
// CHECK-LABEL: func.func @mlp_block
// CHECK: %[[G:.*]] = memref.alloc() {{.*}} : memref<6x4xf32>
// CHECK-NEXT: shardlin.buffer.all_gather %{{.*}} into %[[G]]
// CHECK: %[[H:.*]] = memref.alloc(%{{.*}}) {{.*}} : memref<6x?xf32>
// CHECK-NEXT: shardlin.buffer.gemm %[[G]], %{{.*}} bias %{{.*}} transpose_rhs into %[[H]]
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[H]] : memref<6x?xf32>) outs(%[[H]] : memref<6x?xf32>)
// CHECK: %[[P:.*]] = memref.alloc() {{.*}} : memref<6x4xf32>
// CHECK-NEXT: shardlin.buffer.gemm %[[H]], %{{.*}} transpose_rhs into %[[P]]
// CHECK-NEXT: %[[Y:.*]] = memref.alloc() {{.*}} : memref<2x4xf32>
// CHECK-NEXT: shardlin.buffer.reduce_scatter %[[P]] into %[[Y]]
// CHECK-NEXT: shardlin.buffer.bias_add %[[Y]], %{{.*}} into %[[Y]]
// CHECK-NEXT: return %[[Y]]
func.func @mlp_block(%x: tensor<2x4xf32>,
    %w1: !shardlin.sharded<tensor<10x4xf32>, #shardlin.chunk<dim = 0, placements = [2, 0, 1]>>, %b1: tensor<10xf32>,
    %w2: !shardlin.sharded<tensor<4x10xf32>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>, %b2: tensor<4xf32>) -> tensor<2x4xf32> {
  %h = shardlin.linear %x, %w1, %b1 : (tensor<2x4xf32>, !shardlin.sharded<tensor<10x4xf32>, #shardlin.chunk<dim = 0, placements = [2, 0, 1]>>, tensor<10xf32>) -> tensor<2x10xf32>
  %zero = arith.constant dense<0.0> : tensor<2x10xf32>
  %a = arith.maximumf %h, %zero : tensor<2x10xf32>
  %y = shardlin.linear %a, %w2, %b2 : (tensor<2x10xf32>, !shardlin.sharded<tensor<4x10xf32>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>, tensor<4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
