shard.grid @grid(shape = 2)
func.func @collapse_inner(%x: tensor<2x4x8xf32>) -> tensor<8x8xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<2x4x8xf32>
  %c = tensor.collapse_shape %xs [[0, 1], [2]] : tensor<2x4x8xf32> into tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}
