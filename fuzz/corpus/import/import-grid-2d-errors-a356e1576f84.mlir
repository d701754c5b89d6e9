// The diagnostics of a 2-D grid's data-parallel split (ImportShardGrid.cpp):
// one located error naming what breaks the rule that axis 0 splits only the
// batch, into as many rows per replica, which stay each replica's own.

#nk = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
shard.grid @grid(shape = 2x2)
func.func @axis0_on_dim1(%w: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %ws = shard.shard %w to %s : tensor<8x16xf32>
  return %ws : tensor<8x16xf32>
}
