// expected-error@+1 {{chunk dim 2 is out of range for the rank-2 tensor 'tensor<11x19xf32>'}}
func.func @sharded_dim_out_of_range(%w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 2, placements = [0, 1]>>) {
  return
}
