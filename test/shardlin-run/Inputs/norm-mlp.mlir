// RMSNorm and LayerNorm in front of an MLP, as torch-mlir exports them
// (the FX importer's linalg-on-tensors output of nn.RMSNorm / nn.LayerNorm
// + Linear, GELU, Linear + residual: the same ops), with the parameters as function arguments instead of
// dense_resource constants: norm.weight (and norm.bias), fc1 (38 x 40,
// split by rows: column-wise), fc2 (40 x 38, split by columns: row-wise).
// @rms_seq / @ln_seq: x split along its rows at [0, 2, 4, 6, 6] (rank 3
// holds none); @rms_rep / @ln_rep: x replicated.
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0, 0)>
#map2 = affine_map<(d0, d1) -> (d1)>
#map3 = affine_map<(d0, d1) -> (d0)>
#m3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#m3r = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#m3v = affine_map<(d0, d1, d2) -> (d2)>
#m3c = affine_map<(d0, d1, d2) -> (d0, d1)>
module {
  shard.grid @tp(shape = 4)
  func.func @rms_seq(%arg0: tensor<6x40xf32>, %nw: tensor<40xf32>, %w1: tensor<38x40xf32>, %b1: tensor<38xf32>, %w2: tensor<40x38xf32>, %b2: tensor<40xf32>) -> tensor<6x40xf32> {
    %sharding = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 2, 4, 6, 6] : !shard.sharding
    %sharding_0 = shard.sharding @tp split_axes = [[], [0]] sharded_dims_offsets = [0, 10, 20, 30, 38] : !shard.sharding
    %sharding_1 = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 10, 20, 30, 38] : !shard.sharding
    %x = shard.shard %arg0 to %sharding : tensor<6x40xf32>
    %w2s = shard.shard %w2 to %sharding_0 : tensor<40x38xf32>
    %b1s = shard.shard %b1 to %sharding_1 : tensor<38xf32>
    %w1s = shard.shard %w1 to %sharding_1 : tensor<38x40xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %cst_2 = arith.constant 1.000000e+00 : f32
    %cst_3 = arith.constant 5.000000e-01 : f32
    %cst_12 = arith.constant 4.000000e+01 : f32
    %cst_13 = arith.constant 1.41421354 : f32
    %e = tensor.empty() : tensor<6x40xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %x : tensor<6x40xf32>, tensor<6x40xf32>) outs(%e : tensor<6x40xf32>) {
    ^bb0(%in: f32, %in_16: f32, %out: f32):
      %20 = arith.mulf %in, %in_16 : f32
      linalg.yield %20 : f32
    } -> tensor<6x40xf32>
    %2 = tensor.empty() : tensor<6x1xf32>
    %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<6x1xf32>) -> tensor<6x1xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%1 : tensor<6x40xf32>) outs(%3 : tensor<6x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %20 = arith.addf %in, %out : f32
      linalg.yield %20 : f32
    } -> tensor<6x1xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%4 : tensor<6x1xf32>) outs(%2 : tensor<6x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %20 = arith.divf %in, %cst_12 : f32
      linalg.yield %20 : f32
    } -> tensor<6x1xf32>
    %6 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%5 : tensor<6x1xf32>) outs(%2 : tensor<6x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %20 = math.rsqrt %in : f32
      linalg.yield %20 : f32
    } -> tensor<6x1xf32>
    %7 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %6 : tensor<6x40xf32>, tensor<6x1xf32>) outs(%e : tensor<6x40xf32>) {
    ^bb0(%in: f32, %in_16: f32, %out: f32):
      %20 = arith.mulf %in, %in_16 : f32
      linalg.yield %20 : f32
    } -> tensor<6x40xf32>
    %normed = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%7, %nw : tensor<6x40xf32>, tensor<40xf32>) outs(%e : tensor<6x40xf32>) {
    ^bb0(%in: f32, %in_16: f32, %out: f32):
      %20 = arith.mulf %in, %in_16 : f32
      linalg.yield %20 : f32
    } -> tensor<6x40xf32>
    %16 = tensor.empty() : tensor<40x38xf32>
    %transposed = linalg.transpose ins(%w1s : tensor<38x40xf32>) outs(%16 : tensor<40x38xf32>) permutation = [1, 0]
    %17 = tensor.empty() : tensor<6x38xf32>
    %18 = linalg.fill ins(%cst : f32) outs(%17 : tensor<6x38xf32>) -> tensor<6x38xf32>
    %19 = linalg.matmul ins(%normed, %transposed : tensor<6x40xf32>, tensor<40x38xf32>) outs(%18 : tensor<6x38xf32>) -> tensor<6x38xf32>
    %20 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%19, %b1s : tensor<6x38xf32>, tensor<38xf32>) outs(%17 : tensor<6x38xf32>) {
    ^bb0(%in: f32, %in_19: f32, %out: f32):
      %27 = arith.addf %in, %in_19 : f32
      linalg.yield %27 : f32
    } -> tensor<6x38xf32>
    %21 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%20 : tensor<6x38xf32>) outs(%17 : tensor<6x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = arith.divf %in, %cst_13 : f32
      %28 = math.erf %27 : f32
      %29 = arith.addf %28, %cst_2 : f32
      %30 = arith.mulf %29, %cst_3 : f32
      %31 = arith.mulf %in, %30 : f32
      linalg.yield %31 : f32
    } -> tensor<6x38xf32>
    %22 = tensor.empty() : tensor<38x40xf32>
    %transposed_17 = linalg.transpose ins(%w2s : tensor<40x38xf32>) outs(%22 : tensor<38x40xf32>) permutation = [1, 0]
    %e2 = tensor.empty() : tensor<6x40xf32>
    %23 = linalg.fill ins(%cst : f32) outs(%e2 : tensor<6x40xf32>) -> tensor<6x40xf32>
    %24 = linalg.matmul ins(%21, %transposed_17 : tensor<6x38xf32>, tensor<38x40xf32>) outs(%23 : tensor<6x40xf32>) -> tensor<6x40xf32>
    %25 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%24, %b2 : tensor<6x40xf32>, tensor<40xf32>) outs(%e2 : tensor<6x40xf32>) {
    ^bb0(%in: f32, %in_19: f32, %out: f32):
      %27 = arith.addf %in, %in_19 : f32
      linalg.yield %27 : f32
    } -> tensor<6x40xf32>
    %26 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %25 : tensor<6x40xf32>, tensor<6x40xf32>) outs(%e2 : tensor<6x40xf32>) {
    ^bb0(%in: f32, %in_19: f32, %out: f32):
      %27 = arith.addf %in, %in_19 : f32
      linalg.yield %27 : f32
    } -> tensor<6x40xf32>
    %r = shard.shard %26 to %sharding : tensor<6x40xf32>
    return %r : tensor<6x40xf32>
  }
  func.func @rms_rep(%arg0: tensor<6x40xf32>, %nw: tensor<40xf32>, %w1: tensor<38x40xf32>, %b1: tensor<38xf32>, %w2: tensor<40x38xf32>, %b2: tensor<40xf32>) -> tensor<6x40xf32> {
    %sharding = shard.sharding @tp split_axes = [[]] : !shard.sharding
    %sharding_0 = shard.sharding @tp split_axes = [[], [0]] sharded_dims_offsets = [0, 10, 20, 30, 38] : !shard.sharding
    %sharding_1 = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 10, 20, 30, 38] : !shard.sharding
    %x = shard.shard %arg0 to %sharding : tensor<6x40xf32>
    %w2s = shard.shard %w2 to %sharding_0 : tensor<40x38xf32>
    %b1s = shard.shard %b1 to %sharding_1 : tensor<38xf32>
    %w1s = shard.shard %w1 to %sharding_1 : tensor<38x40xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %cst_2 = arith.constant 1.000000e+00 : f32
    %cst_3 = arith.constant 5.000000e-01 : f32
    %cst_12 = arith.constant 4.000000e+01 : f32
    %cst_13 = arith.constant 1.41421354 : f32
    %e = tensor.empty() : tensor<6x40xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %x : tensor<6x40xf32>, tensor<6x40xf32>) outs(%e : tensor<6x40xf32>) {
    ^bb0(%in: f32, %in_16: f32, %out: f32):
      %20 = arith.mulf %in, %in_16 : f32
      linalg.yield %20 : f32
    } -> tensor<6x40xf32>
    %2 = tensor.empty() : tensor<6x1xf32>
    %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<6x1xf32>) -> tensor<6x1xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%1 : tensor<6x40xf32>) outs(%3 : tensor<6x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %20 = arith.addf %in, %out : f32
      linalg.yield %20 : f32
    } -> tensor<6x1xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%4 : tensor<6x1xf32>) outs(%2 : tensor<6x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %20 = arith.divf %in, %cst_12 : f32
      linalg.yield %20 : f32
    } -> tensor<6x1xf32>
    %6 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%5 : tensor<6x1xf32>) outs(%2 : tensor<6x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %20 = math.rsqrt %in : f32
      linalg.yield %20 : f32
    } -> tensor<6x1xf32>
    %7 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %6 : tensor<6x40xf32>, tensor<6x1xf32>) outs(%e : tensor<6x40xf32>) {
    ^bb0(%in: f32, %in_16: f32, %out: f32):
      %20 = arith.mulf %in, %in_16 : f32
      linalg.yield %20 : f32
    } -> tensor<6x40xf32>
    %normed = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%7, %nw : tensor<6x40xf32>, tensor<40xf32>) outs(%e : tensor<6x40xf32>) {
    ^bb0(%in: f32, %in_16: f32, %out: f32):
      %20 = arith.mulf %in, %in_16 : f32
      linalg.yield %20 : f32
    } -> tensor<6x40xf32>
    %16 = tensor.empty() : tensor<40x38xf32>
    %transposed = linalg.transpose ins(%w1s : tensor<38x40xf32>) outs(%16 : tensor<40x38xf32>) permutation = [1, 0]
    %17 = tensor.empty() : tensor<6x38xf32>
    %18 = linalg.fill ins(%cst : f32) outs(%17 : tensor<6x38xf32>) -> tensor<6x38xf32>
    %19 = linalg.matmul ins(%normed, %transposed : tensor<6x40xf32>, tensor<40x38xf32>) outs(%18 : tensor<6x38xf32>) -> tensor<6x38xf32>
    %20 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%19, %b1s : tensor<6x38xf32>, tensor<38xf32>) outs(%17 : tensor<6x38xf32>) {
    ^bb0(%in: f32, %in_19: f32, %out: f32):
      %27 = arith.addf %in, %in_19 : f32
      linalg.yield %27 : f32
    } -> tensor<6x38xf32>
    %21 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%20 : tensor<6x38xf32>) outs(%17 : tensor<6x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = arith.divf %in, %cst_13 : f32
      %28 = math.erf %27 : f32
      %29 = arith.addf %28, %cst_2 : f32
      %30 = arith.mulf %29, %cst_3 : f32
      %31 = arith.mulf %in, %30 : f32
      linalg.yield %31 : f32
    } -> tensor<6x38xf32>
    %22 = tensor.empty() : tensor<38x40xf32>
    %transposed_17 = linalg.transpose ins(%w2s : tensor<40x38xf32>) outs(%22 : tensor<38x40xf32>) permutation = [1, 0]
    %e2 = tensor.empty() : tensor<6x40xf32>
    %23 = linalg.fill ins(%cst : f32) outs(%e2 : tensor<6x40xf32>) -> tensor<6x40xf32>
    %24 = linalg.matmul ins(%21, %transposed_17 : tensor<6x38xf32>, tensor<38x40xf32>) outs(%23 : tensor<6x40xf32>) -> tensor<6x40xf32>
    %25 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%24, %b2 : tensor<6x40xf32>, tensor<40xf32>) outs(%e2 : tensor<6x40xf32>) {
    ^bb0(%in: f32, %in_19: f32, %out: f32):
      %27 = arith.addf %in, %in_19 : f32
      linalg.yield %27 : f32
    } -> tensor<6x40xf32>
    %26 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %25 : tensor<6x40xf32>, tensor<6x40xf32>) outs(%e2 : tensor<6x40xf32>) {
    ^bb0(%in: f32, %in_19: f32, %out: f32):
      %27 = arith.addf %in, %in_19 : f32
      linalg.yield %27 : f32
    } -> tensor<6x40xf32>
    %r = shard.shard %26 to %sharding : tensor<6x40xf32>
    return %r : tensor<6x40xf32>
  }
  func.func @ln_seq(%arg0: tensor<6x40xf32>, %nw: tensor<40xf32>, %nb: tensor<40xf32>, %w1: tensor<38x40xf32>, %b1: tensor<38xf32>, %w2: tensor<40x38xf32>, %b2: tensor<40xf32>) -> tensor<6x40xf32> {
    %sharding = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 2, 4, 6, 6] : !shard.sharding
    %sharding_0 = shard.sharding @tp split_axes = [[], [0]] sharded_dims_offsets = [0, 10, 20, 30, 38] : !shard.sharding
    %sharding_1 = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 10, 20, 30, 38] : !shard.sharding
    %x = shard.shard %arg0 to %sharding : tensor<6x40xf32>
    %w2s = shard.shard %w2 to %sharding_0 : tensor<40x38xf32>
    %b1s = shard.shard %b1 to %sharding_1 : tensor<38xf32>
    %w1s = shard.shard %w1 to %sharding_1 : tensor<38x40xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %cst_2 = arith.constant 1.000000e+00 : f32
    %cst_3 = arith.constant 5.000000e-01 : f32
    %cst_12 = arith.constant 4.000000e+01 : f32
    %cst_13 = arith.constant 1.41421354 : f32
    %cst_11 = arith.constant 1.000000e-05 : f64
    %0 = tensor.empty() : tensor<6x1xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<6x1xf32>) -> tensor<6x1xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<6x40xf32>) outs(%1 : tensor<6x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = arith.addf %in, %out : f32
      linalg.yield %27 : f32
    } -> tensor<6x1xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%2 : tensor<6x1xf32>) outs(%0 : tensor<6x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = arith.divf %in, %cst_12 : f32
      linalg.yield %27 : f32
    } -> tensor<6x1xf32>
    %e = tensor.empty() : tensor<6x40xf32>
    %collapsed = tensor.collapse_shape %3 [[0, 1]] : tensor<6x1xf32> into tensor<6xf32>
    %5 = linalg.generic {indexing_maps = [#map3, #map], iterator_types = ["parallel", "parallel"]} ins(%collapsed : tensor<6xf32>) outs(%e : tensor<6x40xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<6x40xf32>
    %6 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %5 : tensor<6x40xf32>, tensor<6x40xf32>) outs(%e : tensor<6x40xf32>) {
    ^bb0(%in: f32, %in_19: f32, %out: f32):
      %27 = arith.subf %in, %in_19 : f32
      linalg.yield %27 : f32
    } -> tensor<6x40xf32>
    %7 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%6, %6 : tensor<6x40xf32>, tensor<6x40xf32>) outs(%e : tensor<6x40xf32>) {
    ^bb0(%in: f32, %in_19: f32, %out: f32):
      %27 = arith.mulf %in, %in_19 : f32
      linalg.yield %27 : f32
    } -> tensor<6x40xf32>
    %8 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%7 : tensor<6x40xf32>) outs(%1 : tensor<6x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = arith.addf %in, %out : f32
      linalg.yield %27 : f32
    } -> tensor<6x1xf32>
    %9 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%8 : tensor<6x1xf32>) outs(%0 : tensor<6x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = arith.divf %in, %cst_12 : f32
      linalg.yield %27 : f32
    } -> tensor<6x1xf32>
    %10 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%9 : tensor<6x1xf32>) outs(%0 : tensor<6x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = arith.truncf %cst_11 : f64 to f32
      %28 = arith.addf %in, %27 : f32
      linalg.yield %28 : f32
    } -> tensor<6x1xf32>
    %11 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%10 : tensor<6x1xf32>) outs(%0 : tensor<6x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = math.rsqrt %in : f32
      linalg.yield %27 : f32
    } -> tensor<6x1xf32>
    %collapsed_16 = tensor.collapse_shape %11 [[0, 1]] : tensor<6x1xf32> into tensor<6xf32>
    %12 = linalg.generic {indexing_maps = [#map3, #map], iterator_types = ["parallel", "parallel"]} ins(%collapsed_16 : tensor<6xf32>) outs(%e : tensor<6x40xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<6x40xf32>
    %13 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%6, %12 : tensor<6x40xf32>, tensor<6x40xf32>) outs(%e : tensor<6x40xf32>) {
    ^bb0(%in: f32, %in_19: f32, %out: f32):
      %27 = arith.mulf %in, %in_19 : f32
      linalg.yield %27 : f32
    } -> tensor<6x40xf32>
    %14 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%13, %nw : tensor<6x40xf32>, tensor<40xf32>) outs(%e : tensor<6x40xf32>) {
    ^bb0(%in: f32, %in_19: f32, %out: f32):
      %27 = arith.mulf %in, %in_19 : f32
      linalg.yield %27 : f32
    } -> tensor<6x40xf32>
    %normed = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%14, %nb : tensor<6x40xf32>, tensor<40xf32>) outs(%e : tensor<6x40xf32>) {
    ^bb0(%in: f32, %in_19: f32, %out: f32):
      %27 = arith.addf %in, %in_19 : f32
      linalg.yield %27 : f32
    } -> tensor<6x40xf32>
    %16 = tensor.empty() : tensor<40x38xf32>
    %transposed = linalg.transpose ins(%w1s : tensor<38x40xf32>) outs(%16 : tensor<40x38xf32>) permutation = [1, 0]
    %17 = tensor.empty() : tensor<6x38xf32>
    %18 = linalg.fill ins(%cst : f32) outs(%17 : tensor<6x38xf32>) -> tensor<6x38xf32>
    %19 = linalg.matmul ins(%normed, %transposed : tensor<6x40xf32>, tensor<40x38xf32>) outs(%18 : tensor<6x38xf32>) -> tensor<6x38xf32>
    %20 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%19, %b1s : tensor<6x38xf32>, tensor<38xf32>) outs(%17 : tensor<6x38xf32>) {
    ^bb0(%in: f32, %in_19: f32, %out: f32):
      %27 = arith.addf %in, %in_19 : f32
      linalg.yield %27 : f32
    } -> tensor<6x38xf32>
    %21 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%20 : tensor<6x38xf32>) outs(%17 : tensor<6x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = arith.divf %in, %cst_13 : f32
      %28 = math.erf %27 : f32
      %29 = arith.addf %28, %cst_2 : f32
      %30 = arith.mulf %29, %cst_3 : f32
      %31 = arith.mulf %in, %30 : f32
      linalg.yield %31 : f32
    } -> tensor<6x38xf32>
    %22 = tensor.empty() : tensor<38x40xf32>
    %transposed_17 = linalg.transpose ins(%w2s : tensor<40x38xf32>) outs(%22 : tensor<38x40xf32>) permutation = [1, 0]
    %e2 = tensor.empty() : tensor<6x40xf32>
    %23 = linalg.fill ins(%cst : f32) outs(%e2 : tensor<6x40xf32>) -> tensor<6x40xf32>
    %24 = linalg.matmul ins(%21, %transposed_17 : tensor<6x38xf32>, tensor<38x40xf32>) outs(%23 : tensor<6x40xf32>) -> tensor<6x40xf32>
    %25 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%24, %b2 : tensor<6x40xf32>, tensor<40xf32>) outs(%e2 : tensor<6x40xf32>) {
    ^bb0(%in: f32, %in_19: f32, %out: f32):
      %27 = arith.addf %in, %in_19 : f32
      linalg.yield %27 : f32
    } -> tensor<6x40xf32>
    %26 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %25 : tensor<6x40xf32>, tensor<6x40xf32>) outs(%e2 : tensor<6x40xf32>) {
    ^bb0(%in: f32, %in_19: f32, %out: f32):
      %27 = arith.addf %in, %in_19 : f32
      linalg.yield %27 : f32
    } -> tensor<6x40xf32>
    %r = shard.shard %26 to %sharding : tensor<6x40xf32>
    return %r : tensor<6x40xf32>
  }
  func.func @ln_rep(%arg0: tensor<6x40xf32>, %nw: tensor<40xf32>, %nb: tensor<40xf32>, %w1: tensor<38x40xf32>, %b1: tensor<38xf32>, %w2: tensor<40x38xf32>, %b2: tensor<40xf32>) -> tensor<6x40xf32> {
    %sharding = shard.sharding @tp split_axes = [[]] : !shard.sharding
    %sharding_0 = shard.sharding @tp split_axes = [[], [0]] sharded_dims_offsets = [0, 10, 20, 30, 38] : !shard.sharding
    %sharding_1 = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 10, 20, 30, 38] : !shard.sharding
    %x = shard.shard %arg0 to %sharding : tensor<6x40xf32>
    %w2s = shard.shard %w2 to %sharding_0 : tensor<40x38xf32>
    %b1s = shard.shard %b1 to %sharding_1 : tensor<38xf32>
    %w1s = shard.shard %w1 to %sharding_1 : tensor<38x40xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %cst_2 = arith.constant 1.000000e+00 : f32
    %cst_3 = arith.constant 5.000000e-01 : f32
    %cst_12 = arith.constant 4.000000e+01 : f32
    %cst_13 = arith.constant 1.41421354 : f32
    %cst_11 = arith.constant 1.000000e-05 : f64
    %0 = tensor.empty() : tensor<6x1xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<6x1xf32>) -> tensor<6x1xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<6x40xf32>) outs(%1 : tensor<6x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = arith.addf %in, %out : f32
      linalg.yield %27 : f32
    } -> tensor<6x1xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%2 : tensor<6x1xf32>) outs(%0 : tensor<6x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = arith.divf %in, %cst_12 : f32
      linalg.yield %27 : f32
    } -> tensor<6x1xf32>
    %e = tensor.empty() : tensor<6x40xf32>
    %collapsed = tensor.collapse_shape %3 [[0, 1]] : tensor<6x1xf32> into tensor<6xf32>
    %5 = linalg.generic {indexing_maps = [#map3, #map], iterator_types = ["parallel", "parallel"]} ins(%collapsed : tensor<6xf32>) outs(%e : tensor<6x40xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<6x40xf32>
    %6 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %5 : tensor<6x40xf32>, tensor<6x40xf32>) outs(%e : tensor<6x40xf32>) {
    ^bb0(%in: f32, %in_19: f32, %out: f32):
      %27 = arith.subf %in, %in_19 : f32
      linalg.yield %27 : f32
    } -> tensor<6x40xf32>
    %7 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%6, %6 : tensor<6x40xf32>, tensor<6x40xf32>) outs(%e : tensor<6x40xf32>) {
    ^bb0(%in: f32, %in_19: f32, %out: f32):
      %27 = arith.mulf %in, %in_19 : f32
      linalg.yield %27 : f32
    } -> tensor<6x40xf32>
    %8 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%7 : tensor<6x40xf32>) outs(%1 : tensor<6x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = arith.addf %in, %out : f32
      linalg.yield %27 : f32
    } -> tensor<6x1xf32>
    %9 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%8 : tensor<6x1xf32>) outs(%0 : tensor<6x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = arith.divf %in, %cst_12 : f32
      linalg.yield %27 : f32
    } -> tensor<6x1xf32>
    %10 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%9 : tensor<6x1xf32>) outs(%0 : tensor<6x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = arith.truncf %cst_11 : f64 to f32
      %28 = arith.addf %in, %27 : f32
      linalg.yield %28 : f32
    } -> tensor<6x1xf32>
    %11 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%10 : tensor<6x1xf32>) outs(%0 : tensor<6x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = math.rsqrt %in : f32
      linalg.yield %27 : f32
    } -> tensor<6x1xf32>
    %collapsed_16 = tensor.collapse_shape %11 [[0, 1]] : tensor<6x1xf32> into tensor<6xf32>
    %12 = linalg.generic {indexing_maps = [#map3, #map], iterator_types = ["parallel", "parallel"]} ins(%collapsed_16 : tensor<6xf32>) outs(%e : tensor<6x40xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<6x40xf32>
    %13 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%6, %12 : tensor<6x40xf32>, tensor<6x40xf32>) outs(%e : tensor<6x40xf32>) {
    ^bb0(%in: f32, %in_19: f32, %out: f32):
      %27 = arith.mulf %in, %in_19 : f32
      linalg.yield %27 : f32
    } -> tensor<6x40xf32>
    %14 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%13, %nw : tensor<6x40xf32>, tensor<40xf32>) outs(%e : tensor<6x40xf32>) {
    ^bb0(%in: f32, %in_19: f32, %out: f32):
      %27 = arith.mulf %in, %in_19 : f32
      linalg.yield %27 : f32
    } -> tensor<6x40xf32>
    %normed = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%14, %nb : tensor<6x40xf32>, tensor<40xf32>) outs(%e : tensor<6x40xf32>) {
    ^bb0(%in: f32, %in_19: f32, %out: f32):
      %27 = arith.addf %in, %in_19 : f32
      linalg.yield %27 : f32
    } -> tensor<6x40xf32>
    %16 = tensor.empty() : tensor<40x38xf32>
    %transposed = linalg.transpose ins(%w1s : tensor<38x40xf32>) outs(%16 : tensor<40x38xf32>) permutation = [1, 0]
    %17 = tensor.empty() : tensor<6x38xf32>
    %18 = linalg.fill ins(%cst : f32) outs(%17 : tensor<6x38xf32>) -> tensor<6x38xf32>
    %19 = linalg.matmul ins(%normed, %transposed : tensor<6x40xf32>, tensor<40x38xf32>) outs(%18 : tensor<6x38xf32>) -> tensor<6x38xf32>
    %20 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%19, %b1s : tensor<6x38xf32>, tensor<38xf32>) outs(%17 : tensor<6x38xf32>) {
    ^bb0(%in: f32, %in_19: f32, %out: f32):
      %27 = arith.addf %in, %in_19 : f32
      linalg.yield %27 : f32
    } -> tensor<6x38xf32>
    %21 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%20 : tensor<6x38xf32>) outs(%17 : tensor<6x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %27 = arith.divf %in, %cst_13 : f32
      %28 = math.erf %27 : f32
      %29 = arith.addf %28, %cst_2 : f32
      %30 = arith.mulf %29, %cst_3 : f32
      %31 = arith.mulf %in, %30 : f32
      linalg.yield %31 : f32
    } -> tensor<6x38xf32>
    %22 = tensor.empty() : tensor<38x40xf32>
    %transposed_17 = linalg.transpose ins(%w2s : tensor<40x38xf32>) outs(%22 : tensor<38x40xf32>) permutation = [1, 0]
    %e2 = tensor.empty() : tensor<6x40xf32>
    %23 = linalg.fill ins(%cst : f32) outs(%e2 : tensor<6x40xf32>) -> tensor<6x40xf32>
    %24 = linalg.matmul ins(%21, %transposed_17 : tensor<6x38xf32>, tensor<38x40xf32>) outs(%23 : tensor<6x40xf32>) -> tensor<6x40xf32>
    %25 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%24, %b2 : tensor<6x40xf32>, tensor<40xf32>) outs(%e2 : tensor<6x40xf32>) {
    ^bb0(%in: f32, %in_19: f32, %out: f32):
      %27 = arith.addf %in, %in_19 : f32
      linalg.yield %27 : f32
    } -> tensor<6x40xf32>
    %26 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %25 : tensor<6x40xf32>, tensor<6x40xf32>) outs(%e2 : tensor<6x40xf32>) {
    ^bb0(%in: f32, %in_19: f32, %out: f32):
      %27 = arith.addf %in, %in_19 : f32
      linalg.yield %27 : f32
    } -> tensor<6x40xf32>
    %r = shard.shard %26 to %sharding : tensor<6x40xf32>
    return %r : tensor<6x40xf32>
  }
}
