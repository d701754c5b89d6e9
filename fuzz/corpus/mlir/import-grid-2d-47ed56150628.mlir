// The batch split over the replicas only ([[0]]: within a replica x is
// replicated), a row-wise linear over TP (K split over axis 1), a 3-D input
// collapsed to rows and its result expanded back, a residual added with a
// splat constant scale: 4 x 5 x 16 over 2 replicas is 2 x 5 x 16 each.
// LOWER: shardlin.gemm {{.*}} : (tensor<10x8xf32>, tensor<8x8xf32>) -> tensor<10x8xf32>
// LOWER: shardlin.all_reduce %{{.*}} world_size = 2 : tensor<10x8xf32>

shard.grid @grid(shape = 2x2)
#nk = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
func.func @row3d(%x: tensor<4x5x16xf32>, %w: tensor<8x16xf32>) -> tensor<4x5x8xf32> {
  %batch = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %sk = shard.sharding @grid split_axes = [[], [1]] : !shard.sharding
  %xs = shard.shard %x to %batch : tensor<4x5x16xf32>
  %ws = shard.shard %w to %sk : tensor<8x16xf32>
  %r = tensor.collapse_shape %xs [[0, 1], [2]] : tensor<4x5x16xf32> into tensor<20x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<20x8xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<20x8xf32>) -> tensor<20x8xf32>
  %mm = linalg.matmul indexing_maps = #nk ins(%r, %ws : tensor<20x16xf32>, tensor<8x16xf32>) outs(%i : tensor<20x8xf32>) -> tensor<20x8xf32>
  %y = tensor.expand_shape %mm [[0, 1], [2]] output_shape [4, 5, 8] : tensor<20x8xf32> into tensor<4x5x8xf32>
  %half = arith.constant dense<0.5> : tensor<4x5x8xf32>
  %z = arith.mulf %y, %half : tensor<4x5x8xf32>
  %zs = shard.shard %z to %batch : tensor<4x5x8xf32>
  return %zs : tensor<4x5x8xf32>
}
