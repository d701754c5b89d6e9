func.func @reduce_scatter_static_uneven(%p: tensor<19x11xf32>) {
  // expected-error@+1 {{'shardlin.reduce_scatter' op result dim 0 is 5 but the local chunk of 19 over 4 ranks is ? (chunks are uneven)}}
  %0 = shardlin.reduce_scatter %p along <dim = 0, placements = [0, 1, 2, 3]> : tensor<19x11xf32> -> tensor<5x11xf32>
  return
}
