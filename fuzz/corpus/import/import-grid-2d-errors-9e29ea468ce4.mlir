shard.grid @grid(shape = 2x2)
func.func @gathered_batch(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %r = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<8x16xf32>
  %xr = shard.shard %xs to %r annotate_for_users : tensor<8x16xf32>
  return %xr : tensor<8x16xf32>
}
