shard.grid @grid(shape = 4)
func.func @offsets_count(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // The shard dialect's own verifier reports this one.
  %s = shard.sharding @grid split_axes = [[0]] sharded_dims_offsets = [0, 4, 8] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<8x16xf32>
  return %xs : tensor<8x16xf32>
}
