func.func @all_to_all_dynamic_concat(%q: tensor<12x?xf32>) {
  // expected-error@+1 {{'shardlin.all_to_all' op result dim 1 must be static (it is split by #shardlin.chunk<dim = 1, placements = [1, 0]>)}}
  %0 = shardlin.all_to_all %q split <dim = 0, placements = [0, 1]> concat <dim = 1, placements = [1, 0]> : tensor<12x?xf32> -> tensor<6x?xf32>
  return
}
