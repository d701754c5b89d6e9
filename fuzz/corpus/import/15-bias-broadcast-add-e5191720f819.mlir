// Row-wise linear with its bias added by linalg.broadcast + linalg.add; x
// split on its features, replicated result.
shard.grid @grid(shape = 4)

func.func @bias_broadcast_add(%x: tensor<8x16xf32>, %w: tensor<16x12xf32>, %b: tensor<12xf32>) -> tensor<8x12xf32> {
  %rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %sk = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %sxk = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %x_s = shard.shard %x to %sxk : tensor<8x16xf32>
  %x_u = shard.shard %x_s to %sxk annotate_for_users : tensor<8x16xf32>
  %w_s = shard.shard %w to %sk : tensor<16x12xf32>
  %w_u = shard.shard %w_s to %sk annotate_for_users : tensor<16x12xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x12xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x12xf32>) -> tensor<8x12xf32>
  %mm = linalg.matmul ins(%x_u, %w_u : tensor<8x16xf32>, tensor<16x12xf32>) outs(%init : tensor<8x12xf32>) -> tensor<8x12xf32>
  %e2 = tensor.empty() : tensor<8x12xf32>
  %bb = linalg.broadcast ins(%b : tensor<12xf32>) outs(%e2 : tensor<8x12xf32>) dimensions = [0]
  %e3 = tensor.empty() : tensor<8x12xf32>
  %y = linalg.add ins(%mm, %bb : tensor<8x12xf32>, tensor<8x12xf32>) outs(%e3 : tensor<8x12xf32>) -> tensor<8x12xf32>
  %y_s = shard.shard %y to %rep : tensor<8x12xf32>
  %y_u = shard.shard %y_s to %rep annotate_for_users : tensor<8x12xf32>
  return %y_u : tensor<8x12xf32>
}
