// RUN: shardlin-opt %s '--shardlin-generate-backward=strategy=activations recompute=always' | FileCheck %s
// RUN: shardlin-opt %s '--shardlin-generate-backward=strategy=gather-weight recompute=always' | FileCheck %s --check-prefix=GATHER

// Batch sizes known only at run time and narrow types. The rows stay `?`
// (each rank's own count; the collectives gather and split them in per-rank
// blocks), N-D gradients take their sizes from the argument of the same
// shape. f16/bf16: a gradient the backward still sums over ranks (dx's
// partial products after a col-wise layer, a bias's sum of rows, a gathered
// weight's gradient) is f32 until that sum and rounded once; dy is gathered
// in its own type.

!wr = !shardlin.sharded<tensor<6x5xf16>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>
// CHECK-LABEL: func.func @row_f16_backward
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?x5xf16>, %[[W:[^:]*]]: {{.*}}, %[[B:[^:]*]]: tensor<6xf16>, %[[DY:[^:]*]]: tensor<?x?x6xf16>)
// CHECK: %[[XS:.*]] = shardlin.all_to_all {{.*}} : tensor<?x5xf16> -> tensor<?x?xf16>
// CHECK: %[[DYR:.*]] = tensor.collapse_shape %[[DY]] {{\[}}[0, 1], [2]] : tensor<?x?x6xf16> into tensor<?x6xf16>
// CHECK-NEXT: %[[DYG:.*]] = shardlin.all_gather %[[DYR]] along <dim = 0, placements = [0, 1, 2]> : tensor<?x6xf16> -> tensor<?x6xf16>
// CHECK-NEXT: %[[DXS:.*]] = shardlin.gemm %[[DYG]], %{{.*}} : (tensor<?x6xf16>, tensor<6x?xf16>) -> tensor<?x?xf16>
// CHECK-NEXT: %[[DA:.*]] = shardlin.gemm %[[DYG]], %[[XS]] transpose_lhs {{.*}} -> tensor<6x?xf16>
// CHECK-NEXT: %[[DXR:.*]] = shardlin.all_to_all %[[DXS]] split <dim = 0, placements = [0, 1, 2]> concat <dim = 1, placements = [2, 0, 1]> : tensor<?x?xf16> -> tensor<?x5xf16>
// CHECK-DAG: %[[D0:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x?x5xf16>
// CHECK-DAG: %[[D1:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x?x5xf16>
// CHECK: %[[DX:.*]] = tensor.expand_shape %[[DXR]] {{\[}}[0, 1], [2]] output_shape [%[[D0]], %[[D1]], 5] : tensor<?x5xf16> into tensor<?x?x5xf16>
// CHECK-NEXT: %[[DB32:.*]] = shardlin.sum_rows %[[DYG]] : tensor<?x6xf16> -> tensor<6xf32>
// CHECK-NEXT: %[[DW:.*]] = shardlin.from_local %[[DA]]
// CHECK-NEXT: %[[DB:.*]] = shardlin.convert %[[DB32]] : tensor<6xf32> -> tensor<6xf16>
// CHECK-NEXT: return %[[DX]], %[[DW]], %[[DB]]
func.func @row_f16(%x: tensor<?x?x5xf16>, %w: !wr, %b: tensor<6xf16>) -> tensor<?x?x6xf16> {
  %y = shardlin.linear %x, %w, %b : (tensor<?x?x5xf16>, !wr, tensor<6xf16>) -> tensor<?x?x6xf16>
  return %y : tensor<?x?x6xf16>
}

!wc = !shardlin.sharded<tensor<6x5xbf16>, #shardlin.chunk<dim = 0, placements = [2, 0, 1]>>
// CHECK-LABEL: func.func @col_bf16_backward
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x5xbf16>, %[[W:[^:]*]]: {{.*}}, %[[B:[^:]*]]: tensor<6xbf16>, %[[DY:[^:]*]]: tensor<?x6xbf16>)
// CHECK-NEXT: %[[A:.*]] = shardlin.local_shard %[[W]] {{.*}} -> tensor<2x5xbf16>
// CHECK-NEXT: %[[XG:.*]] = shardlin.all_gather %[[X]] along <dim = 0, placements = [0, 1, 2]> : tensor<?x5xbf16> -> tensor<?x5xbf16>
// CHECK-NEXT: %[[DYS:.*]] = shardlin.all_to_all %[[DY]] split <dim = 1, placements = [2, 0, 1]> concat <dim = 0, placements = [0, 1, 2]> : tensor<?x6xbf16> -> tensor<?x2xbf16>
// CHECK-NEXT: %[[DXP:.*]] = shardlin.gemm %[[DYS]], %[[A]] {{.*}} : (tensor<?x2xbf16>, tensor<2x5xbf16>) -> tensor<?x5xf32>
// CHECK-NEXT: %[[DA:.*]] = shardlin.gemm %[[DYS]], %[[XG]] transpose_lhs {{.*}} -> tensor<2x5xbf16>
// CHECK-NEXT: %[[DBC:.*]] = shardlin.sum_rows %[[DYS]] : tensor<?x2xbf16> -> tensor<2xf32>
// CHECK-NEXT: %[[DX32:.*]] = shardlin.reduce_scatter %[[DXP]] along <dim = 0, placements = [0, 1, 2]> : tensor<?x5xf32> -> tensor<?x5xf32>
// CHECK-NEXT: %[[DX:.*]] = shardlin.convert %[[DX32]] : tensor<?x5xf32> -> tensor<?x5xbf16>
// CHECK-NEXT: %[[DW:.*]] = shardlin.from_local %[[DA]]
// CHECK-NEXT: %[[DB32:.*]] = shardlin.all_gather %[[DBC]] along <dim = 0, placements = [2, 0, 1]> : tensor<2xf32> -> tensor<6xf32>
// CHECK-NEXT: %[[DB:.*]] = shardlin.convert %[[DB32]] : tensor<6xf32> -> tensor<6xbf16>
// CHECK-NEXT: return %[[DX]], %[[DW]], %[[DB]]
// GATHER-LABEL: func.func @col_bf16_backward
// GATHER-SAME: (%[[X:[^:]*]]: tensor<?x5xbf16>, %[[W:[^:]*]]: {{.*}}, %[[B:[^:]*]]: tensor<6xbf16>, %[[DY:[^:]*]]: tensor<?x6xbf16>)
// GATHER: %[[DAF:.*]] = shardlin.gemm %[[DY]], %[[X]] transpose_lhs {{.*}} : (tensor<?x6xbf16>, tensor<?x5xbf16>) -> tensor<6x5xf32>
// GATHER-NEXT: %[[DA32:.*]] = shardlin.reduce_scatter %[[DAF]] along <dim = 0, placements = [2, 0, 1]> : tensor<6x5xf32> -> tensor<2x5xf32>
// GATHER-NEXT: %[[DA:.*]] = shardlin.convert %[[DA32]] : tensor<2x5xf32> -> tensor<2x5xbf16>
// GATHER-NEXT: shardlin.from_local %[[DA]]
// GATHER-NEXT: %[[DBL:.*]] = shardlin.sum_rows %[[DY]] : tensor<?x6xbf16> -> tensor<6xf32>
// GATHER-NEXT: %[[DB32:.*]] = shardlin.all_reduce %[[DBL]] world_size = {{[0-9]+}} : tensor<6xf32>
// GATHER-NEXT: shardlin.convert %[[DB32]] : tensor<6xf32> -> tensor<6xbf16>
func.func @col_bf16(%x: tensor<?x5xbf16>, %w: !wc, %b: tensor<6xbf16>) -> tensor<?x6xbf16> {
  %y = shardlin.linear %x, %w, %b : (tensor<?x5xbf16>, !wc, tensor<6xbf16>) -> tensor<?x6xbf16>
  return %y : tensor<?x6xbf16>
}
