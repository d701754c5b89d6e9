shard.grid @grid(shape = 2)
// An init that is neither zero nor a broadcast bias: the matmul adds it,
// so the linear is followed by that addition, in the result's layout (each
// rank its features of it).
func.func @accumulate(%x: tensor<4x8xf32>, %w: tensor<8x6xf32>, %c: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %sn = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %ws = shard.shard %w to %sn : tensor<8x6xf32>
  %y = linalg.matmul ins(%x, %ws : tensor<4x8xf32>, tensor<8x6xf32>) outs(%c : tensor<4x6xf32>) -> tensor<4x6xf32>
  %ys = shard.shard %y to %sn : tensor<4x6xf32>
  return %ys : tensor<4x6xf32>
}
