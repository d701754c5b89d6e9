shard.grid @grid(shape = 2x2)
func.func @split_inside(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %y = math.exp %x : tensor<8x16xf32>
  %ys = shard.shard %y to %s : tensor<8x16xf32>
  return %ys : tensor<8x16xf32>
}
