// RUN: shardlin-opt %s --lower-sharded-linear | FileCheck %s \
// RUN:   --implicit-check-not=shardlin.all_gather --implicit-check-not=shardlin.reduce_scatter \
// RUN:   --implicit-check-not=shardlin.all_to_all --implicit-check-not=shardlin.all_reduce

// Head-aligned explicit bounds, as the upstream import writes them from
// `sharded_dims_offsets` (no `block`): 7 heads of 4 in chunks of 2, 4 and 1
// heads (not the ceil rule), held by ranks 1, 2, 0. The block is lowered as
// one unit with the heads the bounds give.

!w = !shardlin.sharded<tensor<28x8xf32>, #shardlin.chunk<dim = 0, placements = [1, 2, 0], bounds = [0, 8, 24, 28]>>
!wo = !shardlin.sharded<tensor<8x28xf32>, #shardlin.chunk<dim = 1, placements = [1, 2, 0], bounds = [0, 8, 24, 28]>>

// CHECK-LABEL: func.func @imported_bounds
// CHECK: shardlin.all_gather
// CHECK: shardlin.attention {{.*}} {causal, group = 1 : i64, head_dim = 4 : i64, kv_heads = array<i64: 6, 7, 0, 2, 2, 6>, q_heads = array<i64: 6, 7, 0, 2, 2, 6>, scale = 5.000000e-01 : f64}
// CHECK: shardlin.reduce_scatter
func.func @imported_bounds(%x: tensor<4x8xf32>, %wq: !w, %wk: !w, %wv: !w, %wo: !wo) -> tensor<4x8xf32> {
  %q = shardlin.linear %x, %wq : (tensor<4x8xf32>, !w) -> tensor<4x28xf32>
  %k = shardlin.linear %x, %wk : (tensor<4x8xf32>, !w) -> tensor<4x28xf32>
  %v = shardlin.linear %x, %wv : (tensor<4x8xf32>, !w) -> tensor<4x28xf32>
  %a = shardlin.attention %q, %k, %v {head_dim = 4 : i64, causal} : tensor<4x28xf32>, tensor<4x28xf32>, tensor<4x28xf32> -> tensor<4x28xf32>
  %y = shardlin.linear %a, %wo : (tensor<4x28xf32>, !wo) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
