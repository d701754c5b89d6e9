// RUN: shardlin-opt %s | shardlin-opt | FileCheck %s
// RUN: shardlin-opt %s --verify-roundtrip | FileCheck %s
// RUN: shardlin-opt %s --canonicalize | FileCheck %s --check-prefix=FOLD

// Round trip of shardlin.rank and the shardlin.buffer.* ops (the bufferized
// forms of the collectives and local compute ops), with strided views.

// CHECK-LABEL: func.func @rank
// CHECK: %[[R:.*]] = shardlin.rank world_size = 4
// CHECK: shardlin.rank world_size = 1
// The only rank of a group of one is 0.
// FOLD-LABEL: func.func @rank
// FOLD: %[[Z:.*]] = arith.constant 0 : index
// FOLD: %[[R:.*]] = shardlin.rank world_size = 4
// FOLD: return %[[R]], %[[Z]]
func.func @rank() -> (index, index) {
  %r = shardlin.rank world_size = 4
  %r1 = shardlin.rank world_size = 1
  return %r, %r1 : index, index
}

// CHECK-LABEL: func.func @collectives
// CHECK: shardlin.buffer.all_gather %{{.*}} into %{{.*}} along <dim = 1, placements = [2, 0, 1]> : memref<5x?xf32> into memref<5x7xf32>
// CHECK: shardlin.buffer.all_to_all %{{.*}} into %{{.*}} split <dim = 1, placements = [2, 0, 1]> concat <dim = 0, placements = [0, 1, 2]> : memref<5x7xf32, strided<[?, ?], offset: ?>> into memref<15x?xf32>
// CHECK: shardlin.buffer.reduce_scatter %{{.*}} into %{{.*}} along <dim = 0, placements = [0, 1, 2]> : memref<15x4xbf16> into memref<5x4xbf16>
// Canonicalization keeps the ops: they write their output.
// FOLD-LABEL: func.func @collectives
// FOLD-COUNT-3: shardlin.buffer.
func.func @collectives(%x: memref<5x?xf32>, %g: memref<5x7xf32>,
                       %s: memref<5x7xf32, strided<[?, ?], offset: ?>>, %xs: memref<15x?xf32>,
                       %p: memref<15x4xbf16>, %y: memref<5x4xbf16>) {
  shardlin.buffer.all_gather %x into %g along <dim = 1, placements = [2, 0, 1]> : memref<5x?xf32> into memref<5x7xf32>
  shardlin.buffer.all_to_all %s into %xs split <dim = 1, placements = [2, 0, 1]> concat <dim = 0, placements = [0, 1, 2]> : memref<5x7xf32, strided<[?, ?], offset: ?>> into memref<15x?xf32>
  shardlin.buffer.reduce_scatter %p into %y along <dim = 0, placements = [0, 1, 2]> : memref<15x4xbf16> into memref<5x4xbf16>
  return
}

// CHECK-LABEL: func.func @local_compute
// CHECK: shardlin.buffer.gemm %{{.*}}, %{{.*}} bias %{{.*}} transpose_rhs into %{{.*}} : memref<20x19xf32>, memref<?x19xf32>, memref<?xf32, strided<[1], offset: ?>> into memref<20x?xf32>
// CHECK: shardlin.buffer.gemm %{{.*}}, %{{.*}} transpose_lhs into %{{.*}} : memref<19x20xf16>, memref<19x3xf16> into memref<20x3xf32>
// CHECK: shardlin.buffer.bias_add %[[Y:.*]], %{{.*}} into %[[Y]] : memref<5x11xf32>, memref<11xf32> into memref<5x11xf32>
// CHECK: shardlin.buffer.convert %{{.*}} into %{{.*}} : memref<5x11xf32> into memref<5x11xf16>
// FOLD-LABEL: func.func @local_compute
// FOLD-COUNT-4: shardlin.buffer.
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

// all_reduce: one shape in and out (strided views allowed); explicit chunk
// bounds on a collective.
// CHECK-LABEL: func.func @all_reduce_and_bounds
// CHECK: shardlin.buffer.all_reduce %{{.*}} into %{{.*}} world_size = 4 : memref<8x11xf32, strided<[16, 1]>> into memref<8x11xf32>
// CHECK: shardlin.buffer.all_gather %{{.*}} into %{{.*}} along <dim = 1, placements = [0, 1, 2, 3], bounds = [0, 4, 4, 8, 10]> : memref<8x?xf32> into memref<8x10xf32>
func.func @all_reduce_and_bounds(%p: memref<8x11xf32, strided<[16, 1]>>, %s: memref<8x11xf32>,
                                 %x: memref<8x?xf32>, %g: memref<8x10xf32>) {
  shardlin.buffer.all_reduce %p into %s world_size = 4 : memref<8x11xf32, strided<[16, 1]>> into memref<8x11xf32>
  shardlin.buffer.all_gather %x into %g along <dim = 1, placements = [0, 1, 2, 3], bounds = [0, 4, 4, 8, 10]> : memref<8x?xf32> into memref<8x10xf32>
  return
}

// CHECK-LABEL: func.func @stacked_rows
// CHECK: shardlin.buffer.gather_bounds %arg0 into %arg1 along <dim = 0, placements = [1, 0]> : memref<?x4xf32> into memref<3xi64>
// CHECK: shardlin.buffer.all_gather %arg0 into %arg2 along <dim = 0, placements = [1, 0]> bounds(%arg1 : memref<3xi64>) : memref<?x4xf32> into memref<?x4xf32>
// CHECK: shardlin.buffer.all_to_all %arg2 into %arg3 split <dim = 0, placements = [1, 0]> bounds(%arg1 : memref<3xi64>) concat <dim = 1, placements = [0, 1]> : memref<?x4xf32> into memref<?x8xf32>
// CHECK: shardlin.buffer.reduce_scatter %arg2 into %arg4 along <dim = 0, placements = [1, 0]> bounds(%arg1 : memref<3xi64>) : memref<?x4xf32> into memref<?x4xf32>
func.func @stacked_rows(%x: memref<?x4xf32>, %b: memref<3xi64>, %g: memref<?x4xf32>, %t: memref<?x8xf32>, %s: memref<?x4xf32>) {
  shardlin.buffer.gather_bounds %x into %b along <dim = 0, placements = [1, 0]> : memref<?x4xf32> into memref<3xi64>
  shardlin.buffer.all_gather %x into %g along <dim = 0, placements = [1, 0]> bounds(%b : memref<3xi64>) : memref<?x4xf32> into memref<?x4xf32>
  shardlin.buffer.all_to_all %g into %t split <dim = 0, placements = [1, 0]> bounds(%b : memref<3xi64>) concat <dim = 1, placements = [0, 1]> : memref<?x4xf32> into memref<?x8xf32>
  shardlin.buffer.reduce_scatter %g into %s along <dim = 0, placements = [1, 0]> bounds(%b : memref<3xi64>) : memref<?x4xf32> into memref<?x4xf32>
  return
}

// The buffer forms of attention (rank-local with head tables, global with
// a mask), attention_grad and rope (a strided x).
// CHECK-LABEL: func.func @attention_rope
// CHECK: shardlin.buffer.attention %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}} {causal, group = 3 : i64, head_dim = 4 : i64, kv_heads = array<i64: 0, 1, 0, 2>, q_heads = array<i64: 0, 2, 2, 4>, scale = 5.000000e-01 : f64} : memref<2x3x8xf32>, memref<2x3x?xf32>, memref<2x3x?xf32> into memref<2x3x8xf32>
// CHECK: shardlin.buffer.attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} into %{{.*}} {head_dim = 4 : i64} : memref<3x16xbf16>, memref<3x8xbf16>, memref<3x8xbf16>, memref<3x3xbf16> into memref<3x16xbf16>
// CHECK: shardlin.buffer.attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}} {head_dim = 4 : i64, wrt = "v"} : memref<3x16xbf16>, memref<3x8xbf16>, memref<3x8xbf16>, memref<3x16xbf16> into memref<3x8xbf16>
// CHECK: shardlin.buffer.rope %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}} {head_dim = 4 : i64, inverse} : memref<3x16xbf16, strided<[32, 1]>>, memref<3x2xbf16>, memref<3x2xbf16> into memref<3x16xbf16>
func.func @attention_rope(%q: memref<2x3x8xf32>, %k: memref<2x3x?xf32>, %o: memref<2x3x8xf32>,
                          %gq: memref<3x16xbf16>, %gk: memref<3x8xbf16>, %m: memref<3x3xbf16>, %go: memref<3x16xbf16>,
                          %dv: memref<3x8xbf16>, %x: memref<3x16xbf16, strided<[32, 1]>>, %c: memref<3x2xbf16>) {
  shardlin.buffer.attention %q, %k, %k into %o {causal, group = 3 : i64, head_dim = 4 : i64, q_heads = array<i64: 0, 2, 2, 4>, kv_heads = array<i64: 0, 1, 0, 2>, scale = 0.5 : f64} : memref<2x3x8xf32>, memref<2x3x?xf32>, memref<2x3x?xf32> into memref<2x3x8xf32>
  shardlin.buffer.attention %gq, %gk, %gk mask %m into %go {head_dim = 4 : i64} : memref<3x16xbf16>, memref<3x8xbf16>, memref<3x8xbf16>, memref<3x3xbf16> into memref<3x16xbf16>
  shardlin.buffer.attention_grad %gq, %gk, %gk, %gq into %dv {head_dim = 4 : i64, wrt = "v"} : memref<3x16xbf16>, memref<3x8xbf16>, memref<3x8xbf16>, memref<3x16xbf16> into memref<3x8xbf16>
  shardlin.buffer.rope %x, %c, %c into %go {head_dim = 4 : i64, inverse} : memref<3x16xbf16, strided<[32, 1]>>, memref<3x2xbf16>, memref<3x2xbf16> into memref<3x16xbf16>
  return
}
