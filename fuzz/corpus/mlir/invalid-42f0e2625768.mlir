func.func @reduce_scatter_i32(%p: tensor<20x11xi32>) {
  // expected-error@+1 {{'shardlin.reduce_scatter' op input element type 'i32' is not supported (expected f16, bf16, f32 or f64)}}
  %0 = shardlin.reduce_scatter %p along <dim = 0, placements = [0, 1, 2, 3]> : tensor<20x11xi32> -> tensor<5x11xi32>
  return
}
