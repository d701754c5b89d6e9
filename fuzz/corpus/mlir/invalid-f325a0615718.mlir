func.func @gemm_contraction(%a: tensor<4x8xf32>, %b: tensor<7x3xf32>) {
  // expected-error@+1 {{'shardlin.gemm' op contraction dims differ: lhs has 8, rhs has 7}}
  %0 = shardlin.gemm %a, %b : (tensor<4x8xf32>, tensor<7x3xf32>) -> tensor<4x3xf32>
  return
}
