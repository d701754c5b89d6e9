shard.grid @grid(shape = 2)
func.func @sharding_argument(%x: tensor<4x8xf32>, %s: !shard.sharding) -> tensor<4x8xf32> {
  %xs = shard.shard %x to %s : tensor<4x8xf32>
  return %xs : tensor<4x8xf32>
}
