// Megatron MLP under sequence parallelism: sequence-sharded x, the hidden
// values unannotated, GELU (tanh form), a residual add of x, a
// sequence-sharded result. shardlin fuses it: one all-gather and one
// reduce-scatter.
shard.grid @grid(shape = 4)

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @mlp_sequence_gelu_residual(%x: tensor<8x16xf32>, %w1: tensor<16x32xf32>, %w2: tensor<32x16xf32>) -> tensor<8x16xf32> {
  %rows = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %sn = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %sk = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %x_s = shard.shard %x to %rows : tensor<8x16xf32>
  %w1_s = shard.shard %w1 to %sn : tensor<16x32xf32>
  %w2_s = shard.shard %w2 to %sk : tensor<32x16xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8x32xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %h = linalg.matmul ins(%x_s, %w1_s : tensor<8x16xf32>, tensor<16x32xf32>) outs(%i1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e2 = tensor.empty() : tensor<8x32xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<8x32xf32>) outs(%e2 : tensor<8x32xf32>) {
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
  %e3 = tensor.empty() : tensor<8x16xf32>
  %i3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = linalg.matmul ins(%g, %w2_s : tensor<8x32xf32>, tensor<32x16xf32>) outs(%i3 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %z = arith.addf %y, %x_s : tensor<8x16xf32>
  %z_s = shard.shard %z to %rows : tensor<8x16xf32>
  return %z_s : tensor<8x16xf32>
}
