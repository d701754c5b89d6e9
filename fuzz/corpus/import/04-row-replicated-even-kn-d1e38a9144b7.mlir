// Row-wise linear, K x N weight split on K (16 over 4), x split on its features, replicated result (all-reduce).
shard.grid @grid(shape = 4)

func.func @row_replicated_even_kn(%x: tensor<8x16xf32>, %w: tensor<16x12xf32>) -> tensor<8x12xf32> {
  %sx = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %sw = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %sy = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %sr = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %x_s = shard.shard %x to %sx : tensor<8x16xf32>
  %x_u = shard.shard %x_s to %sx annotate_for_users : tensor<8x16xf32>
  %w_s = shard.shard %w to %sw : tensor<16x12xf32>
  %w_u = shard.shard %w_s to %sw annotate_for_users : tensor<16x12xf32>
  %zero_init = arith.constant 0.0 : f32
  %empty_init = tensor.empty() : tensor<8x12xf32>
  %init = linalg.fill ins(%zero_init : f32) outs(%empty_init : tensor<8x12xf32>) -> tensor<8x12xf32>
  %init_s = shard.shard %init to %sy : tensor<8x12xf32>
  %init_u = shard.shard %init_s to %sy annotate_for_users : tensor<8x12xf32>
  %y = linalg.matmul ins(%x_u, %w_u : tensor<8x16xf32>, tensor<16x12xf32>) outs(%init_u : tensor<8x12xf32>) -> tensor<8x12xf32>
  %y_s = shard.shard %y to %sy : tensor<8x12xf32>
  %y_u = shard.shard %y_s to %sr annotate_for_users : tensor<8x12xf32>
  return %y_u : tensor<8x12xf32>
}
