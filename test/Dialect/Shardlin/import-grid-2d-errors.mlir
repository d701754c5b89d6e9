// RUN: shardlin-opt %s -split-input-file -verify-diagnostics --shardlin-import-shard

// The diagnostics of a 2-D grid's data-parallel split (ImportShardGrid.cpp):
// one located error naming what breaks the rule that axis 0 splits only the
// batch, into as many rows per replica, which stay each replica's own.

#nk = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
shard.grid @grid(shape = 2x2)
func.func @axis0_on_dim1(%w: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error@+1 {{axis 0 of the 2-D grid @grid is its data-parallel axis: it may split only dim 0 of a tensor (the batch), as the first of that dim's axes ([[0]] or [[0, 1]]); here tensor dim 1 is split over grid axes [0]}}
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %ws = shard.shard %w to %s : tensor<8x16xf32>
  return %ws : tensor<8x16xf32>
}

// -----

shard.grid @grid(shape = 2x2)
func.func @axis0_minor(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error@+1 {{axis 0 of the 2-D grid @grid is its data-parallel axis: it may split only dim 0 of a tensor (the batch), as the first of that dim's axes ([[0]] or [[0, 1]]); here tensor dim 0 is split over grid axes [1, 0]}}
  %s = shard.sharding @grid split_axes = [[1, 0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<8x16xf32>
  return %xs : tensor<8x16xf32>
}

// -----

shard.grid @grid(shape = 2x2)
func.func @uneven_replicas(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error@+1 {{sharded_dims_offsets [0, 2, 5, 6, 8] give the data-parallel replicas of grid @grid different rows or a different split of them (replica 1 against replica 0): every replica runs the same program, so each must hold as many rows, split the same way}}
  %s = shard.sharding @grid split_axes = [[0, 1]] sharded_dims_offsets = [0, 2, 5, 6, 8] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<8x16xf32>
  return %xs : tensor<8x16xf32>
}

// -----

shard.grid @grid(shape = 2x2)
func.func @not_divisible(%x: tensor<7x16xf32>) -> tensor<7x16xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  // expected-error@+1 {{dim 0 of 'tensor<7x16xf32>' is split over the 2 data-parallel replicas of grid @grid, but 2 does not divide 7: every replica runs the same program on as many rows}}
  %xs = shard.shard %x to %s : tensor<7x16xf32>
  return %xs : tensor<7x16xf32>
}

// -----

#nk = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
shard.grid @grid(shape = 2x2)
func.func @weight_over_replicas(%x: tensor<8x16xf32>, %w: tensor<8x16xf32>) -> tensor<8x8xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %ws = shard.shard %w to %s : tensor<8x16xf32>
  %e = tensor.empty() : tensor<8x8xf32>
  // expected-error@+1 {{multiplies by a value split over the data-parallel axis of grid @grid as its right-hand operand (a weight): the batch is the left-hand operand's rows}}
  %mm = linalg.matmul indexing_maps = #nk ins(%x, %ws : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %mm : tensor<8x8xf32>
}

// -----

shard.grid @grid(shape = 2x2)
func.func @gathered_batch(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %r = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<8x16xf32>
  // expected-error@+1 {{gives a value split over the data-parallel axis of grid @grid a sharding without that axis: that would gather the batch across the replicas, which run independently (keep axis 0 on dim 0 of every sharding of the batch)}}
  %xr = shard.shard %xs to %r annotate_for_users : tensor<8x16xf32>
  return %xr : tensor<8x16xf32>
}

// -----

shard.grid @grid(shape = 2x2)
func.func @split_inside(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %y = math.exp %x : tensor<8x16xf32>
  // expected-error@+1 {{splits over the data-parallel axis of grid @grid a value that is not the batch of an argument split that way: the batch is split over the replicas where it enters (an argument's sharding), and each replica's rows stay its own}}
  %ys = shard.shard %y to %s : tensor<8x16xf32>
  return %ys : tensor<8x16xf32>
}

// -----

shard.grid @grid(shape = 2x2)
func.func @mixed(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<8x16xf32>
  // expected-error@+1 {{its operand ('tensor<8x16xf32>') is not split over the data-parallel replicas like the batch it is combined with; only values built in place (tensor.empty, splat constants, fills, vector broadcasts) are rebuilt at one replica's rows}}
  %z = arith.addf %xs, %y : tensor<8x16xf32>
  return %z : tensor<8x16xf32>
}

// -----

shard.grid @grid(shape = 2x2)
func.func @batch_moved(%x: tensor<8x16xf32>) -> tensor<16x8xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<8x16xf32>
  %e = tensor.empty() : tensor<16x8xf32>
  // expected-error@+1 {{moves dim 0 of a value split over the data-parallel axis of grid @grid: the batch must stay dim 0}}
  %t = linalg.transpose ins(%xs : tensor<8x16xf32>) outs(%e : tensor<16x8xf32>) permutation = [1, 0]
  return %t : tensor<16x8xf32>
}

// -----

shard.grid @grid(shape = 2x2)
func.func @unsupported(%x: tensor<8x16xf32>) -> tensor<2x16xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<8x16xf32>
  // expected-error@+1 {{'tensor.extract_slice' is not supported on a value split over the data-parallel axis of grid @grid (the replicas' rows go through linalg.matmul as its left-hand operand, elementwise ops, transposes that keep dim 0, reshapes and func.return)}}
  %e = tensor.extract_slice %xs[0, 0] [2, 16] [1, 1] : tensor<8x16xf32> to tensor<2x16xf32>
  return %e : tensor<2x16xf32>
}

// -----

shard.grid @grid(shape = 2x?)
// expected-error@-1 {{shard.grid @grid has a dynamic or empty shape: the import needs the number of devices on each axis statically}}
