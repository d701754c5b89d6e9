// RUN: shardlin-opt %s -split-input-file --shardlin-import-shard | FileCheck %s
// RUN: shardlin-opt %s -split-input-file --shardlin-import-shard --lower-sharded-linear | FileCheck %s --check-prefix=LOWER

// A norm in front of the linears (issue 40), as torch-mlir exports it: a
// reduction over the last dim into R x 1, elementwise ops on it, and its
// broadcast along the rows. Where x's last dim is whole on every rank (x
// replicated, or split along its rows) all of it is rank-local: the
// reduction runs on the rank's rows and its R x 1 result is split as they
// are. No collective is added.

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0, 0)>
#map2 = affine_map<(d0, d1) -> (d1)>
shard.grid @tp(shape = 4)
// CHECK-LABEL: func.func @rms_seq(
// CHECK-SAME: %[[X:.*]]: !shardlin.sharded<tensor<6x40xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>
// CHECK: %[[XL:.*]] = shardlin.local_shard %[[X]] {{.*}} -> tensor<?x40xf32>
// CHECK: %[[SQ:.*]] = linalg.generic {{.*}} ins(%[[XL]], %[[XL]] : tensor<?x40xf32>, tensor<?x40xf32>)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[D:.*]] = tensor.dim %[[SQ]], %[[C0]] : tensor<?x40xf32>
// CHECK: %[[E:.*]] = tensor.empty(%[[D]]) : tensor<?x1xf32>
// CHECK: %[[F:.*]] = linalg.fill {{.*}} outs(%[[E]] : tensor<?x1xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[R:.*]]], iterator_types = ["parallel", "reduction"]} ins(%[[SQ]] : tensor<?x40xf32>) outs(%[[F]] : tensor<?x1xf32>)
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<?x1xf32>)
// CHECK: %[[INV:.*]] = linalg.generic {{.*}} ins(%[[MEAN]] : tensor<?x1xf32>)
// CHECK: math.rsqrt
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[R]], #{{.*}}], {{.*}} ins(%[[XL]], %[[INV]] : tensor<?x40xf32>, tensor<?x1xf32>)
// CHECK: shardlin.from_local
// CHECK-NOT: shardlin.all_gather
// LOWER-LABEL: func.func @rms_seq(
// LOWER-NOT: shardlin.all_gather
// LOWER-NOT: shardlin.all_reduce
// LOWER: return
func.func @rms_seq(%arg0: tensor<6x40xf32>) -> tensor<6x40xf32> {
  %s = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 2, 4, 6, 6] : !shard.sharding
  %x = shard.shard %arg0 to %s : tensor<6x40xf32>
  %cst = arith.constant 0.000000e+00 : f32
  %n = arith.constant 4.000000e+01 : f32
  %0 = tensor.empty() : tensor<6x40xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %x : tensor<6x40xf32>, tensor<6x40xf32>) outs(%0 : tensor<6x40xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %m = arith.mulf %in, %in_1 : f32
    linalg.yield %m : f32
  } -> tensor<6x40xf32>
  %2 = tensor.empty() : tensor<6x1xf32>
  %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<6x1xf32>) -> tensor<6x1xf32>
  %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%1 : tensor<6x40xf32>) outs(%3 : tensor<6x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %out : f32
    linalg.yield %a : f32
  } -> tensor<6x1xf32>
  %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%4 : tensor<6x1xf32>) outs(%2 : tensor<6x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.divf %in, %n : f32
    linalg.yield %d : f32
  } -> tensor<6x1xf32>
  %6 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%5 : tensor<6x1xf32>) outs(%2 : tensor<6x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.rsqrt %in : f32
    linalg.yield %r : f32
  } -> tensor<6x1xf32>
  %7 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %6 : tensor<6x40xf32>, tensor<6x1xf32>) outs(%0 : tensor<6x40xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %m = arith.mulf %in, %in_1 : f32
    linalg.yield %m : f32
  } -> tensor<6x40xf32>
  %r = shard.shard %7 to %s : tensor<6x40xf32>
  return %r : tensor<6x40xf32>
}

// -----

// Replicated x: the same ops on every rank's whole tensor, and the
// collapsed R of a LayerNorm's mean expanded back to R x 1 for its
// broadcast ((d0, d1) -> (d0) becomes (d0, 0)).
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0, 0)>
#map3 = affine_map<(d0, d1) -> (d0)>
shard.grid @tp(shape = 4)
// CHECK-LABEL: func.func @ln_mean_rep(
// CHECK-SAME: %[[X:.*]]: tensor<6x40xf32> {shardlin.replicated}
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<6x40xf32>) outs(%{{.*}} : tensor<6x1xf32>)
// CHECK: %[[C:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1]] : tensor<6x1xf32> into tensor<6xf32>
// CHECK: %[[X1:.*]] = tensor.expand_shape %[[C]] {{\[}}[0, 1]] output_shape [6, 1] : tensor<6xf32> into tensor<6x1xf32>
// CHECK: linalg.generic {indexing_maps = [#[[R:.*]], #{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%[[X1]] : tensor<6x1xf32>) outs(%{{.*}} : tensor<6x40xf32>)
func.func @ln_mean_rep(%arg0: tensor<6x40xf32>) -> tensor<6x40xf32> {
  %s = shard.sharding @tp split_axes = [[]] : !shard.sharding
  %x = shard.shard %arg0 to %s : tensor<6x40xf32>
  %cst = arith.constant 0.000000e+00 : f32
  %n = arith.constant 4.000000e+01 : f32
  %0 = tensor.empty() : tensor<6x1xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<6x1xf32>) -> tensor<6x1xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<6x40xf32>) outs(%1 : tensor<6x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %out : f32
    linalg.yield %a : f32
  } -> tensor<6x1xf32>
  %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%2 : tensor<6x1xf32>) outs(%0 : tensor<6x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.divf %in, %n : f32
    linalg.yield %d : f32
  } -> tensor<6x1xf32>
  %4 = tensor.empty() : tensor<6x40xf32>
  %c = tensor.collapse_shape %3 [[0, 1]] : tensor<6x1xf32> into tensor<6xf32>
  %5 = linalg.generic {indexing_maps = [#map3, #map], iterator_types = ["parallel", "parallel"]} ins(%c : tensor<6xf32>) outs(%4 : tensor<6x40xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<6x40xf32>
  %6 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%x, %5 : tensor<6x40xf32>, tensor<6x40xf32>) outs(%4 : tensor<6x40xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.subf %in, %in_1 : f32
    linalg.yield %d : f32
  } -> tensor<6x40xf32>
  return %6 : tensor<6x40xf32>
}

// -----

// 3-D x split along dim 0 (sequence parallel) at [0, 3, 3], rank 1 none: the reduction over the last
// dim into B x S x 1, and linalg.reduce's rank-reduced max into B x S.
#m = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#r = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
shard.grid @tp(shape = 2)
// CHECK-LABEL: func.func @norm3d_seq(
// CHECK: %[[XL:.*]] = shardlin.local_shard {{.*}} -> tensor<?x2x8xf32>
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[XL]] : tensor<?x2x8xf32>) outs(%{{.*}} : tensor<?x2x1xf32>)
// CHECK: %[[D:.*]] = tensor.dim %[[XL]], %{{.*}} : tensor<?x2x8xf32>
// CHECK: %[[E:.*]] = tensor.empty(%[[D]]) : tensor<?x2xf32>
// CHECK: %[[F:.*]] = linalg.fill {{.*}} outs(%[[E]] : tensor<?x2xf32>)
// CHECK: %[[MAX:.*]] = linalg.reduce ins(%[[XL]] : tensor<?x2x8xf32>) outs(%[[F]] : tensor<?x2xf32>) dimensions = [2]
// CHECK: arith.maximumf
// CHECK: %[[MD:.*]] = tensor.dim %[[MAX]]
// CHECK: %[[MAX1:.*]] = tensor.expand_shape %[[MAX]] {{\[}}[0], [1, 2]] output_shape [%[[MD]], 2, 1] : tensor<?x2xf32> into tensor<?x2x1xf32>
// CHECK: linalg.generic {{.*}} ins(%[[XL]], %[[SUM]], %[[MAX1]] : tensor<?x2x8xf32>, tensor<?x2x1xf32>, tensor<?x2x1xf32>) outs(%{{.*}} : tensor<?x2x8xf32>)
// CHECK: shardlin.from_local
func.func @norm3d_seq(%arg0: tensor<3x2x8xf32>) -> tensor<3x2x8xf32> {
  %s = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 3, 3] : !shard.sharding
  %x = shard.shard %arg0 to %s : tensor<3x2x8xf32>
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %0 = tensor.empty() : tensor<3x2x1xf32>
  %1 = linalg.fill ins(%zero : f32) outs(%0 : tensor<3x2x1xf32>) -> tensor<3x2x1xf32>
  %2 = linalg.generic {indexing_maps = [#m, #r], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<3x2x8xf32>) outs(%1 : tensor<3x2x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %out : f32
    linalg.yield %a : f32
  } -> tensor<3x2x1xf32>
  %e2 = tensor.empty() : tensor<3x2xf32>
  %f2 = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<3x2xf32>) -> tensor<3x2xf32>
  %mx = linalg.reduce ins(%x : tensor<3x2x8xf32>) outs(%f2 : tensor<3x2xf32>) dimensions = [2]
    (%a: f32, %b: f32) {
      %m = arith.maximumf %a, %b : f32
      linalg.yield %m : f32
    }
  %e3 = tensor.empty() : tensor<3x2x8xf32>
  %y = linalg.generic {indexing_maps = [#m, #r, #c, #m], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %2, %mx : tensor<3x2x8xf32>, tensor<3x2x1xf32>, tensor<3x2xf32>) outs(%e3 : tensor<3x2x8xf32>) {
  ^bb0(%in: f32, %s1: f32, %m1: f32, %out: f32):
    %d = arith.subf %in, %m1 : f32
    %q = arith.divf %d, %s1 : f32
    linalg.yield %q : f32
  } -> tensor<3x2x8xf32>
  %r = shard.shard %y to %s : tensor<3x2x8xf32>
  return %r : tensor<3x2x8xf32>
}
