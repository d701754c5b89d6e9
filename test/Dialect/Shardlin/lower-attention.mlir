// RUN: shardlin-opt %s --lower-sharded-linear | FileCheck %s
// RUN: shardlin-opt %s --lower-sharded-linear | shardlin-opt | FileCheck %s --check-prefix=COUNT \
// RUN:   --implicit-check-not=shardlin.all_gather --implicit-check-not=shardlin.reduce_scatter \
// RUN:   --implicit-check-not=shardlin.all_to_all --implicit-check-not=shardlin.all_reduce \
// RUN:   --implicit-check-not='shardlin.linear '
// RUN: shardlin-opt %s '--lower-sharded-linear=explain=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN

// Attention blocks (docs/attention.md) lowered as one unit: one all_gather
// of x (the rank's rows, sequence-parallel), the q/k/v GEMMs on the rank's
// heads, the rank-local rope and attention with per-rank head tables, O's
// GEMM and one reduce_scatter; no collective in between. Head counts that
// the ranks do not divide, GQA, and more ranks than kv heads (K and V
// replicated, each rank's kv-head rows sliced from them).

// The whole file: four blocks, each exactly one all_gather then one
// reduce_scatter, and no other collective or linear anywhere.
// COUNT: shardlin.all_gather
// COUNT: shardlin.reduce_scatter
// COUNT: shardlin.all_gather
// COUNT: shardlin.reduce_scatter
// COUNT: shardlin.all_gather
// COUNT: shardlin.reduce_scatter
// COUNT: shardlin.all_gather
// COUNT: shardlin.reduce_scatter

// (Hq, Hkv, W) = (12, 4, 8), head_dim 4: 2 query heads on ranks 0-5, none
// on 6 and 7; g = 3, so ranks 1 and 4 need two kv heads and neighbours
// share one: slices of the replicated K and V (and K's bias) that overlap.
// CHECK-LABEL: func.func @gqa_12_4_8
// CHECK: %[[G:.*]] = shardlin.all_gather %{{.*}} along <dim = 0, placements = [0, 1, 2, 3, 4, 5, 6, 7]> : tensor<4x8xf32> -> tensor<32x8xf32>
// CHECK-NOT: shardlin.{{all_gather|all_to_all|all_reduce|reduce_scatter}}
// CHECK: shardlin.gemm %[[G]], %{{.*}} bias %{{.*}} transpose_rhs {{.*}} -> tensor<32x?xf32>
// The gathered rows as 8 sequences of 4.
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [8, 4, %{{.*}}] : tensor<32x?xf32> into tensor<8x4x?xf32>
// CHECK: shardlin.local_slice %{{.*}} dim = 0 ranges = [0, 4, 0, 8, 4, 8, 8, 12, 8, 16, 12, 16, 0, 0, 0, 0] : tensor<16x8xf32> -> tensor<?x8xf32>
// CHECK: shardlin.local_slice %{{.*}} dim = 0 ranges = [0, 4, 0, 8, 4, 8, 8, 12, 8, 16, 12, 16, 0, 0, 0, 0] : tensor<16xf32> -> tensor<?xf32>
// CHECK: shardlin.rope %{{.*}} {head_dim = 4 : i64} : tensor<8x4x?xf32>, tensor<4x2xf32>, tensor<4x2xf32> -> tensor<8x4x?xf32>
// CHECK: shardlin.attention %{{.*}} {causal, group = 3 : i64, head_dim = 4 : i64, kv_heads = array<i64: 0, 1, 0, 2, 1, 2, 2, 3, 2, 4, 3, 4, 0, 0, 0, 0>, q_heads = array<i64: 0, 2, 2, 4, 4, 6, 6, 8, 8, 10, 10, 12, 12, 12, 12, 12>, scale = 5.000000e-01 : f64} : tensor<8x4x?xf32>, tensor<8x4x?xf32>, tensor<8x4x?xf32> -> tensor<8x4x?xf32>
// CHECK-NOT: shardlin.{{all_gather|all_to_all|all_reduce|reduce_scatter}}
// CHECK: shardlin.reduce_scatter %{{.*}} along <dim = 0, placements = [0, 1, 2, 3, 4, 5, 6, 7]> : tensor<32x8xf32> -> tensor<4x8xf32>
// CHECK-NOT: shardlin.{{all_gather|all_to_all|all_reduce|reduce_scatter}}
// CHECK: return
// EXPLAIN: remark: attention block fused: 12 query heads, 4 kv heads (group 3), head_dim 4, 8 ranks; query heads by rank [0, 2) [2, 4) [4, 6) [6, 8) [8, 10) [10, 12) [12, 12) [12, 12); kv heads by rank [0, 1) [0, 2) [1, 2) [2, 3) [2, 4) [3, 4) [0, 0) [0, 0) (sliced from the replicated K and V weights); one all_gather of x and one reduce_scatter; per rank 896 bytes all_gathered and 896 bytes reduce_scattered; at most 16384 projection flops per rank; 64 k/v features computed over the ranks for 32
func.func @gqa_12_4_8(%x: tensor<4x8xf32>, %wq: !shardlin.sharded<tensor<48x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3, 4, 5, 6, 7], block = 4>>, %wk: tensor<16x8xf32> {shardlin.replicated}, %wv: tensor<16x8xf32> {shardlin.replicated}, %bk: tensor<16xf32> {shardlin.replicated}, %wo: !shardlin.sharded<tensor<8x48xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3, 4, 5, 6, 7], block = 4>>, %bq: tensor<48xf32>, %cos: tensor<4x2xf32> {shardlin.replicated}, %sin: tensor<4x2xf32> {shardlin.replicated}) -> tensor<4x8xf32> {
  %q = shardlin.linear %x, %wq, %bq : (tensor<4x8xf32>, !shardlin.sharded<tensor<48x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3, 4, 5, 6, 7], block = 4>>, tensor<48xf32>) -> tensor<4x48xf32>
  %k = shardlin.gemm %x, %wk bias %bk transpose_rhs : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %v = shardlin.gemm %x, %wv transpose_rhs : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %qr = shardlin.rope %q, %cos, %sin {head_dim = 4 : i64} : tensor<4x48xf32>, tensor<4x2xf32>, tensor<4x2xf32> -> tensor<4x48xf32>
  %kr = shardlin.rope %k, %cos, %sin {head_dim = 4 : i64} : tensor<4x16xf32>, tensor<4x2xf32>, tensor<4x2xf32> -> tensor<4x16xf32>
  %a = shardlin.attention %qr, %kr, %v {head_dim = 4 : i64, causal} : tensor<4x48xf32>, tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x48xf32>
  %y = shardlin.linear %a, %wo : (tensor<4x48xf32>, !shardlin.sharded<tensor<8x48xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3, 4, 5, 6, 7], block = 4>>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// (25, 5, 4): q in whole groups (block = g * head_dim = 20): 2, 2, 1 and 0
// groups; k and v in whole heads give each rank its groups' kv heads. A
// mask.
// CHECK-LABEL: func.func @gqa_25_5_4
// CHECK: shardlin.all_gather
// CHECK-NOT: shardlin.{{all_gather|all_to_all|all_reduce|reduce_scatter}}
// CHECK: shardlin.attention %{{.*}} mask %{{.*}} {causal, group = 5 : i64, head_dim = 4 : i64, kv_heads = array<i64: 0, 2, 2, 4, 4, 5, 5, 5>, q_heads = array<i64: 0, 10, 10, 20, 20, 25, 25, 25>, scale = 5.000000e-01 : f64}
// CHECK-NOT: shardlin.{{all_gather|all_to_all|all_reduce|reduce_scatter}}
// CHECK: shardlin.reduce_scatter
// CHECK-NOT: shardlin.{{all_gather|all_to_all|all_reduce|reduce_scatter}}
// CHECK: return
func.func @gqa_25_5_4(%x: tensor<4x8xf32>, %wq: !shardlin.sharded<tensor<100x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], block = 20>>, %wk: !shardlin.sharded<tensor<20x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], block = 4>>, %wv: !shardlin.sharded<tensor<20x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], block = 4>>, %wo: !shardlin.sharded<tensor<8x100xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3], block = 20>>, %m: tensor<4x4xf32> {shardlin.replicated}) -> tensor<4x8xf32> {
  %q = shardlin.linear %x, %wq : (tensor<4x8xf32>, !shardlin.sharded<tensor<100x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], block = 20>>) -> tensor<4x100xf32>
  %k = shardlin.linear %x, %wk : (tensor<4x8xf32>, !shardlin.sharded<tensor<20x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], block = 4>>) -> tensor<4x20xf32>
  %v = shardlin.linear %x, %wv : (tensor<4x8xf32>, !shardlin.sharded<tensor<20x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], block = 4>>) -> tensor<4x20xf32>
  %a = shardlin.attention %q, %k, %v mask %m {head_dim = 4 : i64, causal} : tensor<4x100xf32>, tensor<4x20xf32>, tensor<4x20xf32>, tensor<4x4xf32> -> tensor<4x100xf32>
  %y = shardlin.linear %a, %wo : (tensor<4x100xf32>, !shardlin.sharded<tensor<8x100xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3], block = 20>>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// (7, 7, 3), permuted placements, a 3-D x (2 sequences of 4 per rank):
// chunk 0 (heads [0, 3)) is on rank 2, chunk 1 ([3, 6)) on rank 0.
// CHECK-LABEL: func.func @mha_7_7_3
// CHECK: tensor.collapse_shape %{{.*}} : tensor<2x4x8xf32> into tensor<8x8xf32>
// CHECK: shardlin.all_gather %{{.*}} : tensor<8x8xf32> -> tensor<24x8xf32>
// CHECK-NOT: shardlin.{{all_gather|all_to_all|all_reduce|reduce_scatter}}
// CHECK: shardlin.attention %{{.*}} {causal, group = 1 : i64, head_dim = 4 : i64, kv_heads = array<i64: 3, 6, 6, 7, 0, 3>, q_heads = array<i64: 3, 6, 6, 7, 0, 3>, scale = 5.000000e-01 : f64} : tensor<6x4x?xf32>
// CHECK-NOT: shardlin.{{all_gather|all_to_all|all_reduce|reduce_scatter}}
// CHECK: shardlin.reduce_scatter %{{.*}} : tensor<24x8xf32> -> tensor<8x8xf32>
// CHECK-NOT: shardlin.{{all_gather|all_to_all|all_reduce|reduce_scatter}}
// CHECK: tensor.expand_shape
func.func @mha_7_7_3(%x: tensor<2x4x8xf32>, %wq: !shardlin.sharded<tensor<28x8xf32>, #shardlin.chunk<dim = 0, placements = [2, 0, 1], block = 4>>, %wk: !shardlin.sharded<tensor<28x8xf32>, #shardlin.chunk<dim = 0, placements = [2, 0, 1], block = 4>>, %wv: !shardlin.sharded<tensor<28x8xf32>, #shardlin.chunk<dim = 0, placements = [2, 0, 1], block = 4>>, %wo: !shardlin.sharded<tensor<8x28xf32>, #shardlin.chunk<dim = 1, placements = [2, 0, 1], block = 4>>, %cos: tensor<4x2xf32> {shardlin.replicated}, %sin: tensor<4x2xf32> {shardlin.replicated}) -> tensor<2x4x8xf32> {
  %q = shardlin.linear %x, %wq : (tensor<2x4x8xf32>, !shardlin.sharded<tensor<28x8xf32>, #shardlin.chunk<dim = 0, placements = [2, 0, 1], block = 4>>) -> tensor<2x4x28xf32>
  %k = shardlin.linear %x, %wk : (tensor<2x4x8xf32>, !shardlin.sharded<tensor<28x8xf32>, #shardlin.chunk<dim = 0, placements = [2, 0, 1], block = 4>>) -> tensor<2x4x28xf32>
  %v = shardlin.linear %x, %wv : (tensor<2x4x8xf32>, !shardlin.sharded<tensor<28x8xf32>, #shardlin.chunk<dim = 0, placements = [2, 0, 1], block = 4>>) -> tensor<2x4x28xf32>
  %qr = shardlin.rope %q, %cos, %sin {head_dim = 4 : i64} : tensor<2x4x28xf32>, tensor<4x2xf32>, tensor<4x2xf32> -> tensor<2x4x28xf32>
  %kr = shardlin.rope %k, %cos, %sin {head_dim = 4 : i64} : tensor<2x4x28xf32>, tensor<4x2xf32>, tensor<4x2xf32> -> tensor<2x4x28xf32>
  %a = shardlin.attention %qr, %kr, %v {head_dim = 4 : i64, causal} : tensor<2x4x28xf32>, tensor<2x4x28xf32>, tensor<2x4x28xf32> -> tensor<2x4x28xf32>
  %y = shardlin.linear %a, %wo : (tensor<2x4x28xf32>, !shardlin.sharded<tensor<8x28xf32>, #shardlin.chunk<dim = 1, placements = [2, 0, 1], block = 4>>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// (32, 8, 6): 2 groups of 4 query heads on ranks 0-3, none on 4 and 5.
// CHECK-LABEL: func.func @gqa_32_8_6
// CHECK: shardlin.all_gather
// CHECK-NOT: shardlin.{{all_gather|all_to_all|all_reduce|reduce_scatter}}
// CHECK: shardlin.attention %{{.*}} {causal, group = 4 : i64, head_dim = 4 : i64, kv_heads = array<i64: 0, 2, 2, 4, 4, 6, 6, 8, 8, 8, 8, 8>, q_heads = array<i64: 0, 8, 8, 16, 16, 24, 24, 32, 32, 32, 32, 32>, scale = 5.000000e-01 : f64}
// CHECK-NOT: shardlin.{{all_gather|all_to_all|all_reduce|reduce_scatter}}
// CHECK: shardlin.reduce_scatter
// CHECK-NOT: shardlin.{{all_gather|all_to_all|all_reduce|reduce_scatter}}
// CHECK: return
func.func @gqa_32_8_6(%x: tensor<4x8xf32>, %wq: !shardlin.sharded<tensor<128x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3, 4, 5], block = 16>>, %wk: !shardlin.sharded<tensor<32x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3, 4, 5], block = 4>>, %wv: !shardlin.sharded<tensor<32x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3, 4, 5], block = 4>>, %wo: !shardlin.sharded<tensor<8x128xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3, 4, 5], block = 16>>) -> tensor<4x8xf32> {
  %q = shardlin.linear %x, %wq : (tensor<4x8xf32>, !shardlin.sharded<tensor<128x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3, 4, 5], block = 16>>) -> tensor<4x128xf32>
  %k = shardlin.linear %x, %wk : (tensor<4x8xf32>, !shardlin.sharded<tensor<32x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3, 4, 5], block = 4>>) -> tensor<4x32xf32>
  %v = shardlin.linear %x, %wv : (tensor<4x8xf32>, !shardlin.sharded<tensor<32x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3, 4, 5], block = 4>>) -> tensor<4x32xf32>
  %a = shardlin.attention %q, %k, %v {head_dim = 4 : i64, causal} : tensor<4x128xf32>, tensor<4x32xf32>, tensor<4x32xf32> -> tensor<4x128xf32>
  %y = shardlin.linear %a, %wo : (tensor<4x128xf32>, !shardlin.sharded<tensor<8x128xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3, 4, 5], block = 16>>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
