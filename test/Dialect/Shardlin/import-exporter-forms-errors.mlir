// RUN: shardlin-opt %s -split-input-file --shardlin-import-shard -verify-diagnostics

// The exporter forms the import does not take, each with one located
// diagnostic (import-exporter-forms.mlir has the forms it takes).

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
shard.grid @grid(shape = 2)
// A batch of different matrices is no linear.
func.func @batch_of_matrices(%x: tensor<2x3x8xf32>, %w: tensor<2x8x6xf32>) -> tensor<2x3x6xf32> {
  %s = shard.sharding @grid split_axes = [[], [], [0]] : !shard.sharding
  %ws = shard.shard %w to %s : tensor<2x8x6xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x6xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x6xf32>) -> tensor<2x3x6xf32>
  // expected-error@+1 {{a batch_matmul is imported as a linear when its right-hand operand is one weight for every batch: a linalg.generic that copies a 2-D tensor with the map (d0, ..., dn) -> (dn-1, dn) into a tensor.empty (its leading dims collapsed or not), or the batch_matmul's broadcasting indexing_maps; a batch of different matrices is not a linear}}
  %y = linalg.batch_matmul ins(%x, %ws : tensor<2x3x8xf32>, tensor<2x8x6xf32>) outs(%i : tensor<2x3x6xf32>) -> tensor<2x3x6xf32>
  return %y : tensor<2x3x6xf32>
}

// -----

#bw = affine_map<(d0, d1, d2) -> (d1, d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
shard.grid @grid(shape = 2)
// bf16 operands into f32 without the rounding after: a linear has no f32
// result for bf16 operands.
func.func @bf16_into_f32(%x: tensor<2x3x8xbf16>, %w: tensor<8x6xbf16>) -> tensor<2x3x6xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %ws = shard.shard %w to %s : tensor<8x6xbf16>
  %e0 = tensor.empty() : tensor<2x8x6xbf16>
  %wb = linalg.generic {indexing_maps = [#bw, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ws : tensor<8x6xbf16>) outs(%e0 : tensor<2x8x6xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    linalg.yield %in : bf16
  } -> tensor<2x8x6xbf16>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x6xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x6xf32>) -> tensor<2x3x6xf32>
  // expected-error@+1 {{a matmul of 'bf16' and 'bf16' into 'f32' is imported only when its f32 result is rounded to 'bf16' by the linalg.generic of arith.truncf that is its only user (torch-mlir's form: shardlin's 'bf16' linear accumulates in f32 and rounds once); a linear has no f32 result for 'bf16' operands}}
  %y = linalg.batch_matmul ins(%x, %wb : tensor<2x3x8xbf16>, tensor<2x8x6xbf16>) outs(%i : tensor<2x3x6xf32>) -> tensor<2x3x6xf32>
  return %y : tensor<2x3x6xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
shard.grid @grid(shape = 2)
// The bias in the f32 accumulator, before the rounding: no shardlin form
// (the linear of bf16 adds a bf16 bias).
func.func @bias_before_rounding(%x: tensor<4x8xbf16>, %w: tensor<8x6xbf16>, %b: tensor<6xf32>) -> tensor<4x6xbf16> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %ws = shard.shard %w to %s : tensor<8x6xbf16>
  %e = tensor.empty() : tensor<4x6xf32>
  %bb = linalg.broadcast ins(%b : tensor<6xf32>) outs(%e : tensor<4x6xf32>) dimensions = [0]
  // expected-error@+1 {{the f32 accumulator of a matmul rounded by arith.truncf must start as a zero linalg.fill: a bias or addend summed in f32 before the rounding has no shardlin form (add it after the arith.truncf)}}
  %y = linalg.matmul ins(%x, %ws : tensor<4x8xbf16>, tensor<8x6xbf16>) outs(%bb : tensor<4x6xf32>) -> tensor<4x6xf32>
  %e2 = tensor.empty() : tensor<4x6xbf16>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%y : tensor<4x6xf32>) outs(%e2 : tensor<4x6xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x6xbf16>
  return %r : tensor<4x6xbf16>
}

// -----

#bw = affine_map<(d0, d1, d2) -> (d1, d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
shard.grid @grid(shape = 2)
// x split along its features (K) but the weight along N.
func.func @features_vs_n(%x: tensor<2x3x8xf32>, %w: tensor<8x6xf32>) -> tensor<2x3x6xf32> {
  %sx = shard.sharding @grid split_axes = [[], [], [0]] : !shard.sharding
  %xs = shard.shard %x to %sx : tensor<2x3x8xf32>
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %ws = shard.shard %w to %s : tensor<8x6xf32>
  %e0 = tensor.empty() : tensor<2x8x6xf32>
  %wb = linalg.generic {indexing_maps = [#bw, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ws : tensor<8x6xf32>) outs(%e0 : tensor<2x8x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x8x6xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x6xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x6xf32>) -> tensor<2x3x6xf32>
  // expected-error@+1 {{x is split along its features (K) but the weight along N: a linear needs x whole there (conflicting shardings)}}
  %y = linalg.batch_matmul ins(%xs, %wb : tensor<2x3x8xf32>, tensor<2x8x6xf32>) outs(%i : tensor<2x3x6xf32>) -> tensor<2x3x6xf32>
  return %y : tensor<2x3x6xf32>
}

// -----

#bw = affine_map<(d0, d1, d2) -> (d1, d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
shard.grid @grid(shape = 2)
// A replicated weight's batch_matmul into a non-zero init.
func.func @local_with_init(%x: tensor<2x3x8xf32>, %w: tensor<8x6xf32>, %init: tensor<2x3x6xf32>) -> tensor<2x3x6xf32> {
  %e0 = tensor.empty() : tensor<2x8x6xf32>
  %wb = linalg.generic {indexing_maps = [#bw, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%w : tensor<8x6xf32>) outs(%e0 : tensor<2x8x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x8x6xf32>
  // expected-error@+1 {{a batch_matmul of a replicated weight must accumulate into a zero linalg.fill (added after it: a bias)}}
  %y = linalg.batch_matmul ins(%x, %wb : tensor<2x3x8xf32>, tensor<2x8x6xf32>) outs(%init : tensor<2x3x6xf32>) -> tensor<2x3x6xf32>
  return %y : tensor<2x3x6xf32>
}

// -----

shard.grid @grid(shape = 2)
// A 2-D linalg.matmul on the collapse of an x split along its sequence
// (the exporter writes a batch_matmul for a 3-D x): the collapse would
// merge the split dim into the rows.
func.func @collapse_sequence(%x: tensor<2x4x8xf32>, %w: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %sx = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %sx : tensor<2x4x8xf32>
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %ws = shard.shard %w to %s : tensor<8x6xf32>
  // expected-error@+1 {{collapses the split dim 1 into dims outside it; shardlin keeps a split dim outermost in its group}}
  %c = tensor.collapse_shape %xs [[0, 1], [2]] : tensor<2x4x8xf32> into tensor<8x8xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x6xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<8x6xf32>) -> tensor<8x6xf32>
  %y = linalg.matmul ins(%c, %ws : tensor<8x8xf32>, tensor<8x6xf32>) outs(%i : tensor<8x6xf32>) -> tensor<8x6xf32>
  return %y : tensor<8x6xf32>
}
