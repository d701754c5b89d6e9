// Rank-local ops of the frontends (issue 40) for local-ops.mlir: integer
// powers (math.fpowi with constant exponents: torch-mlir's GELU-tanh
// captures `arith.constant 3 : i64` into its linalg.generic), the index
// math of the import, and bf16 chains computed in f32.
#id = affine_map<(d0, d1) -> (d0, d1)>
#bc = affine_map<(d0, d1) -> (d1)>
#sc = affine_map<(d0, d1) -> ()>

!w1 = !shardlin.sharded<tensor<10x8xf32>, #shardlin.chunk<dim = 0, placements = [2, 0, 1]>>
!w2 = !shardlin.sharded<tensor<8x10xf32>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>

// y = gelu_tanh(x A1^T + b1) A2^T + b2, GELU as torch-mlir writes it: the
// bias added by one generic, then x^3 as math.fpowi of a captured i64.
func.func @gelu_mlp(%x: tensor<5x8xf32>, %w1: !w1, %b1: tensor<10xf32>, %w2: !w2, %b2: tensor<8xf32>) -> tensor<5x8xf32> {
  %c3 = arith.constant 3 : i64
  %c0 = arith.constant 4.471500e-02 : f32
  %c1 = arith.constant 7.977240e-01 : f32
  %one = arith.constant 1.000000e+00 : f32
  %half = arith.constant 5.000000e-01 : f32
  %h = shardlin.linear %x, %w1 : (tensor<5x8xf32>, !w1) -> tensor<5x10xf32>
  %e = tensor.empty() : tensor<5x10xf32>
  %hb = linalg.generic {indexing_maps = [#id, #bc, #id], iterator_types = ["parallel", "parallel"]} ins(%h, %b1 : tensor<5x10xf32>, tensor<10xf32>) outs(%e : tensor<5x10xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %s = arith.addf %in, %in_1 : f32
    linalg.yield %s : f32
  } -> tensor<5x10xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%hb : tensor<5x10xf32>) outs(%e : tensor<5x10xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.fpowi %in, %c3 : f32, i64
    %1 = arith.mulf %0, %c0 : f32
    %2 = arith.addf %in, %1 : f32
    %3 = arith.mulf %2, %c1 : f32
    %4 = math.tanh %3 : f32
    %5 = arith.addf %4, %one : f32
    %6 = arith.mulf %5, %half : f32
    %7 = arith.mulf %in, %6 : f32
    linalg.yield %7 : f32
  } -> tensor<5x10xf32>
  %y = shardlin.linear %g, %w2, %b2 : (tensor<5x10xf32>, !w2, tensor<8xf32>) -> tensor<5x8xf32>
  return %y : tensor<5x8xf32>
}

// The same GELU with b1 as the first linear's bias: a block that
// --strategy=activations fuses (the fusion rebuilds the fpowi on the rank's
// block of features).
func.func @gelu_block(%x: tensor<5x8xf32>, %w1: !w1, %b1: tensor<10xf32>, %w2: !w2, %b2: tensor<8xf32>) -> tensor<5x8xf32> {
  %c3 = arith.constant 3 : i64
  %c0 = arith.constant 4.471500e-02 : f32
  %c1 = arith.constant 7.977240e-01 : f32
  %one = arith.constant 1.000000e+00 : f32
  %half = arith.constant 5.000000e-01 : f32
  %h = shardlin.linear %x, %w1, %b1 : (tensor<5x8xf32>, !w1, tensor<10xf32>) -> tensor<5x10xf32>
  %e = tensor.empty() : tensor<5x10xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%h : tensor<5x10xf32>) outs(%e : tensor<5x10xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.fpowi %in, %c3 : f32, i64
    %1 = arith.mulf %0, %c0 : f32
    %2 = arith.addf %in, %1 : f32
    %3 = arith.mulf %2, %c1 : f32
    %4 = math.tanh %3 : f32
    %5 = arith.addf %4, %one : f32
    %6 = arith.mulf %5, %half : f32
    %7 = arith.mulf %in, %6 : f32
    linalg.yield %7 : f32
  } -> tensor<5x10xf32>
  %y = shardlin.linear %g, %w2, %b2 : (tensor<5x10xf32>, !w2, tensor<8xf32>) -> tensor<5x8xf32>
  return %y : tensor<5x8xf32>
}

// Every form of a constant exponent, in f64: a splat i32 tensor on
// tensors (-3), a captured i8 (5), a scalar i64 input of the generic (2), an
// i16 in the body (0) and -1.
// y = x^-3 + x^5 + x^2 + x^0 + x^-1 (each rank its own x).
func.func @powers(%x: tensor<4x6xf64>) -> tensor<4x6xf64> {
  %m3 = arith.constant dense<-3> : tensor<4x6xi32>
  %c5 = arith.constant 5 : i8
  %c2 = arith.constant 2 : i64
  %p = math.fpowi %x, %m3 : tensor<4x6xf64>, tensor<4x6xi32>
  %e = tensor.empty() : tensor<4x6xf64>
  %y = linalg.generic {indexing_maps = [#id, #id, #sc, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %p, %c2 : tensor<4x6xf64>, tensor<4x6xf64>, i64) outs(%e : tensor<4x6xf64>) {
  ^bb0(%in: f64, %q: f64, %two: i64, %out: f64):
    %c0 = arith.constant 0 : i16
    %m1 = arith.constant -1 : i64
    %0 = math.fpowi %in, %c5 : f64, i8
    %1 = math.fpowi %in, %two : f64, i64
    %2 = math.fpowi %in, %c0 : f64, i16
    %3 = math.fpowi %in, %m1 : f64, i64
    %4 = arith.addf %q, %0 : f64
    %5 = arith.addf %4, %1 : f64
    %6 = arith.addf %5, %2 : f64
    %7 = arith.addf %6, %3 : f64
    linalg.yield %7 : f64
  } -> tensor<4x6xf64>
  return %y : tensor<4x6xf64>
}

// torch-mlir's bf16 MLP (torch-mlir's export of mlp_bf16 (integration_test/frontends/export.py's exporter and hook), its parameters
// as arguments), rank-local: each matmul accumulates in f32 and a generic
// truncates its result to bf16 before the bias and GELU (erf form) in bf16.
// The chain reads the f32 product only through that truncf: the executor
// converts it first (one rounding, as the truncf), then computes in f32.
func.func @mlp_bf16(%arg0: tensor<6x40xbf16>, %fc1w: tensor<38x40xbf16>, %fc1b: tensor<38xbf16>, %fc2w: tensor<40x38xbf16>, %fc2b: tensor<40xbf16>) -> tensor<6x40xbf16> {
  %cst = arith.constant 0.000000e+00 : f32
  %cst_0 = arith.constant 1.000000e+00 : bf16
  %cst_1 = arith.constant 2.000000e+00 : bf16
  %cst_2 = arith.constant 5.000000e-01 : bf16
  %0 = tensor.empty() : tensor<40x38xbf16>
  %transposed = linalg.transpose ins(%fc1w : tensor<38x40xbf16>) outs(%0 : tensor<40x38xbf16>) permutation = [1, 0] 
  %1 = tensor.empty() : tensor<6x38xf32>
  %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<6x38xf32>) -> tensor<6x38xf32>
  %3 = linalg.matmul ins(%arg0, %transposed : tensor<6x40xbf16>, tensor<40x38xbf16>) outs(%2 : tensor<6x38xf32>) -> tensor<6x38xf32>
  %4 = tensor.empty() : tensor<6x38xbf16>
  %5 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%3 : tensor<6x38xf32>) outs(%4 : tensor<6x38xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %15 = arith.truncf %in : f32 to bf16
    linalg.yield %15 : bf16
  } -> tensor<6x38xbf16>
  %6 = linalg.generic {indexing_maps = [#id, #bc, #id], iterator_types = ["parallel", "parallel"]} ins(%5, %fc1b : tensor<6x38xbf16>, tensor<38xbf16>) outs(%4 : tensor<6x38xbf16>) {
  ^bb0(%in: bf16, %in_8: bf16, %out: bf16):
    %15 = arith.addf %in, %in_8 : bf16
    linalg.yield %15 : bf16
  } -> tensor<6x38xbf16>
  %7 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%6 : tensor<6x38xbf16>) outs(%4 : tensor<6x38xbf16>) {
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
  %transposed_7 = linalg.transpose ins(%fc2w : tensor<40x38xbf16>) outs(%8 : tensor<38x40xbf16>) permutation = [1, 0] 
  %9 = tensor.empty() : tensor<6x40xf32>
  %10 = linalg.fill ins(%cst : f32) outs(%9 : tensor<6x40xf32>) -> tensor<6x40xf32>
  %11 = linalg.matmul ins(%7, %transposed_7 : tensor<6x38xbf16>, tensor<38x40xbf16>) outs(%10 : tensor<6x40xf32>) -> tensor<6x40xf32>
  %12 = tensor.empty() : tensor<6x40xbf16>
  %13 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%11 : tensor<6x40xf32>) outs(%12 : tensor<6x40xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %15 = arith.truncf %in : f32 to bf16
    linalg.yield %15 : bf16
  } -> tensor<6x40xbf16>
  %14 = linalg.generic {indexing_maps = [#id, #bc, #id], iterator_types = ["parallel", "parallel"]} ins(%13, %fc2b : tensor<6x40xbf16>, tensor<40xbf16>) outs(%12 : tensor<6x40xbf16>) {
  ^bb0(%in: bf16, %in_8: bf16, %out: bf16):
    %15 = arith.addf %in, %in_8 : bf16
    linalg.yield %15 : bf16
  } -> tensor<6x40xbf16>
  return %14 : tensor<6x40xbf16>
}

!v1 = !shardlin.sharded<tensor<10x8xbf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>>
!v2 = !shardlin.sharded<tensor<8x10xbf16>, #shardlin.chunk<dim = 1, placements = [1, 0]>>

// A bf16 block whose GELU-tanh computes in f32 between an extf and a
// truncf, x^3 as math.fpowi.
func.func @gelu_bf16(%x: tensor<5x8xbf16>, %w1: !v1, %b1: tensor<10xbf16>, %w2: !v2, %b2: tensor<8xbf16>) -> tensor<5x8xbf16> {
  %c3 = arith.constant 3 : i32
  %c0 = arith.constant 4.471500e-02 : f32
  %c1 = arith.constant 7.977240e-01 : f32
  %one = arith.constant 1.000000e+00 : f32
  %half = arith.constant 5.000000e-01 : f32
  %h = shardlin.linear %x, %w1, %b1 : (tensor<5x8xbf16>, !v1, tensor<10xbf16>) -> tensor<5x10xbf16>
  %e = tensor.empty() : tensor<5x10xbf16>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%h : tensor<5x10xbf16>) outs(%e : tensor<5x10xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %f = arith.extf %in : bf16 to f32
    %0 = math.fpowi %f, %c3 : f32, i32
    %1 = arith.mulf %0, %c0 : f32
    %2 = arith.addf %f, %1 : f32
    %3 = arith.mulf %2, %c1 : f32
    %4 = math.tanh %3 : f32
    %5 = arith.addf %4, %one : f32
    %6 = arith.mulf %5, %half : f32
    %7 = arith.mulf %f, %6 : f32
    %r = arith.truncf %7 : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<5x10xbf16>
  %y = shardlin.linear %g, %w2, %b2 : (tensor<5x10xbf16>, !v2, tensor<8xbf16>) -> tensor<5x8xbf16>
  return %y : tensor<5x8xbf16>
}

// An input read only through a widening to the stored type: one convert,
// then the chain in f32.
func.func @widen(%x: tensor<4x6xf16>) -> tensor<4x6xf32> {
  %0 = arith.extf %x : tensor<4x6xf16> to tensor<4x6xf32>
  %1 = arith.mulf %0, %0 : tensor<4x6xf32>
  return %1 : tensor<4x6xf32>
}
