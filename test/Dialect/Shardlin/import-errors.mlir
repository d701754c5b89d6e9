// RUN: shardlin-opt %s -split-input-file -verify-diagnostics --shardlin-import-shard

// Every diagnostic of the import: one located error naming the op or the
// attribute and what is supported; the function is left as it was.

// expected-error@+1 {{shard.grid @grid3d has 3 axes (shape 2x2x4): shardlin imports 1-D grids (tensor parallelism over one axis) and 2-D ones (data-parallel axis 0, tensor-parallel axis 1)}}
shard.grid @grid3d(shape = 2x2x4)
func.func @f(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  return %x : tensor<8x16xf32>
}

// -----

// expected-error@+1 {{shard.grid @grid has a dynamic or empty shape: the import needs the number of devices (shardlin's world size) statically}}
shard.grid @grid(shape = ?)

// -----

shard.grid @a(shape = 2)
// expected-error@+1 {{a second shard.grid (@b after @a): the import takes one grid per module}}
shard.grid @b(shape = 2)

// -----

shard.grid @grid(shape = 4)
func.func @halo(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error@+1 {{halo_sizes are not supported: shardlin splits tensors into disjoint chunks}}
  %s = shard.sharding @grid split_axes = [[0]] halo_sizes = [1, 2] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<8x16xf32>
  return %xs : tensor<8x16xf32>
}

// -----

shard.grid @grid(shape = 2)
func.func @dynamic_offsets(%x: tensor<8x16xf32>, %o: i64) -> tensor<8x16xf32> {
  // expected-error@+1 {{dynamic sharded_dims_offsets are not supported: give them as constants}}
  %s = shard.sharding @grid split_axes = [[0]] sharded_dims_offsets = [0, %o, 8] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<8x16xf32>
  return %xs : tensor<8x16xf32>
}

// -----

shard.grid @grid(shape = 4)
func.func @offsets_end(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-note@+1 {{the sharding}}
  %s = shard.sharding @grid split_axes = [[0]] sharded_dims_offsets = [0, 2, 4, 6, 7] : !shard.sharding
  // expected-error@+1 {{sharded_dims_offsets [0, 2, 4, 6, 7] are not the boundaries of 4 chunks of tensor dim 0 of 'tensor<8x16xf32>': bounds end at 7 but the dim has 8 elements}}
  %xs = shard.shard %x to %s : tensor<8x16xf32>
  return %xs : tensor<8x16xf32>
}

// -----

shard.grid @grid(shape = 4)
func.func @offsets_count(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // The shard dialect's own verifier reports this one.
  // expected-error@+1 {{sharded dims offsets has wrong size}}
  %s = shard.sharding @grid split_axes = [[0]] sharded_dims_offsets = [0, 4, 8] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<8x16xf32>
  return %xs : tensor<8x16xf32>
}

// -----

shard.grid @grid(shape = 4)
func.func @offsets_start(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-note@+1 {{the sharding}}
  %s = shard.sharding @grid split_axes = [[0]] sharded_dims_offsets = [1, 2, 4, 6, 8] : !shard.sharding
  // expected-error@+1 {{bounds must start at 0, got 1}}
  %xs = shard.shard %x to %s : tensor<8x16xf32>
  return %xs : tensor<8x16xf32>
}

// -----

shard.grid @grid(shape = 4)
func.func @not_divisible(%x: tensor<8x10xf32>) -> tensor<8x10xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  // expected-error@+1 {{tensor dim 1 of 'tensor<8x10xf32>' (10 elements) is split over the 4 devices of grid @grid without sharded_dims_offsets, but 4 does not divide 10: the shard dialect sizes every shard 10 / 4 = 2, which is no split of the dim; give the chunk boundaries as sharded_dims_offsets (W + 1 values from 0 to 10)}}
  %xs = shard.shard %x to %s : tensor<8x10xf32>
  return %xs : tensor<8x10xf32>
}

// -----

shard.grid @grid(shape = 4)
func.func @dynamic_dim(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  // expected-error@+1 {{tensor dim 0 of 'tensor<?x16xf32>' is split over the grid but is dynamic; shardlin splits static dims}}
  %xs = shard.shard %x to %s : tensor<?x16xf32>
  return %xs : tensor<?x16xf32>
}

// -----

shard.grid @grid(shape = 4)
func.func @two_dims(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error@+1 {{tensor dim 1 is split over grid axes [1]; the 1-D grid @grid has only axis 0}}
  %s = shard.sharding @grid split_axes = [[0], [1]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<8x16xf32>
  return %xs : tensor<8x16xf32>
}

// -----

shard.grid @grid(shape = 4)
func.func @too_many_axes(%x: tensor<8xf32>) -> tensor<8xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  // expected-error@+1 {{the sharding's split_axes have 2 entries for a rank-1 tensor 'tensor<8xf32>'}}
  %xs = shard.shard %x to %s : tensor<8xf32>
  return %xs : tensor<8xf32>
}

// -----

shard.grid @grid(shape = 4)
func.func @conflicting_annotations(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %rows = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %cols = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %a = shard.shard %x to %rows : tensor<8x16xf32>
  // expected-error@+1 {{conflicting shardings of one value: split along dim 1 over 4 devices here, split along dim 0 over 4 devices before}}
  %b = shard.shard %x to %cols : tensor<8x16xf32>
  return %b : tensor<8x16xf32>
}

// -----

shard.grid @grid(shape = 4)
func.func @elementwise_conflict(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %rows = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %cols = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %rows : tensor<8x16xf32>
  %ys = shard.shard %y to %cols : tensor<8x16xf32>
  // expected-error@+1 {{operands #0 and #1 have conflicting shardings: split along dim 0 over 4 devices and split along dim 1 over 4 devices; an elementwise op keeps the sharding of its operands}}
  %z = arith.addf %xs, %ys : tensor<8x16xf32>
  return %z : tensor<8x16xf32>
}

// -----

shard.grid @grid(shape = 2)
func.func @mixed_matmul(%x: tensor<4x8xbf16>, %w: tensor<8x6xbf16>) -> tensor<4x6xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %ws = shard.shard %w to %s : tensor<8x6xbf16>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  // expected-error@+1 {{a matmul of 'bf16' and 'bf16' into 'f32' is imported only when its f32 result is rounded to 'bf16' by the linalg.generic of arith.truncf that is its only user (torch-mlir's form: shardlin's 'bf16' linear accumulates in f32 and rounds once); a linear has no f32 result for 'bf16' operands}}
  %y = linalg.matmul ins(%x, %ws : tensor<4x8xbf16>, tensor<8x6xbf16>) outs(%i : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

// -----

shard.grid @grid(shape = 2)
func.func @transposed_a(%x: tensor<8x4xf32>, %w: tensor<8x6xf32>) -> tensor<4x6xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %ws = shard.shard %w to %s : tensor<8x6xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  // expected-error@+1 {{a matmul with these indexing_maps is not supported: a linear's weight is K x N ((d0, d2), (d2, d1), (d0, d1)) or N x K ((d0, d2), (d1, d2), (d0, d1))}}
  %y = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%x, %ws : tensor<8x4xf32>, tensor<8x6xf32>) outs(%i : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

// -----

shard.grid @grid(shape = 2)
func.func @empty_init(%x: tensor<4x8xf32>, %w: tensor<8x6xf32>) -> tensor<4x6xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %ws = shard.shard %w to %s : tensor<8x6xf32>
  %e = tensor.empty() : tensor<4x6xf32>
  // expected-error@+1 {{the matmul accumulates into a tensor.empty, whose contents are undefined; initialize it with linalg.fill or a broadcast bias}}
  %y = linalg.matmul ins(%x, %ws : tensor<4x8xf32>, tensor<8x6xf32>) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

// -----

shard.grid @grid(shape = 2)
func.func @features_x_n_split(%x: tensor<4x8xf32>, %w: tensor<8x6xf32>) -> tensor<4x6xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x8xf32>
  %ws = shard.shard %w to %s : tensor<8x6xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  // expected-error@+1 {{x is split along its features (K) but the weight along N: a linear needs x whole there (conflicting shardings)}}
  %y = linalg.matmul ins(%xs, %ws : tensor<4x8xf32>, tensor<8x6xf32>) outs(%i : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

// -----

shard.grid @grid(shape = 2)
func.func @features_chunks(%x: tensor<4x8xf32>, %w: tensor<8x6xf32>) -> tensor<4x6xf32> {
  %sx = shard.sharding @grid split_axes = [[], [0]] sharded_dims_offsets = [0, 2, 8] : !shard.sharding
  %sw = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %sx : tensor<4x8xf32>
  %ws = shard.shard %w to %sw : tensor<8x6xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  // expected-error@+1 {{x's features are split along dim 1 over 2 devices at offsets [0, 2, 8] but the weight's K is split along dim 0 over 2 devices: the chunks must be the same (conflicting shardings)}}
  %y = linalg.matmul ins(%xs, %ws : tensor<4x8xf32>, tensor<8x6xf32>) outs(%i : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

// -----

shard.grid @grid(shape = 2)
func.func @k_split_x_replicated_weight(%x: tensor<4x8xf32>, %w: tensor<8x6xf32>) -> tensor<4x6xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  // expected-error@+1 {{x is split along dim 1 over 2 devices but the weight is replicated: a contraction over a split K needs a split weight}}
  %y = linalg.matmul ins(%xs, %w : tensor<4x8xf32>, tensor<8x6xf32>) outs(%i : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

// -----

shard.grid @grid(shape = 2)
func.func @unsupported_op(%x: tensor<4x8xf32>) -> tensor<2x8xf32> {
  // expected-error@+1 {{'tensor.extract_slice' is not supported by the import (supported: shard.sharding and shard.shard; linalg.matmul (a linear when its weight is split); elementwise arith and math ops on tensors; linalg ops with parallel iterators and identity maps (or a vector broadcast along the last dim): linalg.generic, linalg.elementwise, linalg.add, ..., linalg.fill, linalg.broadcast of a vector; reductions over the last dim (a norm's: linalg.generic or linalg.reduce, addf or maximumf) and their broadcast along the rows; linalg.transpose; tensor.empty, tensor.collapse_shape, tensor.expand_shape, tensor.dim; arith.constant; func.return; tm_tensor.attention (torch-mlir's causal scaled_dot_product_attention, with its reshapes) and causal attention written out (q @ k^T, scale, mask, softmax, @ v as batch_matmuls and generics))}}
  %s = tensor.extract_slice %x[0, 0] [2, 8] [1, 1] : tensor<4x8xf32> to tensor<2x8xf32>
  return %s : tensor<2x8xf32>
}

// -----

shard.grid @grid(shape = 2)
func.func @reduction(%x: tensor<4x8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  // expected-error@+1 {{'linalg.reduce' is not supported by the import: a linalg op is imported as a linear (linalg.matmul), as an elementwise op (parallel iterators, identity maps or a vector broadcast along the last dim, tensors) or as a reduction over the last dim (addf, maximumf or maxnumf)}}
  %r = linalg.reduce ins(%x : tensor<4x8xf32>) outs(%e : tensor<8xf32>) dimensions = [0]
    (%a: f32, %b: f32) {
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    }
  return %r : tensor<8xf32>
}

// -----

shard.grid @grid(shape = 2)
// expected-error@+1 {{the import takes functions of one block (structured control flow such as scf.for is not supported)}}
func.func @blocks(%x: tensor<4xf32>) -> tensor<4xf32> {
  cf.br ^bb1(%x : tensor<4xf32>)
^bb1(%y: tensor<4xf32>):
  return %y : tensor<4xf32>
}

// -----

shard.grid @grid(shape = 2)
func.func @sharding_argument(%x: tensor<4x8xf32>, %s: !shard.sharding) -> tensor<4x8xf32> {
  // expected-error@+1 {{the sharding must be a shard.sharding op of this function (block arguments and other producers of !shard.sharding are not supported)}}
  %xs = shard.shard %x to %s : tensor<4x8xf32>
  return %xs : tensor<4x8xf32>
}

// -----

shard.grid @grid(shape = 2)
// expected-error@+1 {{argument #0 ('tensor<4x8xi32>', split along dim 0 over 2 devices): sharded tensor element type 'i32' is not supported (expected f16, bf16, f32 or f64)}}
func.func @integer_argument(%x: tensor<4x8xi32>) -> tensor<4x8xi32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<4x8xi32>
  return %xs : tensor<4x8xi32>
}

// -----

shard.grid @grid(shape = 2)
func.func @collapse_inner(%x: tensor<2x4x8xf32>) -> tensor<8x8xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<2x4x8xf32>
  // expected-error@+1 {{collapses the split dim 1 into dims outside it; shardlin keeps a split dim outermost in its group}}
  %c = tensor.collapse_shape %xs [[0, 1], [2]] : tensor<2x4x8xf32> into tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}

// -----

shard.grid @grid(shape = 2)
func.func @expand_boundaries(%x: tensor<6x8xf32>) -> tensor<2x3x8xf32> {
  %s = shard.sharding @grid split_axes = [[0]] sharded_dims_offsets = [0, 4, 6] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<6x8xf32>
  // expected-error@+1 {{splits the rows of a chunked dim (chunk boundaries [0, 4, 6]) across its new dims of 3 elements}}
  %e = tensor.expand_shape %xs [[0, 1], [2]] output_shape [2, 3, 8] : tensor<6x8xf32> into tensor<2x3x8xf32>
  return %e : tensor<2x3x8xf32>
}

// -----

shard.grid @grid(shape = 2)
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @captured_tensor(%x: tensor<4x8xf32>, %t: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %rows = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %rows : tensor<4x8xf32>
  %c0 = arith.constant 0 : index
  %e = tensor.empty() : tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%xs : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    // expected-error@+1 {{reads a tensor defined outside its elementwise op; the import takes tensors as the op's operands only}}
    %v = tensor.extract %t[%c0, %c0] : tensor<4x8xf32>
    %s = arith.addf %a, %v : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
