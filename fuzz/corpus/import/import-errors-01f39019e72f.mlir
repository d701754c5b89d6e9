shard.grid @grid(shape = 4)
func.func @not_divisible(%x: tensor<8x10xf32>) -> tensor<8x10xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<8x10xf32>
  return %xs : tensor<8x10xf32>
}
