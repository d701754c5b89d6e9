// RUN: shardlin-opt %s -split-input-file -verify-diagnostics --shardlin-import-shard

// A reduction over a dim split across the ranks (x split along its
// features) would need an all_reduce of the partial sums: a located error.

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0, 0)>
shard.grid @tp(shape = 4)
func.func @features(%arg0: tensor<6x40xf32>) -> tensor<6x1xf32> {
  %s = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %x = shard.shard %arg0 to %s : tensor<6x40xf32>
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<6x1xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<6x1xf32>) -> tensor<6x1xf32>
  // expected-error@+1 {{reduces the last dim of a value split along dim 1 over 4 devices: each rank holds part of every row, so the result would need an all_reduce of the ranks' partial results, which the import does not emit (a norm is imported where its input's last dim is whole on every rank: replicated, or split along its rows)}}
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<6x40xf32>) outs(%1 : tensor<6x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %out : f32
    linalg.yield %a : f32
  } -> tensor<6x1xf32>
  return %2 : tensor<6x1xf32>
}

// -----

// The same with linalg.reduce into R.
shard.grid @tp(shape = 2)
func.func @features_reduce(%arg0: tensor<6x40xf32>) -> tensor<6xf32> {
  %s = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %x = shard.shard %arg0 to %s : tensor<6x40xf32>
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<6xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<6xf32>) -> tensor<6xf32>
  // expected-error@+1 {{reduces the last dim of a value split along dim 1}}
  %2 = linalg.reduce ins(%x : tensor<6x40xf32>) outs(%1 : tensor<6xf32>) dimensions = [1]
    (%a: f32, %b: f32) {
      %m = arith.maxnumf %a, %b : f32
      linalg.yield %m : f32
    }
  return %2 : tensor<6xf32>
}
