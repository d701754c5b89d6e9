// Rank-local upstream ops on the plan executor (no --jit): a weight N x K
// transposed by linalg.transpose, a linalg.matmul on each rank's rows whose
// init is the bias broadcast by linalg.broadcast (a `fill` of a row
// vector, added after the product), for rank-local-ops.mlir. y = x w^T + b.
func.func @linear(%x: tensor<4x9xf32>, %w: tensor<6x9xf32>, %b: tensor<6xf32>) -> tensor<4x6xf32> {
  %et = tensor.empty() : tensor<9x6xf32>
  %wt = linalg.transpose ins(%w : tensor<6x9xf32>) outs(%et : tensor<9x6xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<4x6xf32>
  %bb = linalg.broadcast ins(%b : tensor<6xf32>) outs(%e : tensor<4x6xf32>) dimensions = [0]
  %y = linalg.matmul ins(%x, %wt : tensor<4x9xf32>, tensor<9x6xf32>) outs(%bb : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

// jit-upstream.mlir's @local_f64 (a zero-filled matmul, log1p(|.|), f64),
// which the plan executor now runs too; log1p as log(1 + x), which it runs.
func.func @local_f64(%a: tensor<3x5xf64>, %m: tensor<5x4xf64>) -> tensor<3x4xf64> {
  %z = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<3x4xf64>
  %f = linalg.fill ins(%z : f64) outs(%e : tensor<3x4xf64>) -> tensor<3x4xf64>
  %mm = linalg.matmul ins(%a, %m : tensor<3x5xf64>, tensor<5x4xf64>) outs(%f : tensor<3x4xf64>) -> tensor<3x4xf64>
  %abs = math.absf %mm : tensor<3x4xf64>
  %one = arith.constant dense<1.0> : tensor<3x4xf64>
  %p = arith.addf %abs, %one : tensor<3x4xf64>
  %l = math.log %p : tensor<3x4xf64>
  return %l : tensor<3x4xf64>
}

// A tensor of constants alone (a `fill` without operands): 1.5 + 1.5.
func.func @constants(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c = arith.constant dense<1.5> : tensor<2x3xf32>
  %0 = arith.addf %c, %c : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
