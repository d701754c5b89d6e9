// RUN: shardlin-opt %s -split-input-file --verify-roundtrip | FileCheck %s --check-prefix=RT
// RUN: shardlin-opt %s -split-input-file --lower-sharded-linear=strategy=activations | FileCheck %s
// RUN: shardlin-opt %s -split-input-file --lower-sharded-linear=strategy=gather-weight | FileCheck %s --check-prefix=GW

// Head-aligned chunks (#shardlin.chunk<..., block = D>): the chunk rule on
// the n / D whole blocks, scaled by D. The lowering passes them on as
// explicit bounds, so nothing downstream needs the block rule.

// 7 heads of 4 (28 features) over 3 ranks: 3, 3 and 1 heads, [0, 12, 24, 28]
// (the plain ceil rule, split 10, would cut head 2, features [8, 12), at 10).
!wq = !shardlin.sharded<tensor<28x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2], block = 4>>

// RT-LABEL: func.func @col_heads
// RT-SAME: #shardlin.chunk<dim = 0, placements = [0, 1, 2], block = 4>
// CHECK-LABEL: func.func @col_heads
// CHECK-SAME: #shardlin.chunk<dim = 0, placements = [0, 1, 2], bounds = [0, 12, 24, 28], block = 4>
// CHECK: shardlin.local_shard %{{.*}} -> tensor<?x8xf32>
// CHECK: shardlin.all_to_all %{{.*}} concat <dim = 1, placements = [0, 1, 2], bounds = [0, 12, 24, 28], block = 4> : tensor<6x?xf32> -> tensor<2x28xf32>
// GW-LABEL: func.func @col_heads
// GW: shardlin.all_gather %{{.*}} along <dim = 0, placements = [0, 1, 2], bounds = [0, 12, 24, 28], block = 4> : tensor<?x8xf32> -> tensor<28x8xf32>
func.func @col_heads(%x: tensor<2x8xf32>, %w: !wq) -> tensor<2x28xf32> {
  %y = shardlin.linear %x, %w : (tensor<2x8xf32>, !wq) -> tensor<2x28xf32>
  return %y : tensor<2x28xf32>
}

// -----

// Even heads: 8 heads of 2 over 4 ranks is the plain rule (a static local
// size); the permuted placements place whole heads.
!wo = !shardlin.sharded<tensor<8x16xf32>, #shardlin.chunk<dim = 1, placements = [3, 2, 1, 0], block = 2>>

// RT-LABEL: func.func @row_heads
// RT-SAME: #shardlin.chunk<dim = 1, placements = [3, 2, 1, 0], block = 2>
// CHECK-LABEL: func.func @row_heads
// CHECK: shardlin.local_shard %{{.*}} -> tensor<8x4xf32>
func.func @row_heads(%x: tensor<3x16xf32>, %w: !wo) -> tensor<3x8xf32> {
  %y = shardlin.linear %x, %w : (tensor<3x16xf32>, !wo) -> tensor<3x8xf32>
  return %y : tensor<3x8xf32>
}

// -----

// Explicit bounds that are multiples of the block keep it: the alignment is
// recorded and checked.
// RT-LABEL: func.func @bounds_and_block
// RT: along <dim = 0, placements = [1, 0], bounds = [0, 8, 12], block = 4>
// CHECK-LABEL: func.func @bounds_and_block
// CHECK: shardlin.local_chunk %{{.*}} along <dim = 0, placements = [1, 0], bounds = [0, 8, 12], block = 4> : tensor<12x2xf32> -> tensor<?x2xf32>
func.func @bounds_and_block(%x: tensor<12x2xf32>) -> tensor<?x2xf32> {
  %c = shardlin.local_chunk %x along <dim = 0, placements = [1, 0], bounds = [0, 8, 12], block = 4> : tensor<12x2xf32> -> tensor<?x2xf32>
  return %c : tensor<?x2xf32>
}

// -----

// An op's own block chunk resolves from its full tensor: 5 heads of 2 over
// 2 ranks are 3 and 2 heads.
// CHECK-LABEL: func.func @local_chunk_block
// CHECK: shardlin.local_chunk %{{.*}} along <dim = 1, placements = [0, 1], bounds = [0, 6, 10], block = 2> : tensor<3x10xf32> -> tensor<3x?xf32>
func.func @local_chunk_block(%x: tensor<3x10xf32>) -> tensor<3x?xf32> {
  %c = shardlin.local_chunk %x along <dim = 1, placements = [0, 1], block = 2> : tensor<3x10xf32> -> tensor<3x?xf32>
  return %c : tensor<3x?xf32>
}
