// RUN: shardlin-opt %s --shardlin-import-shard | FileCheck %s
// RUN: shardlin-opt %s --lower-sharded-linear=strategy=activations | FileCheck %s --check-prefix=LOWER

// Constants as frontends write them (torch-mlir's FX importer: weights and
// biases as dense_resource blobs; small ones dense<...> or splats): a split
// one becomes a shardlin.constant of a !shardlin.sharded type, which the
// linear takes as its weight (each rank its chunk); a replicated one that
// is not a splat a shardlin.constant of the whole tensor.

shard.grid @tp(shape = 4)

// N split (dim 0 of the N x K weight) at offsets with an empty chunk; the
// bias replicated.
// CHECK-LABEL: func.func @resource_n_split
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32> {shardlin.replicated}) -> tensor<2x5xf32>
// CHECK: %[[W:.*]] = shardlin.constant dense_resource<w53> : tensor<5x3xf32> -> !shardlin.sharded<tensor<5x3xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], bounds = [0, 2, 2, 4, 5]>>
// CHECK: %[[B:.*]] = shardlin.constant dense_resource<b5> : tensor<5xf32> -> tensor<5xf32>
// The replicated result it states, the linear gives directly.
// CHECK: %[[Y:.*]] = shardlin.linear %[[X]], %[[W]], %[[B]] layouts replicated -> replicated
// CHECK: return %[[Y]]
// LOWER-LABEL: func.func @resource_n_split
// LOWER: %[[W:.*]] = shardlin.constant dense_resource<w53> : tensor<5x3xf32> -> !shardlin.sharded
// LOWER: shardlin.local_shard %[[W]]
// LOWER: shardlin.gemm
func.func @resource_n_split(%x: tensor<2x3xf32>) -> tensor<2x5xf32> {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense_resource<w53> : tensor<5x3xf32>
  %b = arith.constant dense_resource<b5> : tensor<5xf32>
  %s = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 2, 2, 4, 5] : !shard.sharding
  %ws = shard.shard %w to %s : tensor<5x3xf32>
  %e = tensor.empty() : tensor<3x5xf32>
  %wt = linalg.transpose ins(%ws : tensor<5x3xf32>) outs(%e : tensor<3x5xf32>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<2x5xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x5xf32>) -> tensor<2x5xf32>
  %y = linalg.matmul ins(%x, %wt : tensor<2x3xf32>, tensor<3x5xf32>) outs(%init : tensor<2x5xf32>) -> tensor<2x5xf32>
  %yb = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y, %b : tensor<2x5xf32>, tensor<5xf32>) outs(%e2 : tensor<2x5xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %r = arith.addf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<2x5xf32>
  %repl = shard.sharding @tp split_axes = [[]] : !shard.sharding
  %yr = shard.shard %yb to %repl : tensor<2x5xf32>
  return %yr : tensor<2x5xf32>
}

// K split (a column split of the N x K weight, dim 1) of a dense<...>
// weight: partial sums, one all_reduce.
// CHECK-LABEL: func.func @dense_k_split
// CHECK: %[[W:.*]] = shardlin.constant dense<{{.*}}> : tensor<2x4xf32> -> !shardlin.sharded<tensor<2x4xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>
// CHECK: shardlin.linear %{{.*}}, %[[W]] layouts replicated -> replicated
func.func @dense_k_split(%x: tensor<3x4xf32>) -> tensor<3x2xf32> {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
  %s = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %ws = shard.shard %w to %s : tensor<2x4xf32>
  %e = tensor.empty() : tensor<3x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<3x2xf32>) -> tensor<3x2xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%x, %ws : tensor<3x4xf32>, tensor<2x4xf32>) outs(%init : tensor<3x2xf32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// A splat weight split by its annotation is a split constant too (a K x N
// weight, N split: dim 1).
// CHECK-LABEL: func.func @splat_split
// CHECK: %[[W:.*]] = shardlin.constant dense<5.000000e-01> : tensor<4x8xf32> -> !shardlin.sharded<tensor<4x8xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>
// CHECK: shardlin.linear %{{.*}}, %[[W]] weight_kn layouts replicated -> features
func.func @splat_split(%x: tensor<3x4xf32>) -> tensor<3x8xf32> {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<0.5> : tensor<4x8xf32>
  %s = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %ws = shard.shard %w to %s : tensor<4x8xf32>
  %e = tensor.empty() : tensor<3x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<3x8xf32>) -> tensor<3x8xf32>
  %y = linalg.matmul ins(%x, %ws : tensor<3x4xf32>, tensor<4x8xf32>) outs(%init : tensor<3x8xf32>) -> tensor<3x8xf32>
  return %y : tensor<3x8xf32>
}

// The split stated on the transposed weight (K x N, N split: dim 1) is the
// constant's dim 0.
// CHECK-LABEL: func.func @split_on_transpose
// CHECK: %[[W:.*]] = shardlin.constant dense_resource<w53> : tensor<5x3xf32> -> !shardlin.sharded<tensor<5x3xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], bounds = [0, 2, 2, 4, 5]>>
// CHECK: shardlin.linear %{{.*}}, %[[W]] layouts replicated -> features
func.func @split_on_transpose(%x: tensor<2x3xf32>) -> tensor<2x5xf32> {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense_resource<w53> : tensor<5x3xf32>
  %e = tensor.empty() : tensor<3x5xf32>
  %wt = linalg.transpose ins(%w : tensor<5x3xf32>) outs(%e : tensor<3x5xf32>) permutation = [1, 0]
  %s = shard.sharding @tp split_axes = [[], [0]] sharded_dims_offsets = [0, 2, 2, 4, 5] : !shard.sharding
  %wts = shard.shard %wt to %s : tensor<3x5xf32>
  %e2 = tensor.empty() : tensor<2x5xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x5xf32>) -> tensor<2x5xf32>
  %y = linalg.matmul ins(%x, %wts : tensor<2x3xf32>, tensor<3x5xf32>) outs(%init : tensor<2x5xf32>) -> tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

// Every element type: f16, bf16 and f64 blobs, split on N.
// CHECK-LABEL: func.func @dtypes
// CHECK: %[[H:.*]] = shardlin.constant dense_resource<h23> : tensor<2x3xf16> -> !shardlin.sharded<tensor<2x3xf16>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], bounds = [0, 1, 1, 2, 2]>>
// CHECK: shardlin.linear %{{.*}}, %[[H]] layouts replicated -> replicated
// CHECK: %[[B:.*]] = shardlin.constant dense_resource<bf23> : tensor<2x3xbf16> -> !shardlin.sharded<tensor<2x3xbf16>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], bounds = [0, 1, 1, 2, 2]>>
// CHECK: shardlin.linear %{{.*}}, %[[B]] layouts replicated -> replicated
// CHECK: %[[D:.*]] = shardlin.constant dense_resource<d23> : tensor<2x3xf64> -> !shardlin.sharded<tensor<2x3xf64>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], bounds = [0, 1, 1, 2, 2]>>
// CHECK: shardlin.linear %{{.*}}, %[[D]] layouts replicated -> replicated
func.func @dtypes(%xh: tensor<1x3xf16>, %xb: tensor<1x3xbf16>, %xd: tensor<1x3xf64>) -> (tensor<1x2xf16>, tensor<1x2xbf16>, tensor<1x2xf64>) {
  %s = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 1, 1, 2, 2] : !shard.sharding
  %repl = shard.sharding @tp split_axes = [[]] : !shard.sharding
  %h = arith.constant dense_resource<h23> : tensor<2x3xf16>
  %hs = shard.shard %h to %s : tensor<2x3xf16>
  %zh = arith.constant 0.0 : f16
  %eh = tensor.empty() : tensor<1x2xf16>
  %ih = linalg.fill ins(%zh : f16) outs(%eh : tensor<1x2xf16>) -> tensor<1x2xf16>
  %yh = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%xh, %hs : tensor<1x3xf16>, tensor<2x3xf16>) outs(%ih : tensor<1x2xf16>) -> tensor<1x2xf16>
  %rh = shard.shard %yh to %repl : tensor<1x2xf16>
  %b = arith.constant dense_resource<bf23> : tensor<2x3xbf16>
  %bs = shard.shard %b to %s : tensor<2x3xbf16>
  %zb = arith.constant 0.0 : bf16
  %eb = tensor.empty() : tensor<1x2xbf16>
  %ib = linalg.fill ins(%zb : bf16) outs(%eb : tensor<1x2xbf16>) -> tensor<1x2xbf16>
  %yb = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%xb, %bs : tensor<1x3xbf16>, tensor<2x3xbf16>) outs(%ib : tensor<1x2xbf16>) -> tensor<1x2xbf16>
  %rb = shard.shard %yb to %repl : tensor<1x2xbf16>
  %d = arith.constant dense_resource<d23> : tensor<2x3xf64>
  %ds = shard.shard %d to %s : tensor<2x3xf64>
  %zd = arith.constant 0.0 : f64
  %ed = tensor.empty() : tensor<1x2xf64>
  %id = linalg.fill ins(%zd : f64) outs(%ed : tensor<1x2xf64>) -> tensor<1x2xf64>
  %yd = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%xd, %ds : tensor<1x3xf64>, tensor<2x3xf64>) outs(%id : tensor<1x2xf64>) -> tensor<1x2xf64>
  %rd = shard.shard %yd to %repl : tensor<1x2xf64>
  return %rh, %rb, %rd : tensor<1x2xf16>, tensor<1x2xbf16>, tensor<1x2xf64>
}

// Constants that are not splats in a rank-local chain: the norm weight of
// each rank's rows (a vector broadcast along the last dim) is whole on every
// rank; a full tensor that the chain needs in its rows' layout is split the
// same way (each rank holds only its rows of it, not all of it). A splat
// stays an arith.constant.
// CHECK-LABEL: func.func @replicated_in_chain
// CHECK: %[[G:.*]] = shardlin.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32> -> tensor<3xf32>
// CHECK: %[[T:.*]] = shardlin.constant dense<{{.*}}> : tensor<4x3xf32> -> !shardlin.sharded<tensor<4x3xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>
// CHECK: shardlin.local_shard %[[T]]
// CHECK: arith.constant dense<2.000000e+00> : tensor<1x3xf32>
func.func @replicated_in_chain(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %rows = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %rows : tensor<4x3xf32>
  %g = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %t = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [1.5, 2.5, 3.5]]> : tensor<4x3xf32>
  %two = arith.constant dense<2.0> : tensor<4x3xf32>
  %e = tensor.empty() : tensor<4x3xf32>
  %scaled = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%xs, %g : tensor<4x3xf32>, tensor<3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %r = arith.mulf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<4x3xf32>
  %sum = arith.addf %scaled, %t : tensor<4x3xf32>
  %y = arith.mulf %sum, %two : tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// The split stated on a broadcast of the constant (linalg.broadcast; the
// dim it came from is the constant's split dim): the features of a 2 x 4
// broadcast of a 4-vector.
// CHECK-LABEL: func.func @split_on_broadcast
// CHECK: shardlin.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32> -> !shardlin.sharded<tensor<4xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>
func.func @split_on_broadcast(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %cols = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %v = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %e = tensor.empty() : tensor<2x4xf32>
  %b = linalg.broadcast ins(%v : tensor<4xf32>) outs(%e : tensor<2x4xf32>) dimensions = [0]
  %bs = shard.shard %b to %cols : tensor<2x4xf32>
  %xs = shard.shard %x to %cols : tensor<2x4xf32>
  %y = arith.addf %xs, %bs : tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w53: "0x040000000000003F0000803F0000C03F0000004000002040000040400000604000008040000090400000A0400000B0400000C0400000D0400000E0400000F040",
      b5: "0x040000000000803E0000003F0000403F0000803F0000A03F",
      h23: "0x020000000038003C003E004000410042",
      bf23: "0x02000000803F813F823F833F843F853F",
      d23: "0x08000000000000000000E03F000000000000F03F000000000000F83F000000000000004000000000000004400000000000000840"
    }
  }
#-}
