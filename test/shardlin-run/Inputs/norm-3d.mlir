// A norm of a 3-D x (5 x 2 x 8) on 4 ranks, split along dim 0 at
// [0, 2, 4, 5, 5] (rank 3 holds none; @seq) or replicated (@rep):
// y = (x - max) * rsqrt(sum(x^2) / 8) * w, the maximum (arith.maximumf from
// -inf) and the sum over the last dim into keep-dim 5 x 2 x 1, both
// broadcast along the rows by (d0, d1, d2) -> (d0, d1, 0), w (8) along the
// last dim.
#m = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#r = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#v = affine_map<(d0, d1, d2) -> (d2)>
module {
  shard.grid @tp(shape = 4)
  func.func @seq(%arg0: tensor<5x2x8xf32>, %w: tensor<8xf32>) -> tensor<5x2x8xf32> {
    %s = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 2, 4, 5, 5] : !shard.sharding
    %x = shard.shard %arg0 to %s : tensor<5x2x8xf32>
    %zero = arith.constant 0.000000e+00 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %n = arith.constant 8.000000e+00 : f32
    %e1 = tensor.empty() : tensor<5x2x1xf32>
    %f0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<5x2x1xf32>) -> tensor<5x2x1xf32>
    %fm = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<5x2x1xf32>) -> tensor<5x2x1xf32>
    %mx = linalg.generic {indexing_maps = [#m, #r], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<5x2x8xf32>) outs(%fm : tensor<5x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %a = arith.maximumf %in, %out : f32
      linalg.yield %a : f32
    } -> tensor<5x2x1xf32>
    %e = tensor.empty() : tensor<5x2x8xf32>
    %sq = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<5x2x8xf32>) outs(%e : tensor<5x2x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %a = arith.mulf %in, %in : f32
      linalg.yield %a : f32
    } -> tensor<5x2x8xf32>
    %sum = linalg.generic {indexing_maps = [#m, #r], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sq : tensor<5x2x8xf32>) outs(%f0 : tensor<5x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %a = arith.addf %in, %out : f32
      linalg.yield %a : f32
    } -> tensor<5x2x1xf32>
    %inv = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sum : tensor<5x2x1xf32>) outs(%e1 : tensor<5x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %a = arith.divf %in, %n : f32
      %b = math.rsqrt %a : f32
      linalg.yield %b : f32
    } -> tensor<5x2x1xf32>
    %y = linalg.generic {indexing_maps = [#m, #r, #r, #v, #m], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %mx, %inv, %w : tensor<5x2x8xf32>, tensor<5x2x1xf32>, tensor<5x2x1xf32>, tensor<8xf32>) outs(%e : tensor<5x2x8xf32>) {
    ^bb0(%in: f32, %m1: f32, %i1: f32, %w1: f32, %out: f32):
      %a = arith.subf %in, %m1 : f32
      %b = arith.mulf %a, %i1 : f32
      %c = arith.mulf %b, %w1 : f32
      linalg.yield %c : f32
    } -> tensor<5x2x8xf32>
    %res = shard.shard %y to %s : tensor<5x2x8xf32>
    return %res : tensor<5x2x8xf32>
  }
  func.func @rep(%arg0: tensor<5x2x8xf32>, %w: tensor<8xf32>) -> tensor<5x2x8xf32> {
    %s = shard.sharding @tp split_axes = [[]] : !shard.sharding
    %x = shard.shard %arg0 to %s : tensor<5x2x8xf32>
    %zero = arith.constant 0.000000e+00 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %n = arith.constant 8.000000e+00 : f32
    %e1 = tensor.empty() : tensor<5x2x1xf32>
    %f0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<5x2x1xf32>) -> tensor<5x2x1xf32>
    %fm = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<5x2x1xf32>) -> tensor<5x2x1xf32>
    %mx = linalg.generic {indexing_maps = [#m, #r], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<5x2x8xf32>) outs(%fm : tensor<5x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %a = arith.maximumf %in, %out : f32
      linalg.yield %a : f32
    } -> tensor<5x2x1xf32>
    %e = tensor.empty() : tensor<5x2x8xf32>
    %sq = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<5x2x8xf32>) outs(%e : tensor<5x2x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %a = arith.mulf %in, %in : f32
      linalg.yield %a : f32
    } -> tensor<5x2x8xf32>
    %sum = linalg.generic {indexing_maps = [#m, #r], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sq : tensor<5x2x8xf32>) outs(%f0 : tensor<5x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %a = arith.addf %in, %out : f32
      linalg.yield %a : f32
    } -> tensor<5x2x1xf32>
    %inv = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sum : tensor<5x2x1xf32>) outs(%e1 : tensor<5x2x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %a = arith.divf %in, %n : f32
      %b = math.rsqrt %a : f32
      linalg.yield %b : f32
    } -> tensor<5x2x1xf32>
    %y = linalg.generic {indexing_maps = [#m, #r, #r, #v, #m], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %mx, %inv, %w : tensor<5x2x8xf32>, tensor<5x2x1xf32>, tensor<5x2x1xf32>, tensor<8xf32>) outs(%e : tensor<5x2x8xf32>) {
    ^bb0(%in: f32, %m1: f32, %i1: f32, %w1: f32, %out: f32):
      %a = arith.subf %in, %m1 : f32
      %b = arith.mulf %a, %i1 : f32
      %c = arith.mulf %b, %w1 : f32
      linalg.yield %c : f32
    } -> tensor<5x2x8xf32>
    %res = shard.shard %y to %s : tensor<5x2x8xf32>
    return %res : tensor<5x2x8xf32>
  }
}
