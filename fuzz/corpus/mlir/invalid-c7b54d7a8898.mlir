func.func @all_gather_other_dim(%x: tensor<5x19xf32>) {
  // expected-error@+1 {{'shardlin.all_gather' op input dim 1 (19) and result dim 1 (18) must be equal}}
  %0 = shardlin.all_gather %x along <dim = 0, placements = [0, 1, 2, 3]> : tensor<5x19xf32> -> tensor<20x18xf32>
  return
}
