// mlp_tanh: JAX -> StableHLO -> linalg (IREE's input pipeline), exported by integration_test/frontends/export_stablehlo.py, annotated from the plan {"fc1": "colwise", "fc2": "rowwise"}.
#map = affine_map<(d0, d1) -> (d1, d0)>
#map1 = affine_map<(d0, d1) -> (d0, d1)>
#map2 = affine_map<(d0, d1) -> (d1)>
module @jit_mlp {
  shard.grid @tp(shape = 4)
  func.func public @main(%arg0: tensor<6x16xf32>, %arg1: tensor<38x16xf32>, %arg2: tensor<38xf32>, %arg3: tensor<16x38xf32>, %arg4: tensor<16xf32>) -> tensor<6x16xf32> {
    %sharding = shard.sharding @tp split_axes = [[], [0]] sharded_dims_offsets = [0, 10, 10, 24, 38] : !shard.sharding
    %sharding_0 = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 10, 10, 24, 38] : !shard.sharding
    %sharding_1 = shard.sharding @tp split_axes = [[]] : !shard.sharding
    %sharding_annotated = shard.shard %arg0 to %sharding_1 : tensor<6x16xf32>
    %sharding_annotated_2 = shard.shard %arg1 to %sharding_0 : tensor<38x16xf32>
    %sharding_annotated_3 = shard.shard %arg2 to %sharding_0 : tensor<38xf32>
    %sharding_annotated_4 = shard.shard %arg3 to %sharding : tensor<16x38xf32>
    %sharding_annotated_5 = shard.shard %arg4 to %sharding_1 : tensor<16xf32>
    %cst = arith.constant 5.000000e-01 : f32
    %cst_6 = arith.constant 1.000000e+00 : f32
    %cst_7 = arith.constant 0.797884583 : f32
    %cst_8 = arith.constant 4.471500e-02 : f32
    %cst_9 = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<16x38xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%sharding_annotated_2 : tensor<38x16xf32>) outs(%0 : tensor<16x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<16x38xf32>
    %2 = tensor.empty() : tensor<6x38xf32>
    %3 = linalg.fill ins(%cst_9 : f32) outs(%2 : tensor<6x38xf32>) -> tensor<6x38xf32>
    %4 = linalg.matmul ins(%sharding_annotated, %1 : tensor<6x16xf32>, tensor<16x38xf32>) outs(%3 : tensor<6x38xf32>) -> tensor<6x38xf32>
    %5 = tensor.empty() : tensor<6x38xf32>
    %6 = linalg.generic {indexing_maps = [#map2, #map1], iterator_types = ["parallel", "parallel"]} ins(%sharding_annotated_3 : tensor<38xf32>) outs(%5 : tensor<6x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<6x38xf32>
    %7 = tensor.empty() : tensor<6x38xf32>
    %8 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%4, %6 : tensor<6x38xf32>, tensor<6x38xf32>) outs(%7 : tensor<6x38xf32>) {
    ^bb0(%in: f32, %in_11: f32, %out: f32):
      %36 = arith.addf %in, %in_11 : f32
      linalg.yield %36 : f32
    } -> tensor<6x38xf32>
    %9 = tensor.empty() : tensor<6x38xf32>
    %10 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%8 : tensor<6x38xf32>) outs(%9 : tensor<6x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %36 = arith.mulf %in, %in : f32
      linalg.yield %36 : f32
    } -> tensor<6x38xf32>
    %11 = tensor.empty() : tensor<6x38xf32>
    %12 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%10, %8 : tensor<6x38xf32>, tensor<6x38xf32>) outs(%11 : tensor<6x38xf32>) {
    ^bb0(%in: f32, %in_11: f32, %out: f32):
      %36 = arith.mulf %in, %in_11 : f32
      linalg.yield %36 : f32
    } -> tensor<6x38xf32>
    %13 = tensor.empty() : tensor<6x38xf32>
    %14 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%12 : tensor<6x38xf32>) outs(%13 : tensor<6x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %36 = arith.mulf %in, %cst_8 : f32
      linalg.yield %36 : f32
    } -> tensor<6x38xf32>
    %15 = tensor.empty() : tensor<6x38xf32>
    %16 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%8, %14 : tensor<6x38xf32>, tensor<6x38xf32>) outs(%15 : tensor<6x38xf32>) {
    ^bb0(%in: f32, %in_11: f32, %out: f32):
      %36 = arith.addf %in, %in_11 : f32
      linalg.yield %36 : f32
    } -> tensor<6x38xf32>
    %17 = tensor.empty() : tensor<6x38xf32>
    %18 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%16 : tensor<6x38xf32>) outs(%17 : tensor<6x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %36 = arith.mulf %in, %cst_7 : f32
      linalg.yield %36 : f32
    } -> tensor<6x38xf32>
    %19 = tensor.empty() : tensor<6x38xf32>
    %20 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%18 : tensor<6x38xf32>) outs(%19 : tensor<6x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %36 = math.tanh %in : f32
      linalg.yield %36 : f32
    } -> tensor<6x38xf32>
    %21 = tensor.empty() : tensor<6x38xf32>
    %22 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%20 : tensor<6x38xf32>) outs(%21 : tensor<6x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %36 = arith.addf %in, %cst_6 : f32
      linalg.yield %36 : f32
    } -> tensor<6x38xf32>
    %23 = tensor.empty() : tensor<6x38xf32>
    %24 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%22 : tensor<6x38xf32>) outs(%23 : tensor<6x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %36 = arith.mulf %in, %cst : f32
      linalg.yield %36 : f32
    } -> tensor<6x38xf32>
    %25 = tensor.empty() : tensor<6x38xf32>
    %26 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%8, %24 : tensor<6x38xf32>, tensor<6x38xf32>) outs(%25 : tensor<6x38xf32>) {
    ^bb0(%in: f32, %in_11: f32, %out: f32):
      %36 = arith.mulf %in, %in_11 : f32
      linalg.yield %36 : f32
    } -> tensor<6x38xf32>
    %27 = tensor.empty() : tensor<38x16xf32>
    %28 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%sharding_annotated_4 : tensor<16x38xf32>) outs(%27 : tensor<38x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<38x16xf32>
    %29 = tensor.empty() : tensor<6x16xf32>
    %30 = linalg.fill ins(%cst_9 : f32) outs(%29 : tensor<6x16xf32>) -> tensor<6x16xf32>
    %31 = linalg.matmul ins(%26, %28 : tensor<6x38xf32>, tensor<38x16xf32>) outs(%30 : tensor<6x16xf32>) -> tensor<6x16xf32>
    %32 = tensor.empty() : tensor<6x16xf32>
    %33 = linalg.generic {indexing_maps = [#map2, #map1], iterator_types = ["parallel", "parallel"]} ins(%sharding_annotated_5 : tensor<16xf32>) outs(%32 : tensor<6x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<6x16xf32>
    %34 = tensor.empty() : tensor<6x16xf32>
    %35 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%31, %33 : tensor<6x16xf32>, tensor<6x16xf32>) outs(%34 : tensor<6x16xf32>) {
    ^bb0(%in: f32, %in_11: f32, %out: f32):
      %36 = arith.addf %in, %in_11 : f32
      linalg.yield %36 : f32
    } -> tensor<6x16xf32>
    %sharding_annotated_10 = shard.shard %35 to %sharding_1 : tensor<6x16xf32>
    return %sharding_annotated_10 : tensor<6x16xf32>
  }
}
