// RUN: shardlin-opt %s -split-input-file --shardlin-import-shard | FileCheck %s
// RUN: shardlin-opt %s -split-input-file --shardlin-import-shard | shardlin-opt --verify-roundtrip > /dev/null

// Linear layers as producers write them, imported: each linalg.matmul whose
// weight is split is one shardlin.linear on the sharded weight argument,
// with the orientation (weight_kn), the bias and the layouts recognized;
// nothing else of the matmul's form is left.

shard.grid @grid(shape = 4)
// K x N weight split on N; x unannotated, so replicated: replicated ->
// features. The result keeps the sharding that follows (split along its
// features), so the function returns the global tensor of which each rank
// holds its columns.
// CHECK-LABEL: func.func @kn
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<8x16xf32> {shardlin.replicated}, %[[W:[a-z0-9_]+]]: !shardlin.sharded<tensor<16x12xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>) -> !shardlin.sharded<tensor<8x12xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>
// CHECK-NEXT: %[[Y:[a-z0-9_]+]] = shardlin.linear %[[X]], %[[W]] weight_kn layouts replicated -> features : {{.*}} -> tensor<8x3xf32>
// CHECK-NEXT: %[[G:[a-z0-9_]+]] = shardlin.from_local %[[Y]] : tensor<8x3xf32> -> !shardlin.sharded<tensor<8x12xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>
// CHECK-NEXT: return %[[G]]
// CHECK-NOT: shard.grid
func.func @kn(%x: tensor<8x16xf32>, %w: tensor<16x12xf32>) -> tensor<8x12xf32> {
  %sn = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %ws = shard.shard %w to %sn : tensor<16x12xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x12xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<8x12xf32>) -> tensor<8x12xf32>
  %y = linalg.matmul ins(%x, %ws : tensor<8x16xf32>, tensor<16x12xf32>) outs(%i : tensor<8x12xf32>) -> tensor<8x12xf32>
  return %y : tensor<8x12xf32>
}

// -----

shard.grid @grid(shape = 4)
// N x K through a transposing indexing_maps (MLIR 22's form), split on K:
// replicated -> replicated with an all_reduce in the lowering.
// CHECK-LABEL: func.func @nk_map
// CHECK-SAME: %[[W:[a-z0-9_]+]]: !shardlin.sharded<tensor<12x16xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>
// CHECK-NEXT: shardlin.linear %{{.*}}, %[[W]] layouts replicated -> replicated : {{.*}} -> tensor<8x12xf32>
// CHECK-NEXT: return
func.func @nk_map(%x: tensor<8x16xf32>, %w: tensor<12x16xf32>) -> tensor<8x12xf32> {
  %sk = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %ws = shard.shard %w to %sk : tensor<12x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x12xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<8x12xf32>) -> tensor<8x12xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%x, %ws : tensor<8x16xf32>, tensor<12x16xf32>) outs(%i : tensor<8x12xf32>) -> tensor<8x12xf32>
  return %y : tensor<8x12xf32>
}

// -----

shard.grid @grid(shape = 4)
// N x K through a linalg.transpose, split on N with explicit offsets (an
// empty chunk); the bias added by linalg.broadcast + linalg.add.
// CHECK-LABEL: func.func @nk_transpose_broadcast_add
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<8x16xf32> {shardlin.replicated}, %[[W:[a-z0-9_]+]]: !shardlin.sharded<tensor<10x16xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], bounds = [0, 4, 4, 8, 10]>>, %[[B:[a-z0-9_]+]]: tensor<10xf32> {shardlin.replicated})
// CHECK-NEXT: %[[Y:[a-z0-9_]+]] = shardlin.linear %[[X]], %[[W]], %[[B]] layouts replicated -> features : {{.*}} -> tensor<8x?xf32>
// CHECK-NEXT: shardlin.from_local %[[Y]] : tensor<8x?xf32> -> !shardlin.sharded<tensor<8x10xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3], bounds = [0, 4, 4, 8, 10]>>
// CHECK-NOT: linalg
func.func @nk_transpose_broadcast_add(%x: tensor<8x16xf32>, %w: tensor<10x16xf32>, %b: tensor<10xf32>) -> tensor<8x10xf32> {
  %sn = shard.sharding @grid split_axes = [[0]] sharded_dims_offsets = [0, 4, 4, 8, 10] : !shard.sharding
  %ws = shard.shard %w to %sn : tensor<10x16xf32>
  %te = tensor.empty() : tensor<16x10xf32>
  %wt = linalg.transpose ins(%ws : tensor<10x16xf32>) outs(%te : tensor<16x10xf32>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x10xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<8x10xf32>) -> tensor<8x10xf32>
  %mm = linalg.matmul ins(%x, %wt : tensor<8x16xf32>, tensor<16x10xf32>) outs(%i : tensor<8x10xf32>) -> tensor<8x10xf32>
  %e2 = tensor.empty() : tensor<8x10xf32>
  %bb = linalg.broadcast ins(%b : tensor<10xf32>) outs(%e2 : tensor<8x10xf32>) dimensions = [0]
  %e3 = tensor.empty() : tensor<8x10xf32>
  %y = linalg.add ins(%mm, %bb : tensor<8x10xf32>, tensor<8x10xf32>) outs(%e3 : tensor<8x10xf32>) -> tensor<8x10xf32>
  return %y : tensor<8x10xf32>
}

// -----

shard.grid @grid(shape = 2)
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
// The bias added by a broadcast linalg.generic (vector first), and by
// arith.addf of a broadcast vector.
// CHECK-LABEL: func.func @bias_generic
// CHECK-NEXT: shardlin.linear %{{.*}}, %{{.*}}, %{{.*}} weight_kn layouts replicated -> features
// CHECK-NOT: linalg.generic
func.func @bias_generic(%x: tensor<4x8xf32>, %w: tensor<8x6xf32>, %b: tensor<6xf32>) -> tensor<4x6xf32> {
  %sn = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %ws = shard.shard %w to %sn : tensor<8x6xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %mm = linalg.matmul ins(%x, %ws : tensor<4x8xf32>, tensor<8x6xf32>) outs(%i : tensor<4x6xf32>) -> tensor<4x6xf32>
  %y = linalg.generic {indexing_maps = [#row, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b, %mm : tensor<6xf32>, tensor<4x6xf32>) outs(%mm : tensor<4x6xf32>) {
  ^bb0(%c: f32, %a: f32, %o: f32):
    %s = arith.addf %c, %a : f32
    linalg.yield %s : f32
  } -> tensor<4x6xf32>
  %ys = shard.shard %y to %sn : tensor<4x6xf32>
  return %ys : tensor<4x6xf32>
}
// CHECK-LABEL: func.func @bias_addf
// CHECK-NEXT: shardlin.linear %{{.*}}, %{{.*}}, %{{.*}} weight_kn layouts replicated -> features
func.func @bias_addf(%x: tensor<4x8xf32>, %w: tensor<8x6xf32>, %b: tensor<6xf32>) -> tensor<4x6xf32> {
  %sn = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %ws = shard.shard %w to %sn : tensor<8x6xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %mm = linalg.matmul ins(%x, %ws : tensor<4x8xf32>, tensor<8x6xf32>) outs(%i : tensor<4x6xf32>) -> tensor<4x6xf32>
  %e2 = tensor.empty() : tensor<4x6xf32>
  %bb = linalg.broadcast ins(%b : tensor<6xf32>) outs(%e2 : tensor<4x6xf32>) dimensions = [0]
  %y = arith.addf %bb, %mm : tensor<4x6xf32>
  %ys = shard.shard %y to %sn : tensor<4x6xf32>
  return %ys : tensor<4x6xf32>
}

// -----

shard.grid @grid(shape = 2)
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
// The bias as the matmul's init: a linalg.broadcast, or a linalg.generic
// that copies the broadcast vector.
// CHECK-LABEL: func.func @bias_init_broadcast
// CHECK-NEXT: shardlin.linear %{{.*}}, %{{.*}}, %{{.*}} weight_kn layouts replicated -> features
func.func @bias_init_broadcast(%x: tensor<4x8xf32>, %w: tensor<8x6xf32>, %b: tensor<6xf32>) -> tensor<4x6xf32> {
  %sn = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %ws = shard.shard %w to %sn : tensor<8x6xf32>
  %e = tensor.empty() : tensor<4x6xf32>
  %bb = linalg.broadcast ins(%b : tensor<6xf32>) outs(%e : tensor<4x6xf32>) dimensions = [0]
  %y = linalg.matmul ins(%x, %ws : tensor<4x8xf32>, tensor<8x6xf32>) outs(%bb : tensor<4x6xf32>) -> tensor<4x6xf32>
  %ys = shard.shard %y to %sn : tensor<4x6xf32>
  return %ys : tensor<4x6xf32>
}
// CHECK-LABEL: func.func @bias_init_generic
// CHECK-NEXT: shardlin.linear %{{.*}}, %{{.*}}, %{{.*}} weight_kn layouts replicated -> features
func.func @bias_init_generic(%x: tensor<4x8xf32>, %w: tensor<8x6xf32>, %b: tensor<6xf32>) -> tensor<4x6xf32> {
  %sn = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %ws = shard.shard %w to %sn : tensor<8x6xf32>
  %e = tensor.empty() : tensor<4x6xf32>
  %bb = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<6xf32>) outs(%e : tensor<4x6xf32>) {
  ^bb0(%c: f32, %o: f32):
    linalg.yield %c : f32
  } -> tensor<4x6xf32>
  %y = linalg.matmul ins(%x, %ws : tensor<4x8xf32>, tensor<8x6xf32>) outs(%bb : tensor<4x6xf32>) -> tensor<4x6xf32>
  %ys = shard.shard %y to %sn : tensor<4x6xf32>
  return %ys : tensor<4x6xf32>
}

// -----

shard.grid @grid(shape = 2)
// An init that is neither zero nor a broadcast bias: the matmul adds it,
// so the linear is followed by that addition, in the result's layout (each
// rank its features of it).
// CHECK-LABEL: func.func @accumulate
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<4x8xf32> {shardlin.replicated}, %[[W:[a-z0-9_]+]]: !shardlin.sharded<{{.*}}>, %[[C:[a-z0-9_]+]]: tensor<4x6xf32> {shardlin.replicated})
// CHECK-NEXT: %[[Y:[a-z0-9_]+]] = shardlin.linear %[[X]], %[[W]] weight_kn layouts replicated -> features
// CHECK-NEXT: %[[CL:[a-z0-9_]+]] = shardlin.local_chunk %[[C]] along <dim = 1, placements = [0, 1]> : tensor<4x6xf32> -> tensor<4x3xf32>
// CHECK-NEXT: arith.addf %[[Y]], %[[CL]] : tensor<4x3xf32>
func.func @accumulate(%x: tensor<4x8xf32>, %w: tensor<8x6xf32>, %c: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %sn = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %ws = shard.shard %w to %sn : tensor<8x6xf32>
  %y = linalg.matmul ins(%x, %ws : tensor<4x8xf32>, tensor<8x6xf32>) outs(%c : tensor<4x6xf32>) -> tensor<4x6xf32>
  %ys = shard.shard %y to %sn : tensor<4x6xf32>
  return %ys : tensor<4x6xf32>
}

// -----

shard.grid @grid(shape = 2)
// A 3-D activation split along its batch, collapsed to rows around the
// matmul: one linear on the rank's 3-D part (rows -> rows), no reshape.
// CHECK-LABEL: func.func @nd
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: !shardlin.sharded<tensor<2x4x16xf32>, #shardlin.chunk<dim = 0, placements = [0, 1]>>, %[[W:[a-z0-9_]+]]: !shardlin.sharded<tensor<16x12xf32>, #shardlin.chunk<dim = 1, placements = [0, 1]>>) -> !shardlin.sharded<tensor<2x4x12xf32>, #shardlin.chunk<dim = 0, placements = [0, 1]>>
// CHECK-NEXT: %[[XL:[a-z0-9_]+]] = shardlin.local_shard %[[X]] {{.*}} -> tensor<1x4x16xf32>
// CHECK-NEXT: %[[Y:[a-z0-9_]+]] = shardlin.linear %[[XL]], %[[W]] weight_kn : (tensor<1x4x16xf32>, {{.*}}) -> tensor<1x4x12xf32>
// CHECK-NEXT: %[[R:[a-z0-9_]+]] = shardlin.from_local %[[Y]] : tensor<1x4x12xf32> -> !shardlin.sharded<tensor<2x4x12xf32>, #shardlin.chunk<dim = 0, placements = [0, 1]>>
// CHECK-NEXT: return %[[R]]
func.func @nd(%x: tensor<2x4x16xf32>, %w: tensor<16x12xf32>) -> tensor<2x4x12xf32> {
  %sb = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %sn = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %sb : tensor<2x4x16xf32>
  %ws = shard.shard %w to %sn : tensor<16x12xf32>
  %x2 = tensor.collapse_shape %xs [[0, 1], [2]] : tensor<2x4x16xf32> into tensor<8x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x12xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<8x12xf32>) -> tensor<8x12xf32>
  %y2 = linalg.matmul ins(%x2, %ws : tensor<8x16xf32>, tensor<16x12xf32>) outs(%i : tensor<8x12xf32>) -> tensor<8x12xf32>
  %y = tensor.expand_shape %y2 [[0, 1], [2]] output_shape [2, 4, 12] : tensor<8x12xf32> into tensor<2x4x12xf32>
  return %y : tensor<2x4x12xf32>
}

// -----

shard.grid @grid(shape = 2)
// A replicated 3-D activation: the reshapes stay, rank-local, around a 2-D
// linear.
// CHECK-LABEL: func.func @nd_replicated
// CHECK-NEXT: %[[X2:[a-z0-9_]+]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<2x4x16xf32> into tensor<8x16xf32>
// CHECK-NEXT: %[[Y:[a-z0-9_]+]] = shardlin.linear %[[X2]], %{{.*}} weight_kn layouts replicated -> replicated : {{.*}} -> tensor<8x12xf32>
// CHECK-NEXT: tensor.expand_shape %[[Y]] {{\[}}[0, 1], [2]] output_shape [2, 4, 12] : tensor<8x12xf32> into tensor<2x4x12xf32>
func.func @nd_replicated(%x: tensor<2x4x16xf32>, %w: tensor<16x12xf32>) -> tensor<2x4x12xf32> {
  %sk = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %ws = shard.shard %w to %sk : tensor<16x12xf32>
  %x2 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x4x16xf32> into tensor<8x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x12xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<8x12xf32>) -> tensor<8x12xf32>
  %y2 = linalg.matmul ins(%x2, %ws : tensor<8x16xf32>, tensor<16x12xf32>) outs(%i : tensor<8x12xf32>) -> tensor<8x12xf32>
  %y = tensor.expand_shape %y2 [[0, 1], [2]] output_shape [2, 4, 12] : tensor<8x12xf32> into tensor<2x4x12xf32>
  return %y : tensor<2x4x12xf32>
}

// -----

shard.grid @grid(shape = 4)
// A sequence-sharded x (10 rows at offsets [0, 3, 6, 9, 10]): the rank's
// rows (`?` of them), rows -> rows; the result's rows are the same split.
// CHECK-LABEL: func.func @sequence
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: !shardlin.sharded<tensor<10x16xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>, %[[W:[a-z0-9_]+]]: !shardlin.sharded<tensor<16x12xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>) -> !shardlin.sharded<tensor<10x12xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>
// CHECK-NEXT: %[[XL:[a-z0-9_]+]] = shardlin.local_shard %[[X]] {{.*}} -> tensor<?x16xf32>
// CHECK-NEXT: %[[Y:[a-z0-9_]+]] = shardlin.linear %[[XL]], %[[W]] weight_kn : (tensor<?x16xf32>, {{.*}}) -> tensor<?x12xf32>
// CHECK-NEXT: shardlin.from_local %[[Y]] : tensor<?x12xf32> ->
func.func @sequence(%x: tensor<10x16xf32>, %w: tensor<16x12xf32>) -> tensor<10x12xf32> {
  %rows = shard.sharding @grid split_axes = [[0]] sharded_dims_offsets = [0, 3, 6, 9, 10] : !shard.sharding
  %sk = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %rows : tensor<10x16xf32>
  %ws = shard.shard %w to %sk : tensor<16x12xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<10x12xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<10x12xf32>) -> tensor<10x12xf32>
  %y = linalg.matmul ins(%xs, %ws : tensor<10x16xf32>, tensor<16x12xf32>) outs(%i : tensor<10x12xf32>) -> tensor<10x12xf32>
  return %y : tensor<10x12xf32>
}

// -----

shard.grid @grid(shape = 2)
// A replicated weight: no linear, a rank-local matmul on each rank's rows.
// CHECK-LABEL: func.func @replicated_weight
// CHECK: %[[XL:[a-z0-9_]+]] = shardlin.local_shard {{.*}} -> tensor<2x8xf32>
// CHECK: linalg.fill {{.*}} -> tensor<2x6xf32>
// CHECK: linalg.matmul ins(%[[XL]], %{{.*}} : tensor<2x8xf32>, tensor<8x6xf32>) outs(%{{.*}} : tensor<2x6xf32>) -> tensor<2x6xf32>
// CHECK-NOT: shardlin.linear
func.func @replicated_weight(%x: tensor<4x8xf32>, %w: tensor<8x6xf32>) -> tensor<4x6xf32> {
  %rows = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %rows : tensor<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %y = linalg.matmul ins(%xs, %w : tensor<4x8xf32>, tensor<8x6xf32>) outs(%i : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}
