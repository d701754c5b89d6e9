// Col-wise linear with its bias added by a broadcast linalg.generic;
// replicated x, bias and result.
shard.grid @grid(shape = 4)

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @bias_generic(%x: tensor<8x16xf32>, %w: tensor<16x12xf32>, %b: tensor<12xf32>) -> tensor<8x12xf32> {
  %rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %sn = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %x_s = shard.shard %x to %rep : tensor<8x16xf32>
  %x_u = shard.shard %x_s to %rep annotate_for_users : tensor<8x16xf32>
  %w_s = shard.shard %w to %sn : tensor<16x12xf32>
  %w_u = shard.shard %w_s to %sn annotate_for_users : tensor<16x12xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x12xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x12xf32>) -> tensor<8x12xf32>
  %mm = linalg.matmul ins(%x_u, %w_u : tensor<8x16xf32>, tensor<16x12xf32>) outs(%init : tensor<8x12xf32>) -> tensor<8x12xf32>
  %e2 = tensor.empty() : tensor<8x12xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<8x12xf32>, tensor<12xf32>) outs(%e2 : tensor<8x12xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<8x12xf32>
  %y_s = shard.shard %y to %sn : tensor<8x12xf32>
  %y_u = shard.shard %y_s to %rep annotate_for_users : tensor<8x12xf32>
  return %y_u : tensor<8x12xf32>
}
