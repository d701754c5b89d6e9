func.func @all_to_all_concat_dim_out_of_range(%x: tensor<5x16xf32>) {
  // expected-error@+1 {{'shardlin.all_to_all' op concat chunk dim 3 is out of range for rank 2}}
  %0 = shardlin.all_to_all %x split <dim = 1, placements = [0, 1]> concat <dim = 3, placements = [0, 1]> : tensor<5x16xf32> -> tensor<10x8xf32>
  return
}
