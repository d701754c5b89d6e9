shard.grid @grid(shape = 4)
func.func @offsets_end(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %s = shard.sharding @grid split_axes = [[0]] sharded_dims_offsets = [0, 2, 4, 6, 7] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<8x16xf32>
  return %xs : tensor<8x16xf32>
}
