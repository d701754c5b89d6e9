shard.grid @grid(shape = 2)
// Reshapes of a row-split value: the split dim stays outermost, its chunk
// boundaries scaled by the dims folded into it (2 x 3 rows at [0, 1, 2]
// are 6 rows at [0, 3, 6]).
func.func @reshapes(%x: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  %rows = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %rows : tensor<2x3x4xf32>
  %c = tensor.collapse_shape %xs [[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
  %n = arith.negf %c : tensor<6x4xf32>
  return %n : tensor<6x4xf32>
}
