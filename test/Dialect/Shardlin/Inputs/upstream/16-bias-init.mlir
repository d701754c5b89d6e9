// Col-wise linear, N x K weight (transposing indexing_maps), its bias the
// matmul's init (a linalg.broadcast); replicated x and result.
shard.grid @grid(shape = 4)

func.func @bias_init(%x: tensor<8x16xf32>, %w: tensor<12x16xf32>, %b: tensor<12xf32>) -> tensor<8x12xf32> {
  %rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %sn = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %syn = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %x_s = shard.shard %x to %rep : tensor<8x16xf32>
  %x_u = shard.shard %x_s to %rep annotate_for_users : tensor<8x16xf32>
  %w_s = shard.shard %w to %sn : tensor<12x16xf32>
  %w_u = shard.shard %w_s to %sn annotate_for_users : tensor<12x16xf32>
  %e = tensor.empty() : tensor<8x12xf32>
  %bb = linalg.broadcast ins(%b : tensor<12xf32>) outs(%e : tensor<8x12xf32>) dimensions = [0]
  %y = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%x_u, %w_u : tensor<8x16xf32>, tensor<12x16xf32>) outs(%bb : tensor<8x12xf32>) -> tensor<8x12xf32>
  %y_s = shard.shard %y to %syn : tensor<8x12xf32>
  %y_u = shard.shard %y_s to %rep annotate_for_users : tensor<8x12xf32>
  return %y_u : tensor<8x12xf32>
}
