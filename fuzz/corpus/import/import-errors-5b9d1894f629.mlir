shard.grid @grid(shape = 4)
func.func @conflicting_annotations(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %rows = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %cols = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %a = shard.shard %x to %rows : tensor<8x16xf32>
  %b = shard.shard %x to %cols : tensor<8x16xf32>
  return %b : tensor<8x16xf32>
}
