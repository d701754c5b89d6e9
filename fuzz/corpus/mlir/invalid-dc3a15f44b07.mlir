func.func @local_chunk_wrong_size(%b: tensor<12xf32>) {
  // expected-error@+1 {{'shardlin.local_chunk' op result dim 0 is 4 but the local chunk of 12 over 2 ranks is 6}}
  %0 = shardlin.local_chunk %b along <dim = 0, placements = [1, 0]> : tensor<12xf32> -> tensor<4xf32>
  return
}
