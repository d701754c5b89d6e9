shard.grid @grid(shape = 4)
func.func @elementwise_conflict(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %rows = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %cols = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %rows : tensor<8x16xf32>
  %ys = shard.shard %y to %cols : tensor<8x16xf32>
  %z = arith.addf %xs, %ys : tensor<8x16xf32>
  return %z : tensor<8x16xf32>
}
