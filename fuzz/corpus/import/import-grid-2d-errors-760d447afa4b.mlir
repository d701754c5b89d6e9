shard.grid @grid(shape = 2x2)
func.func @batch_moved(%x: tensor<8x16xf32>) -> tensor<16x8xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<8x16xf32>
  %e = tensor.empty() : tensor<16x8xf32>
  %t = linalg.transpose ins(%xs : tensor<8x16xf32>) outs(%e : tensor<16x8xf32>) permutation = [1, 0]
  return %t : tensor<16x8xf32>
}
