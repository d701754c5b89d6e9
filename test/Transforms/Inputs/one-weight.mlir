// One 16x16 weight for externalize-parameters-file-errors.test.
func.func @main(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %w = arith.constant dense<0.25> : tensor<16x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.matmul ins(%x, %w : tensor<4x16xf32>, tensor<16x16xf32>) outs(%i : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %m : tensor<4x16xf32>
}
