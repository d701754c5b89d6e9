shard.grid @grid(shape = 2)
func.func @mixed_matmul(%x: tensor<4x8xbf16>, %w: tensor<8x6xbf16>) -> tensor<4x6xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %ws = shard.shard %w to %s : tensor<8x6xbf16>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %y = linalg.matmul ins(%x, %ws : tensor<4x8xbf16>, tensor<8x6xbf16>) outs(%i : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}
