// rmsnorm_swiglu: JAX -> StableHLO -> linalg (IREE's input pipeline), exported by integration_test/frontends/export_stablehlo.py, annotated from the plan {"down": "rowwise", "gate": "colwise", "up": "colwise"}.
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
#map2 = affine_map<(d0, d1) -> (d0, 0)>
#map3 = affine_map<(d0, d1) -> (d1)>
#map4 = affine_map<(d0, d1) -> (d1, d0)>
module @jit_rmsnorm_swiglu {
  shard.grid @tp(shape = 4)
  func.func public @main(%arg0: tensor<6x16xf32>, %arg1: tensor<16xf32>, %arg2: tensor<24x16xf32>, %arg3: tensor<24x16xf32>, %arg4: tensor<16x24xf32>) -> tensor<6x16xf32> {
    %sharding = shard.sharding @tp split_axes = [[], [0]] sharded_dims_offsets = [0, 6, 12, 18, 24] : !shard.sharding
    %sharding_0 = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 6, 12, 18, 24] : !shard.sharding
    %sharding_1 = shard.sharding @tp split_axes = [[]] : !shard.sharding
    %sharding_annotated = shard.shard %arg0 to %sharding_1 : tensor<6x16xf32>
    %sharding_annotated_2 = shard.shard %arg1 to %sharding_1 : tensor<16xf32>
    %sharding_annotated_3 = shard.shard %arg2 to %sharding_0 : tensor<24x16xf32>
    %sharding_annotated_4 = shard.shard %arg3 to %sharding_0 : tensor<24x16xf32>
    %sharding_annotated_5 = shard.shard %arg4 to %sharding : tensor<16x24xf32>
    %cst = arith.constant 1.000000e+00 : f32
    %cst_6 = arith.constant 9.99999997E-7 : f32
    %cst_7 = arith.constant 1.600000e+01 : f32
    %cst_8 = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<6x16xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%sharding_annotated : tensor<6x16xf32>) outs(%0 : tensor<6x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %46 = arith.mulf %in, %in : f32
      linalg.yield %46 : f32
    } -> tensor<6x16xf32>
    %2 = tensor.empty() : tensor<6xf32>
    %3 = linalg.fill ins(%cst_8 : f32) outs(%2 : tensor<6xf32>) -> tensor<6xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%1 : tensor<6x16xf32>) outs(%3 : tensor<6xf32>) {
    ^bb0(%in: f32, %out: f32):
      %46 = arith.addf %out, %in : f32
      linalg.yield %46 : f32
    } -> tensor<6xf32>
    %expanded = tensor.expand_shape %4 [[0, 1]] output_shape [6, 1] : tensor<6xf32> into tensor<6x1xf32>
    %5 = tensor.empty() : tensor<6x1xf32>
    %6 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%expanded : tensor<6x1xf32>) outs(%5 : tensor<6x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %46 = arith.divf %in, %cst_7 : f32
      linalg.yield %46 : f32
    } -> tensor<6x1xf32>
    %7 = tensor.empty() : tensor<6x1xf32>
    %8 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%6 : tensor<6x1xf32>) outs(%7 : tensor<6x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %46 = arith.addf %in, %cst_6 : f32
      linalg.yield %46 : f32
    } -> tensor<6x1xf32>
    %9 = tensor.empty() : tensor<6x1xf32>
    %10 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%8 : tensor<6x1xf32>) outs(%9 : tensor<6x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %46 = math.rsqrt %in : f32
      linalg.yield %46 : f32
    } -> tensor<6x1xf32>
    %11 = tensor.empty() : tensor<6x16xf32>
    %12 = linalg.generic {indexing_maps = [#map2, #map], iterator_types = ["parallel", "parallel"]} ins(%10 : tensor<6x1xf32>) outs(%11 : tensor<6x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<6x16xf32>
    %13 = tensor.empty() : tensor<6x16xf32>
    %14 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%sharding_annotated, %12 : tensor<6x16xf32>, tensor<6x16xf32>) outs(%13 : tensor<6x16xf32>) {
    ^bb0(%in: f32, %in_10: f32, %out: f32):
      %46 = arith.mulf %in, %in_10 : f32
      linalg.yield %46 : f32
    } -> tensor<6x16xf32>
    %15 = tensor.empty() : tensor<6x16xf32>
    %16 = linalg.generic {indexing_maps = [#map3, #map], iterator_types = ["parallel", "parallel"]} ins(%sharding_annotated_2 : tensor<16xf32>) outs(%15 : tensor<6x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<6x16xf32>
    %17 = tensor.empty() : tensor<6x16xf32>
    %18 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%14, %16 : tensor<6x16xf32>, tensor<6x16xf32>) outs(%17 : tensor<6x16xf32>) {
    ^bb0(%in: f32, %in_10: f32, %out: f32):
      %46 = arith.mulf %in, %in_10 : f32
      linalg.yield %46 : f32
    } -> tensor<6x16xf32>
    %19 = tensor.empty() : tensor<16x24xf32>
    %20 = linalg.generic {indexing_maps = [#map4, #map], iterator_types = ["parallel", "parallel"]} ins(%sharding_annotated_3 : tensor<24x16xf32>) outs(%19 : tensor<16x24xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<16x24xf32>
    %21 = tensor.empty() : tensor<6x24xf32>
    %22 = linalg.fill ins(%cst_8 : f32) outs(%21 : tensor<6x24xf32>) -> tensor<6x24xf32>
    %23 = linalg.matmul ins(%18, %20 : tensor<6x16xf32>, tensor<16x24xf32>) outs(%22 : tensor<6x24xf32>) -> tensor<6x24xf32>
    %24 = tensor.empty() : tensor<6x24xf32>
    %25 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%23 : tensor<6x24xf32>) outs(%24 : tensor<6x24xf32>) {
    ^bb0(%in: f32, %out: f32):
      %46 = arith.negf %in : f32
      linalg.yield %46 : f32
    } -> tensor<6x24xf32>
    %26 = tensor.empty() : tensor<6x24xf32>
    %27 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%25 : tensor<6x24xf32>) outs(%26 : tensor<6x24xf32>) {
    ^bb0(%in: f32, %out: f32):
      %46 = math.exp %in : f32
      linalg.yield %46 : f32
    } -> tensor<6x24xf32>
    %28 = tensor.empty() : tensor<6x24xf32>
    %29 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%27 : tensor<6x24xf32>) outs(%28 : tensor<6x24xf32>) {
    ^bb0(%in: f32, %out: f32):
      %46 = arith.addf %in, %cst : f32
      linalg.yield %46 : f32
    } -> tensor<6x24xf32>
    %30 = tensor.empty() : tensor<6x24xf32>
    %31 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%29 : tensor<6x24xf32>) outs(%30 : tensor<6x24xf32>) {
    ^bb0(%in: f32, %out: f32):
      %46 = arith.divf %cst, %in : f32
      linalg.yield %46 : f32
    } -> tensor<6x24xf32>
    %32 = tensor.empty() : tensor<6x24xf32>
    %33 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%23, %31 : tensor<6x24xf32>, tensor<6x24xf32>) outs(%32 : tensor<6x24xf32>) {
    ^bb0(%in: f32, %in_10: f32, %out: f32):
      %46 = arith.mulf %in, %in_10 : f32
      linalg.yield %46 : f32
    } -> tensor<6x24xf32>
    %34 = tensor.empty() : tensor<16x24xf32>
    %35 = linalg.generic {indexing_maps = [#map4, #map], iterator_types = ["parallel", "parallel"]} ins(%sharding_annotated_4 : tensor<24x16xf32>) outs(%34 : tensor<16x24xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<16x24xf32>
    %36 = tensor.empty() : tensor<6x24xf32>
    %37 = linalg.fill ins(%cst_8 : f32) outs(%36 : tensor<6x24xf32>) -> tensor<6x24xf32>
    %38 = linalg.matmul ins(%18, %35 : tensor<6x16xf32>, tensor<16x24xf32>) outs(%37 : tensor<6x24xf32>) -> tensor<6x24xf32>
    %39 = tensor.empty() : tensor<6x24xf32>
    %40 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%33, %38 : tensor<6x24xf32>, tensor<6x24xf32>) outs(%39 : tensor<6x24xf32>) {
    ^bb0(%in: f32, %in_10: f32, %out: f32):
      %46 = arith.mulf %in, %in_10 : f32
      linalg.yield %46 : f32
    } -> tensor<6x24xf32>
    %41 = tensor.empty() : tensor<24x16xf32>
    %42 = linalg.generic {indexing_maps = [#map4, #map], iterator_types = ["parallel", "parallel"]} ins(%sharding_annotated_5 : tensor<16x24xf32>) outs(%41 : tensor<24x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<24x16xf32>
    %43 = tensor.empty() : tensor<6x16xf32>
    %44 = linalg.fill ins(%cst_8 : f32) outs(%43 : tensor<6x16xf32>) -> tensor<6x16xf32>
    %45 = linalg.matmul ins(%40, %42 : tensor<6x24xf32>, tensor<24x16xf32>) outs(%44 : tensor<6x16xf32>) -> tensor<6x16xf32>
    %sharding_annotated_9 = shard.shard %45 to %sharding_1 : tensor<6x16xf32>
    return %sharding_annotated_9 : tensor<6x16xf32>
  }
}
