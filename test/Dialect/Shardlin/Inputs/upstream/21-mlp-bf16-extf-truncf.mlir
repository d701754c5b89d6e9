// bf16 MLP under sequence parallelism with torch-mlir's mixed-precision
// GELU: the hidden values widened to f32 (arith.extf), GELU (erf form) in
// f32, rounded back (arith.truncf); sequence-sharded x and result.
shard.grid @grid(shape = 2)

func.func @mlp_bf16_extf_truncf(%x: tensor<4x16xbf16>, %w1: tensor<16x32xbf16>, %w2: tensor<32x16xbf16>) -> tensor<4x16xbf16> {
  %rows = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %sn = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %sk = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %x_s = shard.shard %x to %rows : tensor<4x16xbf16>
  %w1_s = shard.shard %w1 to %sn : tensor<16x32xbf16>
  %w2_s = shard.shard %w2 to %sk : tensor<32x16xbf16>
  %zero = arith.constant 0.0 : bf16
  %e1 = tensor.empty() : tensor<4x32xbf16>
  %i1 = linalg.fill ins(%zero : bf16) outs(%e1 : tensor<4x32xbf16>) -> tensor<4x32xbf16>
  %h = linalg.matmul ins(%x_s, %w1_s : tensor<4x16xbf16>, tensor<16x32xbf16>) outs(%i1 : tensor<4x32xbf16>) -> tensor<4x32xbf16>
  %hf = arith.extf %h : tensor<4x32xbf16> to tensor<4x32xf32>
  %half = arith.constant dense<0.5> : tensor<4x32xf32>
  %one = arith.constant dense<1.0> : tensor<4x32xf32>
  %rsqrt2 = arith.constant dense<0.707106769> : tensor<4x32xf32>
  %s = arith.mulf %hf, %rsqrt2 : tensor<4x32xf32>
  %erf = math.erf %s : tensor<4x32xf32>
  %p = arith.addf %one, %erf : tensor<4x32xf32>
  %q = arith.mulf %hf, %p : tensor<4x32xf32>
  %gf = arith.mulf %half, %q : tensor<4x32xf32>
  %g = arith.truncf %gf : tensor<4x32xf32> to tensor<4x32xbf16>
  %e2 = tensor.empty() : tensor<4x16xbf16>
  %i2 = linalg.fill ins(%zero : bf16) outs(%e2 : tensor<4x16xbf16>) -> tensor<4x16xbf16>
  %y = linalg.matmul ins(%g, %w2_s : tensor<4x32xbf16>, tensor<32x16xbf16>) outs(%i2 : tensor<4x16xbf16>) -> tensor<4x16xbf16>
  %y_s = shard.shard %y to %rows : tensor<4x16xbf16>
  return %y_s : tensor<4x16xbf16>
}
