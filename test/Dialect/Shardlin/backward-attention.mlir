// RUN: shardlin-opt %s '--shardlin-generate-backward=recompute=always' -split-input-file -verify-diagnostics | FileCheck %s

// The backward of an attention block whose rotary tables are
// shardlin.constants (what --shardlin-import-shard makes of a RoPE's frozen
// tables): constants of the function, read by the inverse ropes; (Hq, Hkv,
// W) = (4, 2, 2), K and V col-wise.

!wq = !shardlin.sharded<tensor<16x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1], block = 8>>
!wk = !shardlin.sharded<tensor<8x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1], block = 4>>
!wo = !shardlin.sharded<tensor<8x16xf32>, #shardlin.chunk<dim = 1, placements = [0, 1], block = 8>>

// CHECK-LABEL: func.func @block_backward
// CHECK: %[[COS:.*]] = shardlin.constant dense<{{.*}}> : tensor<4x2xf32> -> tensor<4x2xf32>
// CHECK: shardlin.attention_grad {{.*}}kv_heads = array<i64: 0, 1, 1, 2>, q_heads = array<i64: 0, 2, 2, 4>{{.*}}wrt = "q"
// CHECK: shardlin.rope %{{.*}}, %[[COS]], %{{.*}} {head_dim = 4 : i64, inverse}
// CHECK: shardlin.reduce_scatter
func.func @block(%x: tensor<4x8xf32>, %wq: !wq, %wk: !wk, %wv: !wk, %wo: !wo) -> tensor<4x8xf32> {
  %cos = shardlin.constant dense<[[1.0, 1.0], [0.5, 0.9], [-0.4, 0.8], [-0.9, 0.7]]> : tensor<4x2xf32> -> tensor<4x2xf32>
  %sin = shardlin.constant dense<[[0.0, 0.1], [0.8, 0.4], [0.9, 0.6], [0.1, 0.7]]> : tensor<4x2xf32> -> tensor<4x2xf32>
  %q = shardlin.linear %x, %wq : (tensor<4x8xf32>, !wq) -> tensor<4x16xf32>
  %k = shardlin.linear %x, %wk : (tensor<4x8xf32>, !wk) -> tensor<4x8xf32>
  %v = shardlin.linear %x, %wv : (tensor<4x8xf32>, !wk) -> tensor<4x8xf32>
  %qr = shardlin.rope %q, %cos, %sin {head_dim = 4 : i64} : tensor<4x16xf32>, tensor<4x2xf32>, tensor<4x2xf32> -> tensor<4x16xf32>
  %kr = shardlin.rope %k, %cos, %sin {head_dim = 4 : i64} : tensor<4x8xf32>, tensor<4x2xf32>, tensor<4x2xf32> -> tensor<4x8xf32>
  %a = shardlin.attention %qr, %kr, %v {head_dim = 4 : i64, causal} : tensor<4x16xf32>, tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x16xf32>
  %y = shardlin.linear %a, %wo : (tensor<4x16xf32>, !wo) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A weight kept in the module (a sharded shardlin.constant) has no gradient
// to return: refused.
!w = !shardlin.sharded<tensor<8x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1]>>
func.func @constant_weight(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{cannot differentiate a weight kept in the module (a sharded shardlin.constant): its gradient has no argument to be returned for; make it an argument (--shardlin-externalize-parameters)}}
  %w = shardlin.constant dense<1.0> : tensor<8x8xf32> -> !w
  %y = shardlin.linear %x, %w : (tensor<4x8xf32>, !w) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A bias kept in the module (a plain shardlin.constant) is the same on every
// rank: no gradient, and the input's and weight's gradients as usual.
!wc = !shardlin.sharded<tensor<8x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1]>>
// CHECK-LABEL: func.func @constant_bias_backward
// CHECK: return
func.func @constant_bias(%x: tensor<4x8xf32>, %w: !wc) -> tensor<4x8xf32> {
  %b = shardlin.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32> -> tensor<8xf32>
  %y = shardlin.linear %x, %w, %b : (tensor<4x8xf32>, !wc, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// local_slice of a replicated value: each rank's gradient placed at its
// range of a zero tensor of the full size by shardlin.local_place (the
// same dim and ranges), of any rank and along any dim; no constant, no
// GEMM with an identity.
// CHECK-LABEL: func.func @sliced_backward
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x8xf32> {shardlin.replicated}, %[[B:.*]]: tensor<2x8x6xf32> {shardlin.replicated}, %[[DY:.*]]: tensor<4x?xf32>, %[[DC:.*]]: tensor<2x8x2xf32>)
// CHECK-NOT: shardlin.constant
// CHECK: %[[DB:.*]] = shardlin.local_place %[[DC]] dim = 2 ranges = [0, 2, 2, 4, 4, 6] : tensor<2x8x2xf32> -> tensor<2x8x6xf32>
// CHECK: %[[DS:.*]] = shardlin.gemm %[[DY]], %[[X]] transpose_lhs
// CHECK-NEXT: %[[DW:.*]] = shardlin.local_place %[[DS]] dim = 0 ranges = [0, 4, 2, 6, 6, 8] : tensor<?x8xf32> -> tensor<8x8xf32>
// CHECK-NOT: shardlin.constant
// CHECK: return %{{.*}}, %[[DW]], %[[DB]]
func.func @sliced(%x: tensor<4x8xf32>, %w: tensor<8x8xf32> {shardlin.replicated}, %b: tensor<2x8x6xf32> {shardlin.replicated}) -> (tensor<4x?xf32>, tensor<2x8x2xf32>) {
  %s = shardlin.local_slice %w dim = 0 ranges = [0, 4, 2, 6, 6, 8] : tensor<8x8xf32> -> tensor<?x8xf32>
  %y = shardlin.gemm %x, %s transpose_rhs : (tensor<4x8xf32>, tensor<?x8xf32>) -> tensor<4x?xf32>
  %c = shardlin.local_slice %b dim = 2 ranges = [0, 2, 2, 4, 4, 6] : tensor<2x8x6xf32> -> tensor<2x8x2xf32>
  return %y, %c : tensor<4x?xf32>, tensor<2x8x2xf32>
}
