// mlp3d_gelu: JAX -> StableHLO -> linalg (IREE's input pipeline), exported by integration_test/frontends/export_stablehlo.py, annotated from the plan {"fc1": "colwise", "fc2": "rowwise"}.
#map = affine_map<(d0, d1) -> (d1, d0)>
#map1 = affine_map<(d0, d1) -> (d0, d1)>
#map2 = affine_map<(d0, d1, d2) -> (d2)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
module @jit_mlp_exact {
  shard.grid @tp(shape = 4)
  func.func public @main(%arg0: tensor<2x3x16xf32>, %arg1: tensor<38x16xf32>, %arg2: tensor<38xf32>, %arg3: tensor<16x38xf32>, %arg4: tensor<16xf32>) -> tensor<2x3x16xf32> {
    %sharding = shard.sharding @tp split_axes = [[], [0]] sharded_dims_offsets = [0, 10, 10, 24, 38] : !shard.sharding
    %sharding_0 = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 10, 10, 24, 38] : !shard.sharding
    %sharding_1 = shard.sharding @tp split_axes = [[]] : !shard.sharding
    %sharding_annotated = shard.shard %arg0 to %sharding_1 : tensor<2x3x16xf32>
    %sharding_annotated_2 = shard.shard %arg1 to %sharding_0 : tensor<38x16xf32>
    %sharding_annotated_3 = shard.shard %arg2 to %sharding_0 : tensor<38xf32>
    %sharding_annotated_4 = shard.shard %arg3 to %sharding : tensor<16x38xf32>
    %sharding_annotated_5 = shard.shard %arg4 to %sharding_1 : tensor<16xf32>
    %cst = arith.constant 1.12837911 : f32
    %cst_6 = arith.constant -0.37612626 : f32
    %cst_7 = arith.constant 0.112835854 : f32
    %cst_8 = arith.constant -0.0268538129 : f32
    %cst_9 = arith.constant 0.00518832775 : f32
    %cst_10 = arith.constant -8.0101937E-4 : f32
    %cst_11 = arith.constant 7.85386146E-5 : f32
    %cst_12 = arith.constant -88.7228394 : f32
    %cst_13 = arith.constant 0.564189494 : f32
    %cst_14 = arith.constant -0.282076746 : f32
    %cst_15 = arith.constant 0.42184633 : f32
    %cst_16 = arith.constant -1.01526523 : f32
    %cst_17 = arith.constant 2.92101908 : f32
    %cst_18 = arith.constant -7.49551868 : f32
    %cst_19 = arith.constant 1.297720e+01 : f32
    %cst_20 = arith.constant -10.477664 : f32
    %cst_21 = arith.constant 0.563825965 : f32
    %cst_22 = arith.constant -0.274112701 : f32
    %cst_23 = arith.constant 3.404880e-01 : f32
    %cst_24 = arith.constant -0.494451523 : f32
    %cst_25 = arith.constant 0.621000468 : f32
    %cst_26 = arith.constant -0.582473278 : f32
    %cst_27 = arith.constant 0.368742466 : f32
    %cst_28 = arith.constant -0.138703942 : f32
    %cst_29 = arith.constant 2.326820e-02 : f32
    %cst_30 = arith.constant 2.000000e+00 : f32
    %cst_31 = arith.constant 1.000000e+00 : f32
    %cst_32 = arith.constant 0.707106769 : f32
    %cst_33 = arith.constant 5.000000e-01 : f32
    %cst_34 = arith.constant 0.000000e+00 : f32
    %collapsed = tensor.collapse_shape %sharding_annotated [[0, 1], [2]] : tensor<2x3x16xf32> into tensor<6x16xf32>
    %0 = tensor.empty() : tensor<16x38xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%sharding_annotated_2 : tensor<38x16xf32>) outs(%0 : tensor<16x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<16x38xf32>
    %2 = tensor.empty() : tensor<6x38xf32>
    %3 = linalg.fill ins(%cst_34 : f32) outs(%2 : tensor<6x38xf32>) -> tensor<6x38xf32>
    %4 = linalg.matmul ins(%collapsed, %1 : tensor<6x16xf32>, tensor<16x38xf32>) outs(%3 : tensor<6x38xf32>) -> tensor<6x38xf32>
    %expanded = tensor.expand_shape %4 [[0, 1], [2]] output_shape [2, 3, 38] : tensor<6x38xf32> into tensor<2x3x38xf32>
    %5 = tensor.empty() : tensor<2x3x38xf32>
    %6 = linalg.generic {indexing_maps = [#map2, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sharding_annotated_3 : tensor<38xf32>) outs(%5 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x3x38xf32>
    %7 = tensor.empty() : tensor<2x3x38xf32>
    %8 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded, %6 : tensor<2x3x38xf32>, tensor<2x3x38xf32>) outs(%7 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %148 = arith.addf %in, %in_38 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %9 = tensor.empty() : tensor<2x3x38xf32>
    %10 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%8 : tensor<2x3x38xf32>) outs(%9 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = arith.mulf %in, %cst_33 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %11 = tensor.empty() : tensor<2x3x38xf32>
    %12 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%8 : tensor<2x3x38xf32>) outs(%11 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = arith.negf %in : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %13 = tensor.empty() : tensor<2x3x38xf32>
    %14 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%12 : tensor<2x3x38xf32>) outs(%13 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = arith.mulf %in, %cst_32 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %15 = tensor.empty() : tensor<2x3x38xf32>
    %16 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%14 : tensor<2x3x38xf32>) outs(%15 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = arith.mulf %in, %in : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %17 = tensor.empty() : tensor<2x3x38xf32>
    %18 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%16 : tensor<2x3x38xf32>) outs(%17 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = arith.negf %in : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %19 = tensor.empty() : tensor<2x3x38xf32>
    %20 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%14 : tensor<2x3x38xf32>) outs(%19 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = math.absf %in : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %21 = tensor.empty() : tensor<2x3x38xf32>
    %22 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%16 : tensor<2x3x38xf32>) outs(%21 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = arith.divf %cst_31, %in : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %23 = tensor.empty() : tensor<2x3x38xf32>
    %24 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%18 : tensor<2x3x38xf32>) outs(%23 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = math.exp %in : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %25 = tensor.empty() : tensor<2x3x38xf32>
    %26 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%20 : tensor<2x3x38xf32>) outs(%25 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = arith.divf %cst_31, %in : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %27 = tensor.empty() : tensor<2x3x38xf32>
    %28 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%24, %26 : tensor<2x3x38xf32>, tensor<2x3x38xf32>) outs(%27 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %148 = arith.mulf %in, %in_38 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %29 = tensor.empty() : tensor<2x3x38xi1>
    %30 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%20 : tensor<2x3x38xf32>) outs(%29 : tensor<2x3x38xi1>) {
    ^bb0(%in: f32, %out: i1):
      %148 = arith.cmpf olt, %in, %cst_30 : f32
      linalg.yield %148 : i1
    } -> tensor<2x3x38xi1>
    %31 = tensor.empty() : tensor<2x3x38xf32>
    %32 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%22 : tensor<2x3x38xf32>) outs(%31 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = arith.mulf %in, %cst_29 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %33 = tensor.empty() : tensor<2x3x38xf32>
    %34 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%32 : tensor<2x3x38xf32>) outs(%33 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = arith.addf %in, %cst_28 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %35 = tensor.empty() : tensor<2x3x38xf32>
    %36 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%34, %22 : tensor<2x3x38xf32>, tensor<2x3x38xf32>) outs(%35 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %148 = arith.mulf %in, %in_38 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %37 = tensor.empty() : tensor<2x3x38xf32>
    %38 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%36 : tensor<2x3x38xf32>) outs(%37 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = arith.addf %in, %cst_27 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %39 = tensor.empty() : tensor<2x3x38xf32>
    %40 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%38, %22 : tensor<2x3x38xf32>, tensor<2x3x38xf32>) outs(%39 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %148 = arith.mulf %in, %in_38 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %41 = tensor.empty() : tensor<2x3x38xf32>
    %42 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%40 : tensor<2x3x38xf32>) outs(%41 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = arith.addf %in, %cst_26 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %43 = tensor.empty() : tensor<2x3x38xf32>
    %44 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%42, %22 : tensor<2x3x38xf32>, tensor<2x3x38xf32>) outs(%43 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %148 = arith.mulf %in, %in_38 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %45 = tensor.empty() : tensor<2x3x38xf32>
    %46 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%44 : tensor<2x3x38xf32>) outs(%45 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = arith.addf %in, %cst_25 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %47 = tensor.empty() : tensor<2x3x38xf32>
    %48 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%46, %22 : tensor<2x3x38xf32>, tensor<2x3x38xf32>) outs(%47 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %148 = arith.mulf %in, %in_38 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %49 = tensor.empty() : tensor<2x3x38xf32>
    %50 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%48 : tensor<2x3x38xf32>) outs(%49 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = arith.addf %in, %cst_24 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %51 = tensor.empty() : tensor<2x3x38xf32>
    %52 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%50, %22 : tensor<2x3x38xf32>, tensor<2x3x38xf32>) outs(%51 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %148 = arith.mulf %in, %in_38 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %53 = tensor.empty() : tensor<2x3x38xf32>
    %54 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%52 : tensor<2x3x38xf32>) outs(%53 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = arith.addf %in, %cst_23 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %55 = tensor.empty() : tensor<2x3x38xf32>
    %56 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%54, %22 : tensor<2x3x38xf32>, tensor<2x3x38xf32>) outs(%55 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %148 = arith.mulf %in, %in_38 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %57 = tensor.empty() : tensor<2x3x38xf32>
    %58 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%56 : tensor<2x3x38xf32>) outs(%57 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = arith.addf %in, %cst_22 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %59 = tensor.empty() : tensor<2x3x38xf32>
    %60 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%58, %22 : tensor<2x3x38xf32>, tensor<2x3x38xf32>) outs(%59 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %148 = arith.mulf %in, %in_38 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %61 = tensor.empty() : tensor<2x3x38xf32>
    %62 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%60 : tensor<2x3x38xf32>) outs(%61 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = arith.addf %in, %cst_21 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %63 = tensor.empty() : tensor<2x3x38xf32>
    %64 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%22 : tensor<2x3x38xf32>) outs(%63 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = arith.mulf %in, %cst_20 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %65 = tensor.empty() : tensor<2x3x38xf32>
    %66 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%64 : tensor<2x3x38xf32>) outs(%65 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = arith.addf %in, %cst_19 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %67 = tensor.empty() : tensor<2x3x38xf32>
    %68 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%66, %22 : tensor<2x3x38xf32>, tensor<2x3x38xf32>) outs(%67 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %148 = arith.mulf %in, %in_38 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %69 = tensor.empty() : tensor<2x3x38xf32>
    %70 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%68 : tensor<2x3x38xf32>) outs(%69 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = arith.addf %in, %cst_18 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %71 = tensor.empty() : tensor<2x3x38xf32>
    %72 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%70, %22 : tensor<2x3x38xf32>, tensor<2x3x38xf32>) outs(%71 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %148 = arith.mulf %in, %in_38 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %73 = tensor.empty() : tensor<2x3x38xf32>
    %74 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%72 : tensor<2x3x38xf32>) outs(%73 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = arith.addf %in, %cst_17 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %75 = tensor.empty() : tensor<2x3x38xf32>
    %76 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%74, %22 : tensor<2x3x38xf32>, tensor<2x3x38xf32>) outs(%75 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %148 = arith.mulf %in, %in_38 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %77 = tensor.empty() : tensor<2x3x38xf32>
    %78 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%76 : tensor<2x3x38xf32>) outs(%77 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = arith.addf %in, %cst_16 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %79 = tensor.empty() : tensor<2x3x38xf32>
    %80 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%78, %22 : tensor<2x3x38xf32>, tensor<2x3x38xf32>) outs(%79 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %148 = arith.mulf %in, %in_38 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %81 = tensor.empty() : tensor<2x3x38xf32>
    %82 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%80 : tensor<2x3x38xf32>) outs(%81 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = arith.addf %in, %cst_15 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %83 = tensor.empty() : tensor<2x3x38xf32>
    %84 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%82, %22 : tensor<2x3x38xf32>, tensor<2x3x38xf32>) outs(%83 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %148 = arith.mulf %in, %in_38 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %85 = tensor.empty() : tensor<2x3x38xf32>
    %86 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%84 : tensor<2x3x38xf32>) outs(%85 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = arith.addf %in, %cst_14 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %87 = tensor.empty() : tensor<2x3x38xf32>
    %88 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%86, %22 : tensor<2x3x38xf32>, tensor<2x3x38xf32>) outs(%87 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %148 = arith.mulf %in, %in_38 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %89 = tensor.empty() : tensor<2x3x38xf32>
    %90 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%88 : tensor<2x3x38xf32>) outs(%89 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = arith.addf %in, %cst_13 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %91 = tensor.empty() : tensor<2x3x38xf32>
    %92 = linalg.generic {indexing_maps = [#map3, #map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%30, %62, %90 : tensor<2x3x38xi1>, tensor<2x3x38xf32>, tensor<2x3x38xf32>) outs(%91 : tensor<2x3x38xf32>) {
    ^bb0(%in: i1, %in_38: f32, %in_39: f32, %out: f32):
      %148 = arith.select %in, %in_38, %in_39 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %93 = tensor.empty() : tensor<2x3x38xf32>
    %94 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%28, %92 : tensor<2x3x38xf32>, tensor<2x3x38xf32>) outs(%93 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %148 = arith.mulf %in, %in_38 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %95 = tensor.empty() : tensor<2x3x38xi1>
    %96 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%18 : tensor<2x3x38xf32>) outs(%95 : tensor<2x3x38xi1>) {
    ^bb0(%in: f32, %out: i1):
      %148 = arith.cmpf olt, %in, %cst_12 : f32
      linalg.yield %148 : i1
    } -> tensor<2x3x38xi1>
    %97 = tensor.empty() : tensor<2x3x38xf32>
    %98 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%96, %94 : tensor<2x3x38xi1>, tensor<2x3x38xf32>) outs(%97 : tensor<2x3x38xf32>) {
    ^bb0(%in: i1, %in_38: f32, %out: f32):
      %148 = arith.select %in, %cst_34, %in_38 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %99 = tensor.empty() : tensor<2x3x38xi1>
    %100 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%14 : tensor<2x3x38xf32>) outs(%99 : tensor<2x3x38xi1>) {
    ^bb0(%in: f32, %out: i1):
      %148 = arith.cmpf olt, %in, %cst_34 : f32
      linalg.yield %148 : i1
    } -> tensor<2x3x38xi1>
    %101 = tensor.empty() : tensor<2x3x38xf32>
    %102 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%98 : tensor<2x3x38xf32>) outs(%101 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = arith.subf %cst_30, %in : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %103 = tensor.empty() : tensor<2x3x38xf32>
    %104 = linalg.generic {indexing_maps = [#map3, #map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%100, %102, %98 : tensor<2x3x38xi1>, tensor<2x3x38xf32>, tensor<2x3x38xf32>) outs(%103 : tensor<2x3x38xf32>) {
    ^bb0(%in: i1, %in_38: f32, %in_39: f32, %out: f32):
      %148 = arith.select %in, %in_38, %in_39 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %105 = tensor.empty() : tensor<2x3x38xf32>
    %106 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%16 : tensor<2x3x38xf32>) outs(%105 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = arith.mulf %in, %cst_11 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %107 = tensor.empty() : tensor<2x3x38xf32>
    %108 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%106 : tensor<2x3x38xf32>) outs(%107 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = arith.addf %in, %cst_10 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %109 = tensor.empty() : tensor<2x3x38xf32>
    %110 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%108, %16 : tensor<2x3x38xf32>, tensor<2x3x38xf32>) outs(%109 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %148 = arith.mulf %in, %in_38 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %111 = tensor.empty() : tensor<2x3x38xf32>
    %112 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%110 : tensor<2x3x38xf32>) outs(%111 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = arith.addf %in, %cst_9 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %113 = tensor.empty() : tensor<2x3x38xf32>
    %114 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%112, %16 : tensor<2x3x38xf32>, tensor<2x3x38xf32>) outs(%113 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %148 = arith.mulf %in, %in_38 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %115 = tensor.empty() : tensor<2x3x38xf32>
    %116 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%114 : tensor<2x3x38xf32>) outs(%115 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = arith.addf %in, %cst_8 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %117 = tensor.empty() : tensor<2x3x38xf32>
    %118 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%116, %16 : tensor<2x3x38xf32>, tensor<2x3x38xf32>) outs(%117 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %148 = arith.mulf %in, %in_38 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %119 = tensor.empty() : tensor<2x3x38xf32>
    %120 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%118 : tensor<2x3x38xf32>) outs(%119 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = arith.addf %in, %cst_7 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %121 = tensor.empty() : tensor<2x3x38xf32>
    %122 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%120, %16 : tensor<2x3x38xf32>, tensor<2x3x38xf32>) outs(%121 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %148 = arith.mulf %in, %in_38 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %123 = tensor.empty() : tensor<2x3x38xf32>
    %124 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%122 : tensor<2x3x38xf32>) outs(%123 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = arith.addf %in, %cst_6 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %125 = tensor.empty() : tensor<2x3x38xf32>
    %126 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%124, %16 : tensor<2x3x38xf32>, tensor<2x3x38xf32>) outs(%125 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %148 = arith.mulf %in, %in_38 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %127 = tensor.empty() : tensor<2x3x38xf32>
    %128 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%126 : tensor<2x3x38xf32>) outs(%127 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = arith.addf %in, %cst : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %129 = tensor.empty() : tensor<2x3x38xf32>
    %130 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%14, %128 : tensor<2x3x38xf32>, tensor<2x3x38xf32>) outs(%129 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %148 = arith.mulf %in, %in_38 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %131 = tensor.empty() : tensor<2x3x38xf32>
    %132 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%130 : tensor<2x3x38xf32>) outs(%131 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %148 = arith.subf %cst_31, %in : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %133 = tensor.empty() : tensor<2x3x38xi1>
    %134 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%20 : tensor<2x3x38xf32>) outs(%133 : tensor<2x3x38xi1>) {
    ^bb0(%in: f32, %out: i1):
      %148 = arith.cmpf olt, %in, %cst_31 : f32
      linalg.yield %148 : i1
    } -> tensor<2x3x38xi1>
    %135 = tensor.empty() : tensor<2x3x38xf32>
    %136 = linalg.generic {indexing_maps = [#map3, #map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%134, %132, %104 : tensor<2x3x38xi1>, tensor<2x3x38xf32>, tensor<2x3x38xf32>) outs(%135 : tensor<2x3x38xf32>) {
    ^bb0(%in: i1, %in_38: f32, %in_39: f32, %out: f32):
      %148 = arith.select %in, %in_38, %in_39 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %137 = tensor.empty() : tensor<2x3x38xf32>
    %138 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%10, %136 : tensor<2x3x38xf32>, tensor<2x3x38xf32>) outs(%137 : tensor<2x3x38xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %148 = arith.mulf %in, %in_38 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x38xf32>
    %collapsed_35 = tensor.collapse_shape %138 [[0, 1], [2]] : tensor<2x3x38xf32> into tensor<6x38xf32>
    %139 = tensor.empty() : tensor<38x16xf32>
    %140 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%sharding_annotated_4 : tensor<16x38xf32>) outs(%139 : tensor<38x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<38x16xf32>
    %141 = tensor.empty() : tensor<6x16xf32>
    %142 = linalg.fill ins(%cst_34 : f32) outs(%141 : tensor<6x16xf32>) -> tensor<6x16xf32>
    %143 = linalg.matmul ins(%collapsed_35, %140 : tensor<6x38xf32>, tensor<38x16xf32>) outs(%142 : tensor<6x16xf32>) -> tensor<6x16xf32>
    %expanded_36 = tensor.expand_shape %143 [[0, 1], [2]] output_shape [2, 3, 16] : tensor<6x16xf32> into tensor<2x3x16xf32>
    %144 = tensor.empty() : tensor<2x3x16xf32>
    %145 = linalg.generic {indexing_maps = [#map2, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sharding_annotated_5 : tensor<16xf32>) outs(%144 : tensor<2x3x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x3x16xf32>
    %146 = tensor.empty() : tensor<2x3x16xf32>
    %147 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_36, %145 : tensor<2x3x16xf32>, tensor<2x3x16xf32>) outs(%146 : tensor<2x3x16xf32>) {
    ^bb0(%in: f32, %in_38: f32, %out: f32):
      %148 = arith.addf %in, %in_38 : f32
      linalg.yield %148 : f32
    } -> tensor<2x3x16xf32>
    %sharding_annotated_37 = shard.shard %147 to %sharding_1 : tensor<2x3x16xf32>
    return %sharding_annotated_37 : tensor<2x3x16xf32>
  }
}
