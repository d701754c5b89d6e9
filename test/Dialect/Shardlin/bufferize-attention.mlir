// RUN: shardlin-opt %s -split-input-file --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --canonicalize --cse | FileCheck %s
// RUN: shardlin-opt %s -split-input-file --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --canonicalize --cse | FileCheck %s --check-prefix=NOCOPY

// Issue 41's ops through One-Shot Bufferize (docs/native.md): attention,
// attention_grad and rope write a new buffer through their buffer forms
// (the attributes as they are), local_slice is a subview at the rank's
// range of its table; no copies. local_place (the backward's adjoint of
// local_slice) fills a new buffer with zeros and copies into its subview.

// NOCOPY-NOT: memref.copy

// The rank-local form: q's `?` features sized from q's buffer; the tables,
// group and scale carried over.
// CHECK-LABEL: func.func @rank_local
// CHECK-SAME: (%[[Q:.*]]: memref<2x4x?xf32>, %[[K:.*]]: memref<2x4x?xf32>, %[[V:.*]]: memref<2x4x?xf32>) -> memref<2x4x?xf32>
// CHECK: %[[F:.*]] = memref.dim %[[Q]], %c2
// CHECK-NEXT: %[[O:.*]] = memref.alloc(%[[F]]) {{.*}} : memref<2x4x?xf32>
// CHECK-NEXT: shardlin.buffer.attention %[[Q]], %[[K]], %[[V]] into %[[O]] {causal, group = 3 : i64, head_dim = 4 : i64, kv_heads = array<i64: 0, 1, 0, 2, 0, 0>, q_heads = array<i64: 0, 2, 2, 4, 4, 4>, scale = 5.000000e-01 : f64} : memref<2x4x?xf32>, memref<2x4x?xf32>, memref<2x4x?xf32> into memref<2x4x?xf32>
// CHECK-NEXT: return %[[O]]
func.func @rank_local(%q: tensor<2x4x?xf32>, %k: tensor<2x4x?xf32>, %v: tensor<2x4x?xf32>) -> tensor<2x4x?xf32> {
  %o = shardlin.attention %q, %k, %v {causal, group = 3 : i64, head_dim = 4 : i64, scale = 0.5 : f64, q_heads = array<i64: 0, 2, 2, 4, 4, 4>, kv_heads = array<i64: 0, 1, 0, 2, 0, 0>} : tensor<2x4x?xf32>, tensor<2x4x?xf32>, tensor<2x4x?xf32> -> tensor<2x4x?xf32>
  return %o : tensor<2x4x?xf32>
}

// -----

// The global form (its group and scale the defaults, written out by the
// conversion); rope's result is the attention's q.
// CHECK-LABEL: func.func @global_mask_rope
// CHECK-SAME: (%[[Q:.*]]: memref<3x16xbf16>, %[[K:.*]]: memref<3x8xbf16>, %[[M:.*]]: memref<3x3xbf16>, %[[C:.*]]: memref<3x2xbf16>)
// CHECK-NEXT: %[[R:.*]] = memref.alloc() {{.*}} : memref<3x16xbf16>
// CHECK-NEXT: shardlin.buffer.rope %[[Q]], %[[C]], %[[C]] into %[[R]] {head_dim = 4 : i64} : memref<3x16xbf16>, memref<3x2xbf16>, memref<3x2xbf16> into memref<3x16xbf16>
// CHECK-NEXT: %[[O:.*]] = memref.alloc() {{.*}} : memref<3x16xbf16>
// CHECK-NEXT: shardlin.buffer.attention %[[R]], %[[K]], %[[K]] mask %[[M]] into %[[O]] {head_dim = 4 : i64}
// CHECK-NEXT: return %[[O]]
func.func @global_mask_rope(%q: tensor<3x16xbf16>, %k: tensor<3x8xbf16>, %m: tensor<3x3xbf16>, %c: tensor<3x2xbf16>) -> tensor<3x16xbf16> {
  %qr = shardlin.rope %q, %c, %c {head_dim = 4 : i64} : tensor<3x16xbf16>, tensor<3x2xbf16>, tensor<3x2xbf16> -> tensor<3x16xbf16>
  %o = shardlin.attention %qr, %k, %k mask %m {head_dim = 4 : i64} : tensor<3x16xbf16>, tensor<3x8xbf16>, tensor<3x8xbf16>, tensor<3x3xbf16> -> tensor<3x16xbf16>
  return %o : tensor<3x16xbf16>
}

// -----

// local_slice: ranges [0, 4), [0, 8), [4, 8) on ranks 0-2 (rank 0's and
// 1's offsets fold to 0): a compare and select per rank for the offset and
// the size, a strided subview read in place by the gemm. Equal sizes
// ([0, 4), [8, 12), [4, 8)) keep the size static.
// CHECK-LABEL: func.func @local_slice
// CHECK-SAME: (%[[X:.*]]: memref<4x8xf32>, %[[W:.*]]: memref<16x8xf32>, %[[W2:.*]]: memref<16x8xf32>)
// CHECK: %[[R:.*]] = shardlin.rank world_size = 3
// CHECK: %[[IS0:.*]] = arith.cmpi eq, %[[R]], %c0
// CHECK: %[[S0:.*]] = arith.select %[[IS0]], %c4, %c0
// CHECK: %[[IS1:.*]] = arith.cmpi eq, %[[R]], %c1
// CHECK: %[[S1:.*]] = arith.select %[[IS1]], %c8, %[[S0]]
// CHECK: %[[IS2:.*]] = arith.cmpi eq, %[[R]], %c2
// CHECK: %[[OFF:.*]] = arith.select %[[IS2]], %c4, %c0
// CHECK: %[[N:.*]] = arith.select %[[IS2]], %c4, %[[S1]]
// CHECK: %[[V:.*]] = memref.subview %[[W]][%[[OFF]], 0] [%[[N]], 8] [1, 1] : memref<16x8xf32> to memref<?x8xf32, strided<[8, 1], offset: ?>>
// CHECK: shardlin.buffer.gemm %[[X]], %[[V]] transpose_rhs
// CHECK: %[[O1:.*]] = arith.select %[[IS1]], %c8, %c0
// CHECK: %[[OFF2:.*]] = arith.select %[[IS2]], %c4, %[[O1]]
// CHECK: %[[V2:.*]] = memref.subview %[[W2]][%[[OFF2]], 0] [4, 8] [1, 1] : memref<16x8xf32> to memref<4x8xf32, strided<[8, 1], offset: ?>>
// CHECK: shardlin.buffer.gemm %[[X]], %[[V2]] transpose_rhs
func.func @local_slice(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>, %w2: tensor<16x8xf32>) -> (tensor<4x?xf32>, tensor<4x4xf32>) {
  %s = shardlin.local_slice %w dim = 0 ranges = [0, 4, 0, 8, 4, 8] : tensor<16x8xf32> -> tensor<?x8xf32>
  %y = shardlin.gemm %x, %s transpose_rhs : (tensor<4x8xf32>, tensor<?x8xf32>) -> tensor<4x?xf32>
  %s2 = shardlin.local_slice %w2 dim = 0 ranges = [0, 4, 8, 12, 4, 8] : tensor<16x8xf32> -> tensor<4x8xf32>
  %y2 = shardlin.gemm %x, %s2 transpose_rhs : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x4xf32>
  return %y, %y2 : tensor<4x?xf32>, tensor<4x4xf32>
}

// -----

// attention_grad: dk has k's shape, sized from k's buffer.
// CHECK-LABEL: func.func @grad
// CHECK-SAME: (%[[Q:.*]]: memref<2x4x?xf32>, %[[K:.*]]: memref<2x4x?xf32>, %[[D:.*]]: memref<2x4x?xf32>)
// CHECK: %[[F:.*]] = memref.dim %[[K]], %c2
// CHECK-NEXT: %[[DK:.*]] = memref.alloc(%[[F]]) {{.*}} : memref<2x4x?xf32>
// CHECK-NEXT: shardlin.buffer.attention_grad %[[Q]], %[[K]], %[[K]], %[[D]] into %[[DK]] {causal, group = 2 : i64, head_dim = 4 : i64, kv_heads = array<i64: 0, 1, 0, 0>, q_heads = array<i64: 0, 2, 2, 2>, wrt = "k"}
func.func @grad(%q: tensor<2x4x?xf32>, %k: tensor<2x4x?xf32>, %do: tensor<2x4x?xf32>) -> tensor<2x4x?xf32> {
  %dk = shardlin.attention_grad %q, %k, %k, %do {wrt = "k", causal, group = 2 : i64, head_dim = 4 : i64, q_heads = array<i64: 0, 2, 2, 2>, kv_heads = array<i64: 0, 1, 0, 0>} : tensor<2x4x?xf32>, tensor<2x4x?xf32>, tensor<2x4x?xf32>, tensor<2x4x?xf32> -> tensor<2x4x?xf32>
  return %dk : tensor<2x4x?xf32>
}

// -----

// local_place: a new buffer of the full size, zero-filled, and the source
// copied into the subview at the rank's range (the same compare and select
// per rank as local_slice's); along the columns (dim 1) of a ?xN source the
// new buffer takes its `?` from the source.
// CHECK-LABEL: func.func @local_place
// CHECK-SAME: (%[[G:.*]]: memref<?x8xf32>, %[[H:.*]]: memref<?x2xf64>)
// CHECK-DAG: %[[Z64:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-DAG: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[P:.*]] = memref.alloc() {{.*}} : memref<16x8xf32>
// CHECK-NEXT: linalg.fill ins(%[[Z]] : f32) outs(%[[P]] : memref<16x8xf32>)
// CHECK-NEXT: %[[R:.*]] = shardlin.rank world_size = 3
// CHECK: %[[V:.*]] = memref.subview %[[P]][%{{.*}}, 0] [%{{.*}}, 8] [1, 1] : memref<16x8xf32> to memref<?x8xf32, strided<[8, 1], offset: ?>>
// CHECK-NEXT: linalg.copy ins(%[[G]] : memref<?x8xf32>) outs(%[[V]] : memref<?x8xf32, strided<[8, 1], offset: ?>>)
// CHECK-NEXT: %[[ROWS:.*]] = memref.dim %[[H]], %c0
// CHECK-NEXT: %[[Q:.*]] = memref.alloc(%[[ROWS]]) {{.*}} : memref<?x6xf64>
// CHECK-NEXT: linalg.fill ins(%[[Z64]] : f64) outs(%[[Q]] : memref<?x6xf64>)
// CHECK: %[[V2:.*]] = memref.subview %[[Q]][0, %{{.*}}] [%[[ROWS]], 2] [1, 1] : memref<?x6xf64> to memref<?x2xf64, strided<[6, 1], offset: ?>>
// CHECK-NEXT: linalg.copy ins(%[[H]] : memref<?x2xf64>) outs(%[[V2]] : memref<?x2xf64, strided<[6, 1], offset: ?>>)
// CHECK-NEXT: return %[[P]], %[[Q]]
func.func @local_place(%g: tensor<?x8xf32>, %h: tensor<?x2xf64>) -> (tensor<16x8xf32>, tensor<?x6xf64>) {
  %p = shardlin.local_place %g dim = 0 ranges = [0, 4, 0, 8, 4, 8] : tensor<?x8xf32> -> tensor<16x8xf32>
  %q = shardlin.local_place %h dim = 1 ranges = [0, 2, 2, 4, 4, 6] : tensor<?x2xf64> -> tensor<?x6xf64>
  return %p, %q : tensor<16x8xf32>, tensor<?x6xf64>
}
