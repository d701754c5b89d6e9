// RUN: shardlin-opt %s --lower-sharded-linear | FileCheck %s \
// RUN:   --implicit-check-not=shardlin.all_gather --implicit-check-not=shardlin.reduce_scatter \
// RUN:   --implicit-check-not=shardlin.all_to_all --implicit-check-not=shardlin.all_reduce \
// RUN:   --implicit-check-not='shardlin.linear ' --implicit-check-not=tensor.collapse_shape

// More ranks than kv heads on a 3-D x (B = 2 sequences of S = 4 per rank):
// (Hq, Hkv, W) = (6, 2, 4), which DTensor's ColwiseParallel cannot express.
// K and V are replicated gemms on x's rows (collapse_shape, gemm,
// expand_shape back to [B, S, F]); the block gathers x's rows once.
// Q in whole heads: 2, 2, 2, 0; kv heads needed (g = 3): [0, 1), [0, 2),
// [1, 2), none.

!wq = !shardlin.sharded<tensor<24x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], block = 4>>
!wo = !shardlin.sharded<tensor<8x24xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3], block = 4>>

// CHECK-LABEL: func.func @gqa_3d
// CHECK: %[[R:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1], [2]] : tensor<2x4x8xf32> into tensor<8x8xf32>
// CHECK: %[[G:.*]] = shardlin.all_gather %[[R]] along <dim = 0, placements = [0, 1, 2, 3]> : tensor<8x8xf32> -> tensor<32x8xf32>
// CHECK: shardlin.local_slice %arg2 dim = 0 ranges = [0, 4, 0, 8, 4, 8, 0, 0] : tensor<8x8xf32> -> tensor<?x8xf32>
// CHECK: shardlin.local_slice %arg3 dim = 0 ranges = [0, 4, 0, 8, 4, 8, 0, 0] : tensor<8x8xf32> -> tensor<?x8xf32>
// CHECK: shardlin.attention {{.*}} {causal, group = 3 : i64, head_dim = 4 : i64, kv_heads = array<i64: 0, 1, 0, 2, 1, 2, 0, 0>, q_heads = array<i64: 0, 2, 2, 4, 4, 6, 6, 6>, scale = 5.000000e-01 : f64} : tensor<8x4x?xf32>, tensor<8x4x?xf32>, tensor<8x4x?xf32> -> tensor<8x4x?xf32>
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<8x4x?xf32> into tensor<32x?xf32>
// CHECK: shardlin.reduce_scatter %{{.*}} : tensor<32x8xf32> -> tensor<8x8xf32>
// CHECK: tensor.expand_shape %{{.*}} : tensor<8x8xf32> into tensor<2x4x8xf32>
// CHECK-NOT: shardlin.gemm
// CHECK: return
func.func @gqa_3d(%x: tensor<2x4x8xf32>, %wq: !wq,
                  %wk: tensor<8x8xf32> {shardlin.replicated}, %wv: tensor<8x8xf32> {shardlin.replicated},
                  %wo: !wo) -> tensor<2x4x8xf32> {
  %q = shardlin.linear %x, %wq : (tensor<2x4x8xf32>, !wq) -> tensor<2x4x24xf32>
  %rows = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x4x8xf32> into tensor<8x8xf32>
  %k2 = shardlin.gemm %rows, %wk transpose_rhs : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %v2 = shardlin.gemm %rows, %wv transpose_rhs : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %k = tensor.expand_shape %k2 [[0, 1], [2]] output_shape [2, 4, 8] : tensor<8x8xf32> into tensor<2x4x8xf32>
  %v = tensor.expand_shape %v2 [[0, 1], [2]] output_shape [2, 4, 8] : tensor<8x8xf32> into tensor<2x4x8xf32>
  %a = shardlin.attention %q, %k, %v {head_dim = 4 : i64, causal} : tensor<2x4x24xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x24xf32>
  %y = shardlin.linear %a, %wo : (tensor<2x4x24xf32>, !wo) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}
