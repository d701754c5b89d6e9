func.func @all_to_all_split_wrong_size(%x: tensor<5x16xf32>) {
  // expected-error@+1 {{'shardlin.all_to_all' op result dim 1 is 8 but the local chunk of 16 over 4 ranks is 4}}
  %0 = shardlin.all_to_all %x split <dim = 1, placements = [2, 3, 0, 1]> concat <dim = 0, placements = [0, 1, 2, 3]> : tensor<5x16xf32> -> tensor<20x8xf32>
  return
}
