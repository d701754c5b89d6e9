shard.grid @grid(shape = 2)
func.func @expand_boundaries(%x: tensor<6x8xf32>) -> tensor<2x3x8xf32> {
  %s = shard.sharding @grid split_axes = [[0]] sharded_dims_offsets = [0, 4, 6] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<6x8xf32>
  %e = tensor.expand_shape %xs [[0, 1], [2]] output_shape [2, 3, 8] : tensor<6x8xf32> into tensor<2x3x8xf32>
  return %e : tensor<2x3x8xf32>
}
