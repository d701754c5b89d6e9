shard.grid @grid(shape = 2)
// Mixed precision: extf and truncf keep the rank's shape; a splat of an
// unevenly split value's shape is a fill sized by the rank's rows.
func.func @mixed_precision(%x: tensor<3x4xbf16>) -> tensor<3x4xbf16> {
  %rows = shard.sharding @grid split_axes = [[0]] sharded_dims_offsets = [0, 2, 3] : !shard.sharding
  %xs = shard.shard %x to %rows : tensor<3x4xbf16>
  %f = arith.extf %xs : tensor<3x4xbf16> to tensor<3x4xf32>
  %k = arith.constant dense<3.0> : tensor<3x4xf32>
  %m = arith.mulf %f, %k : tensor<3x4xf32>
  %t = arith.truncf %m : tensor<3x4xf32> to tensor<3x4xbf16>
  return %t : tensor<3x4xbf16>
}
