// RUN: shardlin-opt %s -split-input-file -verify-diagnostics --shardlin-import-shard

// Constants the import cannot take: a located error, the function left as
// it was.

shard.grid @tp(shape = 2)
func.func @int_weight(%x: tensor<2x4xi32>) -> tensor<2x4xi32> {
  // expected-error@+1 {{a constant of type 'tensor<4x4xi32>': the import takes constant tensors of static shape of f16, bf16, f32 or f64}}
  %w = arith.constant dense<[[1, 2, 3, 4], [1, 2, 3, 4], [1, 2, 3, 4], [1, 2, 3, 4]]> : tensor<4x4xi32>
  %y = arith.addi %x, %x : tensor<2x4xi32>
  return %y : tensor<2x4xi32>
}
