// RUN: shardlin-opt %s -split-input-file '--lower-sharded-linear=explain=true' -o /dev/null 2>&1 | FileCheck %s
// RUN: shardlin-opt %s -split-input-file --lower-sharded-linear | FileCheck %s --check-prefix=IR

// Attention blocks that cannot be lowered as one unit: the remark says why,
// and the ops are lowered one by one (exact: the attention then runs on the
// rank's rows with all heads, between the q/k/v linears' all_to_alls and
// O's).

// q's chunks split heads: 28 features of heads of 4 over 3 ranks by the
// plain rule (split 10).
// CHECK: lower-attention-unfused.mlir:[[# @LINE + 8]]:8: remark: attention block not fused: q's weight chunks (bounds [0, 10, 20, 28]) split a head of 4 features: give the chunk `block = 4` (or a multiple) or bounds that are multiples of it (its ops are lowered one by one)
// IR-LABEL: func.func @splits_a_head
// IR: shardlin.attention %{{.*}} {causal, head_dim = 4 : i64} : tensor<4x28xf32>
func.func @splits_a_head(%x: tensor<4x8xf32>, %wq: !shardlin.sharded<tensor<28x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2]>>, %wk: !shardlin.sharded<tensor<28x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2]>>, %wo: !shardlin.sharded<tensor<8x28xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2]>>) -> tensor<4x8xf32> {
  %q = shardlin.linear %x, %wq : (tensor<4x8xf32>, !shardlin.sharded<tensor<28x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2]>>) -> tensor<4x28xf32>
  %k = shardlin.linear %x, %wk : (tensor<4x8xf32>, !shardlin.sharded<tensor<28x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2]>>) -> tensor<4x28xf32>
  %v = shardlin.linear %x, %wk : (tensor<4x8xf32>, !shardlin.sharded<tensor<28x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2]>>) -> tensor<4x28xf32>
  %a = shardlin.attention %q, %k, %v {head_dim = 4 : i64, causal} : tensor<4x28xf32>, tensor<4x28xf32>, tensor<4x28xf32> -> tensor<4x28xf32>
  %y = shardlin.linear %a, %wo : (tensor<4x28xf32>, !shardlin.sharded<tensor<8x28xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2]>>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// (Hq, Hkv, W) = (25, 5, 4) with q in whole heads (block = 4, 7 7 7 4) and
// k, v in whole heads (2 2 1 0): rank 1's heads [7, 14) need kv heads
// [1, 3) but it holds [2, 4).
!wq = !shardlin.sharded<tensor<100x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], block = 4>>
!wk = !shardlin.sharded<tensor<20x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], block = 4>>
!wo = !shardlin.sharded<tensor<8x100xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3], block = 4>>
// CHECK: lower-attention-unfused.mlir:[[# @LINE + 6]]:8: remark: attention block not fused: rank 1's query heads [7, 14) need kv heads [1, 3) (group 5), but its k/v chunk holds [2, 4): split q in whole groups (block = group * head_dim) or replicate K and V (its ops are lowered one by one)
func.func @kv_missing(%x: tensor<4x8xf32>, %wq: !wq, %wk: !wk, %wv: !wk, %wo: !wo) -> tensor<4x8xf32> {
  %q = shardlin.linear %x, %wq : (tensor<4x8xf32>, !wq) -> tensor<4x100xf32>
  %k = shardlin.linear %x, %wk : (tensor<4x8xf32>, !wk) -> tensor<4x20xf32>
  %v = shardlin.linear %x, %wv : (tensor<4x8xf32>, !wk) -> tensor<4x20xf32>
  %a = shardlin.attention %q, %k, %v {head_dim = 4 : i64, causal} : tensor<4x100xf32>, tensor<4x20xf32>, tensor<4x20xf32> -> tensor<4x100xf32>
  %y = shardlin.linear %a, %wo : (tensor<4x100xf32>, !wo) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// O's input features are chunked otherwise than q's outputs.
!wq = !shardlin.sharded<tensor<16x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1], block = 4>>
!wo = !shardlin.sharded<tensor<8x16xf32>, #shardlin.chunk<dim = 1, placements = [1, 0], block = 4>>
// CHECK: lower-attention-unfused.mlir:[[# @LINE + 6]]:8: remark: attention block not fused: O's input-feature chunks are not q's (its ops are lowered one by one)
func.func @o_chunks_differ(%x: tensor<4x8xf32>, %wq: !wq, %wo: !wo) -> tensor<4x8xf32> {
  %q = shardlin.linear %x, %wq : (tensor<4x8xf32>, !wq) -> tensor<4x16xf32>
  %k = shardlin.linear %x, %wq : (tensor<4x8xf32>, !wq) -> tensor<4x16xf32>
  %v = shardlin.linear %x, %wq : (tensor<4x8xf32>, !wq) -> tensor<4x16xf32>
  %a = shardlin.attention %q, %k, %v {head_dim = 4 : i64} : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  %y = shardlin.linear %a, %wo : (tensor<4x16xf32>, !wo) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A replicated K weight that is not stated the same on every rank.
!wq = !shardlin.sharded<tensor<48x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3, 4, 5, 6, 7], block = 4>>
!wo = !shardlin.sharded<tensor<8x48xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3, 4, 5, 6, 7], block = 4>>
// CHECK: lower-attention-unfused.mlir:[[# @LINE + 6]]:8: remark: attention block not fused: k's gemm weight (or bias) is not the same on every rank (a shardlin.replicated argument or a constant) (its ops are lowered one by one)
func.func @kv_not_replicated(%x: tensor<4x8xf32>, %wq: !wq, %wk: tensor<16x8xf32>, %wo: !wo) -> tensor<4x8xf32> {
  %q = shardlin.linear %x, %wq : (tensor<4x8xf32>, !wq) -> tensor<4x48xf32>
  %k = shardlin.gemm %x, %wk transpose_rhs : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %v = shardlin.gemm %x, %wk transpose_rhs : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %a = shardlin.attention %q, %k, %v {head_dim = 4 : i64} : tensor<4x48xf32>, tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x48xf32>
  %y = shardlin.linear %a, %wo : (tensor<4x48xf32>, !wo) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A 3-D x whose K projection is a gemm of other rows, expanded: not x's.
!wq = !shardlin.sharded<tensor<24x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], block = 4>>
!wo = !shardlin.sharded<tensor<8x24xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3], block = 4>>
// CHECK: lower-attention-unfused.mlir:[[# @LINE + 9]]:8: remark: attention block not fused: k's gemm on a 3-D x is not collapse_shape {{\[}}[0, 1], [2]] of x, the gemm and expand_shape back (its ops are lowered one by one)
func.func @gqa_3d_other_rows(%x: tensor<2x4x8xf32>, %rows: tensor<8x8xf32>, %wq: !wq,
                             %wk: tensor<8x8xf32> {shardlin.replicated}, %wo: !wo) -> tensor<2x4x8xf32> {
  %q = shardlin.linear %x, %wq : (tensor<2x4x8xf32>, !wq) -> tensor<2x4x24xf32>
  %k2 = shardlin.gemm %rows, %wk transpose_rhs : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %k = tensor.expand_shape %k2 [[0, 1], [2]] output_shape [2, 4, 8] : tensor<8x8xf32> into tensor<2x4x8xf32>
  %v2 = shardlin.gemm %rows, %wk transpose_rhs : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %v = tensor.expand_shape %v2 [[0, 1], [2]] output_shape [2, 4, 8] : tensor<8x8xf32> into tensor<2x4x8xf32>
  %a = shardlin.attention %q, %k, %v {head_dim = 4 : i64, causal} : tensor<2x4x24xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x24xf32>
  %y = shardlin.linear %a, %wo : (tensor<2x4x24xf32>, !wo) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// Rope tables and a mask that each rank passes for itself (positions of its
// own rows, say): fused, rank r would apply its tables to every rank's
// sequences.
!wq = !shardlin.sharded<tensor<16x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1], block = 4>>
!wo = !shardlin.sharded<tensor<8x16xf32>, #shardlin.chunk<dim = 1, placements = [0, 1], block = 4>>
// CHECK: lower-attention-unfused.mlir:[[# @LINE + 8]]:8: remark: attention block not fused: the rope's cos/sin tables are not the same on every rank (a shardlin.replicated argument or a constant) (its ops are lowered one by one)
func.func @rope_rank_local(%x: tensor<4x8xf32>, %wq: !wq, %wo: !wo, %cos: tensor<4x2xf32>, %sin: tensor<4x2xf32>) -> tensor<4x8xf32> {
  %q = shardlin.linear %x, %wq : (tensor<4x8xf32>, !wq) -> tensor<4x16xf32>
  %k = shardlin.linear %x, %wq : (tensor<4x8xf32>, !wq) -> tensor<4x16xf32>
  %v = shardlin.linear %x, %wq : (tensor<4x8xf32>, !wq) -> tensor<4x16xf32>
  %qr = shardlin.rope %q, %cos, %sin {head_dim = 4 : i64} : tensor<4x16xf32>, tensor<4x2xf32>, tensor<4x2xf32> -> tensor<4x16xf32>
  %kr = shardlin.rope %k, %cos, %sin {head_dim = 4 : i64} : tensor<4x16xf32>, tensor<4x2xf32>, tensor<4x2xf32> -> tensor<4x16xf32>
  %a = shardlin.attention %qr, %kr, %v {head_dim = 4 : i64, causal} : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  %y = shardlin.linear %a, %wo : (tensor<4x16xf32>, !wo) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

!wq = !shardlin.sharded<tensor<16x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1], block = 4>>
!wo = !shardlin.sharded<tensor<8x16xf32>, #shardlin.chunk<dim = 1, placements = [0, 1], block = 4>>
// CHECK: lower-attention-unfused.mlir:[[# @LINE + 6]]:8: remark: attention block not fused: the mask is not the same on every rank (a shardlin.replicated argument or a constant) (its ops are lowered one by one)
func.func @mask_rank_local(%x: tensor<4x8xf32>, %wq: !wq, %wo: !wo, %m: tensor<4x4xf32>) -> tensor<4x8xf32> {
  %q = shardlin.linear %x, %wq : (tensor<4x8xf32>, !wq) -> tensor<4x16xf32>
  %k = shardlin.linear %x, %wq : (tensor<4x8xf32>, !wq) -> tensor<4x16xf32>
  %v = shardlin.linear %x, %wq : (tensor<4x8xf32>, !wq) -> tensor<4x16xf32>
  %a = shardlin.attention %q, %k, %v mask %m {head_dim = 4 : i64} : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x4xf32> -> tensor<4x16xf32>
  %y = shardlin.linear %a, %wo : (tensor<4x16xf32>, !wo) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// K and V split over 2 ranks, q and O over 4.
!wq = !shardlin.sharded<tensor<16x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], block = 4>>
!wk = !shardlin.sharded<tensor<16x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1], block = 4>>
!wo = !shardlin.sharded<tensor<8x16xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3], block = 4>>
// CHECK: lower-attention-unfused.mlir:[[# @LINE + 6]]:8: remark: attention block not fused: k's weight is split over another number of ranks than O's (its ops are lowered one by one)
func.func @kv_other_ranks(%x: tensor<4x8xf32>, %wq: !wq, %wk: !wk, %wo: !wo) -> tensor<4x8xf32> {
  %q = shardlin.linear %x, %wq : (tensor<4x8xf32>, !wq) -> tensor<4x16xf32>
  %k = shardlin.linear %x, %wk : (tensor<4x8xf32>, !wk) -> tensor<4x16xf32>
  %v = shardlin.linear %x, %wk : (tensor<4x8xf32>, !wk) -> tensor<4x16xf32>
  %a = shardlin.attention %q, %k, %v {head_dim = 4 : i64} : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  %y = shardlin.linear %a, %wo : (tensor<4x16xf32>, !wo) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
