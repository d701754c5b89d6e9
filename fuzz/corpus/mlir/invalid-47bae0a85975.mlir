func.func @local_shard_wrong_size(%w: !shardlin.sharded<tensor<11x16xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>) {
  // expected-error@+1 {{'shardlin.local_shard' op result type 'tensor<11x?xf32>' does not match the local chunk type 'tensor<11x4xf32>'}}
  %a = shardlin.local_shard %w : !shardlin.sharded<tensor<11x16xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>> -> tensor<11x?xf32>
  return
}
