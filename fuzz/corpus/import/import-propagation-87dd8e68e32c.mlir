shard.grid @grid(shape = 4)
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
// Megatron's MLP without sequence parallelism: the hidden features stay
// split between the linears (replicated -> features, features ->
// replicated); a linalg.generic on them with a vector broadcast along the
// features takes the rank's chunk of the vector; a scalar the body
// captures is carried over.
func.func @mlp_features(%x: tensor<8x16xf32>, %w1: tensor<16x32xf32>, %s: tensor<32xf32>, %w2: tensor<32x16xf32>) -> tensor<8x16xf32> {
  %sn = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %sk = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %w1s = shard.shard %w1 to %sn : tensor<16x32xf32>
  %w2s = shard.shard %w2 to %sk : tensor<32x16xf32>
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %h = linalg.matmul ins(%x, %w1s : tensor<8x16xf32>, tensor<16x32xf32>) outs(%i : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e2 = tensor.empty() : tensor<8x32xf32>
  %a = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h, %s : tensor<8x32xf32>, tensor<32xf32>) outs(%e2 : tensor<8x32xf32>) {
  ^bb0(%v: f32, %c: f32, %o: f32):
    %p = arith.mulf %v, %c : f32
    %q = arith.mulf %p, %half : f32
    linalg.yield %q : f32
  } -> tensor<8x32xf32>
  %e3 = tensor.empty() : tensor<8x16xf32>
  %i3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = linalg.matmul ins(%a, %w2s : tensor<8x32xf32>, tensor<32x16xf32>) outs(%i3 : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}
