func.func @gemm_result_shape_transposed(%a: tensor<8x4xf32>, %b: tensor<3x8xf32>) {
  // expected-error@+1 {{'shardlin.gemm' op result shape [3, 4] does not match [4, 3]}}
  %0 = shardlin.gemm %a, %b transpose_lhs transpose_rhs : (tensor<8x4xf32>, tensor<3x8xf32>) -> tensor<3x4xf32>
  return
}
