shard.grid @grid(shape = 4)
func.func @dynamic_dim(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<?x16xf32>
  return %xs : tensor<?x16xf32>
}
