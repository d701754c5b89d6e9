func.func @gemm_i32(%a: tensor<4x8xi32>, %b: tensor<8x3xi32>) {
  // expected-error@+1 {{'shardlin.gemm' op lhs element type 'i32' is not supported (expected f16, bf16, f32 or f64)}}
  %0 = shardlin.gemm %a, %b : (tensor<4x8xi32>, tensor<8x3xi32>) -> tensor<4x3xi32>
  return
}
