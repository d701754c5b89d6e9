// torch-mlir's F.gelu(approximate="tanh") MLP (torch-mlir's export of mlp_tanh (integration_test/frontends/export.py's exporter and hook),
// its parameters as arguments) annotated for tensor parallelism: fc1 split
// on its features, fc2 on its inputs, x and the result replicated. x^3 is
// math.fpowi of a captured i64 (for local-ops.mlir).
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>

shard.grid @tp(shape = 2)
func.func @main(%arg0: tensor<6x40xf32>, %fc1w: tensor<38x40xf32>, %fc1b: tensor<38xf32>, %fc2w: tensor<40x38xf32>, %fc2b: tensor<40xf32>) -> tensor<6x40xf32> {
  %rep = shard.sharding @tp split_axes = [[]] : !shard.sharding
  %s0 = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %s1 = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %x = shard.shard %arg0 to %rep : tensor<6x40xf32>
  %w1s = shard.shard %fc1w to %s0 : tensor<38x40xf32>
  %w2s = shard.shard %fc2w to %s1 : tensor<40x38xf32>
  %cst = arith.constant 0.000000e+00 : f32
  %c3_i64 = arith.constant 3 : i64
  %cst_0 = arith.constant 4.471500e-02 : f32
  %cst_1 = arith.constant 7.977240e-01 : f32
  %cst_2 = arith.constant 1.000000e+00 : f32
  %cst_3 = arith.constant 5.000000e-01 : f32
  %0 = tensor.empty() : tensor<40x38xf32>
  %transposed = linalg.transpose ins(%w1s : tensor<38x40xf32>) outs(%0 : tensor<40x38xf32>) permutation = [1, 0] 
  %1 = tensor.empty() : tensor<6x38xf32>
  %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<6x38xf32>) -> tensor<6x38xf32>
  %3 = linalg.matmul ins(%x, %transposed : tensor<6x40xf32>, tensor<40x38xf32>) outs(%2 : tensor<6x38xf32>) -> tensor<6x38xf32>
  %4 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%3, %fc1b : tensor<6x38xf32>, tensor<38xf32>) outs(%1 : tensor<6x38xf32>) {
  ^bb0(%in: f32, %in_9: f32, %out: f32):
    %11 = arith.addf %in, %in_9 : f32
    linalg.yield %11 : f32
  } -> tensor<6x38xf32>
  %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%4 : tensor<6x38xf32>) outs(%1 : tensor<6x38xf32>) {
  ^bb0(%in: f32, %out: f32):
    %11 = math.fpowi %in, %c3_i64 : f32, i64
    %12 = arith.mulf %11, %cst_0 : f32
    %13 = arith.addf %in, %12 : f32
    %14 = arith.mulf %13, %cst_1 : f32
    %15 = math.tanh %14 : f32
    %16 = arith.addf %15, %cst_2 : f32
    %17 = arith.mulf %16, %cst_3 : f32
    %18 = arith.mulf %in, %17 : f32
    linalg.yield %18 : f32
  } -> tensor<6x38xf32>
  %6 = tensor.empty() : tensor<38x40xf32>
  %transposed_8 = linalg.transpose ins(%w2s : tensor<40x38xf32>) outs(%6 : tensor<38x40xf32>) permutation = [1, 0] 
  %7 = tensor.empty() : tensor<6x40xf32>
  %8 = linalg.fill ins(%cst : f32) outs(%7 : tensor<6x40xf32>) -> tensor<6x40xf32>
  %9 = linalg.matmul ins(%5, %transposed_8 : tensor<6x38xf32>, tensor<38x40xf32>) outs(%8 : tensor<6x40xf32>) -> tensor<6x40xf32>
  %10 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%9, %fc2b : tensor<6x40xf32>, tensor<40xf32>) outs(%7 : tensor<6x40xf32>) {
  ^bb0(%in: f32, %in_9: f32, %out: f32):
    %11 = arith.addf %in, %in_9 : f32
    linalg.yield %11 : f32
  } -> tensor<6x40xf32>
  %ys = shard.shard %10 to %rep : tensor<6x40xf32>
  return %ys : tensor<6x40xf32>
}
