shard.grid @grid(shape = 4)
// A sequence-sharded x (10 rows at offsets [0, 3, 6, 9, 10]): the rank's
// rows (`?` of them), rows -> rows; the result's rows are the same split.
func.func @sequence(%x: tensor<10x16xf32>, %w: tensor<16x12xf32>) -> tensor<10x12xf32> {
  %rows = shard.sharding @grid split_axes = [[0]] sharded_dims_offsets = [0, 3, 6, 9, 10] : !shard.sharding
  %sk = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %rows : tensor<10x16xf32>
  %ws = shard.shard %w to %sk : tensor<16x12xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<10x12xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<10x12xf32>) -> tensor<10x12xf32>
  %y = linalg.matmul ins(%xs, %ws : tensor<10x16xf32>, tensor<16x12xf32>) outs(%i : tensor<10x12xf32>) -> tensor<10x12xf32>
  return %y : tensor<10x12xf32>
}
