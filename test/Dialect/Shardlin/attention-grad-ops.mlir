// RUN: shardlin-opt %s | FileCheck %s
// RUN: shardlin-opt %s --verify-roundtrip -o /dev/null
// RUN: shardlin-opt %s -mlir-print-op-generic | shardlin-opt | FileCheck %s

// shardlin.attention_grad: dq, dk, dv of shardlin.attention, in its global
// and rank-local forms (what --shardlin-generate-backward emits).

// CHECK-LABEL: func.func @global_gqa
// CHECK: shardlin.attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {causal, head_dim = 4 : i64, wrt = "q"} : tensor<2x8x48xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x48xf32> -> tensor<2x8x48xf32>
// CHECK: shardlin.attention_grad {{.*}} wrt = "k"} : {{.*}} -> tensor<2x8x16xf32>
// CHECK: shardlin.attention_grad {{.*}} mask %{{.*}} {{.*}}wrt = "v"} : {{.*}}, tensor<8x8xf32> -> tensor<2x8x16xf32>
func.func @global_gqa(%q: tensor<2x8x48xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x16xf32>,
                      %do: tensor<2x8x48xf32>, %m: tensor<8x8xf32>)
    -> (tensor<2x8x48xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>) {
  %dq = shardlin.attention_grad %q, %k, %v, %do {wrt = "q", head_dim = 4 : i64, causal} : tensor<2x8x48xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x48xf32> -> tensor<2x8x48xf32>
  %dk = shardlin.attention_grad %q, %k, %v, %do {wrt = "k", head_dim = 4 : i64, causal} : tensor<2x8x48xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x48xf32> -> tensor<2x8x16xf32>
  %dv = shardlin.attention_grad %q, %k, %v, %do mask %m {wrt = "v", head_dim = 4 : i64, scale = 0.25 : f64} : tensor<2x8x48xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x48xf32>, tensor<8x8xf32> -> tensor<2x8x16xf32>
  return %dq, %dk, %dv : tensor<2x8x48xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>
}

// The rank-local form of (Hq, Hkv, W) = (6, 2, 3): kv head 0 on ranks 0
// and 1, kv head 1 on ranks 1 and 2.
// CHECK-LABEL: func.func @rank_local
// CHECK: shardlin.attention_grad {{.*}}kv_heads = array<i64: 0, 1, 0, 2, 1, 2>, q_heads = array<i64: 0, 2, 2, 4, 4, 6>{{.*}}wrt = "k"} : tensor<3x8x8xf32>, tensor<3x8x?xf32>, tensor<3x8x?xf32>, tensor<3x8x8xf32> -> tensor<3x8x?xf32>
func.func @rank_local(%q: tensor<3x8x8xf32>, %k: tensor<3x8x?xf32>, %v: tensor<3x8x?xf32>, %do: tensor<3x8x8xf32>) -> tensor<3x8x?xf32> {
  %dk = shardlin.attention_grad %q, %k, %v, %do {wrt = "k", causal, group = 3 : i64, head_dim = 4 : i64, kv_heads = array<i64: 0, 1, 0, 2, 1, 2>, q_heads = array<i64: 0, 2, 2, 4, 4, 6>, scale = 5.000000e-01 : f64} : tensor<3x8x8xf32>, tensor<3x8x?xf32>, tensor<3x8x?xf32>, tensor<3x8x8xf32> -> tensor<3x8x?xf32>
  return %dk : tensor<3x8x?xf32>
}
