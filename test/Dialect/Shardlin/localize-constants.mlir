// RUN: shardlin-opt %s --shardlin-localize-sharded | FileCheck %s

// The native path's constants: a whole shardlin.constant is an
// arith.constant of its dense value (a dense_resource blob's bytes too); a
// split one the local_chunk of it, the rank's slice, which its local_shard
// users read.

// CHECK-LABEL: func.func @constants
// CHECK-DAG: %[[W:.*]] = arith.constant dense<{{\[\[}}5.000000e-01, 1.000000e+00, 1.500000e+00], [2.000000e+00, 2.500000e+00, 3.000000e+00]]> : tensor<2x3xf32>
// CHECK-DAG: %[[CHUNK:.*]] = shardlin.local_chunk %[[W]] along <dim = 1, placements = [1, 0], bounds = [0, 1, 3]> : tensor<2x3xf32> -> tensor<2x?xf32>
// CHECK-DAG: %[[B:.*]] = arith.constant dense<[2.500000e-01, 5.000000e-01]> : tensor<2xf32>
// CHECK: return %[[CHUNK]], %[[B]] : tensor<2x?xf32>, tensor<2xf32>
// CHECK-NOT: shardlin.constant
func.func @constants() -> (tensor<2x?xf32>, tensor<2xf32>) {
  %w = shardlin.constant dense_resource<w23> : tensor<2x3xf32> -> !shardlin.sharded<tensor<2x3xf32>, #shardlin.chunk<dim = 1, placements = [1, 0], bounds = [0, 1, 3]>>
  %l = shardlin.local_shard %w : !shardlin.sharded<tensor<2x3xf32>, #shardlin.chunk<dim = 1, placements = [1, 0], bounds = [0, 1, 3]>> -> tensor<2x?xf32>
  %b = shardlin.constant dense<[0.25, 0.5]> : tensor<2xf32> -> tensor<2xf32>
  return %l, %b : tensor<2x?xf32>, tensor<2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w23: "0x040000000000003F0000803F0000C03F000000400000204000004040"
    }
  }
#-}
