// SwiGLU block: replicated x, gate and up weights split on N, SiLU(gate) *
// up on the split features (arith and math ops on tensors), the down weight
// split on K, replicated result.
shard.grid @grid(shape = 2)

func.func @swiglu_replicated(%x: tensor<4x16xf32>, %wg: tensor<16x24xf32>, %wu: tensor<16x24xf32>, %wd: tensor<24x16xf32>) -> tensor<4x16xf32> {
  %rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %sn = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %sk = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %x_s = shard.shard %x to %rep : tensor<4x16xf32>
  %wg_s = shard.shard %wg to %sn : tensor<16x24xf32>
  %wu_s = shard.shard %wu to %sn : tensor<16x24xf32>
  %wd_s = shard.shard %wd to %sk : tensor<24x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x24xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<4x24xf32>) -> tensor<4x24xf32>
  %g = linalg.matmul ins(%x_s, %wg_s : tensor<4x16xf32>, tensor<16x24xf32>) outs(%i : tensor<4x24xf32>) -> tensor<4x24xf32>
  %u = linalg.matmul ins(%x_s, %wu_s : tensor<4x16xf32>, tensor<16x24xf32>) outs(%i : tensor<4x24xf32>) -> tensor<4x24xf32>
  %one = arith.constant dense<1.0> : tensor<4x24xf32>
  %ng = arith.negf %g : tensor<4x24xf32>
  %ex = math.exp %ng : tensor<4x24xf32>
  %den = arith.addf %one, %ex : tensor<4x24xf32>
  %silu = arith.divf %g, %den : tensor<4x24xf32>
  %h = arith.mulf %silu, %u : tensor<4x24xf32>
  %e2 = tensor.empty() : tensor<4x16xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%h, %wd_s : tensor<4x24xf32>, tensor<24x16xf32>) outs(%i2 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y_s = shard.shard %y to %rep : tensor<4x16xf32>
  return %y_s : tensor<4x16xf32>
}
