shard.grid @grid(shape = 2)
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
// The bias as the matmul's init: a linalg.broadcast, or a linalg.generic
// that copies the broadcast vector.
func.func @bias_init_broadcast(%x: tensor<4x8xf32>, %w: tensor<8x6xf32>, %b: tensor<6xf32>) -> tensor<4x6xf32> {
  %sn = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %ws = shard.shard %w to %sn : tensor<8x6xf32>
  %e = tensor.empty() : tensor<4x6xf32>
  %bb = linalg.broadcast ins(%b : tensor<6xf32>) outs(%e : tensor<4x6xf32>) dimensions = [0]
  %y = linalg.matmul ins(%x, %ws : tensor<4x8xf32>, tensor<8x6xf32>) outs(%bb : tensor<4x6xf32>) -> tensor<4x6xf32>
  %ys = shard.shard %y to %sn : tensor<4x6xf32>
  return %ys : tensor<4x6xf32>
}
func.func @bias_init_generic(%x: tensor<4x8xf32>, %w: tensor<8x6xf32>, %b: tensor<6xf32>) -> tensor<4x6xf32> {
  %sn = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %ws = shard.shard %w to %sn : tensor<8x6xf32>
  %e = tensor.empty() : tensor<4x6xf32>
  %bb = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<6xf32>) outs(%e : tensor<4x6xf32>) {
  ^bb0(%c: f32, %o: f32):
    linalg.yield %c : f32
  } -> tensor<4x6xf32>
  %y = linalg.matmul ins(%x, %ws : tensor<4x8xf32>, tensor<8x6xf32>) outs(%bb : tensor<4x6xf32>) -> tensor<4x6xf32>
  %ys = shard.shard %y to %sn : tensor<4x6xf32>
  return %ys : tensor<4x6xf32>
}
