// RUN: shardlin-opt %s -split-input-file --shardlin-import-shard | FileCheck %s
// RUN: shardlin-opt %s -split-input-file --shardlin-import-shard | shardlin-opt -split-input-file --verify-roundtrip > /dev/null

// The forms of StableHLO legalized to linalg (JAX 0.10.2, IREE 3.13's
// --iree-stablehlo-input-transformation-pipeline; the StableHLO corpus,
// integration_test/frontends/stablehlo), shapes made small: the weight's
// transpose is a linalg.generic with a permutation map (no linalg.transpose),
// the bias a broadcast generic and a separate add. The transpose is named
// (linalg.transpose) before the import, so the linear absorbs it.

#t = affine_map<(d0, d1) -> (d1, d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#vec = affine_map<(d0, d1) -> (d1)>
shard.grid @tp(shape = 4)
// CHECK-LABEL: func.func @linear_stablehlo
// CHECK-SAME: %[[W:[a-z0-9_]+]]: !shardlin.sharded<tensor<6x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], bounds = [0, 4, 4, 6, 6]>>
// CHECK-NOT: linalg.transpose
// CHECK: shardlin.linear %{{.*}}, %[[W]] layouts replicated -> features
// CHECK: return
func.func @linear_stablehlo(%arg0: tensor<5x8xf32>, %arg1: tensor<6x8xf32>, %arg2: tensor<6xf32>) -> tensor<5x6xf32> {
  %sr = shard.sharding @tp split_axes = [[]] : !shard.sharding
  %sw = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 4, 4, 6, 6] : !shard.sharding
  %x = shard.shard %arg0 to %sr : tensor<5x8xf32>
  %w = shard.shard %arg1 to %sw : tensor<6x8xf32>
  %b = shard.shard %arg2 to %sw : tensor<6xf32>
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<8x6xf32>
  %1 = linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<6x8xf32>) outs(%0 : tensor<8x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<8x6xf32>
  %2 = tensor.empty() : tensor<5x6xf32>
  %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<5x6xf32>) -> tensor<5x6xf32>
  %4 = linalg.matmul ins(%x, %1 : tensor<5x8xf32>, tensor<8x6xf32>) outs(%3 : tensor<5x6xf32>) -> tensor<5x6xf32>
  %5 = linalg.generic {indexing_maps = [#vec, #id], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<6xf32>) outs(%2 : tensor<5x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<5x6xf32>
  %6 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%4, %5 : tensor<5x6xf32>, tensor<5x6xf32>) outs(%2 : tensor<5x6xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %7 = arith.addf %in, %in_0 : f32
    linalg.yield %7 : f32
  } -> tensor<5x6xf32>
  %s6 = shard.sharding @tp split_axes = [[], [0]] sharded_dims_offsets = [0, 4, 4, 6, 6] : !shard.sharding
  %y = shard.shard %6 to %s6 : tensor<5x6xf32>
  return %y : tensor<5x6xf32>
}
