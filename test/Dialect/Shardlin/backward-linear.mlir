// RUN: shardlin-opt %s '--shardlin-generate-backward=strategy=activations recompute=always' | FileCheck %s
// RUN: shardlin-opt %s '--shardlin-generate-backward=strategy=activations recompute=always' | shardlin-opt | FileCheck %s
// RUN: shardlin-opt %s '--shardlin-generate-backward=strategy=gather-weight recompute=always' | FileCheck %s --check-prefix=GATHER
// RUN: shardlin-opt %s '--shardlin-generate-backward=strategy=activations recompute=never' | FileCheck %s --check-prefix=SAVE
// RUN: shardlin-opt %s '--shardlin-generate-backward=strategy=activations recompute=always' --lower-sharded-linear | FileCheck %s --check-prefix=LOWERED

// The backward of one sharded linear y = x A^T + b (docs/training.md): its
// arguments are the forward's, then dy; its results dx (rank-local), dA (the
// weight's sharded type: each rank the gradient of its own chunk, summed over
// every rank's rows) and db (the full vector on every rank, summed over all
// ranks). Each forward collective becomes its dual with the same chunk specs.

!wc = !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [2, 3, 0, 1]>>
!wr = !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>

// Col-wise (N split, uneven: 3, 3, 3, 2): the forward's all_to_all of the
// output becomes the inverse all_to_all of dy, its all_gather of x a
// reduce_scatter of dx's partial sums; X is gathered again (recompute); the
// bias's gradient is the all_gather of every rank's chunk of it.
// CHECK-LABEL: func.func @col_backward
// CHECK-SAME: (%[[X:[^:]*]]: tensor<5x19xf32>, %[[W:[^:]*]]: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [2, 3, 0, 1]>>, %[[B:[^:]*]]: tensor<11xf32>, %[[DY:[^:]*]]: tensor<5x11xf32>)
// CHECK-SAME: -> (tensor<5x19xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [2, 3, 0, 1]>>, tensor<11xf32>)
// CHECK-SAME: attributes {shardlin.backward_of = @col}
// CHECK-NEXT: %[[A:.*]] = shardlin.local_shard %[[W]] {{.*}} -> tensor<?x19xf32>
// CHECK-NEXT: %[[XG:.*]] = shardlin.all_gather %[[X]] along <dim = 0, placements = [0, 1, 2, 3]> : tensor<5x19xf32> -> tensor<20x19xf32>
// CHECK-NEXT: %[[DYS:.*]] = shardlin.all_to_all %[[DY]] split <dim = 1, placements = [2, 3, 0, 1]> concat <dim = 0, placements = [0, 1, 2, 3]> : tensor<5x11xf32> -> tensor<20x?xf32>
// CHECK-NEXT: %[[DXP:.*]] = shardlin.gemm %[[DYS]], %[[A]] {shardlin.lowering = {backward, strategy = "activations"}} : (tensor<20x?xf32>, tensor<?x19xf32>) -> tensor<20x19xf32>
// CHECK-NEXT: %[[DA:.*]] = shardlin.gemm %[[DYS]], %[[XG]] transpose_lhs {{.*}} : (tensor<20x?xf32>, tensor<20x19xf32>) -> tensor<?x19xf32>
// CHECK-NEXT: %[[DBC:.*]] = shardlin.sum_rows %[[DYS]] : tensor<20x?xf32> -> tensor<?xf32>
// CHECK-NEXT: %[[DX:.*]] = shardlin.reduce_scatter %[[DXP]] along <dim = 0, placements = [0, 1, 2, 3]> : tensor<20x19xf32> -> tensor<5x19xf32>
// CHECK-NEXT: %[[DW:.*]] = shardlin.from_local %[[DA]] : tensor<?x19xf32> -> !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [2, 3, 0, 1]>>
// CHECK-NEXT: %[[DB:.*]] = shardlin.all_gather %[[DBC]] along <dim = 0, placements = [2, 3, 0, 1]> : tensor<?xf32> -> tensor<11xf32>
// CHECK-NEXT: return %[[DX]], %[[DW]], %[[DB]]
// The weights' gradients are exchanged by the dual of the weight's gather.
// GATHER-LABEL: func.func @col_backward
// GATHER-SAME: %[[DY:[^:]*]]: tensor<5x11xf32>)
// GATHER-NEXT: %[[A:.*]] = shardlin.local_shard
// GATHER-NEXT: %[[AF:.*]] = shardlin.all_gather %[[A]] along <dim = 0, placements = [2, 3, 0, 1]> : tensor<?x19xf32> -> tensor<11x19xf32>
// GATHER-NEXT: %[[DX:.*]] = shardlin.gemm %[[DY]], %[[AF]] {shardlin.lowering = {backward, strategy = "gather-weight"}} : (tensor<5x11xf32>, tensor<11x19xf32>) -> tensor<5x19xf32>
// GATHER-NEXT: %[[DAF:.*]] = shardlin.gemm %[[DY]], %{{.*}} transpose_lhs {{.*}} -> tensor<11x19xf32>
// GATHER-NEXT: %[[DA:.*]] = shardlin.reduce_scatter %[[DAF]] along <dim = 0, placements = [2, 3, 0, 1]> : tensor<11x19xf32> -> tensor<?x19xf32>
// GATHER-NEXT: %[[DW:.*]] = shardlin.from_local %[[DA]]
// GATHER-NEXT: %[[DBL:.*]] = shardlin.sum_rows %[[DY]] : tensor<5x11xf32> -> tensor<11xf32>
// GATHER-NEXT: %[[DB:.*]] = shardlin.all_reduce %[[DBL]] world_size = {{[0-9]+}} : tensor<11xf32>
// GATHER-NEXT: return %[[DX]], %[[DW]], %[[DB]]
// Saved: the gathered X comes from @col_forward_saving, the lowered @col
// that also returns it; nothing is gathered again.
// SAVE-LABEL: func.func @col_forward_saving
// SAVE-SAME: -> (tensor<5x11xf32>, tensor<20x19xf32>) attributes {shardlin.forward_saving_of = @col}
// SAVE: %[[XG:.*]] = shardlin.all_gather
// SAVE: return %{{.*}}, %[[XG]] : tensor<5x11xf32>, tensor<20x19xf32>
// SAVE-LABEL: func.func @col_backward
// SAVE-SAME: %[[DY:[^:]*]]: tensor<5x11xf32>, %[[XG:[^:]*]]: tensor<20x19xf32> {shardlin.saved = "the all_gather result tensor<20x19xf32>"})
// SAVE-NOT: shardlin.all_gather %{{.*}} : tensor<5x19xf32>
// SAVE: shardlin.gemm %{{.*}}, %[[XG]] transpose_lhs
// The backward functions are lowered already: --lower-sharded-linear
// lowers @col and leaves them alone.
// LOWERED-LABEL: func.func @col(
// LOWERED-NOT: shardlin.linear
// LOWERED-LABEL: func.func @col_backward
// LOWERED-NEXT: shardlin.local_shard
// LOWERED-NEXT: shardlin.all_gather
// LOWERED-NEXT: shardlin.all_to_all
func.func @col(%x: tensor<5x19xf32>, %w: !wc, %b: tensor<11xf32>) -> tensor<5x11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<5x19xf32>, !wc, tensor<11xf32>) -> tensor<5x11xf32>
  return %y : tensor<5x11xf32>
}

// Row-wise (K split): the forward's reduce_scatter becomes an all_gather
// of dy, its all_to_all of x the inverse all_to_all of dx; the bias's
// gradient is the sum of the gathered rows: every rank has every rank's dy,
// so no communication.
// CHECK-LABEL: func.func @row_backward
// CHECK-SAME: (%[[X:[^:]*]]: tensor<5x19xf32>, %[[W:[^:]*]]: {{.*}}, %[[B:[^:]*]]: tensor<11xf32>, %[[DY:[^:]*]]: tensor<5x11xf32>)
// CHECK-NEXT: %[[A:.*]] = shardlin.local_shard %[[W]] {{.*}} -> tensor<11x?xf32>
// CHECK-NEXT: %[[XS:.*]] = shardlin.all_to_all %[[X]] split <dim = 1, placements = [2, 3, 0, 1]> concat <dim = 0, placements = [0, 1, 2, 3]> : tensor<5x19xf32> -> tensor<20x?xf32>
// CHECK-NEXT: %[[DYG:.*]] = shardlin.all_gather %[[DY]] along <dim = 0, placements = [0, 1, 2, 3]> : tensor<5x11xf32> -> tensor<20x11xf32>
// CHECK-NEXT: %[[DXS:.*]] = shardlin.gemm %[[DYG]], %[[A]] {{.*}} : (tensor<20x11xf32>, tensor<11x?xf32>) -> tensor<20x?xf32>
// CHECK-NEXT: %[[DA:.*]] = shardlin.gemm %[[DYG]], %[[XS]] transpose_lhs {{.*}} : (tensor<20x11xf32>, tensor<20x?xf32>) -> tensor<11x?xf32>
// CHECK-NEXT: %[[DX:.*]] = shardlin.all_to_all %[[DXS]] split <dim = 0, placements = [0, 1, 2, 3]> concat <dim = 1, placements = [2, 3, 0, 1]> : tensor<20x?xf32> -> tensor<5x19xf32>
// CHECK-NEXT: %[[DW:.*]] = shardlin.from_local %[[DA]]
// CHECK-NEXT: %[[DB:.*]] = shardlin.sum_rows %[[DYG]] : tensor<20x11xf32> -> tensor<11xf32>
// CHECK-NEXT: return %[[DX]], %[[DW]], %[[DB]]
// GATHER-LABEL: func.func @row_backward
// GATHER: shardlin.all_gather %{{.*}} along <dim = 1, placements = [2, 3, 0, 1]> : tensor<11x?xf32> -> tensor<11x19xf32>
// GATHER: shardlin.reduce_scatter %{{.*}} along <dim = 1, placements = [2, 3, 0, 1]> : tensor<11x19xf32> -> tensor<11x?xf32>
// GATHER: shardlin.all_reduce
// SAVE-LABEL: func.func @row_forward_saving
// SAVE-SAME: -> (tensor<5x11xf32>, tensor<20x?xf32>)
// SAVE-LABEL: func.func @row_backward
// SAVE-SAME: tensor<20x?xf32> {shardlin.saved = "the all_to_all result tensor<20x?xf32>"})
// SAVE-NOT: shardlin.all_to_all %{{.*}} split <dim = 1
func.func @row(%x: tensor<5x19xf32>, %w: !wr, %b: tensor<11xf32>) -> tensor<5x11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<5x19xf32>, !wr, tensor<11xf32>) -> tensor<5x11xf32>
  return %y : tensor<5x11xf32>
}

// W = 1 and a 1-D input (one row): GEMMs only, no collective, nothing to
// save.
// CHECK-LABEL: func.func @single_backward
// CHECK-SAME: (%[[X:[^:]*]]: tensor<19xf64>, %[[W:[^:]*]]: {{.*}}, %[[B:[^:]*]]: tensor<3xf64>, %[[DY:[^:]*]]: tensor<3xf64>)
// CHECK-NEXT: %[[A:.*]] = shardlin.local_shard %[[W]]
// CHECK-NEXT: %[[XR:.*]] = tensor.expand_shape %[[X]] {{\[}}[0, 1]] output_shape [1, 19] : tensor<19xf64> into tensor<1x19xf64>
// CHECK-NEXT: %[[DYR:.*]] = tensor.expand_shape %[[DY]] {{\[}}[0, 1]] output_shape [1, 3] : tensor<3xf64> into tensor<1x3xf64>
// CHECK-NEXT: %[[DXR:.*]] = shardlin.gemm %[[DYR]], %[[A]] {shardlin.lowering = {backward, strategy = "local"}} : (tensor<1x3xf64>, tensor<3x19xf64>) -> tensor<1x19xf64>
// CHECK-NEXT: %[[DA:.*]] = shardlin.gemm %[[DYR]], %[[XR]] transpose_lhs
// CHECK-NEXT: %[[DX:.*]] = tensor.collapse_shape %[[DXR]] {{\[}}[0, 1]] : tensor<1x19xf64> into tensor<19xf64>
// CHECK-NEXT: %[[DW:.*]] = shardlin.from_local %[[DA]]
// CHECK-NEXT: %[[DB:.*]] = shardlin.sum_rows %[[DYR]] : tensor<1x3xf64> -> tensor<3xf64>
// CHECK-NEXT: return %[[DX]], %[[DW]], %[[DB]]
// SAVE-NOT: func.func @single_forward_saving
func.func @single(%x: tensor<19xf64>, %w: !shardlin.sharded<tensor<3x19xf64>, #shardlin.chunk<dim = 1, placements = [0]>>, %b: tensor<3xf64>) -> tensor<3xf64> {
  %y = shardlin.linear %x, %w, %b : (tensor<19xf64>, !shardlin.sharded<tensor<3x19xf64>, #shardlin.chunk<dim = 1, placements = [0]>>, tensor<3xf64>) -> tensor<3xf64>
  return %y : tensor<3xf64>
}
