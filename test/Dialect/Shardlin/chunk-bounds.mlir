// RUN: shardlin-opt %s -split-input-file --lower-sharded-linear=strategy=activations | FileCheck %s
// RUN: shardlin-opt %s -split-input-file --lower-sharded-linear=strategy=gather-weight | FileCheck %s --check-prefix=GW
// RUN: shardlin-opt %s -split-input-file --verify-roundtrip | FileCheck %s --check-prefix=RT
// RUN: shardlin-opt %s -split-input-file '--lower-sharded-linear=strategy=activations explain=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN

// Explicit chunk boundaries (#shardlin.chunk<..., bounds = [...]>): 10
// elements in chunks of 4, 0, 4 and 2 (an empty one), held by ranks
// 2, 0, 3, 1. Every collective the lowering emits carries the same
// boundaries along the split dim; the rank-order row blocks of the stacked
// activations keep the ceil rule. The bytes each rank sends follow from the
// boundaries: rank 0 holds the empty chunk.

!w_row = !shardlin.sharded<tensor<11x10xf32>, #shardlin.chunk<dim = 1, placements = [2, 0, 3, 1], bounds = [0, 4, 4, 8, 10]>>

// RT-LABEL: func.func @row
// RT-SAME: !shardlin.sharded<tensor<11x10xf32>, #shardlin.chunk<dim = 1, placements = [2, 0, 3, 1], bounds = [0, 4, 4, 8, 10]>>
// CHECK-LABEL: func.func @row
// CHECK: shardlin.local_shard %{{.*}} -> tensor<11x?xf32>
// CHECK: shardlin.all_to_all %{{.*}} split <dim = 1, placements = [2, 0, 3, 1], bounds = [0, 4, 4, 8, 10]> concat <dim = 0, placements = [0, 1, 2, 3]> : tensor<5x10xf32> -> tensor<20x?xf32>
// Rank 0 (no K columns) sends its whole x: 5 x 10 x 4 + the partial sums
// 3 x 5 x 11 x 4; rank 1 (2 columns) 5 x 8 x 4 + 660; ranks 2, 3 (4 each)
// 5 x 6 x 4 + 660.
// CHECK: shardlin.gemm {{.*}}bytes_sent = array<i64: 860, 820, 780, 780>
// CHECK: shardlin.reduce_scatter %{{.*}} along <dim = 0, placements = [0, 1, 2, 3]> : tensor<20x11xf32> -> tensor<5x11xf32>
// GW-LABEL: func.func @row
// GW: shardlin.all_gather %{{.*}} along <dim = 1, placements = [2, 0, 3, 1], bounds = [0, 4, 4, 8, 10]> : tensor<11x?xf32> -> tensor<11x10xf32>
// GW: bytes_sent = array<i64: 0, 264, 528, 528>
func.func @row(%x: tensor<5x10xf32>, %w: !w_row, %b: tensor<11xf32>) -> tensor<5x11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<5x10xf32>, !w_row, tensor<11xf32>) -> tensor<5x11xf32>
  return %y : tensor<5x11xf32>
}

// -----

!w_col = !shardlin.sharded<tensor<10x16xf32>, #shardlin.chunk<dim = 0, placements = [2, 0, 3, 1], bounds = [0, 4, 4, 8, 10]>>

// The bias chunk and the placement of the output's columns by the same
// boundaries.
// CHECK-LABEL: func.func @col
// CHECK: shardlin.local_shard %{{.*}} -> tensor<?x16xf32>
// CHECK: shardlin.all_gather %{{.*}} along <dim = 0, placements = [0, 1, 2, 3]> : tensor<5x16xf32> -> tensor<20x16xf32>
// CHECK: shardlin.local_chunk %{{.*}} along <dim = 0, placements = [2, 0, 3, 1], bounds = [0, 4, 4, 8, 10]> : tensor<10xf32> -> tensor<?xf32>
// CHECK: bytes_sent = array<i64: 960, 1080, 1200, 1200>
// CHECK: shardlin.all_to_all %{{.*}} split <dim = 0, placements = [0, 1, 2, 3]> concat <dim = 1, placements = [2, 0, 3, 1], bounds = [0, 4, 4, 8, 10]> : tensor<20x?xf32> -> tensor<5x10xf32>
// GW-LABEL: func.func @col
// GW: shardlin.all_gather %{{.*}} along <dim = 0, placements = [2, 0, 3, 1], bounds = [0, 4, 4, 8, 10]> : tensor<?x16xf32> -> tensor<10x16xf32>
func.func @col(%x: tensor<5x16xf32>, %w: !w_col, %b: tensor<10xf32>) -> tensor<5x10xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<5x16xf32>, !w_col, tensor<10xf32>) -> tensor<5x10xf32>
  return %y : tensor<5x10xf32>
}

// -----

// Equal chunks given as bounds are the ceil rule's: the local size is
// static, as without them.
// CHECK-LABEL: func.func @uniform_bounds
// CHECK: shardlin.local_shard %{{.*}} -> tensor<11x3xf32>
// CHECK: shardlin.all_to_all %{{.*}} -> tensor<20x3xf32>
func.func @uniform_bounds(%x: tensor<5x12xf32>,
    %w: !shardlin.sharded<tensor<11x12xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3], bounds = [0, 3, 6, 9, 12]>>) -> tensor<5x11xf32> {
  %y = shardlin.linear %x, %w : (tensor<5x12xf32>, !shardlin.sharded<tensor<11x12xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3], bounds = [0, 3, 6, 9, 12]>>) -> tensor<5x11xf32>
  return %y : tensor<5x11xf32>
}

// -----

// A block fuses when both weights split F by the same boundaries: one
// all_gather, one reduce_scatter, the bias chunk by the boundaries.
// CHECK-LABEL: func.func @block
// CHECK: shardlin.all_gather %{{.*}} along <dim = 0, placements = [0, 1]>
// CHECK: shardlin.local_chunk %{{.*}} along <dim = 0, placements = [1, 0], bounds = [0, 0, 10]>
// CHECK: strategy = "fused"
// CHECK: linalg.generic
// CHECK: strategy = "fused"
// CHECK: shardlin.reduce_scatter
// CHECK-NOT: shardlin.all_to_all
func.func @block(%x: tensor<3x8xf32>,
    %w1: !shardlin.sharded<tensor<10x8xf32>, #shardlin.chunk<dim = 0, placements = [1, 0], bounds = [0, 0, 10]>>,
    %b1: tensor<10xf32>,
    %w2: !shardlin.sharded<tensor<8x10xf32>, #shardlin.chunk<dim = 1, placements = [1, 0], bounds = [0, 0, 10]>>) -> tensor<3x8xf32> {
  %h = shardlin.linear %x, %w1, %b1 : (tensor<3x8xf32>, !shardlin.sharded<tensor<10x8xf32>, #shardlin.chunk<dim = 0, placements = [1, 0], bounds = [0, 0, 10]>>, tensor<10xf32>) -> tensor<3x10xf32>
  %zero = arith.constant dense<0.0> : tensor<3x10xf32>
  %a = arith.maximumf %h, %zero : tensor<3x10xf32>
  %y = shardlin.linear %a, %w2 : (tensor<3x10xf32>, !shardlin.sharded<tensor<8x10xf32>, #shardlin.chunk<dim = 1, placements = [1, 0], bounds = [0, 0, 10]>>) -> tensor<3x8xf32>
  return %y : tensor<3x8xf32>
}

// -----

// Other boundaries for the row-wise weight (the ceil rule's 5 and 5): the
// chunks differ, so the block is lowered linear by linear.
// EXPLAIN: remark: block not fused: the col-wise weight's chunks (placements [1, 0], bounds [0, 0, 10]) are not the row-wise weight's ([1, 0])
// CHECK-LABEL: func.func @block_other_bounds
// CHECK-COUNT-2: shardlin.all_to_all
// CHECK-NOT: strategy = "fused"
func.func @block_other_bounds(%x: tensor<3x8xf32>,
    %w1: !shardlin.sharded<tensor<10x8xf32>, #shardlin.chunk<dim = 0, placements = [1, 0], bounds = [0, 0, 10]>>,
    %w2: !shardlin.sharded<tensor<8x10xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<3x8xf32> {
  %h = shardlin.linear %x, %w1 : (tensor<3x8xf32>, !shardlin.sharded<tensor<10x8xf32>, #shardlin.chunk<dim = 0, placements = [1, 0], bounds = [0, 0, 10]>>) -> tensor<3x10xf32>
  %y = shardlin.linear %h, %w2 : (tensor<3x10xf32>, !shardlin.sharded<tensor<8x10xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<3x8xf32>
  return %y : tensor<3x8xf32>
}
