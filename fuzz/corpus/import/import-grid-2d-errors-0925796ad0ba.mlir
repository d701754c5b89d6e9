shard.grid @grid(shape = 2x2)
func.func @uneven_replicas(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %s = shard.sharding @grid split_axes = [[0, 1]] sharded_dims_offsets = [0, 2, 5, 6, 8] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<8x16xf32>
  return %xs : tensor<8x16xf32>
}
