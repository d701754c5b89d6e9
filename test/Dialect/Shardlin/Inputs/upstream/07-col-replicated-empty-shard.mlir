// Col-wise linear, N = 10 over 4 with an empty shard: offsets [0, 4, 4, 8, 10].
shard.grid @grid(shape = 4)

func.func @col_replicated_empty_shard(%x: tensor<8x16xf32>, %w: tensor<16x10xf32>) -> tensor<8x10xf32> {
  %sx = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %sw = shard.sharding @grid split_axes = [[], [0]] sharded_dims_offsets = [0, 4, 4, 8, 10] : !shard.sharding
  %sy = shard.sharding @grid split_axes = [[], [0]] sharded_dims_offsets = [0, 4, 4, 8, 10] : !shard.sharding
  %sr = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %x_s = shard.shard %x to %sx : tensor<8x16xf32>
  %x_u = shard.shard %x_s to %sx annotate_for_users : tensor<8x16xf32>
  %w_s = shard.shard %w to %sw : tensor<16x10xf32>
  %w_u = shard.shard %w_s to %sw annotate_for_users : tensor<16x10xf32>
  %zero_init = arith.constant 0.0 : f32
  %empty_init = tensor.empty() : tensor<8x10xf32>
  %init = linalg.fill ins(%zero_init : f32) outs(%empty_init : tensor<8x10xf32>) -> tensor<8x10xf32>
  %init_s = shard.shard %init to %sy : tensor<8x10xf32>
  %init_u = shard.shard %init_s to %sy annotate_for_users : tensor<8x10xf32>
  %y = linalg.matmul ins(%x_u, %w_u : tensor<8x16xf32>, tensor<16x10xf32>) outs(%init_u : tensor<8x10xf32>) -> tensor<8x10xf32>
  %y_s = shard.shard %y to %sy : tensor<8x10xf32>
  %y_u = shard.shard %y_s to %sr annotate_for_users : tensor<8x10xf32>
  return %y_u : tensor<8x10xf32>
}
