// Sequence-parallel SwiGLU: gate and up col-wise, down row-wise; the hidden values' sharding stated nowhere. Generated for test/Dialect/Shardlin/import-placement.mlir:
// 10 rows over 4 ranks at offsets [0, 3, 6, 9, 10], model dim 40, hidden 38
// at offsets [0, 10, 20, 29, 38] (uneven: 4 does not divide 38).
shard.grid @tp(shape = 4)
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @swiglu(%x: tensor<10x40xf32>, %wg: tensor<38x40xf32>, %wu: tensor<38x40xf32>, %wd: tensor<40x38xf32>) -> tensor<10x40xf32> {
  %rows = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 3, 6, 9, 10] : !shard.sharding
  %n = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 10, 20, 29, 38] : !shard.sharding
  %k = shard.sharding @tp split_axes = [[], [0]] sharded_dims_offsets = [0, 10, 20, 29, 38] : !shard.sharding
  %feat = shard.sharding @tp split_axes = [[], [0]] sharded_dims_offsets = [0, 10, 20, 29, 38] : !shard.sharding
  %repl = shard.sharding @tp split_axes = [[]] : !shard.sharding
  %zero = arith.constant 0.0 : f32
  %zt = arith.constant dense<0.0> : tensor<10x38xf32>
  %x_s = shard.shard %x to %rows : tensor<10x40xf32>
  %wg_s = shard.shard %wg to %n : tensor<38x40xf32>
  %wu_s = shard.shard %wu to %n : tensor<38x40xf32>
  %wd_s = shard.shard %wd to %k : tensor<40x38xf32>
  %g_e = tensor.empty() : tensor<10x38xf32>
  %g_i = linalg.fill ins(%zero : f32) outs(%g_e : tensor<10x38xf32>) -> tensor<10x38xf32>
  %g = linalg.matmul indexing_maps = [#lhs, #rhs, #out] ins(%x_s, %wg_s : tensor<10x40xf32>, tensor<38x40xf32>) outs(%g_i : tensor<10x38xf32>) -> tensor<10x38xf32>
  %u_e = tensor.empty() : tensor<10x38xf32>
  %u_i = linalg.fill ins(%zero : f32) outs(%u_e : tensor<10x38xf32>) -> tensor<10x38xf32>
  %u = linalg.matmul indexing_maps = [#lhs, #rhs, #out] ins(%x_s, %wu_s : tensor<10x40xf32>, tensor<38x40xf32>) outs(%u_i : tensor<10x38xf32>) -> tensor<10x38xf32>
  %ng = arith.negf %g : tensor<10x38xf32>
  %eg = math.exp %ng : tensor<10x38xf32>
  %one = arith.constant dense<1.0> : tensor<10x38xf32>
  %den = arith.addf %one, %eg : tensor<10x38xf32>
  %sg = arith.divf %g, %den : tensor<10x38xf32>
  %p = arith.mulf %sg, %u : tensor<10x38xf32>
  %y_e = tensor.empty() : tensor<10x40xf32>
  %y_i = linalg.fill ins(%zero : f32) outs(%y_e : tensor<10x40xf32>) -> tensor<10x40xf32>
  %y = linalg.matmul indexing_maps = [#lhs, #rhs, #out] ins(%p, %wd_s : tensor<10x38xf32>, tensor<40x38xf32>) outs(%y_i : tensor<10x40xf32>) -> tensor<10x40xf32>
  %y_s = shard.shard %y to %rows : tensor<10x40xf32>
  return %y_s : tensor<10x40xf32>
}
