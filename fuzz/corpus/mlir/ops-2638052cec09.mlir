// Round trip of every shardlin op, attribute and type, in the custom form and
// through the generic form (and, with --verify-roundtrip, bytecode).
//
// The ops' chunk operands use the short form `along <dim = 0, placements =
// [1, 0]>` (the attribute's parameters without its `#shardlin.chunk`
// prefix), as the printer emits them.

//===----------------------------------------------------------------------===//
// #shardlin.chunk and !shardlin.sharded on their own
//===----------------------------------------------------------------------===//

func.func @chunk_attr() attributes {
    shardlin.spec = #shardlin.chunk<dim = 1, placements = [3, 1, 0, 2]>,
    shardlin.spec_w1 = #shardlin.chunk<dim = 0, placements = [0]>} {
  return
}

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

func.func @linear_2d_bias_f32(%x: tensor<5x19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>,
    %b: tensor<11xf32>) -> tensor<5x11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<5x19xf32>,
      !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>,
      tensor<11xf32>) -> tensor<5x11xf32>
  return %y : tensor<5x11xf32>
}

func.func @linear_2d_no_bias_f64(%x: tensor<5x19xf64>,
    %w: !shardlin.sharded<tensor<11x19xf64>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<5x11xf64> {
  %y = shardlin.linear %x, %w : (tensor<5x19xf64>,
      !shardlin.sharded<tensor<11x19xf64>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<5x11xf64>
  return %y : tensor<5x11xf64>
}

func.func @linear_1d_f16(%x: tensor<19xf16>,
    %w: !shardlin.sharded<tensor<11x19xf16>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>,
    %b: tensor<11xf16>) -> tensor<11xf16> {
  %y = shardlin.linear %x, %w, %b : (tensor<19xf16>,
      !shardlin.sharded<tensor<11x19xf16>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>,
      tensor<11xf16>) -> tensor<11xf16>
  return %y : tensor<11xf16>
}

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

func.func @local_shard(
    %u: !shardlin.sharded<tensor<11x16xf32>, #shardlin.chunk<dim = 1, placements = [3, 1, 0, 2]>>,
    %v: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>)
    -> (tensor<11x4xf32>, tensor<?x19xf32>) {
  %a = shardlin.local_shard %u : !shardlin.sharded<tensor<11x16xf32>, #shardlin.chunk<dim = 1, placements = [3, 1, 0, 2]>> -> tensor<11x4xf32>
  %b = shardlin.local_shard %v : !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>> -> tensor<?x19xf32>
  return %a, %b : tensor<11x4xf32>, tensor<?x19xf32>
}

func.func @local_chunk(%b: tensor<12xf64>, %m: tensor<3x11xf64>) -> (tensor<6xf64>, tensor<3x?xf64>) {
  %c0 = shardlin.local_chunk %b along <dim = 0, placements = [1, 0]> : tensor<12xf64> -> tensor<6xf64>
  %c1 = shardlin.local_chunk %m along <dim = 1, placements = [0, 2, 1]> : tensor<3x11xf64> -> tensor<3x?xf64>
  return %c0, %c1 : tensor<6xf64>, tensor<3x?xf64>
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

func.func @all_gather(%x: tensor<5x19xf16>, %u: tensor<?x19xf16>) -> (tensor<20x19xf16>, tensor<19x19xf16>) {
  %g0 = shardlin.all_gather %x along <dim = 0, placements = [0, 1, 2, 3]> : tensor<5x19xf16> -> tensor<20x19xf16>
  %g1 = shardlin.all_gather %u along <dim = 0, placements = [3, 1, 0, 2]> : tensor<?x19xf16> -> tensor<19x19xf16>
  return %g0, %g1 : tensor<20x19xf16>, tensor<19x19xf16>
}

func.func @all_to_all(%x: tensor<5x19xf32>, %q: tensor<10x?xf32>) -> (tensor<20x?xf32>, tensor<5x11xf32>, tensor<5x19xf32>) {
  %r = shardlin.all_to_all %x split <dim = 1, placements = [2, 3, 0, 1]> concat <dim = 0, placements = [0, 1, 2, 3]> : tensor<5x19xf32> -> tensor<20x?xf32>
  %c = shardlin.all_to_all %q split <dim = 0, placements = [0, 1]> concat <dim = 1, placements = [1, 0]> : tensor<10x?xf32> -> tensor<5x11xf32>
  %e = shardlin.all_to_all %x split <dim = 0, placements = [0]> concat <dim = 1, placements = [0]> : tensor<5x19xf32> -> tensor<5x19xf32>
  return %r, %c, %e : tensor<20x?xf32>, tensor<5x11xf32>, tensor<5x19xf32>
}

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

func.func @bias_add(%y: tensor<5x11xf16>, %b: tensor<11xf16>, %v: tensor<2x?x11xf16>) -> (tensor<5x11xf16>, tensor<2x?x11xf16>) {
  %z0 = shardlin.bias_add %y, %b : tensor<5x11xf16>, tensor<11xf16>
  %z1 = shardlin.bias_add %v, %b : tensor<2x?x11xf16>, tensor<11xf16>
  return %z0, %z1 : tensor<5x11xf16>, tensor<2x?x11xf16>
}
