shard.grid @grid(shape = 2x2)
func.func @mixed(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<8x16xf32>
  %z = arith.addf %xs, %y : tensor<8x16xf32>
  return %z : tensor<8x16xf32>
}
