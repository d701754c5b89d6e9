// Megatron MLP without sequence parallelism: replicated x, the first
// weight split on N, GELU (tanh form) on the split hidden features, the
// second weight split on K, replicated result (one all-reduce).
shard.grid @grid(shape = 4)

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @mlp_replicated_gelu(%x: tensor<8x16xf32>, %w1: tensor<16x32xf32>, %w2: tensor<32x16xf32>) -> tensor<8x16xf32> {
  %rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %sn = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %sk = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %x_s = shard.shard %x to %rep : tensor<8x16xf32>
  %x_u = shard.shard %x_s to %rep annotate_for_users : tensor<8x16xf32>
  %w1_s = shard.shard %w1 to %sn : tensor<16x32xf32>
  %w1_u = shard.shard %w1_s to %sn annotate_for_users : tensor<16x32xf32>
  %w2_s = shard.shard %w2 to %sk : tensor<32x16xf32>
  %w2_u = shard.shard %w2_s to %sk annotate_for_users : tensor<32x16xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8x32xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %h = linalg.matmul ins(%x_u, %w1_u : tensor<8x16xf32>, tensor<16x32xf32>) outs(%i1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %h_s = shard.shard %h to %sn : tensor<8x32xf32>
  %h_u = shard.shard %h_s to %sn annotate_for_users : tensor<8x32xf32>
  %e2 = tensor.empty() : tensor<8x32xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h_u : tensor<8x32xf32>) outs(%e2 : tensor<8x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c05 = arith.constant 0.5 : f32
    %c1 = arith.constant 1.0 : f32
    %k = arith.constant 0.797884583 : f32
    %c = arith.constant 0.044715 : f32
    %a2 = arith.mulf %a, %a : f32
    %a3 = arith.mulf %a2, %a : f32
    %t = arith.mulf %c, %a3 : f32
    %u = arith.addf %a, %t : f32
    %v = arith.mulf %k, %u : f32
    %th = math.tanh %v : f32
    %p = arith.addf %c1, %th : f32
    %q = arith.mulf %a, %p : f32
    %r = arith.mulf %c05, %q : f32
    linalg.yield %r : f32
  } -> tensor<8x32xf32>
  %g_s = shard.shard %g to %sn : tensor<8x32xf32>
  %g_u = shard.shard %g_s to %sn annotate_for_users : tensor<8x32xf32>
  %e3 = tensor.empty() : tensor<8x16xf32>
  %i3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = linalg.matmul ins(%g_u, %w2_u : tensor<8x32xf32>, tensor<32x16xf32>) outs(%i3 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y_s = shard.shard %y to %rep : tensor<8x16xf32>
  %y_u = shard.shard %y_s to %rep annotate_for_users : tensor<8x16xf32>
  return %y_u : tensor<8x16xf32>
}
