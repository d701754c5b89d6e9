// Linears and GELU MLPs as torch-mlir exports them
// (torch_mlir.fx.export_and_import(..., output_type="linalg-on-tensors"),
// PyTorch 2.15: the modules of torch-mlir's exports of lin3d, mlp3d, lin2d_bf16,
// lin2d_f16, mlp_bf16, and by the same script an f16 MLP, a 3-D linear
// without a bias, a 4-D linear and a 3-D bf16 MLP), each
// parameter made a function argument in place of its dense_resource
// constant, the 3-D ones with a sequence of 5 instead of 3, the shardings
// added. Run by import-exporter-forms.mlir and
// import-exporter-forms-half.mlir.
module {
  shard.grid @tp(shape = 4)

  // x split along its sequence (dim 1, rows 2, 1, 0, 2), fc.weight along N = 38 at
  // offsets with an empty chunk: rows -> rows; the result split as x.
  func.func @lin3d_seq_col(%x: tensor<2x5x40xf32>, %w: tensor<38x40xf32>, %cst_1: tensor<38xf32>) -> tensor<2x5x38xf32> {
    %s0 = shard.sharding @tp split_axes = [[], [0]] sharded_dims_offsets = [0, 2, 3, 3, 5] : !shard.sharding
    %arg0 = shard.shard %x to %s0 : tensor<2x5x40xf32>
    %s1 = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 9, 20, 20, 38] : !shard.sharding
    %cst_0 = shard.shard %w to %s1 : tensor<38x40xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<40x38xf32>
    %transposed = linalg.transpose ins(%cst_0 : tensor<38x40xf32>) outs(%0 : tensor<40x38xf32>) permutation = [1, 0] 
    %1 = tensor.empty() : tensor<2x40x38xf32>
    %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%transposed : tensor<40x38xf32>) outs(%1 : tensor<2x40x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x40x38xf32>
    %3 = tensor.empty() : tensor<2x5x38xf32>
    %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<2x5x38xf32>) -> tensor<2x5x38xf32>
    %5 = linalg.batch_matmul ins(%arg0, %2 : tensor<2x5x40xf32>, tensor<2x40x38xf32>) outs(%4 : tensor<2x5x38xf32>) -> tensor<2x5x38xf32>
    %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%5, %cst_1 : tensor<2x5x38xf32>, tensor<38xf32>) outs(%3 : tensor<2x5x38xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %7 = arith.addf %in, %in_2 : f32
      linalg.yield %7 : f32
    } -> tensor<2x5x38xf32>
    return %6 : tensor<2x5x38xf32>
  }

  // The weight split along K = 40 at uneven offsets: rows -> rows.
  func.func @lin3d_seq_row(%x: tensor<2x5x40xf32>, %w: tensor<38x40xf32>, %cst_1: tensor<38xf32>) -> tensor<2x5x38xf32> {
    %s0 = shard.sharding @tp split_axes = [[], [0]] sharded_dims_offsets = [0, 2, 3, 3, 5] : !shard.sharding
    %arg0 = shard.shard %x to %s0 : tensor<2x5x40xf32>
    %s1 = shard.sharding @tp split_axes = [[], [0]] sharded_dims_offsets = [0, 16, 24, 40, 40] : !shard.sharding
    %cst_0 = shard.shard %w to %s1 : tensor<38x40xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<40x38xf32>
    %transposed = linalg.transpose ins(%cst_0 : tensor<38x40xf32>) outs(%0 : tensor<40x38xf32>) permutation = [1, 0] 
    %1 = tensor.empty() : tensor<2x40x38xf32>
    %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%transposed : tensor<40x38xf32>) outs(%1 : tensor<2x40x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x40x38xf32>
    %3 = tensor.empty() : tensor<2x5x38xf32>
    %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<2x5x38xf32>) -> tensor<2x5x38xf32>
    %5 = linalg.batch_matmul ins(%arg0, %2 : tensor<2x5x40xf32>, tensor<2x40x38xf32>) outs(%4 : tensor<2x5x38xf32>) -> tensor<2x5x38xf32>
    %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%5, %cst_1 : tensor<2x5x38xf32>, tensor<38xf32>) outs(%3 : tensor<2x5x38xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %7 = arith.addf %in, %in_2 : f32
      linalg.yield %7 : f32
    } -> tensor<2x5x38xf32>
    return %6 : tensor<2x5x38xf32>
  }

  // x split along its batch (dim 0, 1, 0, 1 and 0 rows).
  func.func @lin3d_batch_row(%x: tensor<2x5x40xf32>, %w: tensor<38x40xf32>, %cst_1: tensor<38xf32>) -> tensor<2x5x38xf32> {
    %s0 = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 1, 1, 2, 2] : !shard.sharding
    %arg0 = shard.shard %x to %s0 : tensor<2x5x40xf32>
    %s1 = shard.sharding @tp split_axes = [[], [0]] sharded_dims_offsets = [0, 16, 24, 40, 40] : !shard.sharding
    %cst_0 = shard.shard %w to %s1 : tensor<38x40xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<40x38xf32>
    %transposed = linalg.transpose ins(%cst_0 : tensor<38x40xf32>) outs(%0 : tensor<40x38xf32>) permutation = [1, 0] 
    %1 = tensor.empty() : tensor<2x40x38xf32>
    %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%transposed : tensor<40x38xf32>) outs(%1 : tensor<2x40x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x40x38xf32>
    %3 = tensor.empty() : tensor<2x5x38xf32>
    %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<2x5x38xf32>) -> tensor<2x5x38xf32>
    %5 = linalg.batch_matmul ins(%arg0, %2 : tensor<2x5x40xf32>, tensor<2x40x38xf32>) outs(%4 : tensor<2x5x38xf32>) -> tensor<2x5x38xf32>
    %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%5, %cst_1 : tensor<2x5x38xf32>, tensor<38xf32>) outs(%3 : tensor<2x5x38xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %7 = arith.addf %in, %in_2 : f32
      linalg.yield %7 : f32
    } -> tensor<2x5x38xf32>
    return %6 : tensor<2x5x38xf32>
  }

  // x replicated, the weight split along N: replicated -> features; the
  // result split along its features.
  func.func @lin3d_rep_col(%arg0: tensor<2x5x40xf32>, %w: tensor<38x40xf32>, %cst_1: tensor<38xf32>) -> tensor<2x5x38xf32> {
    %s1 = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 9, 20, 20, 38] : !shard.sharding
    %cst_0 = shard.shard %w to %s1 : tensor<38x40xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<40x38xf32>
    %transposed = linalg.transpose ins(%cst_0 : tensor<38x40xf32>) outs(%0 : tensor<40x38xf32>) permutation = [1, 0] 
    %1 = tensor.empty() : tensor<2x40x38xf32>
    %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%transposed : tensor<40x38xf32>) outs(%1 : tensor<2x40x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x40x38xf32>
    %3 = tensor.empty() : tensor<2x5x38xf32>
    %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<2x5x38xf32>) -> tensor<2x5x38xf32>
    %5 = linalg.batch_matmul ins(%arg0, %2 : tensor<2x5x40xf32>, tensor<2x40x38xf32>) outs(%4 : tensor<2x5x38xf32>) -> tensor<2x5x38xf32>
    %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%5, %cst_1 : tensor<2x5x38xf32>, tensor<38xf32>) outs(%3 : tensor<2x5x38xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %7 = arith.addf %in, %in_2 : f32
      linalg.yield %7 : f32
    } -> tensor<2x5x38xf32>
    return %6 : tensor<2x5x38xf32>
  }

  // x replicated, the weight split along K: one all_reduce, the result
  // replicated.
  func.func @lin3d_rep_row(%arg0: tensor<2x5x40xf32>, %w: tensor<38x40xf32>, %cst_1: tensor<38xf32>) -> tensor<2x5x38xf32> {
    %s1 = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
    %cst_0 = shard.shard %w to %s1 : tensor<38x40xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<40x38xf32>
    %transposed = linalg.transpose ins(%cst_0 : tensor<38x40xf32>) outs(%0 : tensor<40x38xf32>) permutation = [1, 0] 
    %1 = tensor.empty() : tensor<2x40x38xf32>
    %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%transposed : tensor<40x38xf32>) outs(%1 : tensor<2x40x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x40x38xf32>
    %3 = tensor.empty() : tensor<2x5x38xf32>
    %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<2x5x38xf32>) -> tensor<2x5x38xf32>
    %5 = linalg.batch_matmul ins(%arg0, %2 : tensor<2x5x40xf32>, tensor<2x40x38xf32>) outs(%4 : tensor<2x5x38xf32>) -> tensor<2x5x38xf32>
    %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%5, %cst_1 : tensor<2x5x38xf32>, tensor<38xf32>) outs(%3 : tensor<2x5x38xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %7 = arith.addf %in, %in_2 : f32
      linalg.yield %7 : f32
    } -> tensor<2x5x38xf32>
    return %6 : tensor<2x5x38xf32>
  }

  // The GELU MLP on a sequence-split x: fc1 along N, fc2 along K (the same
  // offsets): one fused block.
  func.func @mlp3d_seq(%x: tensor<2x5x40xf32>, %w1: tensor<38x40xf32>, %cst_5: tensor<38xf32>, %w2: tensor<40x38xf32>, %cst_2: tensor<40xf32>) -> tensor<2x5x40xf32> {
    %s0 = shard.sharding @tp split_axes = [[], [0]] sharded_dims_offsets = [0, 2, 3, 3, 5] : !shard.sharding
    %arg0 = shard.shard %x to %s0 : tensor<2x5x40xf32>
    %s1 = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 9, 20, 20, 38] : !shard.sharding
    %cst_4 = shard.shard %w1 to %s1 : tensor<38x40xf32>
    %s3 = shard.sharding @tp split_axes = [[], [0]] sharded_dims_offsets = [0, 9, 20, 20, 38] : !shard.sharding
    %cst_3 = shard.shard %w2 to %s3 : tensor<40x38xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 1.000000e+00 : f32
    %cst_1 = arith.constant 5.000000e-01 : f32
    %cst_6 = arith.constant 1.41421354 : f32
    %0 = tensor.empty() : tensor<40x38xf32>
    %transposed = linalg.transpose ins(%cst_4 : tensor<38x40xf32>) outs(%0 : tensor<40x38xf32>) permutation = [1, 0] 
    %1 = tensor.empty() : tensor<2x40x38xf32>
    %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%transposed : tensor<40x38xf32>) outs(%1 : tensor<2x40x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x40x38xf32>
    %3 = tensor.empty() : tensor<2x5x38xf32>
    %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<2x5x38xf32>) -> tensor<2x5x38xf32>
    %5 = linalg.batch_matmul ins(%arg0, %2 : tensor<2x5x40xf32>, tensor<2x40x38xf32>) outs(%4 : tensor<2x5x38xf32>) -> tensor<2x5x38xf32>
    %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%5, %cst_5 : tensor<2x5x38xf32>, tensor<38xf32>) outs(%3 : tensor<2x5x38xf32>) {
    ^bb0(%in: f32, %in_8: f32, %out: f32):
      %15 = arith.addf %in, %in_8 : f32
      linalg.yield %15 : f32
    } -> tensor<2x5x38xf32>
    %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%6 : tensor<2x5x38xf32>) outs(%3 : tensor<2x5x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %15 = arith.divf %in, %cst_6 : f32
      %16 = math.erf %15 : f32
      %17 = arith.addf %16, %cst_0 : f32
      %18 = arith.mulf %17, %cst_1 : f32
      %19 = arith.mulf %in, %18 : f32
      linalg.yield %19 : f32
    } -> tensor<2x5x38xf32>
    %8 = tensor.empty() : tensor<38x40xf32>
    %transposed_7 = linalg.transpose ins(%cst_3 : tensor<40x38xf32>) outs(%8 : tensor<38x40xf32>) permutation = [1, 0] 
    %9 = tensor.empty() : tensor<2x38x40xf32>
    %10 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%transposed_7 : tensor<38x40xf32>) outs(%9 : tensor<2x38x40xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x38x40xf32>
    %11 = tensor.empty() : tensor<2x5x40xf32>
    %12 = linalg.fill ins(%cst : f32) outs(%11 : tensor<2x5x40xf32>) -> tensor<2x5x40xf32>
    %13 = linalg.batch_matmul ins(%7, %10 : tensor<2x5x38xf32>, tensor<2x38x40xf32>) outs(%12 : tensor<2x5x40xf32>) -> tensor<2x5x40xf32>
    %14 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%13, %cst_2 : tensor<2x5x40xf32>, tensor<40xf32>) outs(%11 : tensor<2x5x40xf32>) {
    ^bb0(%in: f32, %in_8: f32, %out: f32):
      %15 = arith.addf %in, %in_8 : f32
      linalg.yield %15 : f32
    } -> tensor<2x5x40xf32>
    return %14 : tensor<2x5x40xf32>
  }

  // The same on a replicated x: local GEMMs, one all_reduce.
  func.func @mlp3d_rep(%arg0: tensor<2x5x40xf32>, %w1: tensor<38x40xf32>, %cst_5: tensor<38xf32>, %w2: tensor<40x38xf32>, %cst_2: tensor<40xf32>) -> tensor<2x5x40xf32> {
    %s1 = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 9, 20, 20, 38] : !shard.sharding
    %cst_4 = shard.shard %w1 to %s1 : tensor<38x40xf32>
    %s3 = shard.sharding @tp split_axes = [[], [0]] sharded_dims_offsets = [0, 9, 20, 20, 38] : !shard.sharding
    %cst_3 = shard.shard %w2 to %s3 : tensor<40x38xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 1.000000e+00 : f32
    %cst_1 = arith.constant 5.000000e-01 : f32
    %cst_6 = arith.constant 1.41421354 : f32
    %0 = tensor.empty() : tensor<40x38xf32>
    %transposed = linalg.transpose ins(%cst_4 : tensor<38x40xf32>) outs(%0 : tensor<40x38xf32>) permutation = [1, 0] 
    %1 = tensor.empty() : tensor<2x40x38xf32>
    %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%transposed : tensor<40x38xf32>) outs(%1 : tensor<2x40x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x40x38xf32>
    %3 = tensor.empty() : tensor<2x5x38xf32>
    %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<2x5x38xf32>) -> tensor<2x5x38xf32>
    %5 = linalg.batch_matmul ins(%arg0, %2 : tensor<2x5x40xf32>, tensor<2x40x38xf32>) outs(%4 : tensor<2x5x38xf32>) -> tensor<2x5x38xf32>
    %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%5, %cst_5 : tensor<2x5x38xf32>, tensor<38xf32>) outs(%3 : tensor<2x5x38xf32>) {
    ^bb0(%in: f32, %in_8: f32, %out: f32):
      %15 = arith.addf %in, %in_8 : f32
      linalg.yield %15 : f32
    } -> tensor<2x5x38xf32>
    %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%6 : tensor<2x5x38xf32>) outs(%3 : tensor<2x5x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      %15 = arith.divf %in, %cst_6 : f32
      %16 = math.erf %15 : f32
      %17 = arith.addf %16, %cst_0 : f32
      %18 = arith.mulf %17, %cst_1 : f32
      %19 = arith.mulf %in, %18 : f32
      linalg.yield %19 : f32
    } -> tensor<2x5x38xf32>
    %8 = tensor.empty() : tensor<38x40xf32>
    %transposed_7 = linalg.transpose ins(%cst_3 : tensor<40x38xf32>) outs(%8 : tensor<38x40xf32>) permutation = [1, 0] 
    %9 = tensor.empty() : tensor<2x38x40xf32>
    %10 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%transposed_7 : tensor<38x40xf32>) outs(%9 : tensor<2x38x40xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x38x40xf32>
    %11 = tensor.empty() : tensor<2x5x40xf32>
    %12 = linalg.fill ins(%cst : f32) outs(%11 : tensor<2x5x40xf32>) -> tensor<2x5x40xf32>
    %13 = linalg.batch_matmul ins(%7, %10 : tensor<2x5x38xf32>, tensor<2x38x40xf32>) outs(%12 : tensor<2x5x40xf32>) -> tensor<2x5x40xf32>
    %14 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%13, %cst_2 : tensor<2x5x40xf32>, tensor<40xf32>) outs(%11 : tensor<2x5x40xf32>) {
    ^bb0(%in: f32, %in_8: f32, %out: f32):
      %15 = arith.addf %in, %in_8 : f32
      linalg.yield %15 : f32
    } -> tensor<2x5x40xf32>
    return %14 : tensor<2x5x40xf32>
  }

  // bf16: the matmul into f32 and its truncf are one bf16 linear; the bias
  // add after the rounding stays a bf16 add.
  func.func @lin2d_bf16_rows_col(%x: tensor<6x40xbf16>, %w: tensor<38x40xbf16>, %cst_1: tensor<38xbf16>) -> tensor<6x38xbf16> {
    %s0 = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 2, 3, 3, 6] : !shard.sharding
    %arg0 = shard.shard %x to %s0 : tensor<6x40xbf16>
    %s1 = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 9, 20, 20, 38] : !shard.sharding
    %cst_0 = shard.shard %w to %s1 : tensor<38x40xbf16>
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<40x38xbf16>
    %transposed = linalg.transpose ins(%cst_0 : tensor<38x40xbf16>) outs(%0 : tensor<40x38xbf16>) permutation = [1, 0] 
    %1 = tensor.empty() : tensor<6x38xf32>
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<6x38xf32>) -> tensor<6x38xf32>
    %3 = linalg.matmul ins(%arg0, %transposed : tensor<6x40xbf16>, tensor<40x38xbf16>) outs(%2 : tensor<6x38xf32>) -> tensor<6x38xf32>
    %4 = tensor.empty() : tensor<6x38xbf16>
    %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%3 : tensor<6x38xf32>) outs(%4 : tensor<6x38xbf16>) {
    ^bb0(%in: f32, %out: bf16):
      %7 = arith.truncf %in : f32 to bf16
      linalg.yield %7 : bf16
    } -> tensor<6x38xbf16>
    %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%5, %cst_1 : tensor<6x38xbf16>, tensor<38xbf16>) outs(%4 : tensor<6x38xbf16>) {
    ^bb0(%in: bf16, %in_2: bf16, %out: bf16):
      %7 = arith.addf %in, %in_2 : bf16
      linalg.yield %7 : bf16
    } -> tensor<6x38xbf16>
    return %6 : tensor<6x38xbf16>
  }

  func.func @lin2d_bf16_rep_row(%arg0: tensor<6x40xbf16>, %w: tensor<38x40xbf16>, %cst_1: tensor<38xbf16>) -> tensor<6x38xbf16> {
    %s1 = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
    %cst_0 = shard.shard %w to %s1 : tensor<38x40xbf16>
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<40x38xbf16>
    %transposed = linalg.transpose ins(%cst_0 : tensor<38x40xbf16>) outs(%0 : tensor<40x38xbf16>) permutation = [1, 0] 
    %1 = tensor.empty() : tensor<6x38xf32>
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<6x38xf32>) -> tensor<6x38xf32>
    %3 = linalg.matmul ins(%arg0, %transposed : tensor<6x40xbf16>, tensor<40x38xbf16>) outs(%2 : tensor<6x38xf32>) -> tensor<6x38xf32>
    %4 = tensor.empty() : tensor<6x38xbf16>
    %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%3 : tensor<6x38xf32>) outs(%4 : tensor<6x38xbf16>) {
    ^bb0(%in: f32, %out: bf16):
      %7 = arith.truncf %in : f32 to bf16
      linalg.yield %7 : bf16
    } -> tensor<6x38xbf16>
    %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%5, %cst_1 : tensor<6x38xbf16>, tensor<38xbf16>) outs(%4 : tensor<6x38xbf16>) {
    ^bb0(%in: bf16, %in_2: bf16, %out: bf16):
      %7 = arith.addf %in, %in_2 : bf16
      linalg.yield %7 : bf16
    } -> tensor<6x38xbf16>
    return %6 : tensor<6x38xbf16>
  }

  func.func @lin2d_f16_rows_row(%x: tensor<6x40xf16>, %w: tensor<38x40xf16>, %cst_1: tensor<38xf16>) -> tensor<6x38xf16> {
    %s0 = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 2, 3, 3, 6] : !shard.sharding
    %arg0 = shard.shard %x to %s0 : tensor<6x40xf16>
    %s1 = shard.sharding @tp split_axes = [[], [0]] sharded_dims_offsets = [0, 16, 24, 40, 40] : !shard.sharding
    %cst_0 = shard.shard %w to %s1 : tensor<38x40xf16>
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<40x38xf16>
    %transposed = linalg.transpose ins(%cst_0 : tensor<38x40xf16>) outs(%0 : tensor<40x38xf16>) permutation = [1, 0] 
    %1 = tensor.empty() : tensor<6x38xf32>
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<6x38xf32>) -> tensor<6x38xf32>
    %3 = linalg.matmul ins(%arg0, %transposed : tensor<6x40xf16>, tensor<40x38xf16>) outs(%2 : tensor<6x38xf32>) -> tensor<6x38xf32>
    %4 = tensor.empty() : tensor<6x38xf16>
    %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%3 : tensor<6x38xf32>) outs(%4 : tensor<6x38xf16>) {
    ^bb0(%in: f32, %out: f16):
      %7 = arith.truncf %in : f32 to f16
      linalg.yield %7 : f16
    } -> tensor<6x38xf16>
    %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%5, %cst_1 : tensor<6x38xf16>, tensor<38xf16>) outs(%4 : tensor<6x38xf16>) {
    ^bb0(%in: f16, %in_2: f16, %out: f16):
      %7 = arith.addf %in, %in_2 : f16
      linalg.yield %7 : f16
    } -> tensor<6x38xf16>
    return %6 : tensor<6x38xf16>
  }

  func.func @lin2d_f16_rep_col(%arg0: tensor<6x40xf16>, %w: tensor<38x40xf16>, %cst_1: tensor<38xf16>) -> tensor<6x38xf16> {
    %s1 = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 9, 20, 20, 38] : !shard.sharding
    %cst_0 = shard.shard %w to %s1 : tensor<38x40xf16>
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<40x38xf16>
    %transposed = linalg.transpose ins(%cst_0 : tensor<38x40xf16>) outs(%0 : tensor<40x38xf16>) permutation = [1, 0] 
    %1 = tensor.empty() : tensor<6x38xf32>
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<6x38xf32>) -> tensor<6x38xf32>
    %3 = linalg.matmul ins(%arg0, %transposed : tensor<6x40xf16>, tensor<40x38xf16>) outs(%2 : tensor<6x38xf32>) -> tensor<6x38xf32>
    %4 = tensor.empty() : tensor<6x38xf16>
    %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%3 : tensor<6x38xf32>) outs(%4 : tensor<6x38xf16>) {
    ^bb0(%in: f32, %out: f16):
      %7 = arith.truncf %in : f32 to f16
      linalg.yield %7 : f16
    } -> tensor<6x38xf16>
    %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%5, %cst_1 : tensor<6x38xf16>, tensor<38xf16>) outs(%4 : tensor<6x38xf16>) {
    ^bb0(%in: f16, %in_2: f16, %out: f16):
      %7 = arith.addf %in, %in_2 : f16
      linalg.yield %7 : f16
    } -> tensor<6x38xf16>
    return %6 : tensor<6x38xf16>
  }

  // The bf16 GELU MLP (the GELU in bf16, as exported) on split rows.
  func.func @mlp_bf16_rows(%x: tensor<6x40xbf16>, %w1: tensor<38x40xbf16>, %cst_6: tensor<38xbf16>, %w2: tensor<40x38xbf16>, %cst_3: tensor<40xbf16>) -> tensor<6x40xbf16> {
    %s0 = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 2, 3, 3, 6] : !shard.sharding
    %arg0 = shard.shard %x to %s0 : tensor<6x40xbf16>
    %s1 = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 9, 20, 20, 38] : !shard.sharding
    %cst_5 = shard.shard %w1 to %s1 : tensor<38x40xbf16>
    %s3 = shard.sharding @tp split_axes = [[], [0]] sharded_dims_offsets = [0, 9, 20, 20, 38] : !shard.sharding
    %cst_4 = shard.shard %w2 to %s3 : tensor<40x38xbf16>
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 1.000000e+00 : bf16
    %cst_1 = arith.constant 2.000000e+00 : bf16
    %cst_2 = arith.constant 5.000000e-01 : bf16
    %0 = tensor.empty() : tensor<40x38xbf16>
    %transposed = linalg.transpose ins(%cst_5 : tensor<38x40xbf16>) outs(%0 : tensor<40x38xbf16>) permutation = [1, 0] 
    %1 = tensor.empty() : tensor<6x38xf32>
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<6x38xf32>) -> tensor<6x38xf32>
    %3 = linalg.matmul ins(%arg0, %transposed : tensor<6x40xbf16>, tensor<40x38xbf16>) outs(%2 : tensor<6x38xf32>) -> tensor<6x38xf32>
    %4 = tensor.empty() : tensor<6x38xbf16>
    %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%3 : tensor<6x38xf32>) outs(%4 : tensor<6x38xbf16>) {
    ^bb0(%in: f32, %out: bf16):
      %15 = arith.truncf %in : f32 to bf16
      linalg.yield %15 : bf16
    } -> tensor<6x38xbf16>
    %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%5, %cst_6 : tensor<6x38xbf16>, tensor<38xbf16>) outs(%4 : tensor<6x38xbf16>) {
    ^bb0(%in: bf16, %in_8: bf16, %out: bf16):
      %15 = arith.addf %in, %in_8 : bf16
      linalg.yield %15 : bf16
    } -> tensor<6x38xbf16>
    %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%6 : tensor<6x38xbf16>) outs(%4 : tensor<6x38xbf16>) {
    ^bb0(%in: bf16, %out: bf16):
      %15 = math.sqrt %cst_1 : bf16
      %16 = arith.divf %in, %15 : bf16
      %17 = math.erf %16 : bf16
      %18 = arith.addf %17, %cst_0 : bf16
      %19 = arith.mulf %18, %cst_2 : bf16
      %20 = arith.mulf %in, %19 : bf16
      linalg.yield %20 : bf16
    } -> tensor<6x38xbf16>
    %8 = tensor.empty() : tensor<38x40xbf16>
    %transposed_7 = linalg.transpose ins(%cst_4 : tensor<40x38xbf16>) outs(%8 : tensor<38x40xbf16>) permutation = [1, 0] 
    %9 = tensor.empty() : tensor<6x40xf32>
    %10 = linalg.fill ins(%cst : f32) outs(%9 : tensor<6x40xf32>) -> tensor<6x40xf32>
    %11 = linalg.matmul ins(%7, %transposed_7 : tensor<6x38xbf16>, tensor<38x40xbf16>) outs(%10 : tensor<6x40xf32>) -> tensor<6x40xf32>
    %12 = tensor.empty() : tensor<6x40xbf16>
    %13 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%11 : tensor<6x40xf32>) outs(%12 : tensor<6x40xbf16>) {
    ^bb0(%in: f32, %out: bf16):
      %15 = arith.truncf %in : f32 to bf16
      linalg.yield %15 : bf16
    } -> tensor<6x40xbf16>
    %14 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%13, %cst_3 : tensor<6x40xbf16>, tensor<40xbf16>) outs(%12 : tensor<6x40xbf16>) {
    ^bb0(%in: bf16, %in_8: bf16, %out: bf16):
      %15 = arith.addf %in, %in_8 : bf16
      linalg.yield %15 : bf16
    } -> tensor<6x40xbf16>
    return %14 : tensor<6x40xbf16>
  }

  func.func @mlp_f16_rep(%arg0: tensor<6x40xf16>, %w1: tensor<38x40xf16>, %cst_6: tensor<38xf16>, %w2: tensor<40x38xf16>, %cst_3: tensor<40xf16>) -> tensor<6x40xf16> {
    %s1 = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 9, 20, 20, 38] : !shard.sharding
    %cst_5 = shard.shard %w1 to %s1 : tensor<38x40xf16>
    %s3 = shard.sharding @tp split_axes = [[], [0]] sharded_dims_offsets = [0, 9, 20, 20, 38] : !shard.sharding
    %cst_4 = shard.shard %w2 to %s3 : tensor<40x38xf16>
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 1.000000e+00 : f16
    %cst_1 = arith.constant 2.000000e+00 : f16
    %cst_2 = arith.constant 5.000000e-01 : f16
    %0 = tensor.empty() : tensor<40x38xf16>
    %transposed = linalg.transpose ins(%cst_5 : tensor<38x40xf16>) outs(%0 : tensor<40x38xf16>) permutation = [1, 0] 
    %1 = tensor.empty() : tensor<6x38xf32>
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<6x38xf32>) -> tensor<6x38xf32>
    %3 = linalg.matmul ins(%arg0, %transposed : tensor<6x40xf16>, tensor<40x38xf16>) outs(%2 : tensor<6x38xf32>) -> tensor<6x38xf32>
    %4 = tensor.empty() : tensor<6x38xf16>
    %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%3 : tensor<6x38xf32>) outs(%4 : tensor<6x38xf16>) {
    ^bb0(%in: f32, %out: f16):
      %15 = arith.truncf %in : f32 to f16
      linalg.yield %15 : f16
    } -> tensor<6x38xf16>
    %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%5, %cst_6 : tensor<6x38xf16>, tensor<38xf16>) outs(%4 : tensor<6x38xf16>) {
    ^bb0(%in: f16, %in_8: f16, %out: f16):
      %15 = arith.addf %in, %in_8 : f16
      linalg.yield %15 : f16
    } -> tensor<6x38xf16>
    %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%6 : tensor<6x38xf16>) outs(%4 : tensor<6x38xf16>) {
    ^bb0(%in: f16, %out: f16):
      %15 = math.sqrt %cst_1 : f16
      %16 = arith.divf %in, %15 : f16
      %17 = math.erf %16 : f16
      %18 = arith.addf %17, %cst_0 : f16
      %19 = arith.mulf %18, %cst_2 : f16
      %20 = arith.mulf %in, %19 : f16
      linalg.yield %20 : f16
    } -> tensor<6x38xf16>
    %8 = tensor.empty() : tensor<38x40xf16>
    %transposed_7 = linalg.transpose ins(%cst_4 : tensor<40x38xf16>) outs(%8 : tensor<38x40xf16>) permutation = [1, 0] 
    %9 = tensor.empty() : tensor<6x40xf32>
    %10 = linalg.fill ins(%cst : f32) outs(%9 : tensor<6x40xf32>) -> tensor<6x40xf32>
    %11 = linalg.matmul ins(%7, %transposed_7 : tensor<6x38xf16>, tensor<38x40xf16>) outs(%10 : tensor<6x40xf32>) -> tensor<6x40xf32>
    %12 = tensor.empty() : tensor<6x40xf16>
    %13 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%11 : tensor<6x40xf32>) outs(%12 : tensor<6x40xf16>) {
    ^bb0(%in: f32, %out: f16):
      %15 = arith.truncf %in : f32 to f16
      linalg.yield %15 : f16
    } -> tensor<6x40xf16>
    %14 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%13, %cst_3 : tensor<6x40xf16>, tensor<40xf16>) outs(%12 : tensor<6x40xf16>) {
    ^bb0(%in: f16, %in_8: f16, %out: f16):
      %15 = arith.addf %in, %in_8 : f16
      linalg.yield %15 : f16
    } -> tensor<6x40xf16>
    return %14 : tensor<6x40xf16>
  }

  // nn.Linear without a bias on a sequence-split x.
  func.func @lin3d_nobias_seq_col(%x: tensor<2x5x40xf32>, %w: tensor<38x40xf32>) -> tensor<2x5x38xf32> {
    %s0 = shard.sharding @tp split_axes = [[], [0]] sharded_dims_offsets = [0, 2, 3, 3, 5] : !shard.sharding
    %arg0 = shard.shard %x to %s0 : tensor<2x5x40xf32>
    %s1 = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 9, 20, 20, 38] : !shard.sharding
    %cst_0 = shard.shard %w to %s1 : tensor<38x40xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<40x38xf32>
    %transposed = linalg.transpose ins(%cst_0 : tensor<38x40xf32>) outs(%0 : tensor<40x38xf32>) permutation = [1, 0] 
    %1 = tensor.empty() : tensor<2x40x38xf32>
    %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%transposed : tensor<40x38xf32>) outs(%1 : tensor<2x40x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x40x38xf32>
    %3 = tensor.empty() : tensor<2x5x38xf32>
    %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<2x5x38xf32>) -> tensor<2x5x38xf32>
    %5 = linalg.batch_matmul ins(%arg0, %2 : tensor<2x5x40xf32>, tensor<2x40x38xf32>) outs(%4 : tensor<2x5x38xf32>) -> tensor<2x5x38xf32>
    return %5 : tensor<2x5x38xf32>
  }

  // A 4-D x (the exporter collapses its two leading dims and the broadcast
  // weight's into one batch, expands after), split along dim 1: one 4-D
  // rows -> rows linear, the weight split along K.
  func.func @lin4d_mid_row(%x: tensor<2x3x5x40xf32>, %w: tensor<38x40xf32>, %cst_1: tensor<38xf32>) -> tensor<2x3x5x38xf32> {
    %s0 = shard.sharding @tp split_axes = [[], [0]] sharded_dims_offsets = [0, 1, 1, 3, 3] : !shard.sharding
    %arg0 = shard.shard %x to %s0 : tensor<2x3x5x40xf32>
    %s1 = shard.sharding @tp split_axes = [[], [0]] sharded_dims_offsets = [0, 16, 24, 40, 40] : !shard.sharding
    %cst_0 = shard.shard %w to %s1 : tensor<38x40xf32>
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<40x38xf32>
    %transposed = linalg.transpose ins(%cst_0 : tensor<38x40xf32>) outs(%0 : tensor<40x38xf32>) permutation = [1, 0] 
    %1 = tensor.empty() : tensor<2x3x40x38xf32>
    %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%transposed : tensor<40x38xf32>) outs(%1 : tensor<2x3x40x38xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x3x40x38xf32>
    %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2], [3]] : tensor<2x3x5x40xf32> into tensor<6x5x40xf32>
    %collapsed_2 = tensor.collapse_shape %2 [[0, 1], [2], [3]] : tensor<2x3x40x38xf32> into tensor<6x40x38xf32>
    %3 = tensor.empty() : tensor<6x5x38xf32>
    %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<6x5x38xf32>) -> tensor<6x5x38xf32>
    %5 = linalg.batch_matmul ins(%collapsed, %collapsed_2 : tensor<6x5x40xf32>, tensor<6x40x38xf32>) outs(%4 : tensor<6x5x38xf32>) -> tensor<6x5x38xf32>
    %expanded = tensor.expand_shape %5 [[0, 1], [2], [3]] output_shape [2, 3, 5, 38] : tensor<6x5x38xf32> into tensor<2x3x5x38xf32>
    %6 = tensor.empty() : tensor<2x3x5x38xf32>
    %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded, %cst_1 : tensor<2x3x5x38xf32>, tensor<38xf32>) outs(%6 : tensor<2x3x5x38xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %8 = arith.addf %in, %in_3 : f32
      linalg.yield %8 : f32
    } -> tensor<2x3x5x38xf32>
    return %7 : tensor<2x3x5x38xf32>
  }

  // The bf16 GELU MLP on a 3-D x split along its sequence.
  func.func @mlp3d_bf16_seq(%x: tensor<2x5x40xbf16>, %w1: tensor<38x40xbf16>, %cst_6: tensor<38xbf16>, %w2: tensor<40x38xbf16>, %cst_3: tensor<40xbf16>) -> tensor<2x5x40xbf16> {
    %s0 = shard.sharding @tp split_axes = [[], [0]] sharded_dims_offsets = [0, 2, 3, 3, 5] : !shard.sharding
    %arg0 = shard.shard %x to %s0 : tensor<2x5x40xbf16>
    %s1 = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 9, 20, 20, 38] : !shard.sharding
    %cst_5 = shard.shard %w1 to %s1 : tensor<38x40xbf16>
    %s3 = shard.sharding @tp split_axes = [[], [0]] sharded_dims_offsets = [0, 9, 20, 20, 38] : !shard.sharding
    %cst_4 = shard.shard %w2 to %s3 : tensor<40x38xbf16>
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 1.000000e+00 : bf16
    %cst_1 = arith.constant 2.000000e+00 : bf16
    %cst_2 = arith.constant 5.000000e-01 : bf16
    %0 = tensor.empty() : tensor<40x38xbf16>
    %transposed = linalg.transpose ins(%cst_5 : tensor<38x40xbf16>) outs(%0 : tensor<40x38xbf16>) permutation = [1, 0] 
    %1 = tensor.empty() : tensor<2x40x38xbf16>
    %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%transposed : tensor<40x38xbf16>) outs(%1 : tensor<2x40x38xbf16>) {
    ^bb0(%in: bf16, %out: bf16):
      linalg.yield %in : bf16
    } -> tensor<2x40x38xbf16>
    %3 = tensor.empty() : tensor<2x5x38xf32>
    %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<2x5x38xf32>) -> tensor<2x5x38xf32>
    %5 = linalg.batch_matmul ins(%arg0, %2 : tensor<2x5x40xbf16>, tensor<2x40x38xbf16>) outs(%4 : tensor<2x5x38xf32>) -> tensor<2x5x38xf32>
    %6 = tensor.empty() : tensor<2x5x38xbf16>
    %7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%5 : tensor<2x5x38xf32>) outs(%6 : tensor<2x5x38xbf16>) {
    ^bb0(%in: f32, %out: bf16):
      %19 = arith.truncf %in : f32 to bf16
      linalg.yield %19 : bf16
    } -> tensor<2x5x38xbf16>
    %8 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%7, %cst_6 : tensor<2x5x38xbf16>, tensor<38xbf16>) outs(%6 : tensor<2x5x38xbf16>) {
    ^bb0(%in: bf16, %in_8: bf16, %out: bf16):
      %19 = arith.addf %in, %in_8 : bf16
      linalg.yield %19 : bf16
    } -> tensor<2x5x38xbf16>
    %9 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%8 : tensor<2x5x38xbf16>) outs(%6 : tensor<2x5x38xbf16>) {
    ^bb0(%in: bf16, %out: bf16):
      %19 = math.sqrt %cst_1 : bf16
      %20 = arith.divf %in, %19 : bf16
      %21 = math.erf %20 : bf16
      %22 = arith.addf %21, %cst_0 : bf16
      %23 = arith.mulf %22, %cst_2 : bf16
      %24 = arith.mulf %in, %23 : bf16
      linalg.yield %24 : bf16
    } -> tensor<2x5x38xbf16>
    %10 = tensor.empty() : tensor<38x40xbf16>
    %transposed_7 = linalg.transpose ins(%cst_4 : tensor<40x38xbf16>) outs(%10 : tensor<38x40xbf16>) permutation = [1, 0] 
    %11 = tensor.empty() : tensor<2x38x40xbf16>
    %12 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%transposed_7 : tensor<38x40xbf16>) outs(%11 : tensor<2x38x40xbf16>) {
    ^bb0(%in: bf16, %out: bf16):
      linalg.yield %in : bf16
    } -> tensor<2x38x40xbf16>
    %13 = tensor.empty() : tensor<2x5x40xf32>
    %14 = linalg.fill ins(%cst : f32) outs(%13 : tensor<2x5x40xf32>) -> tensor<2x5x40xf32>
    %15 = linalg.batch_matmul ins(%9, %12 : tensor<2x5x38xbf16>, tensor<2x38x40xbf16>) outs(%14 : tensor<2x5x40xf32>) -> tensor<2x5x40xf32>
    %16 = tensor.empty() : tensor<2x5x40xbf16>
    %17 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%15 : tensor<2x5x40xf32>) outs(%16 : tensor<2x5x40xbf16>) {
    ^bb0(%in: f32, %out: bf16):
      %19 = arith.truncf %in : f32 to bf16
      linalg.yield %19 : bf16
    } -> tensor<2x5x40xbf16>
    %18 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%17, %cst_3 : tensor<2x5x40xbf16>, tensor<40xbf16>) outs(%16 : tensor<2x5x40xbf16>) {
    ^bb0(%in: bf16, %in_8: bf16, %out: bf16):
      %19 = arith.addf %in, %in_8 : bf16
      linalg.yield %19 : bf16
    } -> tensor<2x5x40xbf16>
    return %18 : tensor<2x5x40xbf16>
  }
}
