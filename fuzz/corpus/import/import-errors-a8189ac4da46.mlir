shard.grid @grid(shape = 2)
func.func @dynamic_offsets(%x: tensor<8x16xf32>, %o: i64) -> tensor<8x16xf32> {
  %s = shard.sharding @grid split_axes = [[0]] sharded_dims_offsets = [0, %o, 8] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<8x16xf32>
  return %xs : tensor<8x16xf32>
}
