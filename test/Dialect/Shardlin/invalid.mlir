// RUN: shardlin-opt %s -split-input-file -verify-diagnostics

// One case per verifier rule of the shardlin attributes, types and ops; each
// expects the specific message of that rule.

//===----------------------------------------------------------------------===//
// #shardlin.chunk
//===----------------------------------------------------------------------===//

// expected-error@+1 {{chunk dim must be non-negative, got -1}}
func.func @chunk_negative_dim() attributes {s = #shardlin.chunk<dim = -1, placements = [0]>} {
  return
}

// -----

// expected-error@+1 {{chunk placements must not be empty}}
func.func @chunk_empty_placements() attributes {s = #shardlin.chunk<dim = 0, placements = []>} {
  return
}

// -----

// expected-error@+1 {{chunk placements [1, 0, 1] are not a permutation of 0..2: rank 1 appears twice (positions 0 and 2)}}
func.func @chunk_duplicate() attributes {s = #shardlin.chunk<dim = 0, placements = [1, 0, 1]>} {
  return
}

// -----

// expected-error@+1 {{chunk placements [0, -1] are not a permutation of 0..1: placement -1 at position 1 is out of range [0, 1]}}
func.func @chunk_negative_placement() attributes {s = #shardlin.chunk<dim = 0, placements = [0, -1]>} {
  return
}

// -----

// expected-error@+1 {{chunk placements [2, 0] are not a permutation of 0..1: placement 2 at position 0 is out of range [0, 1]}}
func.func @chunk_placement_too_large() attributes {s = #shardlin.chunk<dim = 0, placements = [2, 0]>} {
  return
}

// -----

// The attribute is checked wherever it appears, also inside an op.
func.func @chunk_bad_in_op(%b: tensor<8xf32>) {
  // expected-error@+1 {{chunk placements [0, 0] are not a permutation of 0..1: rank 0 appears twice (positions 0 and 1)}}
  %0 = shardlin.local_chunk %b along <dim = 0, placements = [0, 0]> : tensor<8xf32> -> tensor<4xf32>
  return
}

//===----------------------------------------------------------------------===//
// !shardlin.sharded
//===----------------------------------------------------------------------===//

// -----

// expected-error@+1 {{sharded tensor must have rank >= 1, got 'tensor<f32>'}}
func.func @sharded_rank0(%w: !shardlin.sharded<tensor<f32>, #shardlin.chunk<dim = 0, placements = [0]>>) {
  return
}

// -----

// expected-error@+1 {{sharded tensor must have a static shape, got 'tensor<?x19xf32>'}}
func.func @sharded_dynamic(%w: !shardlin.sharded<tensor<?x19xf32>, #shardlin.chunk<dim = 0, placements = [0, 1]>>) {
  return
}

// -----

// expected-error@+1 {{sharded tensor element type 'i32' is not supported (expected f16, bf16, f32 or f64)}}
func.func @sharded_i32(%w: !shardlin.sharded<tensor<11x19xi32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) {
  return
}

// -----

// expected-error@+1 {{sharded tensor element type 'f8E4M3FN' is not supported (expected f16, bf16, f32 or f64)}}
func.func @sharded_f8(%w: !shardlin.sharded<tensor<11x19xf8E4M3FN>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) {
  return
}

// -----

// expected-error@+1 {{chunk dim 2 is out of range for the rank-2 tensor 'tensor<11x19xf32>'}}
func.func @sharded_dim_out_of_range(%w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 2, placements = [0, 1]>>) {
  return
}

// -----

// expected-error@+2 {{invalid kind of type specified: expected builtin.tensor, but found 'tensor<*xf32>'}}
// expected-error@+1 {{failed to parse Shardlin_ShardedType parameter 'tensorType' which is to be a `::mlir::RankedTensorType`}}
func.func @sharded_not_ranked(%w: !shardlin.sharded<tensor<*xf32>, #shardlin.chunk<dim = 0, placements = [0]>>) {
  return
}

//===----------------------------------------------------------------------===//
// shardlin.linear
//===----------------------------------------------------------------------===//

// -----

func.func @linear_weight_rank3(%x: tensor<5x19xf32>, %w: !shardlin.sharded<tensor<2x11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) {
  // expected-error@+1 {{'shardlin.linear' op expects a rank-2 weight (N x K), got rank 3 ('tensor<2x11x19xf32>')}}
  %y = shardlin.linear %x, %w : (tensor<5x19xf32>, !shardlin.sharded<tensor<2x11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<5x11xf32>
  return
}

// -----

// A rank-2 weight sharded on a dim other than 0 or 1 cannot be written: the
// sharded type already rejects it, so the linear's own "weight sharding dim
// must be 0 or 1" check is unreachable from textual IR.
// expected-error@+1 {{chunk dim 2 is out of range for the rank-2 tensor 'tensor<11x19xf32>'}}
func.func @linear_weight_dim2(%x: tensor<5x19xf32>, %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 2, placements = [1, 0]>>) {
  return
}

// -----

func.func @linear_input_rank0(%x: tensor<f32>, %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) {
  // expected-error@+1 {{'shardlin.linear' op expects an input of rank >= 1, got 'tensor<f32>'}}
  %y = shardlin.linear %x, %w : (tensor<f32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<11xf32>
  return
}

// -----

// Batch dims may be dynamic (dynamic-batch.mlir); K may not.
func.func @linear_input_dynamic_k(%x: tensor<?x?xf32>, %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) {
  // expected-error@+1 {{'shardlin.linear' op expects the input's last dim (K) to be static (only the leading batch dims may be dynamic), got 'tensor<?x?xf32>'}}
  %y = shardlin.linear %x, %w : (tensor<?x?xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<?x11xf32>
  return
}

// -----

func.func @linear_input_dynamic_k_1d(%x: tensor<?xf32>, %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) {
  // expected-error@+1 {{'shardlin.linear' op expects the input's last dim (K) to be static (only the leading batch dims may be dynamic), got 'tensor<?xf32>'}}
  %y = shardlin.linear %x, %w : (tensor<?xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<11xf32>
  return
}

// -----

// The result keeps the input's dynamic dims: a static one is rejected.
func.func @linear_result_static_batch(%x: tensor<?x3x19xf32>, %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) {
  // expected-error@+1 {{'shardlin.linear' op result shape [4, 3, 11] does not match the expected [?, 3, 11] (input shape with the last dim replaced by N = 11)}}
  %y = shardlin.linear %x, %w : (tensor<?x3x19xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<4x3x11xf32>
  return
}

// -----

func.func @linear_input_unranked(%x: tensor<*xf32>, %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) {
  // expected-error@+1 {{'shardlin.linear' op operand #0 must be ranked tensor of f16, bf16, f32 or f64 values, but got 'tensor<*xf32>'}}
  %y = shardlin.linear %x, %w : (tensor<*xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<5x11xf32>
  return
}

// -----

func.func @linear_input_k_mismatch(%x: tensor<5x18xf32>, %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) {
  // expected-error@+1 {{'shardlin.linear' op input's last dim (18) must equal the weight's dim 1 (K = 19)}}
  %y = shardlin.linear %x, %w : (tensor<5x18xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<5x11xf32>
  return
}

// -----

// The message names the input's last dim, not its first (the first
// implementation printed the wrong one).
func.func @linear_input_k_mismatch_3d(%x: tensor<2x3x7xf32>, %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) {
  // expected-error@+1 {{'shardlin.linear' op input's last dim (7) must equal the weight's dim 1 (K = 19)}}
  %y = shardlin.linear %x, %w : (tensor<2x3x7xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<2x3x11xf32>
  return
}

// -----

func.func @linear_bias_rank2(%x: tensor<5x19xf32>, %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, %b: tensor<1x11xf32>) {
  // expected-error@+1 {{'shardlin.linear' op expects a rank-1 bias, got 'tensor<1x11xf32>'}}
  %y = shardlin.linear %x, %w, %b : (tensor<5x19xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, tensor<1x11xf32>) -> tensor<5x11xf32>
  return
}

// -----

func.func @linear_bias_size(%x: tensor<5x19xf32>, %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, %b: tensor<10xf32>) {
  // expected-error@+1 {{'shardlin.linear' op bias size (10) must equal the weight's dim 0 (N = 11)}}
  %y = shardlin.linear %x, %w, %b : (tensor<5x19xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, tensor<10xf32>) -> tensor<5x11xf32>
  return
}

// -----

func.func @linear_bias_dynamic(%x: tensor<5x19xf32>, %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, %b: tensor<?xf32>) {
  // expected-error@+1 {{'shardlin.linear' op bias size (?) must equal the weight's dim 0 (N = 11)}}
  %y = shardlin.linear %x, %w, %b : (tensor<5x19xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, tensor<?xf32>) -> tensor<5x11xf32>
  return
}

// -----

func.func @linear_result_shape(%x: tensor<5x19xf32>, %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) {
  // expected-error@+1 {{'shardlin.linear' op result shape [5, 19] does not match the expected [5, 11] (input shape with the last dim replaced by N = 11)}}
  %y = shardlin.linear %x, %w : (tensor<5x19xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<5x19xf32>
  return
}

// -----

func.func @linear_result_dynamic(%x: tensor<5x19xf32>, %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) {
  // expected-error@+1 {{'shardlin.linear' op result shape [?, 11] does not match the expected [5, 11] (input shape with the last dim replaced by N = 11)}}
  %y = shardlin.linear %x, %w : (tensor<5x19xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<?x11xf32>
  return
}

// -----

func.func @linear_result_rank(%x: tensor<19xf32>, %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) {
  // expected-error@+1 {{'shardlin.linear' op result shape [1, 11] does not match the expected [11] (input shape with the last dim replaced by N = 11)}}
  %y = shardlin.linear %x, %w : (tensor<19xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<1x11xf32>
  return
}

// -----

func.func @linear_weight_type(%x: tensor<5x19xf32>, %w: !shardlin.sharded<tensor<11x19xf16>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) {
  // expected-error@+1 {{'shardlin.linear' op weight element type 'f16' differs from input element type 'f32'}}
  %y = shardlin.linear %x, %w : (tensor<5x19xf32>, !shardlin.sharded<tensor<11x19xf16>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<5x11xf32>
  return
}

// -----

func.func @linear_bias_type(%x: tensor<5x19xbf16>, %w: !shardlin.sharded<tensor<11x19xbf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, %b: tensor<11xf32>) {
  // expected-error@+1 {{'shardlin.linear' op bias element type 'f32' differs from input element type 'bf16'}}
  %y = shardlin.linear %x, %w, %b : (tensor<5x19xbf16>, !shardlin.sharded<tensor<11x19xbf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, tensor<11xf32>) -> tensor<5x11xbf16>
  return
}

// -----

func.func @linear_result_type(%x: tensor<5x19xf64>, %w: !shardlin.sharded<tensor<11x19xf64>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) {
  // expected-error@+1 {{'shardlin.linear' op result element type 'f32' differs from input element type 'f64'}}
  %y = shardlin.linear %x, %w : (tensor<5x19xf64>, !shardlin.sharded<tensor<11x19xf64>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<5x11xf32>
  return
}

// -----

func.func @linear_i32(%x: tensor<5x19xi32>, %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) {
  // expected-error@+1 {{'shardlin.linear' op operand #0 must be ranked tensor of f16, bf16, f32 or f64 values, but got 'tensor<5x19xi32>'}}
  %y = shardlin.linear %x, %w : (tensor<5x19xi32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<5x11xi32>
  return
}

// -----

func.func @linear_f8(%x: tensor<5x19xf8E4M3FN>, %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) {
  // expected-error@+1 {{'shardlin.linear' op operand #0 must be ranked tensor of f16, bf16, f32 or f64 values, but got 'tensor<5x19xf8E4M3FN>'}}
  %y = shardlin.linear %x, %w : (tensor<5x19xf8E4M3FN>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<5x11xf8E4M3FN>
  return
}

// -----

func.func @linear_bias_i32(%x: tensor<5x19xf32>, %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, %b: tensor<11xi32>) {
  // expected-error@+1 {{'shardlin.linear' op operand #2 must be ranked tensor of f16, bf16, f32 or f64 values, but got 'tensor<11xi32>'}}
  %y = shardlin.linear %x, %w, %b : (tensor<5x19xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, tensor<11xi32>) -> tensor<5x11xf32>
  return
}

// -----

func.func @linear_result_i32(%x: tensor<5x19xf32>, %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) {
  // expected-error@+1 {{'shardlin.linear' op result #0 must be ranked tensor of f16, bf16, f32 or f64 values, but got 'tensor<5x11xi32>'}}
  %y = shardlin.linear %x, %w : (tensor<5x19xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<5x11xi32>
  return
}

// -----

func.func @linear_weight_not_sharded(%x: tensor<5x19xf32>, %w: tensor<11x19xf32>) {
  // expected-error@+1 {{'shardlin.linear' op operand #1 must be A global tensor of which each rank holds one chunk, but got 'tensor<11x19xf32>'}}
  %y = shardlin.linear %x, %w : (tensor<5x19xf32>, tensor<11x19xf32>) -> tensor<5x11xf32>
  return
}

// -----

func.func @linear_result_encoding(%x: tensor<5x19xf32>, %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) {
  // expected-error@+1 {{'shardlin.linear' op result type 'tensor<5x11xf32, "enc">' has an encoding, which is not supported}}
  %y = shardlin.linear %x, %w : (tensor<5x19xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<5x11xf32, "enc">
  return
}

// -----

func.func @linear_input_encoding(%x: tensor<5x19xf32, "enc">, %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) {
  // expected-error@+1 {{'shardlin.linear' op input type 'tensor<5x19xf32, "enc">' has an encoding, which is not supported}}
  %y = shardlin.linear %x, %w : (tensor<5x19xf32, "enc">, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<5x11xf32>
  return
}

//===----------------------------------------------------------------------===//
// shardlin.local_shard
//===----------------------------------------------------------------------===//

// -----

func.func @local_shard_static_uneven(%w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>) {
  // expected-error@+1 {{'shardlin.local_shard' op result type 'tensor<11x5xf32>' does not match the local chunk type 'tensor<11x?xf32>'}}
  %a = shardlin.local_shard %w : !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>> -> tensor<11x5xf32>
  return
}

// -----

func.func @local_shard_wrong_size(%w: !shardlin.sharded<tensor<11x16xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>) {
  // expected-error@+1 {{'shardlin.local_shard' op result type 'tensor<11x?xf32>' does not match the local chunk type 'tensor<11x4xf32>'}}
  %a = shardlin.local_shard %w : !shardlin.sharded<tensor<11x16xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>> -> tensor<11x?xf32>
  return
}

// -----

func.func @local_shard_wrong_type(%w: !shardlin.sharded<tensor<12x16xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) {
  // expected-error@+1 {{'shardlin.local_shard' op result type 'tensor<6x16xf16>' does not match the local chunk type 'tensor<6x16xf32>'}}
  %a = shardlin.local_shard %w : !shardlin.sharded<tensor<12x16xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>> -> tensor<6x16xf16>
  return
}

//===----------------------------------------------------------------------===//
// shardlin.local_chunk
//===----------------------------------------------------------------------===//

// -----

func.func @local_chunk_dim_out_of_range(%b: tensor<11xf32>) {
  // expected-error@+1 {{'shardlin.local_chunk' op along chunk dim 1 is out of range for rank 1}}
  %0 = shardlin.local_chunk %b along <dim = 1, placements = [1, 0]> : tensor<11xf32> -> tensor<?xf32>
  return
}

// -----

func.func @local_chunk_static_uneven(%b: tensor<11xf32>) {
  // expected-error@+1 {{'shardlin.local_chunk' op result dim 0 is 6 but the local chunk of 11 over 2 ranks is ? (chunks are uneven)}}
  %0 = shardlin.local_chunk %b along <dim = 0, placements = [1, 0]> : tensor<11xf32> -> tensor<6xf32>
  return
}

// -----

func.func @local_chunk_wrong_size(%b: tensor<12xf32>) {
  // expected-error@+1 {{'shardlin.local_chunk' op result dim 0 is 4 but the local chunk of 12 over 2 ranks is 6}}
  %0 = shardlin.local_chunk %b along <dim = 0, placements = [1, 0]> : tensor<12xf32> -> tensor<4xf32>
  return
}

// -----

func.func @local_chunk_dynamic_source(%b: tensor<?xf32>) {
  // expected-error@+1 {{'shardlin.local_chunk' op source dim 0 must be static (it is split by #shardlin.chunk<dim = 0, placements = [1, 0]>)}}
  %0 = shardlin.local_chunk %b along <dim = 0, placements = [1, 0]> : tensor<?xf32> -> tensor<?xf32>
  return
}

// -----

func.func @local_chunk_rank(%b: tensor<12xf32>) {
  // expected-error@+1 {{'shardlin.local_chunk' op source and result ranks differ (1 vs 2)}}
  %0 = shardlin.local_chunk %b along <dim = 0, placements = [1, 0]> : tensor<12xf32> -> tensor<6x1xf32>
  return
}

// -----

func.func @local_chunk_other_dim(%b: tensor<12x3xf32>) {
  // expected-error@+1 {{'shardlin.local_chunk' op result dim 1 (4) differs from source dim 1 (3)}}
  %0 = shardlin.local_chunk %b along <dim = 0, placements = [1, 0]> : tensor<12x3xf32> -> tensor<6x4xf32>
  return
}

// -----

func.func @local_chunk_element_type(%b: tensor<12xf32>) {
  // expected-error@+1 {{'shardlin.local_chunk' op failed to verify that all of {source, result} have same element type}}
  %0 = shardlin.local_chunk %b along <dim = 0, placements = [1, 0]> : tensor<12xf32> -> tensor<6xf16>
  return
}

// -----

func.func @local_chunk_i32(%b: tensor<12xi32>) {
  // expected-error@+1 {{'shardlin.local_chunk' op operand #0 must be ranked tensor of f16, bf16, f32 or f64 values, but got 'tensor<12xi32>'}}
  %0 = shardlin.local_chunk %b along <dim = 0, placements = [1, 0]> : tensor<12xi32> -> tensor<6xi32>
  return
}

// -----

func.func @all_gather_i32(%x: tensor<5x19xi32>) {
  // expected-error@+1 {{'shardlin.all_gather' op operand #0 must be ranked tensor of f16, bf16, f32 or f64 values, but got 'tensor<5x19xi32>'}}
  %0 = shardlin.all_gather %x along <dim = 0, placements = [0, 1]> : tensor<5x19xi32> -> tensor<10x19xi32>
  return
}

// -----

func.func @all_to_all_i32(%x: tensor<4x8xi32>) {
  // expected-error@+1 {{'shardlin.all_to_all' op operand #0 must be ranked tensor of f16, bf16, f32 or f64 values, but got 'tensor<4x8xi32>'}}
  %0 = shardlin.all_to_all %x split <dim = 1, placements = [0, 1]> concat <dim = 0, placements = [0, 1]> : tensor<4x8xi32> -> tensor<8x4xi32>
  return
}

//===----------------------------------------------------------------------===//
// shardlin.all_gather
//===----------------------------------------------------------------------===//

// -----

func.func @all_gather_dim_out_of_range(%x: tensor<5x19xf32>) {
  // expected-error@+1 {{'shardlin.all_gather' op along chunk dim 2 is out of range for rank 2}}
  %0 = shardlin.all_gather %x along <dim = 2, placements = [0, 1]> : tensor<5x19xf32> -> tensor<5x19xf32>
  return
}

// -----

func.func @all_gather_static_uneven(%x: tensor<5x19xf32>) {
  // expected-error@+1 {{'shardlin.all_gather' op input dim 0 is 5 but the local chunk of 19 over 4 ranks is ? (chunks are uneven)}}
  %0 = shardlin.all_gather %x along <dim = 0, placements = [0, 1, 2, 3]> : tensor<5x19xf32> -> tensor<19x19xf32>
  return
}

// -----

func.func @all_gather_wrong_size(%x: tensor<4x19xf32>) {
  // expected-error@+1 {{'shardlin.all_gather' op input dim 0 is 4 but the local chunk of 20 over 4 ranks is 5}}
  %0 = shardlin.all_gather %x along <dim = 0, placements = [0, 1, 2, 3]> : tensor<4x19xf32> -> tensor<20x19xf32>
  return
}

// -----

func.func @all_gather_other_dim(%x: tensor<5x19xf32>) {
  // expected-error@+1 {{'shardlin.all_gather' op input dim 1 (19) and result dim 1 (18) must be equal}}
  %0 = shardlin.all_gather %x along <dim = 0, placements = [0, 1, 2, 3]> : tensor<5x19xf32> -> tensor<20x18xf32>
  return
}

// -----

func.func @all_gather_rank(%x: tensor<5x19xf32>) {
  // expected-error@+1 {{'shardlin.all_gather' op failed to verify that all of {input, result} have same rank}}
  %0 = shardlin.all_gather %x along <dim = 0, placements = [0, 1, 2, 3]> : tensor<5x19xf32> -> tensor<20x19x1xf32>
  return
}

// -----

func.func @all_gather_element_type(%x: tensor<5x19xf32>) {
  // expected-error@+1 {{'shardlin.all_gather' op failed to verify that all of {input, result} have same element type}}
  %0 = shardlin.all_gather %x along <dim = 0, placements = [0, 1, 2, 3]> : tensor<5x19xf32> -> tensor<20x19xf64>
  return
}

//===----------------------------------------------------------------------===//
// shardlin.all_to_all
//===----------------------------------------------------------------------===//

// -----

func.func @all_to_all_split_dim_out_of_range(%x: tensor<5x16xf32>) {
  // expected-error@+1 {{'shardlin.all_to_all' op split chunk dim 2 is out of range for rank 2}}
  %0 = shardlin.all_to_all %x split <dim = 2, placements = [0, 1]> concat <dim = 0, placements = [0, 1]> : tensor<5x16xf32> -> tensor<10x16xf32>
  return
}

// -----

func.func @all_to_all_concat_dim_out_of_range(%x: tensor<5x16xf32>) {
  // expected-error@+1 {{'shardlin.all_to_all' op concat chunk dim 3 is out of range for rank 2}}
  %0 = shardlin.all_to_all %x split <dim = 1, placements = [0, 1]> concat <dim = 3, placements = [0, 1]> : tensor<5x16xf32> -> tensor<10x8xf32>
  return
}

// -----

func.func @all_to_all_same_dims(%x: tensor<5x16xf32>) {
  // expected-error@+1 {{'shardlin.all_to_all' op split and concat dims must differ, both are 1}}
  %0 = shardlin.all_to_all %x split <dim = 1, placements = [0, 1]> concat <dim = 1, placements = [0, 1]> : tensor<5x16xf32> -> tensor<5x16xf32>
  return
}

// -----

func.func @all_to_all_chunk_count(%x: tensor<5x16xf32>) {
  // expected-error@+1 {{'shardlin.all_to_all' op split has 4 chunks but concat has 2}}
  %0 = shardlin.all_to_all %x split <dim = 1, placements = [0, 1, 2, 3]> concat <dim = 0, placements = [0, 1]> : tensor<5x16xf32> -> tensor<10x4xf32>
  return
}

// -----

func.func @all_to_all_split_static_uneven(%x: tensor<5x19xf32>) {
  // expected-error@+1 {{'shardlin.all_to_all' op result dim 1 is 5 but the local chunk of 19 over 4 ranks is ? (chunks are uneven)}}
  %0 = shardlin.all_to_all %x split <dim = 1, placements = [2, 3, 0, 1]> concat <dim = 0, placements = [0, 1, 2, 3]> : tensor<5x19xf32> -> tensor<20x5xf32>
  return
}

// -----

func.func @all_to_all_split_wrong_size(%x: tensor<5x16xf32>) {
  // expected-error@+1 {{'shardlin.all_to_all' op result dim 1 is 8 but the local chunk of 16 over 4 ranks is 4}}
  %0 = shardlin.all_to_all %x split <dim = 1, placements = [2, 3, 0, 1]> concat <dim = 0, placements = [0, 1, 2, 3]> : tensor<5x16xf32> -> tensor<20x8xf32>
  return
}

// -----

func.func @all_to_all_concat_wrong_size(%x: tensor<5x16xf32>) {
  // expected-error@+1 {{'shardlin.all_to_all' op input dim 0 is 5 but the local chunk of 16 over 4 ranks is 4}}
  %0 = shardlin.all_to_all %x split <dim = 1, placements = [2, 3, 0, 1]> concat <dim = 0, placements = [0, 1, 2, 3]> : tensor<5x16xf32> -> tensor<16x4xf32>
  return
}

// -----

func.func @all_to_all_concat_static_uneven(%q: tensor<12x6xf32>) {
  // expected-error@+1 {{'shardlin.all_to_all' op input dim 1 is 6 but the local chunk of 11 over 2 ranks is ? (chunks are uneven)}}
  %0 = shardlin.all_to_all %q split <dim = 0, placements = [0, 1]> concat <dim = 1, placements = [1, 0]> : tensor<12x6xf32> -> tensor<6x11xf32>
  return
}

// -----

func.func @all_to_all_other_dim(%x: tensor<3x5x16xf32>) {
  // expected-error@+1 {{'shardlin.all_to_all' op input dim 0 (3) and result dim 0 (2) must be equal}}
  %0 = shardlin.all_to_all %x split <dim = 2, placements = [0, 1]> concat <dim = 1, placements = [0, 1]> : tensor<3x5x16xf32> -> tensor<2x10x8xf32>
  return
}

// -----

func.func @all_to_all_rank(%x: tensor<5x16xf32>) {
  // expected-error@+1 {{'shardlin.all_to_all' op failed to verify that all of {input, result} have same rank}}
  %0 = shardlin.all_to_all %x split <dim = 1, placements = [0, 1]> concat <dim = 0, placements = [0, 1]> : tensor<5x16xf32> -> tensor<80xf32>
  return
}

//===----------------------------------------------------------------------===//
// shardlin.reduce_scatter
//===----------------------------------------------------------------------===//

// -----

func.func @reduce_scatter_dim_out_of_range(%p: tensor<20x11xf32>) {
  // expected-error@+1 {{'shardlin.reduce_scatter' op along chunk dim 2 is out of range for rank 2}}
  %0 = shardlin.reduce_scatter %p along <dim = 2, placements = [0, 1, 2, 3]> : tensor<20x11xf32> -> tensor<5x11xf32>
  return
}

// -----

func.func @reduce_scatter_static_uneven(%p: tensor<19x11xf32>) {
  // expected-error@+1 {{'shardlin.reduce_scatter' op result dim 0 is 5 but the local chunk of 19 over 4 ranks is ? (chunks are uneven)}}
  %0 = shardlin.reduce_scatter %p along <dim = 0, placements = [0, 1, 2, 3]> : tensor<19x11xf32> -> tensor<5x11xf32>
  return
}

// -----

func.func @reduce_scatter_wrong_size(%p: tensor<20x11xf32>) {
  // expected-error@+1 {{'shardlin.reduce_scatter' op result dim 0 is 4 but the local chunk of 20 over 4 ranks is 5}}
  %0 = shardlin.reduce_scatter %p along <dim = 0, placements = [0, 1, 2, 3]> : tensor<20x11xf32> -> tensor<4x11xf32>
  return
}

// -----

func.func @reduce_scatter_other_dim(%p: tensor<20x11xf32>) {
  // expected-error@+1 {{'shardlin.reduce_scatter' op input dim 1 (11) and result dim 1 (?) must be equal}}
  %0 = shardlin.reduce_scatter %p along <dim = 0, placements = [0, 1, 2, 3]> : tensor<20x11xf32> -> tensor<5x?xf32>
  return
}

// -----

func.func @reduce_scatter_i32(%p: tensor<20x11xi32>) {
  // expected-error@+1 {{'shardlin.reduce_scatter' op operand #0 must be ranked tensor of f16, bf16, f32 or f64 values, but got 'tensor<20x11xi32>'}}
  %0 = shardlin.reduce_scatter %p along <dim = 0, placements = [0, 1, 2, 3]> : tensor<20x11xi32> -> tensor<5x11xi32>
  return
}

// -----

func.func @reduce_scatter_result_i32(%p: tensor<20x11xf32>) {
  // expected-error@+1 {{'shardlin.reduce_scatter' op result #0 must be ranked tensor of f16, bf16, f32 or f64 values, but got 'tensor<5x11xi32>'}}
  %0 = shardlin.reduce_scatter %p along <dim = 0, placements = [0, 1, 2, 3]> : tensor<20x11xf32> -> tensor<5x11xi32>
  return
}

// -----

func.func @reduce_scatter_element_type(%p: tensor<20x11xf32>) {
  // expected-error@+1 {{'shardlin.reduce_scatter' op failed to verify that all of {input, result} have same element type}}
  %0 = shardlin.reduce_scatter %p along <dim = 0, placements = [0, 1, 2, 3]> : tensor<20x11xf32> -> tensor<5x11xbf16>
  return
}

//===----------------------------------------------------------------------===//
// shardlin.gemm
//===----------------------------------------------------------------------===//

// -----

func.func @gemm_rank(%a: tensor<2x4x8xf32>, %b: tensor<8x3xf32>) {
  // expected-error@+1 {{'shardlin.gemm' op expects rank-2 lhs, rhs and result, got ranks 3, 2 and 2}}
  %0 = shardlin.gemm %a, %b : (tensor<2x4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @gemm_result_rank(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) {
  // expected-error@+1 {{'shardlin.gemm' op expects rank-2 lhs, rhs and result, got ranks 2, 2 and 1}}
  %0 = shardlin.gemm %a, %b : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<12xf32>
  return
}

// -----

func.func @gemm_contraction(%a: tensor<4x8xf32>, %b: tensor<7x3xf32>) {
  // expected-error@+1 {{'shardlin.gemm' op contraction dims differ: lhs has 8, rhs has 7}}
  %0 = shardlin.gemm %a, %b : (tensor<4x8xf32>, tensor<7x3xf32>) -> tensor<4x3xf32>
  return
}

// -----

// With transpose_rhs the rhs contracts on its dim 1.
func.func @gemm_contraction_transpose_rhs(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) {
  // expected-error@+1 {{'shardlin.gemm' op contraction dims differ: lhs has 8, rhs has 3}}
  %0 = shardlin.gemm %a, %b transpose_rhs : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x8xf32>
  return
}

// -----

// With transpose_lhs the lhs contracts on its dim 0.
func.func @gemm_contraction_transpose_lhs(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) {
  // expected-error@+1 {{'shardlin.gemm' op contraction dims differ: lhs has 4, rhs has 8}}
  %0 = shardlin.gemm %a, %b transpose_lhs : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<8x3xf32>
  return
}

// -----

func.func @gemm_result_shape(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) {
  // expected-error@+1 {{'shardlin.gemm' op result shape [4, 8] does not match [4, 3]}}
  %0 = shardlin.gemm %a, %b : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @gemm_result_shape_transposed(%a: tensor<8x4xf32>, %b: tensor<3x8xf32>) {
  // expected-error@+1 {{'shardlin.gemm' op result shape [3, 4] does not match [4, 3]}}
  %0 = shardlin.gemm %a, %b transpose_lhs transpose_rhs : (tensor<8x4xf32>, tensor<3x8xf32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @gemm_bias_rank(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>, %c: tensor<4x3xf32>) {
  // expected-error@+1 {{'shardlin.gemm' op expects a rank-1 bias, got 'tensor<4x3xf32>'}}
  %0 = shardlin.gemm %a, %b bias %c : (tensor<4x8xf32>, tensor<8x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @gemm_bias_size(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>, %c: tensor<4xf32>) {
  // expected-error@+1 {{'shardlin.gemm' op bias size 4 does not match the result's 3 columns}}
  %0 = shardlin.gemm %a, %b bias %c : (tensor<4x8xf32>, tensor<8x3xf32>, tensor<4xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @gemm_bias_type(%a: tensor<4x8xf16>, %b: tensor<8x3xf16>, %c: tensor<3xf32>) {
  // expected-error@+1 {{'shardlin.gemm' op bias element type 'f32' differs from 'f16'}}
  %0 = shardlin.gemm %a, %b bias %c : (tensor<4x8xf16>, tensor<8x3xf16>, tensor<3xf32>) -> tensor<4x3xf16>
  return
}

// -----

func.func @gemm_i32(%a: tensor<4x8xi32>, %b: tensor<8x3xi32>) {
  // expected-error@+1 {{'shardlin.gemm' op operand #0 must be ranked tensor of f16, bf16, f32 or f64 values, but got 'tensor<4x8xi32>'}}
  %0 = shardlin.gemm %a, %b : (tensor<4x8xi32>, tensor<8x3xi32>) -> tensor<4x3xi32>
  return
}

// -----

func.func @gemm_rhs_i32(%a: tensor<4x8xf32>, %b: tensor<8x3xi32>) {
  // expected-error@+1 {{'shardlin.gemm' op operand #1 must be ranked tensor of f16, bf16, f32 or f64 values, but got 'tensor<8x3xi32>'}}
  %0 = shardlin.gemm %a, %b : (tensor<4x8xf32>, tensor<8x3xi32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @gemm_mixed_types(%a: tensor<4x8xf32>, %b: tensor<8x3xbf16>) {
  // expected-error@+1 {{'shardlin.gemm' op lhs and rhs must share one element type and the result must have it too, or be f32 when it is f16 or bf16; got 'f32', 'bf16' and 'f32'}}
  %0 = shardlin.gemm %a, %b : (tensor<4x8xf32>, tensor<8x3xbf16>) -> tensor<4x3xf32>
  return
}

// -----

func.func @gemm_result_type(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) {
  // expected-error@+1 {{'shardlin.gemm' op lhs and rhs must share one element type and the result must have it too, or be f32 when it is f16 or bf16; got 'f32', 'f32' and 'f64'}}
  %0 = shardlin.gemm %a, %b : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf64>
  return
}

// -----

// The f32 result of f16/bf16 operands (a K split's partial products) is the
// only other result type: not f64, and not narrower than the operands.
func.func @gemm_f16_to_f64(%a: tensor<4x8xf16>, %b: tensor<8x3xf16>) {
  // expected-error@+1 {{'shardlin.gemm' op lhs and rhs must share one element type and the result must have it too, or be f32 when it is f16 or bf16; got 'f16', 'f16' and 'f64'}}
  %0 = shardlin.gemm %a, %b : (tensor<4x8xf16>, tensor<8x3xf16>) -> tensor<4x3xf64>
  return
}

// -----

func.func @gemm_f32_to_bf16(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) {
  // expected-error@+1 {{'shardlin.gemm' op lhs and rhs must share one element type and the result must have it too, or be f32 when it is f16 or bf16; got 'f32', 'f32' and 'bf16'}}
  %0 = shardlin.gemm %a, %b : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xbf16>
  return
}

// -----

func.func @gemm_f32_result_bias(%a: tensor<4x8xbf16>, %b: tensor<8x3xbf16>, %c: tensor<3xbf16>) {
  // expected-error@+1 {{'shardlin.gemm' op an f32 result of 'bf16' operands takes no bias (the bias of a K split is added once, after the reduction)}}
  %0 = shardlin.gemm %a, %b bias %c : (tensor<4x8xbf16>, tensor<8x3xbf16>, tensor<3xbf16>) -> tensor<4x3xf32>
  return
}

//===----------------------------------------------------------------------===//
// shardlin.bias_add
//===----------------------------------------------------------------------===//

// -----

func.func @bias_add_size(%y: tensor<5x11xf32>, %b: tensor<10xf32>) {
  // expected-error@+1 {{'shardlin.bias_add' op bias size 10 does not match the input's last dim 11}}
  %0 = shardlin.bias_add %y, %b : tensor<5x11xf32>, tensor<10xf32>
  return
}

// -----

func.func @bias_add_input_rank0(%y: tensor<f32>, %b: tensor<1xf32>) {
  // expected-error@+1 {{'shardlin.bias_add' op expects an input of rank >= 1, got 'tensor<f32>'}}
  %0 = shardlin.bias_add %y, %b : tensor<f32>, tensor<1xf32>
  return
}

// -----

func.func @bias_add_bias_rank(%y: tensor<5x11xf32>, %b: tensor<1x11xf32>) {
  // expected-error@+1 {{'shardlin.bias_add' op expects a rank-1 bias, got 'tensor<1x11xf32>'}}
  %0 = shardlin.bias_add %y, %b : tensor<5x11xf32>, tensor<1x11xf32>
  return
}

// -----

func.func @bias_add_bias_type(%y: tensor<5x11xf32>, %b: tensor<11xf16>) {
  // expected-error@+1 {{'shardlin.bias_add' op bias element type 'f16' differs from input element type 'f32'}}
  %0 = shardlin.bias_add %y, %b : tensor<5x11xf32>, tensor<11xf16>
  return
}

// -----

func.func @bias_add_i32(%y: tensor<5x11xi32>, %b: tensor<11xi32>) {
  // expected-error@+1 {{'shardlin.bias_add' op operand #0 must be ranked tensor of f16, bf16, f32 or f64 values, but got 'tensor<5x11xi32>'}}
  %0 = shardlin.bias_add %y, %b : tensor<5x11xi32>, tensor<11xi32>
  return
}

// -----

// The result type is the input type; only the generic form can say otherwise.
func.func @bias_add_result_type(%y: tensor<5x11xf32>, %b: tensor<11xf32>) {
  // expected-error@+1 {{'shardlin.bias_add' op failed to verify that all of {input, result} have same type}}
  %0 = "shardlin.bias_add"(%y, %b) : (tensor<5x11xf32>, tensor<11xf32>) -> tensor<5x10xf32>
  return
}

//===----------------------------------------------------------------------===//
// shardlin.convert
//===----------------------------------------------------------------------===//

// -----

func.func @convert_f32_to_f64(%a: tensor<4x3xf32>) {
  // expected-error@+1 {{'shardlin.convert' op converts f32 to f16 or bf16, or f16 or bf16 to f32; got 'f32' to 'f64'}}
  %0 = shardlin.convert %a : tensor<4x3xf32> -> tensor<4x3xf64>
  return
}

// -----

func.func @convert_f16_to_bf16(%a: tensor<4x3xf16>) {
  // expected-error@+1 {{'shardlin.convert' op converts f32 to f16 or bf16, or f16 or bf16 to f32; got 'f16' to 'bf16'}}
  %0 = shardlin.convert %a : tensor<4x3xf16> -> tensor<4x3xbf16>
  return
}

// -----

func.func @convert_shape(%a: tensor<4x3xf32>) {
  // expected-error@+1 {{'shardlin.convert' op failed to verify that all of {input, result} have same shape}}
  %0 = shardlin.convert %a : tensor<4x3xf32> -> tensor<3x4xf16>
  return
}

// -----

func.func @gather_bounds_size(%x: tensor<?x4xf32>) {
  // expected-error@+1 {{'shardlin.gather_bounds' op bounds 'tensor<4xi64>' must be 5 i64 (one more than the spec's 4 chunks)}}
  %0 = shardlin.gather_bounds %x along <dim = 0, placements = [0, 1, 2, 3]> : tensor<?x4xf32> -> tensor<4xi64>
  return
}

// -----

func.func @gather_bounds_dim(%x: tensor<?x4xf32>) {
  // expected-error@+1 {{'shardlin.gather_bounds' op along chunk dim 2 is out of range for rank 2}}
  %0 = shardlin.gather_bounds %x along <dim = 2, placements = [0, 1]> : tensor<?x4xf32> -> tensor<3xi64>
  return
}

// -----

func.func @bounds_operand_size(%x: tensor<?x4xf32>, %b: tensor<4xi64>) {
  // expected-error@+1 {{'shardlin.all_gather' op along bounds 'tensor<4xi64>' must be 3 i64 (one more than the spec's 2 chunks)}}
  %0 = shardlin.all_gather %x along <dim = 0, placements = [0, 1]> bounds(%b : tensor<4xi64>) : tensor<?x4xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @bounds_operand_static_dim(%x: tensor<2x4xf32>, %b: tensor<3xi64>) {
  // expected-error@+1 {{'shardlin.all_gather' op along bounds operand is for a dim known only at run time, but dim 0 is 4}}
  %0 = shardlin.all_gather %x along <dim = 0, placements = [0, 1]> bounds(%b : tensor<3xi64>) : tensor<2x4xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @bounds_operand_and_own_bounds(%p: tensor<?x4xf32>, %b: tensor<3xi64>) {
  // expected-error@+1 {{'shardlin.reduce_scatter' op along spec #shardlin.chunk<dim = 0, placements = [0, 1], bounds = [0, 1, 3]> has bounds of its own and a bounds operand; give one}}
  %0 = shardlin.reduce_scatter %p along <dim = 0, placements = [0, 1], bounds = [0, 1, 3]> bounds(%b : tensor<3xi64>) : tensor<?x4xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @bounds_operand_split_static(%x: tensor<2x4xf32>, %b: tensor<3xi64>) {
  // expected-error@+1 {{'shardlin.all_to_all' op split bounds operand is for a dim known only at run time, but dim 1 is 4}}
  %0 = shardlin.all_to_all %x split <dim = 1, placements = [0, 1]> bounds(%b : tensor<3xi64>) concat <dim = 0, placements = [0, 1]> : tensor<2x4xf32> -> tensor<4x2xf32>
  return
}
