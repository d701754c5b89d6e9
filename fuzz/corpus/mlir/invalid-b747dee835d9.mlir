func.func @local_chunk_element_type(%b: tensor<12xf32>) {
  // expected-error@+1 {{'shardlin.local_chunk' op failed to verify that all of {source, result} have same element type}}
  %0 = shardlin.local_chunk %b along <dim = 0, placements = [1, 0]> : tensor<12xf32> -> tensor<6xf16>
  return
}
