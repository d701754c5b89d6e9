// RUN: shardlin-opt %s --lower-sharded-linear=strategy=activations | FileCheck %s
// RUN: shardlin-opt %s --lower-sharded-linear=strategy=activations | shardlin-opt | FileCheck %s
// RUN: shardlin-opt %s --pass-pipeline='builtin.module(func.func(lower-sharded-linear{strategy=activations}))' | FileCheck %s

// Input shapes: a 1-D input is one row (expand_shape to 1 x K, collapse the
// 1 x N result back); N-D inputs collapse their batch dims to rows and the
// result is expanded back; batch 0 and W = 1 lower like any other.

// CHECK-LABEL: func.func @row_wise_1d
// CHECK-SAME: (%[[X:.*]]: tensor<19xf32>, %[[W:.*]]: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>, %[[B:.*]]: tensor<11xf32>)
// CHECK-NEXT: %[[R:.*]] = tensor.expand_shape %[[X]] {{\[}}[0, 1]] output_shape [1, 19] : tensor<19xf32> into tensor<1x19xf32>
// CHECK-NEXT: %[[A:.*]] = shardlin.local_shard %[[W]] : {{.*}} -> tensor<11x?xf32>
// CHECK-NEXT: %[[XS:.*]] = shardlin.all_to_all %[[R]] split <dim = 1, placements = [2, 3, 0, 1]> concat <dim = 0, placements = [0, 1, 2, 3]> : tensor<1x19xf32> -> tensor<4x?xf32>
// CHECK-NEXT: %[[P:.*]] = shardlin.gemm %[[XS]], %[[A]] transpose_rhs {shardlin.lowering = {{.*}}} : (tensor<4x?xf32>, tensor<11x?xf32>) -> tensor<4x11xf32>
// CHECK-NEXT: %[[Y:.*]] = shardlin.reduce_scatter %[[P]] along <dim = 0, placements = [0, 1, 2, 3]> : tensor<4x11xf32> -> tensor<1x11xf32>
// CHECK-NEXT: %[[Z:.*]] = shardlin.bias_add %[[Y]], %[[B]] : tensor<1x11xf32>, tensor<11xf32>
// CHECK-NEXT: %[[O:.*]] = tensor.collapse_shape %[[Z]] {{\[}}[0, 1]] : tensor<1x11xf32> into tensor<11xf32>
// CHECK-NEXT: return %[[O]] : tensor<11xf32>
func.func @row_wise_1d(%x: tensor<19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>,
    %b: tensor<11xf32>) -> tensor<11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<19xf32>,
      !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>,
      tensor<11xf32>) -> tensor<11xf32>
  return %y : tensor<11xf32>
}

// CHECK-LABEL: func.func @col_wise_1d
// CHECK-SAME: (%[[X:.*]]: tensor<19xf32>, %[[W:.*]]: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>)
// CHECK-NEXT: %[[R:.*]] = tensor.expand_shape %[[X]] {{\[}}[0, 1]] output_shape [1, 19] : tensor<19xf32> into tensor<1x19xf32>
// CHECK-NEXT: %[[A:.*]] = shardlin.local_shard %[[W]] : {{.*}} -> tensor<?x19xf32>
// CHECK-NEXT: %[[G:.*]] = shardlin.all_gather %[[R]] along <dim = 0, placements = [0, 1]> : tensor<1x19xf32> -> tensor<2x19xf32>
// CHECK-NEXT: %[[Q:.*]] = shardlin.gemm %[[G]], %[[A]] transpose_rhs {shardlin.lowering = {{.*}}} : (tensor<2x19xf32>, tensor<?x19xf32>) -> tensor<2x?xf32>
// CHECK-NEXT: %[[Y:.*]] = shardlin.all_to_all %[[Q]] split <dim = 0, placements = [0, 1]> concat <dim = 1, placements = [1, 0]> : tensor<2x?xf32> -> tensor<1x11xf32>
// CHECK-NEXT: %[[O:.*]] = tensor.collapse_shape %[[Y]] {{\[}}[0, 1]] : tensor<1x11xf32> into tensor<11xf32>
// CHECK-NEXT: return %[[O]] : tensor<11xf32>
func.func @col_wise_1d(%x: tensor<19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<11xf32> {
  %y = shardlin.linear %x, %w : (tensor<19xf32>,
      !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<11xf32>
  return %y : tensor<11xf32>
}

// CHECK-LABEL: func.func @row_wise_3d
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x19xf32>, %[[W:.*]]: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [3, 1, 0, 2]>>, %[[B:.*]]: tensor<11xf32>)
// CHECK-NEXT: %[[R:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<2x3x19xf32> into tensor<6x19xf32>
// CHECK-NEXT: %[[A:.*]] = shardlin.local_shard %[[W]] : {{.*}} -> tensor<11x?xf32>
// CHECK-NEXT: %[[XS:.*]] = shardlin.all_to_all %[[R]] split <dim = 1, placements = [3, 1, 0, 2]> concat <dim = 0, placements = [0, 1, 2, 3]> : tensor<6x19xf32> -> tensor<24x?xf32>
// CHECK-NEXT: %[[P:.*]] = shardlin.gemm %[[XS]], %[[A]] transpose_rhs {shardlin.lowering = {{.*}}} : (tensor<24x?xf32>, tensor<11x?xf32>) -> tensor<24x11xf32>
// CHECK-NEXT: %[[Y:.*]] = shardlin.reduce_scatter %[[P]] along <dim = 0, placements = [0, 1, 2, 3]> : tensor<24x11xf32> -> tensor<6x11xf32>
// CHECK-NEXT: %[[Z:.*]] = shardlin.bias_add %[[Y]], %[[B]] : tensor<6x11xf32>, tensor<11xf32>
// CHECK-NEXT: %[[O:.*]] = tensor.expand_shape %[[Z]] {{\[}}[0, 1], [2]] output_shape [2, 3, 11] : tensor<6x11xf32> into tensor<2x3x11xf32>
// CHECK-NEXT: return %[[O]] : tensor<2x3x11xf32>
func.func @row_wise_3d(%x: tensor<2x3x19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [3, 1, 0, 2]>>,
    %b: tensor<11xf32>) -> tensor<2x3x11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<2x3x19xf32>,
      !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [3, 1, 0, 2]>>,
      tensor<11xf32>) -> tensor<2x3x11xf32>
  return %y : tensor<2x3x11xf32>
}

// CHECK-LABEL: func.func @col_wise_4d
// CHECK-SAME: (%[[X:.*]]: tensor<2x1x3x19xf32>, %[[W:.*]]: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [2, 3, 0, 1]>>, %[[B:.*]]: tensor<11xf32>)
// CHECK-NEXT: %[[R:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2], [3]] : tensor<2x1x3x19xf32> into tensor<6x19xf32>
// CHECK-NEXT: %[[A:.*]] = shardlin.local_shard %[[W]] : {{.*}} -> tensor<?x19xf32>
// CHECK-NEXT: %[[G:.*]] = shardlin.all_gather %[[R]] along <dim = 0, placements = [0, 1, 2, 3]> : tensor<6x19xf32> -> tensor<24x19xf32>
// CHECK-NEXT: %[[BC:.*]] = shardlin.local_chunk %[[B]] along <dim = 0, placements = [2, 3, 0, 1]> : tensor<11xf32> -> tensor<?xf32>
// CHECK-NEXT: %[[Q:.*]] = shardlin.gemm %[[G]], %[[A]] bias %[[BC]] transpose_rhs {shardlin.lowering = {{.*}}} : (tensor<24x19xf32>, tensor<?x19xf32>, tensor<?xf32>) -> tensor<24x?xf32>
// CHECK-NEXT: %[[Y:.*]] = shardlin.all_to_all %[[Q]] split <dim = 0, placements = [0, 1, 2, 3]> concat <dim = 1, placements = [2, 3, 0, 1]> : tensor<24x?xf32> -> tensor<6x11xf32>
// CHECK-NEXT: %[[O:.*]] = tensor.expand_shape %[[Y]] {{\[}}[0, 1, 2], [3]] output_shape [2, 1, 3, 11] : tensor<6x11xf32> into tensor<2x1x3x11xf32>
// CHECK-NEXT: return %[[O]] : tensor<2x1x3x11xf32>
func.func @col_wise_4d(%x: tensor<2x1x3x19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [2, 3, 0, 1]>>,
    %b: tensor<11xf32>) -> tensor<2x1x3x11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<2x1x3x19xf32>,
      !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [2, 3, 0, 1]>>,
      tensor<11xf32>) -> tensor<2x1x3x11xf32>
  return %y : tensor<2x1x3x11xf32>
}

// Batch 0: every collective moves zero rows, and every rank still calls it.
// CHECK-LABEL: func.func @row_wise_batch0
// CHECK-SAME: (%[[X:.*]]: tensor<0x19xf32>, %[[W:.*]]: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>, %[[B:.*]]: tensor<11xf32>)
// CHECK-NEXT: %[[A:.*]] = shardlin.local_shard %[[W]] : {{.*}} -> tensor<11x?xf32>
// CHECK-NEXT: %[[XS:.*]] = shardlin.all_to_all %[[X]] split <dim = 1, placements = [2, 3, 0, 1]> concat <dim = 0, placements = [0, 1, 2, 3]> : tensor<0x19xf32> -> tensor<0x?xf32>
// CHECK-NEXT: %[[P:.*]] = shardlin.gemm %[[XS]], %[[A]] transpose_rhs {shardlin.lowering = {{.*}}} : (tensor<0x?xf32>, tensor<11x?xf32>) -> tensor<0x11xf32>
// CHECK-NEXT: %[[Y:.*]] = shardlin.reduce_scatter %[[P]] along <dim = 0, placements = [0, 1, 2, 3]> : tensor<0x11xf32> -> tensor<0x11xf32>
// CHECK-NEXT: %[[Z:.*]] = shardlin.bias_add %[[Y]], %[[B]] : tensor<0x11xf32>, tensor<11xf32>
// CHECK-NEXT: return %[[Z]] : tensor<0x11xf32>
func.func @row_wise_batch0(%x: tensor<0x19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>,
    %b: tensor<11xf32>) -> tensor<0x11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<0x19xf32>,
      !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>,
      tensor<11xf32>) -> tensor<0x11xf32>
  return %y : tensor<0x11xf32>
}

// CHECK-LABEL: func.func @col_wise_batch0_3d
// CHECK-SAME: (%[[X:.*]]: tensor<2x0x19xf32>, %[[W:.*]]: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [2, 3, 0, 1]>>)
// CHECK-NEXT: %[[R:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<2x0x19xf32> into tensor<0x19xf32>
// CHECK-NEXT: %[[A:.*]] = shardlin.local_shard %[[W]] : {{.*}} -> tensor<?x19xf32>
// CHECK-NEXT: %[[G:.*]] = shardlin.all_gather %[[R]] along <dim = 0, placements = [0, 1, 2, 3]> : tensor<0x19xf32> -> tensor<0x19xf32>
// CHECK-NEXT: %[[Q:.*]] = shardlin.gemm %[[G]], %[[A]] transpose_rhs {shardlin.lowering = {{.*}}} : (tensor<0x19xf32>, tensor<?x19xf32>) -> tensor<0x?xf32>
// CHECK-NEXT: %[[Y:.*]] = shardlin.all_to_all %[[Q]] split <dim = 0, placements = [0, 1, 2, 3]> concat <dim = 1, placements = [2, 3, 0, 1]> : tensor<0x?xf32> -> tensor<0x11xf32>
// CHECK-NEXT: %[[O:.*]] = tensor.expand_shape %[[Y]] {{\[}}[0, 1], [2]] output_shape [2, 0, 11] : tensor<0x11xf32> into tensor<2x0x11xf32>
// CHECK-NEXT: return %[[O]] : tensor<2x0x11xf32>
func.func @col_wise_batch0_3d(%x: tensor<2x0x19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [2, 3, 0, 1]>>) -> tensor<2x0x11xf32> {
  %y = shardlin.linear %x, %w : (tensor<2x0x19xf32>,
      !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [2, 3, 0, 1]>>) -> tensor<2x0x11xf32>
  return %y : tensor<2x0x11xf32>
}

// W = 1 (either dim): the whole weight is local; one gemm with the bias
// fused and no collectives.
// CHECK-LABEL: func.func @single_rank_dim1
// CHECK-SAME: (%[[X:.*]]: tensor<5x19xf32>, %[[W:.*]]: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [0]>>, %[[B:.*]]: tensor<11xf32>)
// CHECK-NOT: shardlin.all_gather
// CHECK-NOT: shardlin.all_to_all
// CHECK-NOT: shardlin.reduce_scatter
// CHECK-NEXT: %[[A:.*]] = shardlin.local_shard %[[W]] : {{.*}} -> tensor<11x19xf32>
// CHECK-NEXT: %[[Y:.*]] = shardlin.gemm %[[X]], %[[A]] bias %[[B]] transpose_rhs {shardlin.lowering = {{.*}}} : (tensor<5x19xf32>, tensor<11x19xf32>, tensor<11xf32>) -> tensor<5x11xf32>
// CHECK-NOT: shardlin.all_gather
// CHECK-NOT: shardlin.all_to_all
// CHECK-NOT: shardlin.reduce_scatter
// CHECK-NEXT: return %[[Y]] : tensor<5x11xf32>
func.func @single_rank_dim1(%x: tensor<5x19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [0]>>,
    %b: tensor<11xf32>) -> tensor<5x11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<5x19xf32>,
      !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [0]>>,
      tensor<11xf32>) -> tensor<5x11xf32>
  return %y : tensor<5x11xf32>
}

// CHECK-LABEL: func.func @single_rank_dim0_3d
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x19xf32>, %[[W:.*]]: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [0]>>)
// CHECK-NOT: shardlin.all_gather
// CHECK-NOT: shardlin.all_to_all
// CHECK-NOT: shardlin.reduce_scatter
// CHECK-NEXT: %[[R:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<2x3x19xf32> into tensor<6x19xf32>
// CHECK-NEXT: %[[A:.*]] = shardlin.local_shard %[[W]] : {{.*}} -> tensor<11x19xf32>
// CHECK-NEXT: %[[Y:.*]] = shardlin.gemm %[[R]], %[[A]] transpose_rhs {shardlin.lowering = {{.*}}} : (tensor<6x19xf32>, tensor<11x19xf32>) -> tensor<6x11xf32>
// CHECK-NEXT: %[[O:.*]] = tensor.expand_shape %[[Y]] {{\[}}[0, 1], [2]] output_shape [2, 3, 11] : tensor<6x11xf32> into tensor<2x3x11xf32>
// CHECK-NOT: shardlin.all_gather
// CHECK-NOT: shardlin.all_to_all
// CHECK-NOT: shardlin.reduce_scatter
// CHECK-NEXT: return %[[O]] : tensor<2x3x11xf32>
func.func @single_rank_dim0_3d(%x: tensor<2x3x19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [0]>>) -> tensor<2x3x11xf32> {
  %y = shardlin.linear %x, %w : (tensor<2x3x19xf32>,
      !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [0]>>) -> tensor<2x3x11xf32>
  return %y : tensor<2x3x11xf32>
}

// CHECK-LABEL: func.func @single_rank_1d
// CHECK-SAME: (%[[X:.*]]: tensor<19xf32>, %[[W:.*]]: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [0]>>, %[[B:.*]]: tensor<11xf32>)
// CHECK-NEXT: %[[R:.*]] = tensor.expand_shape %[[X]] {{\[}}[0, 1]] output_shape [1, 19] : tensor<19xf32> into tensor<1x19xf32>
// CHECK-NEXT: %[[A:.*]] = shardlin.local_shard %[[W]] : {{.*}} -> tensor<11x19xf32>
// CHECK-NEXT: %[[Y:.*]] = shardlin.gemm %[[R]], %[[A]] bias %[[B]] transpose_rhs {shardlin.lowering = {{.*}}} : (tensor<1x19xf32>, tensor<11x19xf32>, tensor<11xf32>) -> tensor<1x11xf32>
// CHECK-NEXT: %[[O:.*]] = tensor.collapse_shape %[[Y]] {{\[}}[0, 1]] : tensor<1x11xf32> into tensor<11xf32>
// CHECK-NEXT: return %[[O]] : tensor<11xf32>
func.func @single_rank_1d(%x: tensor<19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [0]>>,
    %b: tensor<11xf32>) -> tensor<11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<19xf32>,
      !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [0]>>,
      tensor<11xf32>) -> tensor<11xf32>
  return %y : tensor<11xf32>
}

// An empty weight: K = 0 (every rank's chunk is empty, the gemm contracts over
// nothing and gives zeros plus the bias) and N = 0 (an empty result).
// CHECK-LABEL: func.func @row_wise_k0
// CHECK-SAME: (%[[X:.*]]: tensor<5x0xf32>, %[[W:.*]]: !shardlin.sharded<tensor<11x0xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, %[[B:.*]]: tensor<11xf32>)
// CHECK-NEXT: %[[A:.*]] = shardlin.local_shard %[[W]] : {{.*}} -> tensor<11x0xf32>
// CHECK-NEXT: %[[XS:.*]] = shardlin.all_to_all %[[X]] split <dim = 1, placements = [1, 0]> concat <dim = 0, placements = [0, 1]> : tensor<5x0xf32> -> tensor<10x0xf32>
// CHECK-NEXT: %[[P:.*]] = shardlin.gemm %[[XS]], %[[A]] transpose_rhs {shardlin.lowering = {{.*}}} : (tensor<10x0xf32>, tensor<11x0xf32>) -> tensor<10x11xf32>
// CHECK-NEXT: %[[Y:.*]] = shardlin.reduce_scatter %[[P]] along <dim = 0, placements = [0, 1]> : tensor<10x11xf32> -> tensor<5x11xf32>
// CHECK-NEXT: %[[Z:.*]] = shardlin.bias_add %[[Y]], %[[B]] : tensor<5x11xf32>, tensor<11xf32>
// CHECK-NEXT: return %[[Z]] : tensor<5x11xf32>
func.func @row_wise_k0(%x: tensor<5x0xf32>,
    %w: !shardlin.sharded<tensor<11x0xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>,
    %b: tensor<11xf32>) -> tensor<5x11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<5x0xf32>,
      !shardlin.sharded<tensor<11x0xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>,
      tensor<11xf32>) -> tensor<5x11xf32>
  return %y : tensor<5x11xf32>
}

// CHECK-LABEL: func.func @col_wise_n0
// CHECK-SAME: (%[[X:.*]]: tensor<5x3xf32>, %[[W:.*]]: !shardlin.sharded<tensor<0x3xf32>, #shardlin.chunk<dim = 0, placements = [1, 0, 2]>>, %[[B:.*]]: tensor<0xf32>)
// CHECK-NEXT: %[[A:.*]] = shardlin.local_shard %[[W]] : {{.*}} -> tensor<0x3xf32>
// CHECK-NEXT: %[[G:.*]] = shardlin.all_gather %[[X]] along <dim = 0, placements = [0, 1, 2]> : tensor<5x3xf32> -> tensor<15x3xf32>
// CHECK-NEXT: %[[BC:.*]] = shardlin.local_chunk %[[B]] along <dim = 0, placements = [1, 0, 2]> : tensor<0xf32> -> tensor<0xf32>
// CHECK-NEXT: %[[Q:.*]] = shardlin.gemm %[[G]], %[[A]] bias %[[BC]] transpose_rhs {shardlin.lowering = {{.*}}} : (tensor<15x3xf32>, tensor<0x3xf32>, tensor<0xf32>) -> tensor<15x0xf32>
// CHECK-NEXT: %[[Y:.*]] = shardlin.all_to_all %[[Q]] split <dim = 0, placements = [0, 1, 2]> concat <dim = 1, placements = [1, 0, 2]> : tensor<15x0xf32> -> tensor<5x0xf32>
// CHECK-NEXT: return %[[Y]] : tensor<5x0xf32>
func.func @col_wise_n0(%x: tensor<5x3xf32>,
    %w: !shardlin.sharded<tensor<0x3xf32>, #shardlin.chunk<dim = 0, placements = [1, 0, 2]>>,
    %b: tensor<0xf32>) -> tensor<5x0xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<5x3xf32>,
      !shardlin.sharded<tensor<0x3xf32>, #shardlin.chunk<dim = 0, placements = [1, 0, 2]>>,
      tensor<0xf32>) -> tensor<5x0xf32>
  return %y : tensor<5x0xf32>
}
