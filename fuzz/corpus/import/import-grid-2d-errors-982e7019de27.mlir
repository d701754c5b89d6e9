#nk = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
shard.grid @grid(shape = 2x2)
func.func @weight_over_replicas(%x: tensor<8x16xf32>, %w: tensor<8x16xf32>) -> tensor<8x8xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %ws = shard.shard %w to %s : tensor<8x16xf32>
  %e = tensor.empty() : tensor<8x8xf32>
  %mm = linalg.matmul indexing_maps = #nk ins(%x, %ws : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %mm : tensor<8x8xf32>
}
