shard.grid @grid(shape = 4)
// annotate_for_users reshards: rows to replicated is an all_gather, back
// to rows a local_chunk; an unevenly split dim (10 rows) has `?` rows per
// rank.
func.func @reshard(%x: tensor<10x16xf32>) -> tensor<10x16xf32> {
  %rows = shard.sharding @grid split_axes = [[0]] sharded_dims_offsets = [0, 3, 6, 9, 10] : !shard.sharding
  %rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %cols = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %rows : tensor<10x16xf32>
  %xr = shard.shard %xs to %rep annotate_for_users : tensor<10x16xf32>
  %e = math.exp %xr : tensor<10x16xf32>
  %ec = shard.shard %e to %cols annotate_for_users : tensor<10x16xf32>
  return %ec : tensor<10x16xf32>
}
