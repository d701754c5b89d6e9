// layernorm_mlp_seq: JAX -> StableHLO -> linalg (IREE's input pipeline), exported by integration_test/frontends/export_stablehlo.py, annotated from the plan {"fc1": "colwise", "fc2": "rowwise"}.
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
#map2 = affine_map<(d0, d1) -> (d0, 0)>
#map3 = affine_map<(d0, d1) -> (d1)>
#map4 = affine_map<(d0, d1) -> (d1, d0)>
module @jit_layernorm_mlp {
  shard.grid @tp(shape = 4)
  func.func public @main(%arg0: tensor<10x16xf32>, %arg1: tensor<16xf32>, %arg2: tensor<16xf32>, %arg3: tensor<38x16xf32>, %arg4: tensor<38xf32>, %arg5: tensor<16x38xf32>, %arg6: tensor<16xf32>) -> tensor<10x16xf32> {
    %sharding = shard.sharding @tp split_axes = [[], [0]] sharded_dims_offsets = [0, 10, 10, 24, 38] : !shard.sharding
    %sharding_0 = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 10, 10, 24, 38] : !shard.sharding
    %sharding_1 = shard.sharding @tp split_axes = [[]] : !shard.sharding
    %sharding_2 = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 3, 6, 9, 10] : !shard.sharding
    %sharding_annotated = shard.shard %arg0 to %sharding_2 : tensor<10x16xf32>
    %sharding_annotated_3 = shard.shard %arg1 to %sharding_1 : tensor<16xf32>
    %sharding_annotated_4 = shard.shard %arg2 to %sharding_1 : tensor<16xf32>
    %sharding_annotated_5 = shard.shard %arg3 to %sharding_0 : tensor<38x16xf32>
    %sharding_annotated_6 = shard.shard %arg4 to %sharding_0 : tensor<38xf32>
    %sharding_annotated_7 = shard.shard %arg5 to %sharding : tensor<16x38xf32>
    %sharding_annotated_8 = shard.shard %arg6 to %sharding_1 : tensor<16xf32>
    %cst = arith.constant 5.000000e-01 : f32
    %cst_9 = arith.constant 1.000000e+00 : f32
    %cst_10 = arith.constant 0.797884583 : f32
    %cst_11 = arith.constant 4.471500e-02 : f32
    %cst_12 = arith.constant 9.99999974E-6 : f32
    %cst_13 = arith.constant 1.600000e+01 : f32
    %cst_14 = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<10xf32>
    %1 = linalg.fill ins(%cst_14 : f32) outs(%0 : tensor<10xf32>) -> tensor<10xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%sharding_annotated : tensor<10x16xf32>) outs(%1 : tensor<10xf32>) {
    ^bb0(%in: f32, %out: f32):
      %70 = arith.addf %out, %in : f32
      linalg.yield %70 : f32
    } -> tensor<10xf32>
    %expanded = tensor.expand_shape %2 [[0, 1]] output_shape [10, 1] : tensor<10xf32> into tensor<10x1xf32>
    %3 = tensor.empty() : tensor<10x1xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%expanded : tensor<10x1xf32>) outs(%3 : tensor<10x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %70 = arith.divf %in, %cst_13 : f32
      linalg.yield %70 : f32
    } -> tensor<10x1xf32>
    %5 = tensor.empty() : tensor<10x16xf32>
    %6 = linalg.generic {indexing_maps = [#map2, #map], iterator_types = ["parallel", "parallel"]} ins(%4 : tensor<10x1xf32>) outs(%5 : tensor<10x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<10x16xf32>
    %7 = tensor.empty() : tensor<10x16xf32>
    %8 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%sharding_annotated, %6 : tensor<10x16xf32>, tensor<10x16xf32>) outs(%7 : tensor<10x16xf32>) {
    ^bb0(%in: f32, %in_17: f32, %out: f32):
      %70 = arith.subf %in, %in_17 : f32
      linalg.yield %70 : f32
    } -> tensor<10x16xf32>
    %9 = tensor.empty() : tensor<10x16xf32>
    %10 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%8 : tensor<10x16xf32>) outs(%9 : tensor<10x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %70 = arith.mulf %in, %in : f32
      linalg.yield %70 : f32
    } -> tensor<10x16xf32>
    %11 = tensor.empty() : tensor<10xf32>
    %12 = linalg.fill ins(%cst_14 : f32) outs(%11 : tensor<10xf32>) -> tensor<10xf32>
    %13 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%10 : tensor<10x16xf32>) outs(%12 : tensor<10xf32>) {
    ^bb0(%in: f32, %out: f32):
      %70 = arith.addf %out, %in : f32
      linalg.yield %70 : f32
    } -> tensor<10xf32>
    %expanded_15 = tensor.expand_shape %13 [[0, 1]] output_shape [10, 1] : tensor<10xf32> into tensor<10x1xf32>
    %14 = tensor.empty() : tensor<10x1xf32>
    %15 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%expanded_15 : tensor<10x1xf32>) outs(%14 : tensor<10x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %70 = arith.divf %in, %cst_13 : f32
      linalg.yield %70 : f32
    } -> tensor<10x1xf32>
    %16 = tensor.empty() : tensor<10x1xf32>
    %17 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%15 : tensor<10x1xf32>) outs(%16 : tensor<10x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %70 = arith.addf %in, %cst_12 : f32
      linalg.yield %70 : f32
    } -> tensor<10x1xf32>
    %18 = tensor.empty() : tensor<10x1xf32>
    %19 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%17 : tensor<10x1xf32>) outs(%18 : tensor<10x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %70 = math.sqrt %in : f32
      linalg.yield %70 : f32
    } -> tensor<10x1xf32>
    %20 = tensor.empty() : tensor<10x16xf32>
    %21 = linalg.generic {indexing_maps = [#map2, #map], iterator_types = ["parallel", "parallel"]} ins(%19 : tensor<10x1xf32>) outs(%20 : tensor<10x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<10x16xf32>
    %22 = tensor.empty() : tensor<10x16xf32>
    %23 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%8, %21 : tensor<10x16xf32>, tensor<10x16xf32>) outs(%22 : tensor<10x16xf32>) {
    ^bb0(%in: f32, %in_17: f32, %out: f32):
      %70 = arith.divf %in, %in_17 : f32
      linalg.yield %70 : f32
    } -> tensor<10x16xf32>
    %24 = tensor.empty() : tensor<10x16xf32>
    %25 = linalg.generic {indexing_maps = [#map3, #map], iterator_types = ["parallel", "parallel"]} ins(%sharding_annotated_3 : tensor<16xf32>) outs(%24 : tensor<10x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<10x16xf32>
    %26 = tensor.empty() : tensor<10x16xf32>
    %27 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%23, %25 : tensor<10x16xf32>, tensor<10x16xf32>) outs(%26 : tensor<10x16xf32>) {
    ^bb0(%in: f32, %in_17: f32, %out: f32):
      %70 = arith.mulf %in, %in_17 : f32
      linalg.yield %70 : f32
    } -> tensor<10x16xf32>
    %28 = tensor.empty() : tensor<10x16xf32>
    %29 = linalg.generic {indexing_maps = [#map3, #map], iterator_types = ["parallel", "parallel"]} ins(%sharding_annotated_4 : tensor<16xf32>) outs(%28 : tensor<10x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<10x16xf32>
    %30 = tensor.empty() : tensor<10x16xf32>
    %31 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%27, %29 : tensor<10x16xf32>, tensor<10x16xf32>) outs(%30 : tensor<10x16xf32>) {
    ^bb0(%in: f32, %in_17: f32, %out: f32):
      %70 = arith.addf %in, %in_17 : f32
      linalg.yield %70 : f32
    } -> tensor<10x16xf32>
    %32 = tensor.empty() : tensor<16x38xf32>
    %33 = linalg.generic {indexing_maps = [#map4, #map], iterator_types = ["parallel", "parallel"]} ins(%sharding_annotated_5 : tensor<38x16xf32>) outs(%32 : tensor<16x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<16x38xf32>
    %34 = tensor.empty() : tensor<10x38xf32>
    %35 = linalg.fill ins(%cst_14 : f32) outs(%34 : tensor<10x38xf32>) -> tensor<10x38xf32>
    %36 = linalg.matmul ins(%31, %33 : tensor<10x16xf32>, tensor<16x38xf32>) outs(%35 : tensor<10x38xf32>) -> tensor<10x38xf32>
    %37 = tensor.empty() : tensor<10x38xf32>
    %38 = linalg.generic {indexing_maps = [#map3, #map], iterator_types = ["parallel", "parallel"]} ins(%sharding_annotated_6 : tensor<38xf32>) outs(%37 : tensor<10x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<10x38xf32>
    %39 = tensor.empty() : tensor<10x38xf32>
    %40 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%36, %38 : tensor<10x38xf32>, tensor<10x38xf32>) outs(%39 : tensor<10x38xf32>) {
    ^bb0(%in: f32, %in_17: f32, %out: f32):
      %70 = arith.addf %in, %in_17 : f32
      linalg.yield %70 : f32
    } -> tensor<10x38xf32>
    %41 = tensor.empty() : tensor<10x38xf32>
    %42 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%40 : tensor<10x38xf32>) outs(%41 : tensor<10x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %70 = arith.mulf %in, %in : f32
      linalg.yield %70 : f32
    } -> tensor<10x38xf32>
    %43 = tensor.empty() : tensor<10x38xf32>
    %44 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%42, %40 : tensor<10x38xf32>, tensor<10x38xf32>) outs(%43 : tensor<10x38xf32>) {
    ^bb0(%in: f32, %in_17: f32, %out: f32):
      %70 = arith.mulf %in, %in_17 : f32
      linalg.yield %70 : f32
    } -> tensor<10x38xf32>
    %45 = tensor.empty() : tensor<10x38xf32>
    %46 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%44 : tensor<10x38xf32>) outs(%45 : tensor<10x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %70 = arith.mulf %in, %cst_11 : f32
      linalg.yield %70 : f32
    } -> tensor<10x38xf32>
    %47 = tensor.empty() : tensor<10x38xf32>
    %48 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%40, %46 : tensor<10x38xf32>, tensor<10x38xf32>) outs(%47 : tensor<10x38xf32>) {
    ^bb0(%in: f32, %in_17: f32, %out: f32):
      %70 = arith.addf %in, %in_17 : f32
      linalg.yield %70 : f32
    } -> tensor<10x38xf32>
    %49 = tensor.empty() : tensor<10x38xf32>
    %50 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%48 : tensor<10x38xf32>) outs(%49 : tensor<10x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %70 = arith.mulf %in, %cst_10 : f32
      linalg.yield %70 : f32
    } -> tensor<10x38xf32>
    %51 = tensor.empty() : tensor<10x38xf32>
    %52 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%50 : tensor<10x38xf32>) outs(%51 : tensor<10x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %70 = math.tanh %in : f32
      linalg.yield %70 : f32
    } -> tensor<10x38xf32>
    %53 = tensor.empty() : tensor<10x38xf32>
    %54 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%52 : tensor<10x38xf32>) outs(%53 : tensor<10x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %70 = arith.addf %in, %cst_9 : f32
      linalg.yield %70 : f32
    } -> tensor<10x38xf32>
    %55 = tensor.empty() : tensor<10x38xf32>
    %56 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%54 : tensor<10x38xf32>) outs(%55 : tensor<10x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %70 = arith.mulf %in, %cst : f32
      linalg.yield %70 : f32
    } -> tensor<10x38xf32>
    %57 = tensor.empty() : tensor<10x38xf32>
    %58 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%40, %56 : tensor<10x38xf32>, tensor<10x38xf32>) outs(%57 : tensor<10x38xf32>) {
    ^bb0(%in: f32, %in_17: f32, %out: f32):
      %70 = arith.mulf %in, %in_17 : f32
      linalg.yield %70 : f32
    } -> tensor<10x38xf32>
    %59 = tensor.empty() : tensor<38x16xf32>
    %60 = linalg.generic {indexing_maps = [#map4, #map], iterator_types = ["parallel", "parallel"]} ins(%sharding_annotated_7 : tensor<16x38xf32>) outs(%59 : tensor<38x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<38x16xf32>
    %61 = tensor.empty() : tensor<10x16xf32>
    %62 = linalg.fill ins(%cst_14 : f32) outs(%61 : tensor<10x16xf32>) -> tensor<10x16xf32>
    %63 = linalg.matmul ins(%58, %60 : tensor<10x38xf32>, tensor<38x16xf32>) outs(%62 : tensor<10x16xf32>) -> tensor<10x16xf32>
    %64 = tensor.empty() : tensor<10x16xf32>
    %65 = linalg.generic {indexing_maps = [#map3, #map], iterator_types = ["parallel", "parallel"]} ins(%sharding_annotated_8 : tensor<16xf32>) outs(%64 : tensor<10x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<10x16xf32>
    %66 = tensor.empty() : tensor<10x16xf32>
    %67 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%63, %65 : tensor<10x16xf32>, tensor<10x16xf32>) outs(%66 : tensor<10x16xf32>) {
    ^bb0(%in: f32, %in_17: f32, %out: f32):
      %70 = arith.addf %in, %in_17 : f32
      linalg.yield %70 : f32
    } -> tensor<10x16xf32>
    %68 = tensor.empty() : tensor<10x16xf32>
    %69 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%sharding_annotated, %67 : tensor<10x16xf32>, tensor<10x16xf32>) outs(%68 : tensor<10x16xf32>) {
    ^bb0(%in: f32, %in_17: f32, %out: f32):
      %70 = arith.addf %in, %in_17 : f32
      linalg.yield %70 : f32
    } -> tensor<10x16xf32>
    %sharding_annotated_16 = shard.shard %69 to %sharding_2 : tensor<10x16xf32>
    return %sharding_annotated_16 : tensor<10x16xf32>
  }
}
