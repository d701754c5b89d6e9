// RUN: shardlin-opt %s -split-input-file --shardlin-import-shard | FileCheck %s
// RUN: shardlin-opt %s -split-input-file --shardlin-import-shard | shardlin-opt --verify-roundtrip > /dev/null

// How shardings propagate and how values move between them: elementwise
// ops keep the sharding of their operands (a replicated operand is sliced
// locally, a constant built in the rank's shape), annotate_for_users
// reshards (local_chunk, all_gather), a linear produces the result layout
// the module states where it can, and the signature says what each rank
// holds.

shard.grid @grid(shape = 4)
// A sequence-sharded x through elementwise ops: the rank's rows all along;
// the replicated residual r is sliced to the rank's rows; a splat constant
// is built in the rank's shape.
// CHECK-LABEL: func.func @elementwise_rows
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: !shardlin.sharded<tensor<8x16xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>, %[[R:[a-z0-9_]+]]: tensor<8x16xf32> {shardlin.replicated}) -> !shardlin.sharded<tensor<8x16xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>
// CHECK-NEXT: %[[XL:.*]] = shardlin.local_shard %[[X]] {{.*}} -> tensor<2x16xf32>
// CHECK-NEXT: %[[C:.*]] = arith.constant dense<2.000000e+00> : tensor<2x16xf32>
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[XL]], %[[C]] : tensor<2x16xf32>
// CHECK-NEXT: %[[RL:.*]] = shardlin.local_chunk %[[R]] along <dim = 0, placements = [0, 1, 2, 3]> : tensor<8x16xf32> -> tensor<2x16xf32>
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[M]], %[[RL]] : tensor<2x16xf32>
// CHECK-NEXT: %[[T:.*]] = math.tanh %[[S]] : tensor<2x16xf32>
// CHECK-NEXT: shardlin.from_local %[[T]] : tensor<2x16xf32> ->
func.func @elementwise_rows(%x: tensor<8x16xf32>, %r: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %rows = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %rows : tensor<8x16xf32>
  %two = arith.constant dense<2.0> : tensor<8x16xf32>
  %m = arith.mulf %xs, %two : tensor<8x16xf32>
  %s = arith.addf %m, %r : tensor<8x16xf32>
  %t = math.tanh %s : tensor<8x16xf32>
  return %t : tensor<8x16xf32>
}

// -----

shard.grid @grid(shape = 4)
// annotate_for_users reshards: rows to replicated is an all_gather (marked
// as the cost of the stated sharding, which --lower-sharded-linear reports
// with explain=true), back to rows a local_chunk; an unevenly split dim (10 rows) has `?` rows per
// rank.
// CHECK-LABEL: func.func @reshard
// CHECK-NEXT: %[[XL:.*]] = shardlin.local_shard %{{.*}} -> tensor<?x16xf32>
// CHECK-NEXT: %[[G:.*]] = shardlin.all_gather %[[XL]] along <dim = 0, placements = [0, 1, 2, 3]> {shardlin.stated_reshard = "the sharding stated for the users of this value (replicated; its producer gives split along dim 0 over 4 devices)"} : tensor<?x16xf32> -> tensor<10x16xf32>
// CHECK-NEXT: %[[E:.*]] = math.exp %[[G]] : tensor<10x16xf32>
// CHECK-NEXT: %[[L:.*]] = shardlin.local_chunk %[[E]] along <dim = 1, placements = [0, 1, 2, 3]> : tensor<10x16xf32> -> tensor<10x4xf32>
// CHECK-NEXT: shardlin.from_local %[[L]] : tensor<10x4xf32> -> !shardlin.sharded<tensor<10x16xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>
func.func @reshard(%x: tensor<10x16xf32>) -> tensor<10x16xf32> {
  %rows = shard.sharding @grid split_axes = [[0]] sharded_dims_offsets = [0, 3, 6, 9, 10] : !shard.sharding
  %rep = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %cols = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %rows : tensor<10x16xf32>
  %xr = shard.shard %xs to %rep annotate_for_users : tensor<10x16xf32>
  %e = math.exp %xr : tensor<10x16xf32>
  %ec = shard.shard %e to %cols annotate_for_users : tensor<10x16xf32>
  return %ec : tensor<10x16xf32>
}

// -----

shard.grid @grid(shape = 4)
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
// Megatron's MLP without sequence parallelism: the hidden features stay
// split between the linears (replicated -> features, features ->
// replicated); a linalg.generic on them with a vector broadcast along the
// features takes the rank's chunk of the vector; a scalar the body
// captures is carried over.
// CHECK-LABEL: func.func @mlp_features
// CHECK-SAME: %[[S:[a-z0-9_]+]]: tensor<32xf32>
// CHECK: %[[H:.*]] = shardlin.linear %{{.*}}, %{{.*}} weight_kn layouts replicated -> features : {{.*}} -> tensor<8x8xf32>
// CHECK: %[[SL:.*]] = shardlin.local_chunk %[[S]] along <dim = 0, placements = [0, 1, 2, 3]> : tensor<32xf32> -> tensor<8xf32>
// CHECK: %[[A:.*]] = linalg.generic {{.*}} ins(%[[H]], %[[SL]] : tensor<8x8xf32>, tensor<8xf32>) outs(%{{.*}} : tensor<8x8xf32>)
// CHECK: shardlin.linear %[[A]], %{{.*}} weight_kn layouts features -> replicated : {{.*}} -> tensor<8x16xf32>
func.func @mlp_features(%x: tensor<8x16xf32>, %w1: tensor<16x32xf32>, %s: tensor<32xf32>, %w2: tensor<32x16xf32>) -> tensor<8x16xf32> {
  %sn = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %sk = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %w1s = shard.shard %w1 to %sn : tensor<16x32xf32>
  %w2s = shard.shard %w2 to %sk : tensor<32x16xf32>
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %h = linalg.matmul ins(%x, %w1s : tensor<8x16xf32>, tensor<16x32xf32>) outs(%i : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e2 = tensor.empty() : tensor<8x32xf32>
  %a = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h, %s : tensor<8x32xf32>, tensor<32xf32>) outs(%e2 : tensor<8x32xf32>) {
  ^bb0(%v: f32, %c: f32, %o: f32):
    %p = arith.mulf %v, %c : f32
    %q = arith.mulf %p, %half : f32
    linalg.yield %q : f32
  } -> tensor<8x32xf32>
  %e3 = tensor.empty() : tensor<8x16xf32>
  %i3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = linalg.matmul ins(%a, %w2s : tensor<8x32xf32>, tensor<32x16xf32>) outs(%i3 : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

shard.grid @grid(shape = 4)
// A result the module states: a K split of a replicated x whose result is
// annotated sequence-sharded is one linear that reduce-scatters the rows
// (at the annotation's offsets), not an all_reduce and a slice.
// CHECK-LABEL: func.func @stated_rows
// CHECK: shardlin.linear %{{.*}}, %{{.*}} weight_kn layouts replicated -> rows along <dim = 0, placements = [0, 1, 2, 3], bounds = [0, 4, 4, 8, 10]> : (tensor<10x16xf32>, {{.*}}) -> tensor<?x12xf32>
func.func @stated_rows(%x: tensor<10x16xf32>, %w: tensor<16x12xf32>) -> tensor<10x12xf32> {
  %sk = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %rows = shard.sharding @grid split_axes = [[0]] sharded_dims_offsets = [0, 4, 4, 8, 10] : !shard.sharding
  %ws = shard.shard %w to %sk : tensor<16x12xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<10x12xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<10x12xf32>) -> tensor<10x12xf32>
  %y = linalg.matmul ins(%x, %ws : tensor<10x16xf32>, tensor<16x12xf32>) outs(%i : tensor<10x12xf32>) -> tensor<10x12xf32>
  %ys = shard.shard %y to %rows : tensor<10x12xf32>
  return %ys : tensor<10x12xf32>
}

// -----

shard.grid @grid(shape = 2)
// The hidden values of a sequence-parallel MLP annotated split along their
// features: rows -> features and features -> rows, one all_gather and one
// reduce_scatter in the lowering.
// CHECK-LABEL: func.func @stated_features
// CHECK: %[[H:.*]] = shardlin.linear %{{.*}}, %{{.*}} weight_kn layouts rows -> features : (tensor<2x8xf32>, {{.*}}) -> tensor<4x6xf32>
// CHECK: shardlin.linear %[[H]], %{{.*}} weight_kn layouts features -> rows : (tensor<4x6xf32>, {{.*}}) -> tensor<2x8xf32>
func.func @stated_features(%x: tensor<4x8xf32>, %w1: tensor<8x12xf32>, %w2: tensor<12x8xf32>) -> tensor<4x8xf32> {
  %rows = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %sn = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %sk = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %rows : tensor<4x8xf32>
  %w1s = shard.shard %w1 to %sn : tensor<8x12xf32>
  %w2s = shard.shard %w2 to %sk : tensor<12x8xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x12xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<4x12xf32>) -> tensor<4x12xf32>
  %h = linalg.matmul ins(%xs, %w1s : tensor<4x8xf32>, tensor<8x12xf32>) outs(%i : tensor<4x12xf32>) -> tensor<4x12xf32>
  %hs = shard.shard %h to %sn : tensor<4x12xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%hs, %w2s : tensor<4x12xf32>, tensor<12x8xf32>) outs(%i2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %ys = shard.shard %y to %rows : tensor<4x8xf32>
  return %ys : tensor<4x8xf32>
}

// -----

shard.grid @grid(shape = 2)
// Mixed precision: extf and truncf keep the rank's shape; a splat of an
// unevenly split value's shape is a fill sized by the rank's rows.
// CHECK-LABEL: func.func @mixed_precision
// CHECK-NEXT: %[[XL:.*]] = shardlin.local_shard %{{.*}} -> tensor<?x4xbf16>
// CHECK-NEXT: %[[F:.*]] = arith.extf %[[XL]] : tensor<?x4xbf16> to tensor<?x4xf32>
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[D:.*]] = tensor.dim %[[F]], %[[C0]] : tensor<?x4xf32>
// CHECK-NEXT: %[[K:.*]] = arith.constant 3.000000e+00 : f32
// CHECK-NEXT: %[[E:.*]] = tensor.empty(%[[D]]) : tensor<?x4xf32>
// CHECK-NEXT: %[[FILL:.*]] = linalg.fill ins(%[[K]] : f32) outs(%[[E]] : tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[F]], %[[FILL]] : tensor<?x4xf32>
// CHECK-NEXT: %[[T:.*]] = arith.truncf %[[M]] : tensor<?x4xf32> to tensor<?x4xbf16>
func.func @mixed_precision(%x: tensor<3x4xbf16>) -> tensor<3x4xbf16> {
  %rows = shard.sharding @grid split_axes = [[0]] sharded_dims_offsets = [0, 2, 3] : !shard.sharding
  %xs = shard.shard %x to %rows : tensor<3x4xbf16>
  %f = arith.extf %xs : tensor<3x4xbf16> to tensor<3x4xf32>
  %k = arith.constant dense<3.0> : tensor<3x4xf32>
  %m = arith.mulf %f, %k : tensor<3x4xf32>
  %t = arith.truncf %m : tensor<3x4xf32> to tensor<3x4xbf16>
  return %t : tensor<3x4xbf16>
}

// -----

shard.grid @grid(shape = 2)
// Reshapes of a row-split value: the split dim stays outermost, its chunk
// boundaries scaled by the dims folded into it (2 x 3 rows at [0, 1, 2]
// are 6 rows at [0, 3, 6]).
// CHECK-LABEL: func.func @reshapes
// CHECK-NEXT: %[[XL:.*]] = shardlin.local_shard %{{.*}} -> tensor<1x3x4xf32>
// CHECK-NEXT: %[[C:.*]] = tensor.collapse_shape %[[XL]] {{\[}}[0, 1], [2]] : tensor<1x3x4xf32> into tensor<3x4xf32>
// CHECK-NEXT: %[[N:.*]] = arith.negf %[[C]] : tensor<3x4xf32>
// CHECK-NEXT: shardlin.from_local %[[N]] : tensor<3x4xf32> -> !shardlin.sharded<tensor<6x4xf32>, #shardlin.chunk<dim = 0, placements = [0, 1]>>
func.func @reshapes(%x: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  %rows = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %rows : tensor<2x3x4xf32>
  %c = tensor.collapse_shape %xs [[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
  %n = arith.negf %c : tensor<6x4xf32>
  return %n : tensor<6x4xf32>
}

// -----

shard.grid @grid(shape = 2)
// A transpose of a split value is rank-local: the split dim moves.
// CHECK-LABEL: func.func @transpose
// CHECK-NEXT: %[[XL:.*]] = shardlin.local_shard %{{.*}} -> tensor<2x6xf32>
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<6x2xf32>
// CHECK-NEXT: %[[T:.*]] = linalg.transpose ins(%[[XL]] : tensor<2x6xf32>) outs(%[[E]] : tensor<6x2xf32>) permutation = [1, 0]
// CHECK-NEXT: shardlin.from_local %[[T]] : tensor<6x2xf32> -> !shardlin.sharded<tensor<6x4xf32>, #shardlin.chunk<dim = 1, placements = [0, 1]>>
func.func @transpose(%x: tensor<4x6xf32>) -> tensor<6x4xf32> {
  %rows = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %rows : tensor<4x6xf32>
  %e = tensor.empty() : tensor<6x4xf32>
  %t = linalg.transpose ins(%xs : tensor<4x6xf32>) outs(%e : tensor<6x4xf32>) permutation = [1, 0]
  return %t : tensor<6x4xf32>
}

// -----

shard.grid @grid(shape = 2)
// Nothing annotated: everything replicated, the function unchanged but
// for the grid and its argument's mark (shardlin.replicated: every rank
// must pass the same x).
// CHECK-LABEL: func.func @unannotated
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<4xf32> {shardlin.replicated}) -> tensor<4xf32>
// CHECK-NEXT: %[[Y:.*]] = math.exp %[[X]] : tensor<4xf32>
// CHECK-NEXT: return %[[Y]] : tensor<4xf32>
func.func @unannotated(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = math.exp %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
