// A bf16 MLP block over W = 4, as a checkpoint's up and down projections
// shard: the first weight (1024 x 64) col-wise (dim 0: each rank's 256 rows,
// one contiguous range), the second (64 x 1024) row-wise (dim 1: each rank's
// 256 columns, a 512-byte piece per row), no biases. Each rank's own 2 rows
// of x; results: y and the hidden relu(x W1^T).
!w1 = !shardlin.sharded<tensor<1024x64xbf16>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>
!w2 = !shardlin.sharded<tensor<64x1024xbf16>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%x: tensor<2x64xbf16>, %w1: !w1, %w2: !w2) -> (tensor<2x64xbf16>, tensor<2x1024xbf16>) {
  %h = shardlin.linear %x, %w1 : (tensor<2x64xbf16>, !w1) -> tensor<2x1024xbf16>
  %zero = arith.constant 0.0 : bf16
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<2x1024xbf16>) outs(%h : tensor<2x1024xbf16>) {
  ^bb0(%v: bf16, %o: bf16):
    %r = arith.maximumf %v, %zero : bf16
    linalg.yield %r : bf16
  } -> tensor<2x1024xbf16>
  %y = shardlin.linear %a, %w2 : (tensor<2x1024xbf16>, !w2) -> tensor<2x64xbf16>
  return %y, %a : tensor<2x64xbf16>, tensor<2x1024xbf16>
}
