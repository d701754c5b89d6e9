func.func @all_gather_dim_out_of_range(%x: tensor<5x19xf32>) {
  // expected-error@+1 {{'shardlin.all_gather' op along chunk dim 2 is out of range for rank 2}}
  %0 = shardlin.all_gather %x along <dim = 2, placements = [0, 1]> : tensor<5x19xf32> -> tensor<5x19xf32>
  return
}
