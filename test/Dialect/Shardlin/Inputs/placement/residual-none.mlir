// A stack of two residual MLP blocks on the rank's rows; the hidden values' sharding stated nowhere. Generated for test/Dialect/Shardlin/import-placement.mlir:
// 10 rows over 4 ranks at offsets [0, 3, 6, 9, 10], model dim 40, hidden 38
// at offsets [0, 10, 20, 29, 38] (uneven: 4 does not divide 38).
shard.grid @tp(shape = 4)
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @residual(%x: tensor<10x40xf32>, %w1: tensor<38x40xf32>, %w2: tensor<40x38xf32>, %w3: tensor<38x40xf32>, %w4: tensor<40x38xf32>) -> tensor<10x40xf32> {
  %rows = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 3, 6, 9, 10] : !shard.sharding
  %n = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 10, 20, 29, 38] : !shard.sharding
  %k = shard.sharding @tp split_axes = [[], [0]] sharded_dims_offsets = [0, 10, 20, 29, 38] : !shard.sharding
  %feat = shard.sharding @tp split_axes = [[], [0]] sharded_dims_offsets = [0, 10, 20, 29, 38] : !shard.sharding
  %repl = shard.sharding @tp split_axes = [[]] : !shard.sharding
  %zero = arith.constant 0.0 : f32
  %zt = arith.constant dense<0.0> : tensor<10x38xf32>
  %x_s = shard.shard %x to %rows : tensor<10x40xf32>
  %w1_s = shard.shard %w1 to %n : tensor<38x40xf32>
  %w2_s = shard.shard %w2 to %k : tensor<40x38xf32>
  %w3_s = shard.shard %w3 to %n : tensor<38x40xf32>
  %w4_s = shard.shard %w4 to %k : tensor<40x38xf32>
  %h1_e = tensor.empty() : tensor<10x38xf32>
  %h1_i = linalg.fill ins(%zero : f32) outs(%h1_e : tensor<10x38xf32>) -> tensor<10x38xf32>
  %h1 = linalg.matmul indexing_maps = [#lhs, #rhs, #out] ins(%x_s, %w1_s : tensor<10x40xf32>, tensor<38x40xf32>) outs(%h1_i : tensor<10x38xf32>) -> tensor<10x38xf32>
  %a1 = arith.maximumf %h1, %zt : tensor<10x38xf32>
  %y1_e = tensor.empty() : tensor<10x40xf32>
  %y1_i = linalg.fill ins(%zero : f32) outs(%y1_e : tensor<10x40xf32>) -> tensor<10x40xf32>
  %y1 = linalg.matmul indexing_maps = [#lhs, #rhs, #out] ins(%a1, %w2_s : tensor<10x38xf32>, tensor<40x38xf32>) outs(%y1_i : tensor<10x40xf32>) -> tensor<10x40xf32>
  %z1 = arith.addf %x_s, %y1 : tensor<10x40xf32>
  %h2_e = tensor.empty() : tensor<10x38xf32>
  %h2_i = linalg.fill ins(%zero : f32) outs(%h2_e : tensor<10x38xf32>) -> tensor<10x38xf32>
  %h2 = linalg.matmul indexing_maps = [#lhs, #rhs, #out] ins(%z1, %w3_s : tensor<10x40xf32>, tensor<38x40xf32>) outs(%h2_i : tensor<10x38xf32>) -> tensor<10x38xf32>
  %a2 = arith.maximumf %h2, %zt : tensor<10x38xf32>
  %y2_e = tensor.empty() : tensor<10x40xf32>
  %y2_i = linalg.fill ins(%zero : f32) outs(%y2_e : tensor<10x40xf32>) -> tensor<10x40xf32>
  %y2 = linalg.matmul indexing_maps = [#lhs, #rhs, #out] ins(%a2, %w4_s : tensor<10x38xf32>, tensor<40x38xf32>) outs(%y2_i : tensor<10x40xf32>) -> tensor<10x40xf32>
  %z2 = arith.addf %z1, %y2 : tensor<10x40xf32>
  %r = shard.shard %z2 to %rows : tensor<10x40xf32>
  return %r : tensor<10x40xf32>
}
