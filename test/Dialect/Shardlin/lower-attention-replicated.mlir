// RUN: shardlin-opt %s --lower-sharded-linear | FileCheck %s \
// RUN:   --implicit-check-not=shardlin.all_gather --implicit-check-not=shardlin.reduce_scatter \
// RUN:   --implicit-check-not=shardlin.all_to_all --implicit-check-not=shardlin.all_reduce \
// RUN:   --implicit-check-not='shardlin.linear '
// RUN: shardlin-opt %s '--lower-sharded-linear=explain=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN

// An attention block on a replicated x (every linear `layouts replicated ->
// replicated`, no sequence parallelism): no all_gather, the rank's heads of
// every row, and one all_reduce of O's partial products. (Hq, Hkv, W) =
// (12, 4, 8) with K and V replicated, a weight_kn O and O's bias.

!wq = !shardlin.sharded<tensor<48x8xf32>, #shardlin.chunk<dim = 0, placements = [7, 6, 5, 4, 3, 2, 1, 0], block = 4>>
!wo = !shardlin.sharded<tensor<48x8xf32>, #shardlin.chunk<dim = 0, placements = [7, 6, 5, 4, 3, 2, 1, 0], block = 4>>

// CHECK-LABEL: func.func @replicated
// CHECK: %[[Q:.*]] = shardlin.gemm %arg0, %{{.*}} transpose_rhs {{.*}} : (tensor<4x8xf32>, tensor<?x8xf32>) -> tensor<4x?xf32>
// CHECK: shardlin.local_slice %{{.*}} dim = 0 ranges = [0, 0, 0, 0, 12, 16, 8, 16, 8, 12, 4, 8, 0, 8, 0, 4] : tensor<16x8xf32> -> tensor<?x8xf32>
// CHECK: shardlin.attention %{{.*}} {causal, group = 3 : i64, head_dim = 4 : i64, kv_heads = array<i64: 0, 0, 0, 0, 3, 4, 2, 4, 2, 3, 1, 2, 0, 2, 0, 1>, q_heads = array<i64: 12, 12, 12, 12, 10, 12, 8, 10, 6, 8, 4, 6, 2, 4, 0, 2>, scale = 5.000000e-01 : f64} : tensor<1x4x?xf32>
// CHECK: shardlin.gemm %{{.*}}, %{{.*}} {{{.*}}} : (tensor<4x?xf32>, tensor<?x8xf32>) -> tensor<4x8xf32>
// CHECK: shardlin.all_reduce %{{.*}} : tensor<4x8xf32>
// CHECK: shardlin.bias_add
// CHECK: return
// EXPLAIN: remark: attention block fused: 12 query heads, 4 kv heads (group 3), head_dim 4, 8 ranks; query heads by rank [12, 12) [12, 12) [10, 12) [8, 10) [6, 8) [4, 6) [2, 4) [0, 2); kv heads by rank [0, 0) [0, 0) [3, 4) [2, 4) [2, 3) [1, 2) [0, 2) [0, 1) (sliced from the replicated K and V weights); x replicated: one all_reduce; per rank about 224 bytes all_reduced; at most 2048 projection flops per rank; 64 k/v features computed over the ranks for 32
func.func @replicated(%x: tensor<4x8xf32> {shardlin.replicated}, %wq: !wq,
                      %wk: tensor<16x8xf32> {shardlin.replicated}, %wv: tensor<16x8xf32> {shardlin.replicated},
                      %wo: !wo, %bo: tensor<8xf32>) -> tensor<4x8xf32> {
  %q = shardlin.linear %x, %wq layouts replicated -> replicated : (tensor<4x8xf32>, !wq) -> tensor<4x48xf32>
  %k = shardlin.gemm %x, %wk transpose_rhs : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %v = shardlin.gemm %x, %wv transpose_rhs : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  %a = shardlin.attention %q, %k, %v {head_dim = 4 : i64, causal} : tensor<4x48xf32>, tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x48xf32>
  %y = shardlin.linear %a, %wo, %bo weight_kn layouts replicated -> replicated : (tensor<4x48xf32>, !wo, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
