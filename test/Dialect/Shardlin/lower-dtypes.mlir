// RUN: shardlin-opt %s --lower-sharded-linear=strategy=activations | FileCheck %s
// RUN: shardlin-opt %s --lower-sharded-linear=strategy=activations | shardlin-opt | FileCheck %s
// RUN: shardlin-opt %s --pass-pipeline='builtin.module(func.func(lower-sharded-linear{strategy=activations}))' | FileCheck %s

// Element types: the input's element type is carried through every op of the
// lowering (collective buffers, gemm, bias chunk, bias_add), for f16, bf16,
// f32 and f64 and both sharding dims. (The first implementation allocated
// every collective buffer as f32.) The one exception: an f16/bf16 K split's
// partial products, their reduce_scatter and the bias addition are f32,
// rounded once by a shardlin.convert (issue 12, finding 2); f32 and f64 get
// no convert (the CHECK-NEXT lines), nor does a col-wise split.

// CHECK-LABEL: func.func @row_wise_f16
// CHECK-SAME: (%[[X:.*]]: tensor<3x5xf16>, %[[W:.*]]: !shardlin.sharded<tensor<4x5xf16>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, %[[B:.*]]: tensor<4xf16>)
// CHECK-NEXT: %[[A:.*]] = shardlin.local_shard %[[W]] : !shardlin.sharded<tensor<4x5xf16>, #shardlin.chunk<dim = 1, placements = [1, 0]>> -> tensor<4x?xf16>
// CHECK-NEXT: %[[XS:.*]] = shardlin.all_to_all %[[X]] split <dim = 1, placements = [1, 0]> concat <dim = 0, placements = [0, 1]> : tensor<3x5xf16> -> tensor<6x?xf16>
// CHECK-NEXT: %[[P:.*]] = shardlin.gemm %[[XS]], %[[A]] transpose_rhs {shardlin.lowering = {{.*}}} : (tensor<6x?xf16>, tensor<4x?xf16>) -> tensor<6x4xf32>
// CHECK-NEXT: %[[Y:.*]] = shardlin.reduce_scatter %[[P]] along <dim = 0, placements = [0, 1]> : tensor<6x4xf32> -> tensor<3x4xf32>
// CHECK-NEXT: %[[BW:.*]] = shardlin.convert %[[B]] : tensor<4xf16> -> tensor<4xf32>
// CHECK-NEXT: %[[Z:.*]] = shardlin.bias_add %[[Y]], %[[BW]] : tensor<3x4xf32>, tensor<4xf32>
// CHECK-NEXT: %[[R:.*]] = shardlin.convert %[[Z]] : tensor<3x4xf32> -> tensor<3x4xf16>
// CHECK-NEXT: return %[[R]] : tensor<3x4xf16>
func.func @row_wise_f16(%x: tensor<3x5xf16>, %w: !shardlin.sharded<tensor<4x5xf16>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, %b: tensor<4xf16>) -> tensor<3x4xf16> {
  %y = shardlin.linear %x, %w, %b : (tensor<3x5xf16>, !shardlin.sharded<tensor<4x5xf16>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, tensor<4xf16>) -> tensor<3x4xf16>
  return %y : tensor<3x4xf16>
}

// CHECK-LABEL: func.func @col_wise_f16
// CHECK-SAME: (%[[X:.*]]: tensor<3x4xf16>, %[[W:.*]]: !shardlin.sharded<tensor<5x4xf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, %[[B:.*]]: tensor<5xf16>)
// CHECK-NEXT: %[[A:.*]] = shardlin.local_shard %[[W]] : !shardlin.sharded<tensor<5x4xf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>> -> tensor<?x4xf16>
// CHECK-NEXT: %[[G:.*]] = shardlin.all_gather %[[X]] along <dim = 0, placements = [0, 1]> : tensor<3x4xf16> -> tensor<6x4xf16>
// CHECK-NEXT: %[[BC:.*]] = shardlin.local_chunk %[[B]] along <dim = 0, placements = [1, 0]> : tensor<5xf16> -> tensor<?xf16>
// CHECK-NEXT: %[[Q:.*]] = shardlin.gemm %[[G]], %[[A]] bias %[[BC]] transpose_rhs {shardlin.lowering = {{.*}}} : (tensor<6x4xf16>, tensor<?x4xf16>, tensor<?xf16>) -> tensor<6x?xf16>
// CHECK-NEXT: %[[Y:.*]] = shardlin.all_to_all %[[Q]] split <dim = 0, placements = [0, 1]> concat <dim = 1, placements = [1, 0]> : tensor<6x?xf16> -> tensor<3x5xf16>
// CHECK-NEXT: return %[[Y]] : tensor<3x5xf16>
func.func @col_wise_f16(%x: tensor<3x4xf16>, %w: !shardlin.sharded<tensor<5x4xf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, %b: tensor<5xf16>) -> tensor<3x5xf16> {
  %y = shardlin.linear %x, %w, %b : (tensor<3x4xf16>, !shardlin.sharded<tensor<5x4xf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, tensor<5xf16>) -> tensor<3x5xf16>
  return %y : tensor<3x5xf16>
}

// CHECK-LABEL: func.func @row_wise_bf16
// CHECK-SAME: (%[[X:.*]]: tensor<3x5xbf16>, %[[W:.*]]: !shardlin.sharded<tensor<4x5xbf16>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, %[[B:.*]]: tensor<4xbf16>)
// CHECK-NEXT: %[[A:.*]] = shardlin.local_shard %[[W]] : !shardlin.sharded<tensor<4x5xbf16>, #shardlin.chunk<dim = 1, placements = [1, 0]>> -> tensor<4x?xbf16>
// CHECK-NEXT: %[[XS:.*]] = shardlin.all_to_all %[[X]] split <dim = 1, placements = [1, 0]> concat <dim = 0, placements = [0, 1]> : tensor<3x5xbf16> -> tensor<6x?xbf16>
// CHECK-NEXT: %[[P:.*]] = shardlin.gemm %[[XS]], %[[A]] transpose_rhs {shardlin.lowering = {{.*}}} : (tensor<6x?xbf16>, tensor<4x?xbf16>) -> tensor<6x4xf32>
// CHECK-NEXT: %[[Y:.*]] = shardlin.reduce_scatter %[[P]] along <dim = 0, placements = [0, 1]> : tensor<6x4xf32> -> tensor<3x4xf32>
// CHECK-NEXT: %[[BW:.*]] = shardlin.convert %[[B]] : tensor<4xbf16> -> tensor<4xf32>
// CHECK-NEXT: %[[Z:.*]] = shardlin.bias_add %[[Y]], %[[BW]] : tensor<3x4xf32>, tensor<4xf32>
// CHECK-NEXT: %[[R:.*]] = shardlin.convert %[[Z]] : tensor<3x4xf32> -> tensor<3x4xbf16>
// CHECK-NEXT: return %[[R]] : tensor<3x4xbf16>
func.func @row_wise_bf16(%x: tensor<3x5xbf16>, %w: !shardlin.sharded<tensor<4x5xbf16>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, %b: tensor<4xbf16>) -> tensor<3x4xbf16> {
  %y = shardlin.linear %x, %w, %b : (tensor<3x5xbf16>, !shardlin.sharded<tensor<4x5xbf16>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, tensor<4xbf16>) -> tensor<3x4xbf16>
  return %y : tensor<3x4xbf16>
}

// CHECK-LABEL: func.func @col_wise_bf16
// CHECK-SAME: (%[[X:.*]]: tensor<3x4xbf16>, %[[W:.*]]: !shardlin.sharded<tensor<5x4xbf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, %[[B:.*]]: tensor<5xbf16>)
// CHECK-NEXT: %[[A:.*]] = shardlin.local_shard %[[W]] : !shardlin.sharded<tensor<5x4xbf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>> -> tensor<?x4xbf16>
// CHECK-NEXT: %[[G:.*]] = shardlin.all_gather %[[X]] along <dim = 0, placements = [0, 1]> : tensor<3x4xbf16> -> tensor<6x4xbf16>
// CHECK-NEXT: %[[BC:.*]] = shardlin.local_chunk %[[B]] along <dim = 0, placements = [1, 0]> : tensor<5xbf16> -> tensor<?xbf16>
// CHECK-NEXT: %[[Q:.*]] = shardlin.gemm %[[G]], %[[A]] bias %[[BC]] transpose_rhs {shardlin.lowering = {{.*}}} : (tensor<6x4xbf16>, tensor<?x4xbf16>, tensor<?xbf16>) -> tensor<6x?xbf16>
// CHECK-NEXT: %[[Y:.*]] = shardlin.all_to_all %[[Q]] split <dim = 0, placements = [0, 1]> concat <dim = 1, placements = [1, 0]> : tensor<6x?xbf16> -> tensor<3x5xbf16>
// CHECK-NEXT: return %[[Y]] : tensor<3x5xbf16>
func.func @col_wise_bf16(%x: tensor<3x4xbf16>, %w: !shardlin.sharded<tensor<5x4xbf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, %b: tensor<5xbf16>) -> tensor<3x5xbf16> {
  %y = shardlin.linear %x, %w, %b : (tensor<3x4xbf16>, !shardlin.sharded<tensor<5x4xbf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, tensor<5xbf16>) -> tensor<3x5xbf16>
  return %y : tensor<3x5xbf16>
}

// CHECK-LABEL: func.func @row_wise_f32
// CHECK-SAME: (%[[X:.*]]: tensor<3x5xf32>, %[[W:.*]]: !shardlin.sharded<tensor<4x5xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, %[[B:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[A:.*]] = shardlin.local_shard %[[W]] : !shardlin.sharded<tensor<4x5xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>> -> tensor<4x?xf32>
// CHECK-NEXT: %[[XS:.*]] = shardlin.all_to_all %[[X]] split <dim = 1, placements = [1, 0]> concat <dim = 0, placements = [0, 1]> : tensor<3x5xf32> -> tensor<6x?xf32>
// CHECK-NEXT: %[[P:.*]] = shardlin.gemm %[[XS]], %[[A]] transpose_rhs {shardlin.lowering = {{.*}}} : (tensor<6x?xf32>, tensor<4x?xf32>) -> tensor<6x4xf32>
// CHECK-NEXT: %[[Y:.*]] = shardlin.reduce_scatter %[[P]] along <dim = 0, placements = [0, 1]> : tensor<6x4xf32> -> tensor<3x4xf32>
// CHECK-NEXT: %[[Z:.*]] = shardlin.bias_add %[[Y]], %[[B]] : tensor<3x4xf32>, tensor<4xf32>
// CHECK-NEXT: return %[[Z]] : tensor<3x4xf32>
func.func @row_wise_f32(%x: tensor<3x5xf32>, %w: !shardlin.sharded<tensor<4x5xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, %b: tensor<4xf32>) -> tensor<3x4xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<3x5xf32>, !shardlin.sharded<tensor<4x5xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, tensor<4xf32>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// CHECK-LABEL: func.func @col_wise_f32
// CHECK-SAME: (%[[X:.*]]: tensor<3x4xf32>, %[[W:.*]]: !shardlin.sharded<tensor<5x4xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, %[[B:.*]]: tensor<5xf32>)
// CHECK-NEXT: %[[A:.*]] = shardlin.local_shard %[[W]] : !shardlin.sharded<tensor<5x4xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>> -> tensor<?x4xf32>
// CHECK-NEXT: %[[G:.*]] = shardlin.all_gather %[[X]] along <dim = 0, placements = [0, 1]> : tensor<3x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT: %[[BC:.*]] = shardlin.local_chunk %[[B]] along <dim = 0, placements = [1, 0]> : tensor<5xf32> -> tensor<?xf32>
// CHECK-NEXT: %[[Q:.*]] = shardlin.gemm %[[G]], %[[A]] bias %[[BC]] transpose_rhs {shardlin.lowering = {{.*}}} : (tensor<6x4xf32>, tensor<?x4xf32>, tensor<?xf32>) -> tensor<6x?xf32>
// CHECK-NEXT: %[[Y:.*]] = shardlin.all_to_all %[[Q]] split <dim = 0, placements = [0, 1]> concat <dim = 1, placements = [1, 0]> : tensor<6x?xf32> -> tensor<3x5xf32>
// CHECK-NEXT: return %[[Y]] : tensor<3x5xf32>
func.func @col_wise_f32(%x: tensor<3x4xf32>, %w: !shardlin.sharded<tensor<5x4xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, %b: tensor<5xf32>) -> tensor<3x5xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<3x4xf32>, !shardlin.sharded<tensor<5x4xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, tensor<5xf32>) -> tensor<3x5xf32>
  return %y : tensor<3x5xf32>
}

// CHECK-LABEL: func.func @row_wise_f64
// CHECK-SAME: (%[[X:.*]]: tensor<3x5xf64>, %[[W:.*]]: !shardlin.sharded<tensor<4x5xf64>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, %[[B:.*]]: tensor<4xf64>)
// CHECK-NEXT: %[[A:.*]] = shardlin.local_shard %[[W]] : !shardlin.sharded<tensor<4x5xf64>, #shardlin.chunk<dim = 1, placements = [1, 0]>> -> tensor<4x?xf64>
// CHECK-NEXT: %[[XS:.*]] = shardlin.all_to_all %[[X]] split <dim = 1, placements = [1, 0]> concat <dim = 0, placements = [0, 1]> : tensor<3x5xf64> -> tensor<6x?xf64>
// CHECK-NEXT: %[[P:.*]] = shardlin.gemm %[[XS]], %[[A]] transpose_rhs {shardlin.lowering = {{.*}}} : (tensor<6x?xf64>, tensor<4x?xf64>) -> tensor<6x4xf64>
// CHECK-NEXT: %[[Y:.*]] = shardlin.reduce_scatter %[[P]] along <dim = 0, placements = [0, 1]> : tensor<6x4xf64> -> tensor<3x4xf64>
// CHECK-NEXT: %[[Z:.*]] = shardlin.bias_add %[[Y]], %[[B]] : tensor<3x4xf64>, tensor<4xf64>
// CHECK-NEXT: return %[[Z]] : tensor<3x4xf64>
func.func @row_wise_f64(%x: tensor<3x5xf64>, %w: !shardlin.sharded<tensor<4x5xf64>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, %b: tensor<4xf64>) -> tensor<3x4xf64> {
  %y = shardlin.linear %x, %w, %b : (tensor<3x5xf64>, !shardlin.sharded<tensor<4x5xf64>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, tensor<4xf64>) -> tensor<3x4xf64>
  return %y : tensor<3x4xf64>
}

// CHECK-LABEL: func.func @col_wise_f64
// CHECK-SAME: (%[[X:.*]]: tensor<3x4xf64>, %[[W:.*]]: !shardlin.sharded<tensor<5x4xf64>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, %[[B:.*]]: tensor<5xf64>)
// CHECK-NEXT: %[[A:.*]] = shardlin.local_shard %[[W]] : !shardlin.sharded<tensor<5x4xf64>, #shardlin.chunk<dim = 0, placements = [1, 0]>> -> tensor<?x4xf64>
// CHECK-NEXT: %[[G:.*]] = shardlin.all_gather %[[X]] along <dim = 0, placements = [0, 1]> : tensor<3x4xf64> -> tensor<6x4xf64>
// CHECK-NEXT: %[[BC:.*]] = shardlin.local_chunk %[[B]] along <dim = 0, placements = [1, 0]> : tensor<5xf64> -> tensor<?xf64>
// CHECK-NEXT: %[[Q:.*]] = shardlin.gemm %[[G]], %[[A]] bias %[[BC]] transpose_rhs {shardlin.lowering = {{.*}}} : (tensor<6x4xf64>, tensor<?x4xf64>, tensor<?xf64>) -> tensor<6x?xf64>
// CHECK-NEXT: %[[Y:.*]] = shardlin.all_to_all %[[Q]] split <dim = 0, placements = [0, 1]> concat <dim = 1, placements = [1, 0]> : tensor<6x?xf64> -> tensor<3x5xf64>
// CHECK-NEXT: return %[[Y]] : tensor<3x5xf64>
func.func @col_wise_f64(%x: tensor<3x4xf64>, %w: !shardlin.sharded<tensor<5x4xf64>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, %b: tensor<5xf64>) -> tensor<3x5xf64> {
  %y = shardlin.linear %x, %w, %b : (tensor<3x4xf64>, !shardlin.sharded<tensor<5x4xf64>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, tensor<5xf64>) -> tensor<3x5xf64>
  return %y : tensor<3x5xf64>
}
