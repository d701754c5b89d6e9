// RUN: shardlin-opt %s --shardlin-import-shard -split-input-file -verify-diagnostics
//
// What the fused q/k/v import refuses (docs/attention.md, "Fused QKV"), in
// the exporter's form of a linear on a 2-D x (transpose of the [N, H]
// weight, matmul into a zero fill) whose result is sliced along its
// features and reshaped into heads: a located error each.

// k ends inside a head of q's head_dim: q is 2 heads of 4, k and v 3 heads of 2 (features [8, 14), [14, 20)).
shard.grid @tp(shape = 2)
func.func @f(%x: tensor<4x8xf32>, %w: tensor<20x8xf32> {shardlin.parameter = "c_attn.weight"}) -> (tensor<4x2x4xf32>, tensor<4x3x2xf32>, tensor<4x3x2xf32>) {
  %s = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %wa = shard.shard %w to %s : tensor<20x8xf32>
  %e0 = tensor.empty() : tensor<8x20xf32>
  %t = linalg.transpose ins(%wa : tensor<20x8xf32>) outs(%e0 : tensor<8x20xf32>) permutation = [1, 0]
  %z = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4x20xf32>
  %f = linalg.fill ins(%z : f32) outs(%e1 : tensor<4x20xf32>) -> tensor<4x20xf32>
  %p = linalg.matmul ins(%x, %t : tensor<4x8xf32>, tensor<8x20xf32>) outs(%f : tensor<4x20xf32>) -> tensor<4x20xf32>
  %p0 = tensor.extract_slice %p[0, 0] [4, 8] [1, 1] : tensor<4x20xf32> to tensor<4x8xf32>
  // expected-error@+1 {{slices the fused q/k/v weight at feature 14, inside head 3 (head_dim 4 of q): each of q, k and v must be whole heads}}
  %p1 = tensor.extract_slice %p[0, 8] [4, 6] [1, 1] : tensor<4x20xf32> to tensor<4x6xf32>
  %p2 = tensor.extract_slice %p[0, 14] [4, 6] [1, 1] : tensor<4x20xf32> to tensor<4x6xf32>
  %h0 = tensor.expand_shape %p0 [[0], [1, 2]] output_shape [4, 2, 4] : tensor<4x8xf32> into tensor<4x2x4xf32>
  %h1 = tensor.expand_shape %p1 [[0], [1, 2]] output_shape [4, 3, 2] : tensor<4x6xf32> into tensor<4x3x2xf32>
  %h2 = tensor.expand_shape %p2 [[0], [1, 2]] output_shape [4, 3, 2] : tensor<4x6xf32> into tensor<4x3x2xf32>
  return %h0, %h1, %h2 : tensor<4x2x4xf32>, tensor<4x3x2xf32>, tensor<4x3x2xf32>
}

// -----

// DTensor's ColwiseParallel on a fused weight: one contiguous range per rank (rank 0 would hold all of q and half of k).
shard.grid @tp(shape = 2)
func.func @f(%x: tensor<4x8xf32>, %w: tensor<24x8xf32> {shardlin.parameter = "c_attn.weight"}) -> (tensor<4x2x4xf32>, tensor<4x2x4xf32>, tensor<4x2x4xf32>) {
  %s = shard.sharding @tp split_axes = [[0]] sharded_dims_offsets = [0, 12, 24] : !shard.sharding
  // expected-error@+1 {{a fused q/k/v weight is split in whole heads of each of q, k and v (three row ranges per rank), which sharded_dims_offsets (one range per rank) cannot state: annotate it split on dim 0 without offsets or halos}}
  %wa = shard.shard %w to %s : tensor<24x8xf32>
  %e0 = tensor.empty() : tensor<8x24xf32>
  %t = linalg.transpose ins(%wa : tensor<24x8xf32>) outs(%e0 : tensor<8x24xf32>) permutation = [1, 0]
  %z = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4x24xf32>
  %f = linalg.fill ins(%z : f32) outs(%e1 : tensor<4x24xf32>) -> tensor<4x24xf32>
  %p = linalg.matmul ins(%x, %t : tensor<4x8xf32>, tensor<8x24xf32>) outs(%f : tensor<4x24xf32>) -> tensor<4x24xf32>
  %p0 = tensor.extract_slice %p[0, 0] [4, 8] [1, 1] : tensor<4x24xf32> to tensor<4x8xf32>
  %p1 = tensor.extract_slice %p[0, 8] [4, 8] [1, 1] : tensor<4x24xf32> to tensor<4x8xf32>
  %p2 = tensor.extract_slice %p[0, 16] [4, 8] [1, 1] : tensor<4x24xf32> to tensor<4x8xf32>
  %h0 = tensor.expand_shape %p0 [[0], [1, 2]] output_shape [4, 2, 4] : tensor<4x8xf32> into tensor<4x2x4xf32>
  %h1 = tensor.expand_shape %p1 [[0], [1, 2]] output_shape [4, 2, 4] : tensor<4x8xf32> into tensor<4x2x4xf32>
  %h2 = tensor.expand_shape %p2 [[0], [1, 2]] output_shape [4, 2, 4] : tensor<4x8xf32> into tensor<4x2x4xf32>
  return %h0, %h1, %h2 : tensor<4x2x4xf32>, tensor<4x2x4xf32>, tensor<4x2x4xf32>
}

// -----

// The whole projection used besides its slices.
shard.grid @tp(shape = 2)
func.func @f(%x: tensor<4x8xf32>, %w: tensor<24x8xf32> {shardlin.parameter = "c_attn.weight"}) -> (tensor<4x2x4xf32>, tensor<4x2x4xf32>, tensor<4x2x4xf32>, tensor<4x24xf32>) {
  %s = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %wa = shard.shard %w to %s : tensor<24x8xf32>
  %e0 = tensor.empty() : tensor<8x24xf32>
  %t = linalg.transpose ins(%wa : tensor<24x8xf32>) outs(%e0 : tensor<8x24xf32>) permutation = [1, 0]
  %z = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4x24xf32>
  %f = linalg.fill ins(%z : f32) outs(%e1 : tensor<4x24xf32>) -> tensor<4x24xf32>
  %p = linalg.matmul ins(%x, %t : tensor<4x8xf32>, tensor<8x24xf32>) outs(%f : tensor<4x24xf32>) -> tensor<4x24xf32>
  %p0 = tensor.extract_slice %p[0, 0] [4, 8] [1, 1] : tensor<4x24xf32> to tensor<4x8xf32>
  %p1 = tensor.extract_slice %p[0, 8] [4, 8] [1, 1] : tensor<4x24xf32> to tensor<4x8xf32>
  %p2 = tensor.extract_slice %p[0, 16] [4, 8] [1, 1] : tensor<4x24xf32> to tensor<4x8xf32>
  %h0 = tensor.expand_shape %p0 [[0], [1, 2]] output_shape [4, 2, 4] : tensor<4x8xf32> into tensor<4x2x4xf32>
  %h1 = tensor.expand_shape %p1 [[0], [1, 2]] output_shape [4, 2, 4] : tensor<4x8xf32> into tensor<4x2x4xf32>
  %h2 = tensor.expand_shape %p2 [[0], [1, 2]] output_shape [4, 2, 4] : tensor<4x8xf32> into tensor<4x2x4xf32>
  // expected-error@+1 {{uses the whole projection of a weight split by rows whose other users slice it into q, k and v: the import splits a fused q/k/v weight into three linears, which leaves no whole projection}}
  return %h0, %h1, %h2, %p : tensor<4x2x4xf32>, tensor<4x2x4xf32>, tensor<4x2x4xf32>, tensor<4x24xf32>
}

// -----

// A fused weight that is a plain argument (no shardlin.parameter): no checkpoint to read its ranges from.
shard.grid @tp(shape = 2)
func.func @f(%x: tensor<4x8xf32>, %w: tensor<24x8xf32>) -> (tensor<4x2x4xf32>, tensor<4x2x4xf32>, tensor<4x2x4xf32>) {
  %s = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  // expected-error@+1 {{the fused q/k/v weight is neither a constant nor a parameter argument (shardlin.parameter): the import splits it into three row ranges, which it does for a constant and for a parameter that each rank reads from a checkpoint (--params)}}
  %wa = shard.shard %w to %s : tensor<24x8xf32>
  %e0 = tensor.empty() : tensor<8x24xf32>
  %t = linalg.transpose ins(%wa : tensor<24x8xf32>) outs(%e0 : tensor<8x24xf32>) permutation = [1, 0]
  %z = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4x24xf32>
  %f = linalg.fill ins(%z : f32) outs(%e1 : tensor<4x24xf32>) -> tensor<4x24xf32>
  %p = linalg.matmul ins(%x, %t : tensor<4x8xf32>, tensor<8x24xf32>) outs(%f : tensor<4x24xf32>) -> tensor<4x24xf32>
  %p0 = tensor.extract_slice %p[0, 0] [4, 8] [1, 1] : tensor<4x24xf32> to tensor<4x8xf32>
  %p1 = tensor.extract_slice %p[0, 8] [4, 8] [1, 1] : tensor<4x24xf32> to tensor<4x8xf32>
  %p2 = tensor.extract_slice %p[0, 16] [4, 8] [1, 1] : tensor<4x24xf32> to tensor<4x8xf32>
  %h0 = tensor.expand_shape %p0 [[0], [1, 2]] output_shape [4, 2, 4] : tensor<4x8xf32> into tensor<4x2x4xf32>
  %h1 = tensor.expand_shape %p1 [[0], [1, 2]] output_shape [4, 2, 4] : tensor<4x8xf32> into tensor<4x2x4xf32>
  %h2 = tensor.expand_shape %p2 [[0], [1, 2]] output_shape [4, 2, 4] : tensor<4x8xf32> into tensor<4x2x4xf32>
  return %h0, %h1, %h2 : tensor<4x2x4xf32>, tensor<4x2x4xf32>, tensor<4x2x4xf32>
}

// -----

// The k part is used as it is, not reshaped into heads.
shard.grid @tp(shape = 2)
func.func @f(%x: tensor<4x8xf32>, %w: tensor<24x8xf32> {shardlin.parameter = "c_attn.weight"}) -> (tensor<4x2x4xf32>, tensor<4x8xf32>, tensor<4x2x4xf32>) {
  %s = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %wa = shard.shard %w to %s : tensor<24x8xf32>
  %e0 = tensor.empty() : tensor<8x24xf32>
  %t = linalg.transpose ins(%wa : tensor<24x8xf32>) outs(%e0 : tensor<8x24xf32>) permutation = [1, 0]
  %z = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4x24xf32>
  %f = linalg.fill ins(%z : f32) outs(%e1 : tensor<4x24xf32>) -> tensor<4x24xf32>
  %p = linalg.matmul ins(%x, %t : tensor<4x8xf32>, tensor<8x24xf32>) outs(%f : tensor<4x24xf32>) -> tensor<4x24xf32>
  %p0 = tensor.extract_slice %p[0, 0] [4, 8] [1, 1] : tensor<4x24xf32> to tensor<4x8xf32>
  // expected-error@+1 {{the k part of a fused q/k/v projection is not reshaped into heads (a tensor.expand_shape to [..., heads, head_dim]): the import splits the fused weight in whole heads}}
  %p1 = tensor.extract_slice %p[0, 8] [4, 8] [1, 1] : tensor<4x24xf32> to tensor<4x8xf32>
  %p2 = tensor.extract_slice %p[0, 16] [4, 8] [1, 1] : tensor<4x24xf32> to tensor<4x8xf32>
  %h0 = tensor.expand_shape %p0 [[0], [1, 2]] output_shape [4, 2, 4] : tensor<4x8xf32> into tensor<4x2x4xf32>
  %h2 = tensor.expand_shape %p2 [[0], [1, 2]] output_shape [4, 2, 4] : tensor<4x8xf32> into tensor<4x2x4xf32>
  return %h0, %p1, %h2 : tensor<4x2x4xf32>, tensor<4x8xf32>, tensor<4x2x4xf32>
}
