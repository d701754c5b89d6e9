// RUN: shardlin-opt %s --lower-sharded-linear=strategy=activations | FileCheck %s
// RUN: shardlin-opt %s --lower-sharded-linear=strategy=activations | shardlin-opt | FileCheck %s
// RUN: shardlin-opt %s --pass-pipeline='builtin.module(func.func(lower-sharded-linear{strategy=activations}))' | FileCheck %s

// Col-wise lowering (weight split along dim 0, N): local_shard, all_gather of
// every rank's rows in rank order (identity on dim 0), the rank's bias chunk
// (local_chunk with the weight's placements), ONE gemm with transpose_rhs and
// the bias fused, and one all_to_all returning each rank its rows (split =
// identity on dim 0) with the column blocks placed by the weight's
// placements (concat on dim 1). No separate reordering op, no bias_add.

// N = 12 over W = 4: static local sizes.
// CHECK-LABEL: func.func @even
// CHECK-SAME: (%[[X:.*]]: tensor<5x19xf32>, %[[W:.*]]: !shardlin.sharded<tensor<12x19xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>, %[[B:.*]]: tensor<12xf32>)
// CHECK-NEXT: %[[A:.*]] = shardlin.local_shard %[[W]] : !shardlin.sharded<tensor<12x19xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>> -> tensor<3x19xf32>
// CHECK-NEXT: %[[G:.*]] = shardlin.all_gather %[[X]] along <dim = 0, placements = [0, 1, 2, 3]> : tensor<5x19xf32> -> tensor<20x19xf32>
// CHECK-NEXT: %[[BC:.*]] = shardlin.local_chunk %[[B]] along <dim = 0, placements = [0, 1, 2, 3]> : tensor<12xf32> -> tensor<3xf32>
// CHECK-NEXT: %[[Q:.*]] = shardlin.gemm %[[G]], %[[A]] bias %[[BC]] transpose_rhs {shardlin.lowering = {{.*}}} : (tensor<20x19xf32>, tensor<3x19xf32>, tensor<3xf32>) -> tensor<20x3xf32>
// CHECK-NEXT: %[[Y:.*]] = shardlin.all_to_all %[[Q]] split <dim = 0, placements = [0, 1, 2, 3]> concat <dim = 1, placements = [0, 1, 2, 3]> : tensor<20x3xf32> -> tensor<5x12xf32>
// CHECK-NEXT: return %[[Y]] : tensor<5x12xf32>
func.func @even(%x: tensor<5x19xf32>,
    %w: !shardlin.sharded<tensor<12x19xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>,
    %b: tensor<12xf32>) -> tensor<5x12xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<5x19xf32>,
      !shardlin.sharded<tensor<12x19xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>,
      tensor<12xf32>) -> tensor<5x12xf32>
  return %y : tensor<5x12xf32>
}

// Without a bias: no local_chunk and no bias operand on the gemm.
// CHECK-LABEL: func.func @even_no_bias
// CHECK-SAME: (%[[X:.*]]: tensor<5x19xf32>, %[[W:.*]]: !shardlin.sharded<tensor<12x19xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>)
// CHECK-NEXT: %[[A:.*]] = shardlin.local_shard %[[W]] : {{.*}} -> tensor<3x19xf32>
// CHECK-NEXT: %[[G:.*]] = shardlin.all_gather %[[X]] along <dim = 0, placements = [0, 1, 2, 3]> : tensor<5x19xf32> -> tensor<20x19xf32>
// CHECK-NOT: shardlin.local_chunk
// CHECK-NEXT: %[[Q:.*]] = shardlin.gemm %[[G]], %[[A]] transpose_rhs {shardlin.lowering = {{.*}}} : (tensor<20x19xf32>, tensor<3x19xf32>) -> tensor<20x3xf32>
// CHECK-NEXT: %[[Y:.*]] = shardlin.all_to_all %[[Q]] split <dim = 0, placements = [0, 1, 2, 3]> concat <dim = 1, placements = [0, 1, 2, 3]> : tensor<20x3xf32> -> tensor<5x12xf32>
// CHECK-NEXT: return %[[Y]] : tensor<5x12xf32>
func.func @even_no_bias(%x: tensor<5x19xf32>,
    %w: !shardlin.sharded<tensor<12x19xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>) -> tensor<5x12xf32> {
  %y = shardlin.linear %x, %w : (tensor<5x19xf32>,
      !shardlin.sharded<tensor<12x19xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>) -> tensor<5x12xf32>
  return %y : tensor<5x12xf32>
}

// N = 11 over W = 4 (chunks 3, 3, 3, 2) with placements [2, 3, 0, 1]: the
// local N is `?`; the bias chunk and the all_to_all's concat spec both use
// the weight's placements.
// CHECK-LABEL: func.func @uneven_permuted
// CHECK-SAME: (%[[X:.*]]: tensor<5x19xf32>, %[[W:.*]]: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [2, 3, 0, 1]>>, %[[B:.*]]: tensor<11xf32>)
// CHECK-NEXT: %[[A:.*]] = shardlin.local_shard %[[W]] : !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [2, 3, 0, 1]>> -> tensor<?x19xf32>
// CHECK-NEXT: %[[G:.*]] = shardlin.all_gather %[[X]] along <dim = 0, placements = [0, 1, 2, 3]> : tensor<5x19xf32> -> tensor<20x19xf32>
// CHECK-NEXT: %[[BC:.*]] = shardlin.local_chunk %[[B]] along <dim = 0, placements = [2, 3, 0, 1]> : tensor<11xf32> -> tensor<?xf32>
// CHECK-NEXT: %[[Q:.*]] = shardlin.gemm %[[G]], %[[A]] bias %[[BC]] transpose_rhs {shardlin.lowering = {{.*}}} : (tensor<20x19xf32>, tensor<?x19xf32>, tensor<?xf32>) -> tensor<20x?xf32>
// CHECK-NEXT: %[[Y:.*]] = shardlin.all_to_all %[[Q]] split <dim = 0, placements = [0, 1, 2, 3]> concat <dim = 1, placements = [2, 3, 0, 1]> : tensor<20x?xf32> -> tensor<5x11xf32>
// CHECK-NEXT: return %[[Y]] : tensor<5x11xf32>
func.func @uneven_permuted(%x: tensor<5x19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [2, 3, 0, 1]>>,
    %b: tensor<11xf32>) -> tensor<5x11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<5x19xf32>,
      !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [2, 3, 0, 1]>>,
      tensor<11xf32>) -> tensor<5x11xf32>
  return %y : tensor<5x11xf32>
}

// A multi-hop permutation [3, 1, 0, 2], uneven, no bias.
// CHECK-LABEL: func.func @uneven_multi_hop
// CHECK-SAME: (%[[X:.*]]: tensor<5x19xf32>, %[[W:.*]]: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [3, 1, 0, 2]>>)
// CHECK-NEXT: %[[A:.*]] = shardlin.local_shard %[[W]] : {{.*}} -> tensor<?x19xf32>
// CHECK-NEXT: %[[G:.*]] = shardlin.all_gather %[[X]] along <dim = 0, placements = [0, 1, 2, 3]> : tensor<5x19xf32> -> tensor<20x19xf32>
// CHECK-NOT: shardlin.local_chunk
// CHECK-NEXT: %[[Q:.*]] = shardlin.gemm %[[G]], %[[A]] transpose_rhs {shardlin.lowering = {{.*}}} : (tensor<20x19xf32>, tensor<?x19xf32>) -> tensor<20x?xf32>
// CHECK-NEXT: %[[Y:.*]] = shardlin.all_to_all %[[Q]] split <dim = 0, placements = [0, 1, 2, 3]> concat <dim = 1, placements = [3, 1, 0, 2]> : tensor<20x?xf32> -> tensor<5x11xf32>
// CHECK-NEXT: return %[[Y]] : tensor<5x11xf32>
func.func @uneven_multi_hop(%x: tensor<5x19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [3, 1, 0, 2]>>) -> tensor<5x11xf32> {
  %y = shardlin.linear %x, %w : (tensor<5x19xf32>,
      !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [3, 1, 0, 2]>>) -> tensor<5x11xf32>
  return %y : tensor<5x11xf32>
}

// N = 3 over W = 5: chunk sizes 1, 1, 1, 0, 0.
// CHECK-LABEL: func.func @empty_chunks_n3_w5
// CHECK-SAME: (%[[X:.*]]: tensor<2x4xf32>, %[[W:.*]]: !shardlin.sharded<tensor<3x4xf32>, #shardlin.chunk<dim = 0, placements = [4, 2, 0, 1, 3]>>, %[[B:.*]]: tensor<3xf32>)
// CHECK-NEXT: %[[A:.*]] = shardlin.local_shard %[[W]] : {{.*}} -> tensor<?x4xf32>
// CHECK-NEXT: %[[G:.*]] = shardlin.all_gather %[[X]] along <dim = 0, placements = [0, 1, 2, 3, 4]> : tensor<2x4xf32> -> tensor<10x4xf32>
// CHECK-NEXT: %[[BC:.*]] = shardlin.local_chunk %[[B]] along <dim = 0, placements = [4, 2, 0, 1, 3]> : tensor<3xf32> -> tensor<?xf32>
// CHECK-NEXT: %[[Q:.*]] = shardlin.gemm %[[G]], %[[A]] bias %[[BC]] transpose_rhs {shardlin.lowering = {{.*}}} : (tensor<10x4xf32>, tensor<?x4xf32>, tensor<?xf32>) -> tensor<10x?xf32>
// CHECK-NEXT: %[[Y:.*]] = shardlin.all_to_all %[[Q]] split <dim = 0, placements = [0, 1, 2, 3, 4]> concat <dim = 1, placements = [4, 2, 0, 1, 3]> : tensor<10x?xf32> -> tensor<2x3xf32>
// CHECK-NEXT: return %[[Y]] : tensor<2x3xf32>
func.func @empty_chunks_n3_w5(%x: tensor<2x4xf32>,
    %w: !shardlin.sharded<tensor<3x4xf32>, #shardlin.chunk<dim = 0, placements = [4, 2, 0, 1, 3]>>,
    %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<2x4xf32>,
      !shardlin.sharded<tensor<3x4xf32>, #shardlin.chunk<dim = 0, placements = [4, 2, 0, 1, 3]>>,
      tensor<3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// N = 5 over W = 4: chunk sizes 2, 2, 1, 0.
// CHECK-LABEL: func.func @empty_chunk_n5_w4
// CHECK-SAME: (%[[X:.*]]: tensor<3x6xf32>, %[[W:.*]]: !shardlin.sharded<tensor<5x6xf32>, #shardlin.chunk<dim = 0, placements = [1, 3, 2, 0]>>, %[[B:.*]]: tensor<5xf32>)
// CHECK-NEXT: %[[A:.*]] = shardlin.local_shard %[[W]] : {{.*}} -> tensor<?x6xf32>
// CHECK-NEXT: %[[G:.*]] = shardlin.all_gather %[[X]] along <dim = 0, placements = [0, 1, 2, 3]> : tensor<3x6xf32> -> tensor<12x6xf32>
// CHECK-NEXT: %[[BC:.*]] = shardlin.local_chunk %[[B]] along <dim = 0, placements = [1, 3, 2, 0]> : tensor<5xf32> -> tensor<?xf32>
// CHECK-NEXT: %[[Q:.*]] = shardlin.gemm %[[G]], %[[A]] bias %[[BC]] transpose_rhs {shardlin.lowering = {{.*}}} : (tensor<12x6xf32>, tensor<?x6xf32>, tensor<?xf32>) -> tensor<12x?xf32>
// CHECK-NEXT: %[[Y:.*]] = shardlin.all_to_all %[[Q]] split <dim = 0, placements = [0, 1, 2, 3]> concat <dim = 1, placements = [1, 3, 2, 0]> : tensor<12x?xf32> -> tensor<3x5xf32>
// CHECK-NEXT: return %[[Y]] : tensor<3x5xf32>
func.func @empty_chunk_n5_w4(%x: tensor<3x6xf32>,
    %w: !shardlin.sharded<tensor<5x6xf32>, #shardlin.chunk<dim = 0, placements = [1, 3, 2, 0]>>,
    %b: tensor<5xf32>) -> tensor<3x5xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<3x6xf32>,
      !shardlin.sharded<tensor<5x6xf32>, #shardlin.chunk<dim = 0, placements = [1, 3, 2, 0]>>,
      tensor<5xf32>) -> tensor<3x5xf32>
  return %y : tensor<3x5xf32>
}
