// Sequence-parallel MLP (ReLU), weights N x K; the hidden sharding stated at the row-wise linear's input only (annotate_for_users), and the col-wise linear's result also returned: it keeps its rows, and the annotation reshards. Generated for test/Dialect/Shardlin/import-placement.mlir:
// 10 rows over 4 ranks at offsets [0, 3, 6, 9, 10], model dim 40, hidden 38
// at offsets [0, 10, 20, 29, 38] (uneven: 4 does not divide 38).
shard.grid @tp(shape = 4)
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @mlp(%x: tensor<10x40xf32>, %w1: tensor<38x40xf32>, %w2: tensor<40x38xf32>) -> (tensor<10x40xf32>, tensor<10x38xf32>) {
  %rows = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 3, 6, 9, 10] : !shard.sharding
  %n = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 10, 20, 29, 38] : !shard.sharding
  %k = shard.sharding @tp split_axes = [[], [0]] sharded_dims_offsets = [0, 10, 20, 29, 38] : !shard.sharding
  %feat = shard.sharding @tp split_axes = [[], [0]] sharded_dims_offsets = [0, 10, 20, 29, 38] : !shard.sharding
  %repl = shard.sharding @tp split_axes = [[]] : !shard.sharding
  %x_s = shard.shard %x to %rows : tensor<10x40xf32>
  %w1_s = shard.shard %w1 to %n : tensor<38x40xf32>
  %w2_s = shard.shard %w2 to %k : tensor<40x38xf32>
  %zero = arith.constant 0.0 : f32
  %zt = arith.constant dense<0.0> : tensor<10x38xf32>
  %h_e = tensor.empty() : tensor<10x38xf32>
  %h_i = linalg.fill ins(%zero : f32) outs(%h_e : tensor<10x38xf32>) -> tensor<10x38xf32>
  %h = linalg.matmul indexing_maps = [#lhs, #rhs, #out] ins(%x_s, %w1_s : tensor<10x40xf32>, tensor<38x40xf32>) outs(%h_i : tensor<10x38xf32>) -> tensor<10x38xf32>
  %a = arith.maximumf %h, %zt : tensor<10x38xf32>
  %a_u = shard.shard %a to %feat annotate_for_users : tensor<10x38xf32>
  %y_e = tensor.empty() : tensor<10x40xf32>
  %y_i = linalg.fill ins(%zero : f32) outs(%y_e : tensor<10x40xf32>) -> tensor<10x40xf32>
  %y = linalg.matmul indexing_maps = [#lhs, #rhs, #out] ins(%a_u, %w2_s : tensor<10x38xf32>, tensor<40x38xf32>) outs(%y_i : tensor<10x40xf32>) -> tensor<10x40xf32>
  %y_s = shard.shard %y to %rows : tensor<10x40xf32>
  return %y_s, %h : tensor<10x40xf32>, tensor<10x38xf32>
}
