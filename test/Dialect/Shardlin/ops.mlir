// RUN: shardlin-opt %s | shardlin-opt | FileCheck %s
// RUN: shardlin-opt %s -mlir-print-op-generic | shardlin-opt | FileCheck %s
// RUN: shardlin-opt %s --verify-roundtrip | FileCheck %s

// Round trip of every shardlin op, attribute and type, in the custom form and
// through the generic form (and, with --verify-roundtrip, bytecode).
//
// The ops' chunk operands use the short form `along <dim = 0, placements =
// [1, 0]>` (the attribute's parameters without its `#shardlin.chunk`
// prefix), as the printer emits them.

//===----------------------------------------------------------------------===//
// #shardlin.chunk and !shardlin.sharded on their own
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @chunk_attr
// CHECK-SAME: shardlin.spec = #shardlin.chunk<dim = 1, placements = [3, 1, 0, 2]>
// CHECK-SAME: shardlin.spec_w1 = #shardlin.chunk<dim = 0, placements = [0]>
func.func @chunk_attr() attributes {
    shardlin.spec = #shardlin.chunk<dim = 1, placements = [3, 1, 0, 2]>,
    shardlin.spec_w1 = #shardlin.chunk<dim = 0, placements = [0]>} {
  return
}

// CHECK-LABEL: func.func @sharded_types
// CHECK-SAME: !shardlin.sharded<tensor<11xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>
// CHECK-SAME: !shardlin.sharded<tensor<11x19xf16>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>
// CHECK-SAME: !shardlin.sharded<tensor<2x3x4xbf16>, #shardlin.chunk<dim = 2, placements = [0]>>
// CHECK-SAME: !shardlin.sharded<tensor<0x5xf64>, #shardlin.chunk<dim = 0, placements = [0, 2, 1]>>
func.func @sharded_types(
    %a: !shardlin.sharded<tensor<11xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>,
    %b: !shardlin.sharded<tensor<11x19xf16>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>,
    %c: !shardlin.sharded<tensor<2x3x4xbf16>, #shardlin.chunk<dim = 2, placements = [0]>>,
    %d: !shardlin.sharded<tensor<0x5xf64>, #shardlin.chunk<dim = 0, placements = [0, 2, 1]>>) {
  return
}

//===----------------------------------------------------------------------===//
// shardlin.linear
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @linear_2d_bias_f32
// CHECK-SAME: (%[[X:.*]]: tensor<5x19xf32>, %[[W:.*]]: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>, %[[B:.*]]: tensor<11xf32>)
// CHECK-NEXT: %[[Y:.*]] = shardlin.linear %[[X]], %[[W]], %[[B]] : (tensor<5x19xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>, tensor<11xf32>) -> tensor<5x11xf32>
// CHECK-NEXT: return %[[Y]]
func.func @linear_2d_bias_f32(%x: tensor<5x19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>,
    %b: tensor<11xf32>) -> tensor<5x11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<5x19xf32>,
      !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>,
      tensor<11xf32>) -> tensor<5x11xf32>
  return %y : tensor<5x11xf32>
}

// CHECK-LABEL: func.func @linear_2d_no_bias_f64
// CHECK-SAME: (%[[X:.*]]: tensor<5x19xf64>, %[[W:.*]]: !shardlin.sharded<tensor<11x19xf64>, #shardlin.chunk<dim = 0, placements = [1, 0]>>)
// CHECK-NEXT: %[[Y:.*]] = shardlin.linear %[[X]], %[[W]] : (tensor<5x19xf64>, !shardlin.sharded<tensor<11x19xf64>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<5x11xf64>
// CHECK-NEXT: return %[[Y]]
func.func @linear_2d_no_bias_f64(%x: tensor<5x19xf64>,
    %w: !shardlin.sharded<tensor<11x19xf64>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<5x11xf64> {
  %y = shardlin.linear %x, %w : (tensor<5x19xf64>,
      !shardlin.sharded<tensor<11x19xf64>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<5x11xf64>
  return %y : tensor<5x11xf64>
}

// CHECK-LABEL: func.func @linear_1d_f16
// CHECK-SAME: (%[[X:.*]]: tensor<19xf16>, %[[W:.*]]: !shardlin.sharded<tensor<11x19xf16>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>, %[[B:.*]]: tensor<11xf16>)
// CHECK-NEXT: %[[Y:.*]] = shardlin.linear %[[X]], %[[W]], %[[B]] : (tensor<19xf16>, !shardlin.sharded<tensor<11x19xf16>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>, tensor<11xf16>) -> tensor<11xf16>
// CHECK-NEXT: return %[[Y]]
func.func @linear_1d_f16(%x: tensor<19xf16>,
    %w: !shardlin.sharded<tensor<11x19xf16>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>,
    %b: tensor<11xf16>) -> tensor<11xf16> {
  %y = shardlin.linear %x, %w, %b : (tensor<19xf16>,
      !shardlin.sharded<tensor<11x19xf16>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>,
      tensor<11xf16>) -> tensor<11xf16>
  return %y : tensor<11xf16>
}

// CHECK-LABEL: func.func @linear_3d_bf16
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x19xbf16>, %[[W:.*]]: !shardlin.sharded<tensor<11x19xbf16>, #shardlin.chunk<dim = 0, placements = [3, 1, 0, 2]>>, %[[B:.*]]: tensor<11xbf16>)
// CHECK-NEXT: %[[Y:.*]] = shardlin.linear %[[X]], %[[W]], %[[B]] : (tensor<2x3x19xbf16>, !shardlin.sharded<tensor<11x19xbf16>, #shardlin.chunk<dim = 0, placements = [3, 1, 0, 2]>>, tensor<11xbf16>) -> tensor<2x3x11xbf16>
// CHECK-NEXT: %[[Z:.*]] = shardlin.linear %[[X]], %[[W]] : (tensor<2x3x19xbf16>, !shardlin.sharded<tensor<11x19xbf16>, #shardlin.chunk<dim = 0, placements = [3, 1, 0, 2]>>) -> tensor<2x3x11xbf16>
// CHECK-NEXT: return %[[Y]], %[[Z]]
func.func @linear_3d_bf16(%x: tensor<2x3x19xbf16>,
    %w: !shardlin.sharded<tensor<11x19xbf16>, #shardlin.chunk<dim = 0, placements = [3, 1, 0, 2]>>,
    %b: tensor<11xbf16>) -> (tensor<2x3x11xbf16>, tensor<2x3x11xbf16>) {
  %y = shardlin.linear %x, %w, %b : (tensor<2x3x19xbf16>,
      !shardlin.sharded<tensor<11x19xbf16>, #shardlin.chunk<dim = 0, placements = [3, 1, 0, 2]>>,
      tensor<11xbf16>) -> tensor<2x3x11xbf16>
  %z = shardlin.linear %x, %w : (tensor<2x3x19xbf16>,
      !shardlin.sharded<tensor<11x19xbf16>, #shardlin.chunk<dim = 0, placements = [3, 1, 0, 2]>>) -> tensor<2x3x11xbf16>
  return %y, %z : tensor<2x3x11xbf16>, tensor<2x3x11xbf16>
}

//===----------------------------------------------------------------------===//
// shardlin.local_shard / shardlin.local_chunk
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @local_shard
// CHECK-SAME: (%[[U:.*]]: !shardlin.sharded<tensor<11x16xf32>, #shardlin.chunk<dim = 1, placements = [3, 1, 0, 2]>>, %[[V:.*]]: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>)
// CHECK-NEXT: %[[A:.*]] = shardlin.local_shard %[[U]] : !shardlin.sharded<tensor<11x16xf32>, #shardlin.chunk<dim = 1, placements = [3, 1, 0, 2]>> -> tensor<11x4xf32>
// CHECK-NEXT: %[[B:.*]] = shardlin.local_shard %[[V]] : !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>> -> tensor<?x19xf32>
// CHECK-NEXT: return %[[A]], %[[B]]
func.func @local_shard(
    %u: !shardlin.sharded<tensor<11x16xf32>, #shardlin.chunk<dim = 1, placements = [3, 1, 0, 2]>>,
    %v: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>)
    -> (tensor<11x4xf32>, tensor<?x19xf32>) {
  %a = shardlin.local_shard %u : !shardlin.sharded<tensor<11x16xf32>, #shardlin.chunk<dim = 1, placements = [3, 1, 0, 2]>> -> tensor<11x4xf32>
  %b = shardlin.local_shard %v : !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>> -> tensor<?x19xf32>
  return %a, %b : tensor<11x4xf32>, tensor<?x19xf32>
}

// CHECK-LABEL: func.func @local_chunk
// CHECK-SAME: (%[[B:.*]]: tensor<12xf64>, %[[M:.*]]: tensor<3x11xf64>)
// CHECK-NEXT: %[[C0:.*]] = shardlin.local_chunk %[[B]] along <dim = 0, placements = [1, 0]> : tensor<12xf64> -> tensor<6xf64>
// CHECK-NEXT: %[[C1:.*]] = shardlin.local_chunk %[[M]] along <dim = 1, placements = [0, 2, 1]> : tensor<3x11xf64> -> tensor<3x?xf64>
// CHECK-NEXT: return %[[C0]], %[[C1]]
func.func @local_chunk(%b: tensor<12xf64>, %m: tensor<3x11xf64>) -> (tensor<6xf64>, tensor<3x?xf64>) {
  %c0 = shardlin.local_chunk %b along <dim = 0, placements = [1, 0]> : tensor<12xf64> -> tensor<6xf64>
  %c1 = shardlin.local_chunk %m along <dim = 1, placements = [0, 2, 1]> : tensor<3x11xf64> -> tensor<3x?xf64>
  return %c0, %c1 : tensor<6xf64>, tensor<3x?xf64>
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @all_gather
// CHECK-SAME: (%[[X:.*]]: tensor<5x19xf16>, %[[U:.*]]: tensor<?x19xf16>)
// CHECK-NEXT: %[[G0:.*]] = shardlin.all_gather %[[X]] along <dim = 0, placements = [0, 1, 2, 3]> : tensor<5x19xf16> -> tensor<20x19xf16>
// CHECK-NEXT: %[[G1:.*]] = shardlin.all_gather %[[U]] along <dim = 0, placements = [3, 1, 0, 2]> : tensor<?x19xf16> -> tensor<19x19xf16>
// CHECK-NEXT: return %[[G0]], %[[G1]]
func.func @all_gather(%x: tensor<5x19xf16>, %u: tensor<?x19xf16>) -> (tensor<20x19xf16>, tensor<19x19xf16>) {
  %g0 = shardlin.all_gather %x along <dim = 0, placements = [0, 1, 2, 3]> : tensor<5x19xf16> -> tensor<20x19xf16>
  %g1 = shardlin.all_gather %u along <dim = 0, placements = [3, 1, 0, 2]> : tensor<?x19xf16> -> tensor<19x19xf16>
  return %g0, %g1 : tensor<20x19xf16>, tensor<19x19xf16>
}

// CHECK-LABEL: func.func @all_to_all
// CHECK-SAME: (%[[X:.*]]: tensor<5x19xf32>, %[[Q:.*]]: tensor<10x?xf32>)
// CHECK-NEXT: %[[R:.*]] = shardlin.all_to_all %[[X]] split <dim = 1, placements = [2, 3, 0, 1]> concat <dim = 0, placements = [0, 1, 2, 3]> : tensor<5x19xf32> -> tensor<20x?xf32>
// CHECK-NEXT: %[[C:.*]] = shardlin.all_to_all %[[Q]] split <dim = 0, placements = [0, 1]> concat <dim = 1, placements = [1, 0]> : tensor<10x?xf32> -> tensor<5x11xf32>
// CHECK-NEXT: %[[E:.*]] = shardlin.all_to_all %[[X]] split <dim = 0, placements = [0]> concat <dim = 1, placements = [0]> : tensor<5x19xf32> -> tensor<5x19xf32>
// CHECK-NEXT: return %[[R]], %[[C]], %[[E]]
func.func @all_to_all(%x: tensor<5x19xf32>, %q: tensor<10x?xf32>) -> (tensor<20x?xf32>, tensor<5x11xf32>, tensor<5x19xf32>) {
  %r = shardlin.all_to_all %x split <dim = 1, placements = [2, 3, 0, 1]> concat <dim = 0, placements = [0, 1, 2, 3]> : tensor<5x19xf32> -> tensor<20x?xf32>
  %c = shardlin.all_to_all %q split <dim = 0, placements = [0, 1]> concat <dim = 1, placements = [1, 0]> : tensor<10x?xf32> -> tensor<5x11xf32>
  %e = shardlin.all_to_all %x split <dim = 0, placements = [0]> concat <dim = 1, placements = [0]> : tensor<5x19xf32> -> tensor<5x19xf32>
  return %r, %c, %e : tensor<20x?xf32>, tensor<5x11xf32>, tensor<5x19xf32>
}

// CHECK-LABEL: func.func @reduce_scatter
// CHECK-SAME: (%[[P:.*]]: tensor<20x11xbf16>, %[[S:.*]]: tensor<19x11xbf16>)
// CHECK-NEXT: %[[R0:.*]] = shardlin.reduce_scatter %[[P]] along <dim = 0, placements = [0, 1, 2, 3]> : tensor<20x11xbf16> -> tensor<5x11xbf16>
// CHECK-NEXT: %[[R1:.*]] = shardlin.reduce_scatter %[[S]] along <dim = 0, placements = [1, 0]> : tensor<19x11xbf16> -> tensor<?x11xbf16>
// CHECK-NEXT: return %[[R0]], %[[R1]]
func.func @reduce_scatter(%p: tensor<20x11xbf16>, %s: tensor<19x11xbf16>) -> (tensor<5x11xbf16>, tensor<?x11xbf16>) {
  %r0 = shardlin.reduce_scatter %p along <dim = 0, placements = [0, 1, 2, 3]> : tensor<20x11xbf16> -> tensor<5x11xbf16>
  %r1 = shardlin.reduce_scatter %s along <dim = 0, placements = [1, 0]> : tensor<19x11xbf16> -> tensor<?x11xbf16>
  return %r0, %r1 : tensor<5x11xbf16>, tensor<?x11xbf16>
}

//===----------------------------------------------------------------------===//
// shardlin.gemm / shardlin.bias_add
//===----------------------------------------------------------------------===//

// Every combination of bias, transpose_lhs and transpose_rhs; M = 4, K = 8,
// N = 3, and a rank-dependent (`?`) contraction dim in the last two.
// CHECK-LABEL: func.func @gemm
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[AT:.*]]: tensor<8x4xf32>, %[[B:.*]]: tensor<8x3xf32>, %[[BT:.*]]: tensor<3x8xf32>, %[[C:.*]]: tensor<3xf32>, %[[XS:.*]]: tensor<20x?xf32>, %[[AS:.*]]: tensor<11x?xf32>, %[[CS:.*]]: tensor<?xf32>)
// CHECK-NEXT: shardlin.gemm %[[A]], %[[B]] : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: shardlin.gemm %[[A]], %[[B]] bias %[[C]] : (tensor<4x8xf32>, tensor<8x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: shardlin.gemm %[[AT]], %[[B]] transpose_lhs : (tensor<8x4xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: shardlin.gemm %[[AT]], %[[B]] bias %[[C]] transpose_lhs : (tensor<8x4xf32>, tensor<8x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: shardlin.gemm %[[A]], %[[BT]] transpose_rhs : (tensor<4x8xf32>, tensor<3x8xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: shardlin.gemm %[[A]], %[[BT]] bias %[[C]] transpose_rhs : (tensor<4x8xf32>, tensor<3x8xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: shardlin.gemm %[[AT]], %[[BT]] transpose_lhs transpose_rhs : (tensor<8x4xf32>, tensor<3x8xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: shardlin.gemm %[[AT]], %[[BT]] bias %[[C]] transpose_lhs transpose_rhs : (tensor<8x4xf32>, tensor<3x8xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: shardlin.gemm %[[XS]], %[[AS]] transpose_rhs : (tensor<20x?xf32>, tensor<11x?xf32>) -> tensor<20x11xf32>
// CHECK-NEXT: shardlin.gemm %[[XS]], %[[AS]] bias %[[CS]] transpose_rhs : (tensor<20x?xf32>, tensor<11x?xf32>, tensor<?xf32>) -> tensor<20x11xf32>
// CHECK-NEXT: return
func.func @gemm(%a: tensor<4x8xf32>, %at: tensor<8x4xf32>, %b: tensor<8x3xf32>,
                %bt: tensor<3x8xf32>, %c: tensor<3xf32>, %xs: tensor<20x?xf32>,
                %as: tensor<11x?xf32>, %cs: tensor<?xf32>) {
  %0 = shardlin.gemm %a, %b : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %1 = shardlin.gemm %a, %b bias %c : (tensor<4x8xf32>, tensor<8x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %2 = shardlin.gemm %at, %b transpose_lhs : (tensor<8x4xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %3 = shardlin.gemm %at, %b bias %c transpose_lhs : (tensor<8x4xf32>, tensor<8x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %4 = shardlin.gemm %a, %bt transpose_rhs : (tensor<4x8xf32>, tensor<3x8xf32>) -> tensor<4x3xf32>
  %5 = shardlin.gemm %a, %bt bias %c transpose_rhs : (tensor<4x8xf32>, tensor<3x8xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %6 = shardlin.gemm %at, %bt transpose_lhs transpose_rhs : (tensor<8x4xf32>, tensor<3x8xf32>) -> tensor<4x3xf32>
  %7 = shardlin.gemm %at, %bt bias %c transpose_lhs transpose_rhs : (tensor<8x4xf32>, tensor<3x8xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %8 = shardlin.gemm %xs, %as transpose_rhs : (tensor<20x?xf32>, tensor<11x?xf32>) -> tensor<20x11xf32>
  %9 = shardlin.gemm %xs, %as bias %cs transpose_rhs : (tensor<20x?xf32>, tensor<11x?xf32>, tensor<?xf32>) -> tensor<20x11xf32>
  return
}

// CHECK-LABEL: func.func @bias_add
// CHECK-SAME: (%[[Y:.*]]: tensor<5x11xf16>, %[[B:.*]]: tensor<11xf16>, %[[V:.*]]: tensor<2x?x11xf16>)
// CHECK-NEXT: %[[Z0:.*]] = shardlin.bias_add %[[Y]], %[[B]] : tensor<5x11xf16>, tensor<11xf16>
// CHECK-NEXT: %[[Z1:.*]] = shardlin.bias_add %[[V]], %[[B]] : tensor<2x?x11xf16>, tensor<11xf16>
// CHECK-NEXT: return %[[Z0]], %[[Z1]]
func.func @bias_add(%y: tensor<5x11xf16>, %b: tensor<11xf16>, %v: tensor<2x?x11xf16>) -> (tensor<5x11xf16>, tensor<2x?x11xf16>) {
  %z0 = shardlin.bias_add %y, %b : tensor<5x11xf16>, tensor<11xf16>
  %z1 = shardlin.bias_add %v, %b : tensor<2x?x11xf16>, tensor<11xf16>
  return %z0, %z1 : tensor<5x11xf16>, tensor<2x?x11xf16>
}

// The f32 partial products of f16/bf16 operands and their conversions.
// CHECK-LABEL: func.func @f32_partials
// CHECK-NEXT: %[[P:.*]] = shardlin.gemm %{{.*}}, %{{.*}} transpose_rhs : (tensor<4x8xbf16>, tensor<3x8xbf16>) -> tensor<4x3xf32>
// CHECK-NEXT: %[[W:.*]] = shardlin.convert %{{.*}} : tensor<3xbf16> -> tensor<3xf32>
// CHECK-NEXT: %[[S:.*]] = shardlin.bias_add %[[P]], %[[W]] : tensor<4x3xf32>, tensor<3xf32>
// CHECK-NEXT: %[[R:.*]] = shardlin.convert %[[S]] : tensor<4x3xf32> -> tensor<4x3xbf16>
func.func @f32_partials(%a: tensor<4x8xbf16>, %b: tensor<3x8xbf16>, %c: tensor<3xbf16>) -> tensor<4x3xbf16> {
  %p = shardlin.gemm %a, %b transpose_rhs : (tensor<4x8xbf16>, tensor<3x8xbf16>) -> tensor<4x3xf32>
  %w = shardlin.convert %c : tensor<3xbf16> -> tensor<3xf32>
  %s = shardlin.bias_add %p, %w : tensor<4x3xf32>, tensor<3xf32>
  %r = shardlin.convert %s : tensor<4x3xf32> -> tensor<4x3xbf16>
  return %r : tensor<4x3xbf16>
}

// Rows known only at run time, with the bounds of their blocks (what
// shardlin-prepare-native emits for the native path).
// CHECK-LABEL: func.func @stacked_rows
// CHECK: %[[B:.*]] = shardlin.gather_bounds %arg0 along <dim = 0, placements = [1, 0]> : tensor<?x4xf32> -> tensor<3xi64>
// CHECK: shardlin.all_gather %arg0 along <dim = 0, placements = [1, 0]> bounds(%[[B]] : tensor<3xi64>) : tensor<?x4xf32> -> tensor<?x4xf32>
// CHECK: shardlin.all_to_all %{{.*}} split <dim = 0, placements = [1, 0]> bounds(%[[B]] : tensor<3xi64>) concat <dim = 1, placements = [0, 1]> : tensor<?x4xf32> -> tensor<?x8xf32>
// CHECK: shardlin.reduce_scatter %{{.*}} along <dim = 0, placements = [1, 0]> bounds(%[[B]] : tensor<3xi64>) : tensor<?x4xf32> -> tensor<?x4xf32>
func.func @stacked_rows(%x: tensor<?x4xf32>) -> (tensor<?x8xf32>, tensor<?x4xf32>) {
  %b = shardlin.gather_bounds %x along <dim = 0, placements = [1, 0]> : tensor<?x4xf32> -> tensor<3xi64>
  %g = shardlin.all_gather %x along <dim = 0, placements = [1, 0]> bounds(%b : tensor<3xi64>) : tensor<?x4xf32> -> tensor<?x4xf32>
  %t = shardlin.all_to_all %g split <dim = 0, placements = [1, 0]> bounds(%b : tensor<3xi64>) concat <dim = 1, placements = [0, 1]> : tensor<?x4xf32> -> tensor<?x8xf32>
  %s = shardlin.reduce_scatter %g along <dim = 0, placements = [1, 0]> bounds(%b : tensor<3xi64>) : tensor<?x4xf32> -> tensor<?x4xf32>
  return %t, %s : tensor<?x8xf32>, tensor<?x4xf32>
}
