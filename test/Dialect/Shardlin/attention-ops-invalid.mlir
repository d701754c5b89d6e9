// RUN: shardlin-opt %s -split-input-file -verify-diagnostics

// The rules of shardlin.attention, shardlin.rope, shardlin.local_slice and
// shardlin.local_place.

func.func @not_whole_heads(%q: tensor<8x10xf32>, %k: tensor<8x8xf32>) -> tensor<8x10xf32> {
  // expected-error@+1 {{q's 10 and k's 8 features must be whole heads of head_dim 4}}
  %o = shardlin.attention %q, %k, %k {head_dim = 4 : i64} : tensor<8x10xf32>, tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x10xf32>
  return %o : tensor<8x10xf32>
}

// -----

func.func @hq_not_multiple(%q: tensor<8x28xf32>, %k: tensor<8x8xf32>) -> tensor<8x28xf32> {
  // expected-error@+1 {{the 7 query heads must be a multiple of the 2 kv heads (GQA groups)}}
  %o = shardlin.attention %q, %k, %k {head_dim = 4 : i64} : tensor<8x28xf32>, tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x28xf32>
  return %o : tensor<8x28xf32>
}

// -----

func.func @wrong_group(%q: tensor<8x24xf32>, %k: tensor<8x8xf32>) -> tensor<8x24xf32> {
  // expected-error@+1 {{group 2 is not 6 / 2 = 3}}
  %o = shardlin.attention %q, %k, %k {head_dim = 4 : i64, group = 2 : i64} : tensor<8x24xf32>, tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x24xf32>
  return %o : tensor<8x24xf32>
}

// -----

func.func @dynamic_global(%q: tensor<8x?xf32>, %k: tensor<8x8xf32>) -> tensor<8x?xf32> {
  // expected-error@+1 {{needs static feature dims (Hq * head_dim and Hkv * head_dim), got ? and 8}}
  %o = shardlin.attention %q, %k, %k {head_dim = 4 : i64} : tensor<8x?xf32>, tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x?xf32>
  return %o : tensor<8x?xf32>
}

// -----

func.func @kv_differ(%q: tensor<8x8xf32>, %k: tensor<8x8xf32>, %v: tensor<8x4xf32>) -> tensor<8x8xf32> {
  // expected-error@+1 {{expects k and v of one type, got 'tensor<8x8xf32>' and 'tensor<8x4xf32>'}}
  %o = shardlin.attention %q, %k, %v {head_dim = 4 : i64} : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x4xf32> -> tensor<8x8xf32>
  return %o : tensor<8x8xf32>
}

// -----

func.func @seq_mismatch(%q: tensor<8x8xf32>, %k: tensor<6x8xf32>) -> tensor<8x8xf32> {
  // expected-error@+1 {{k 'tensor<6x8xf32>' must have q's element type and leading dims ('tensor<8x8xf32>')}}
  %o = shardlin.attention %q, %k, %k {head_dim = 4 : i64} : tensor<8x8xf32>, tensor<6x8xf32>, tensor<6x8xf32> -> tensor<8x8xf32>
  return %o : tensor<8x8xf32>
}

// -----

func.func @bad_mask(%q: tensor<8x8xf32>, %m: tensor<8x7xf32>) -> tensor<8x8xf32> {
  // expected-error@+1 {{mask 'tensor<8x7xf32>' is not [8, 8] (the sequence length)}}
  %o = shardlin.attention %q, %q, %q mask %m {head_dim = 4 : i64} : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x7xf32> -> tensor<8x8xf32>
  return %o : tensor<8x8xf32>
}

// -----

func.func @kv_coverage(%q: tensor<4x?xf32>, %k: tensor<4x?xf32>) -> tensor<4x?xf32> {
  // expected-error@+1 {{rank 1's query heads [2, 4) need kv heads [0, 2) (group 3), but kv_heads gives it [1, 2)}}
  %o = shardlin.attention %q, %k, %k {head_dim = 4 : i64, group = 3 : i64, q_heads = array<i64: 0, 2, 2, 4, 4, 6>, kv_heads = array<i64: 0, 1, 1, 2, 1, 2>} : tensor<4x?xf32>, tensor<4x?xf32>, tensor<4x?xf32> -> tensor<4x?xf32>
  return %o : tensor<4x?xf32>
}

// -----

func.func @q_gap(%q: tensor<4x?xf32>) -> tensor<4x?xf32> {
  // expected-error@+1 {{q_heads do not tile the query heads: gap at head 2}}
  %o = shardlin.attention %q, %q, %q {head_dim = 4 : i64, group = 1 : i64, q_heads = array<i64: 0, 2, 3, 4>, kv_heads = array<i64: 0, 2, 3, 4>} : tensor<4x?xf32>, tensor<4x?xf32>, tensor<4x?xf32> -> tensor<4x?xf32>
  return %o : tensor<4x?xf32>
}

// -----

func.func @local_needs_group(%q: tensor<4x?xf32>) -> tensor<4x?xf32> {
  // expected-error@+1 {{with q_heads needs kv_heads and group (the rank-local form)}}
  %o = shardlin.attention %q, %q, %q {head_dim = 4 : i64, q_heads = array<i64: 0, 2, 2, 4>} : tensor<4x?xf32>, tensor<4x?xf32>, tensor<4x?xf32> -> tensor<4x?xf32>
  return %o : tensor<4x?xf32>
}

// -----

func.func @local_static_uneven(%q: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{q has 8 features, but rank 1 holds 1 heads of 4 (make the dim ?)}}
  %o = shardlin.attention %q, %q, %q {head_dim = 4 : i64, group = 1 : i64, q_heads = array<i64: 0, 2, 2, 3>, kv_heads = array<i64: 0, 2, 2, 3>} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

func.func @rope_odd(%x: tensor<8x6xf32>, %c: tensor<8x1xf32>) -> tensor<8x6xf32> {
  // expected-error@+1 {{head_dim 3 must be even (pairs (i, i + head_dim / 2))}}
  %y = shardlin.rope %x, %c, %c {head_dim = 3 : i64} : tensor<8x6xf32>, tensor<8x1xf32>, tensor<8x1xf32> -> tensor<8x6xf32>
  return %y : tensor<8x6xf32>
}

// -----

func.func @rope_tables(%x: tensor<8x8xf32>, %c: tensor<8x4xf32>) -> tensor<8x8xf32> {
  // expected-error@+1 {{expects cos and sin of shape [8, 2] ([S, head_dim / 2]), got 'tensor<8x4xf32>'}}
  %y = shardlin.rope %x, %c, %c {head_dim = 4 : i64} : tensor<8x8xf32>, tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

func.func @rope_split_head(%x: tensor<8x10xf32>, %c: tensor<8x2xf32>) -> tensor<8x10xf32> {
  // expected-error@+1 {{x's 10 features are not whole heads of head_dim 4}}
  %y = shardlin.rope %x, %c, %c {head_dim = 4 : i64} : tensor<8x10xf32>, tensor<8x2xf32>, tensor<8x2xf32> -> tensor<8x10xf32>
  return %y : tensor<8x10xf32>
}

// -----

func.func @slice_out_of_range(%w: tensor<8x4xf32>) -> tensor<?x4xf32> {
  // expected-error@+1 {{range 1 [4, 12) is not within [0, 8)}}
  %s = shardlin.local_slice %w dim = 0 ranges = [0, 4, 4, 12] : tensor<8x4xf32> -> tensor<?x4xf32>
  return %s : tensor<?x4xf32>
}

// -----

func.func @slice_static(%w: tensor<8x4xf32>) -> tensor<4x4xf32> {
  // expected-error@+1 {{result dim 0 is 4 but the ranges give ? (static only if every range has one size)}}
  %s = shardlin.local_slice %w dim = 0 ranges = [0, 4, 4, 6] : tensor<8x4xf32> -> tensor<4x4xf32>
  return %s : tensor<4x4xf32>
}

// -----

// local_place: local_slice's rules, the result the whole tensor.

func.func @place_out_of_range(%g: tensor<?x4xf32>) -> tensor<8x4xf32> {
  // expected-error@+1 {{'shardlin.local_place' op range 1 [4, 12) is not within [0, 8)}}
  %t = shardlin.local_place %g dim = 0 ranges = [0, 4, 4, 12] : tensor<?x4xf32> -> tensor<8x4xf32>
  return %t : tensor<8x4xf32>
}

// -----

func.func @place_static(%g: tensor<4x4xf32>) -> tensor<8x4xf32> {
  // expected-error@+1 {{'shardlin.local_place' op operand dim 0 is 4 but the ranges give ? (static only if every range has one size)}}
  %t = shardlin.local_place %g dim = 0 ranges = [0, 4, 4, 6] : tensor<4x4xf32> -> tensor<8x4xf32>
  return %t : tensor<8x4xf32>
}

// -----

func.func @place_dynamic_result(%g: tensor<2x4xf32>) -> tensor<?x4xf32> {
  // expected-error@+1 {{'shardlin.local_place' op slices dim 0 of 'tensor<?x4xf32>', which must be static}}
  %t = shardlin.local_place %g dim = 0 ranges = [0, 2, 2, 4] : tensor<2x4xf32> -> tensor<?x4xf32>
  return %t : tensor<?x4xf32>
}

// -----

func.func @place_other_dim(%g: tensor<2x4xf32>) -> tensor<8x5xf32> {
  // expected-error@+1 {{'shardlin.local_place' op operand 'tensor<2x4xf32>' differs from 'tensor<8x5xf32>' in dim 1, which is not sliced}}
  %t = shardlin.local_place %g dim = 0 ranges = [0, 2, 2, 4] : tensor<2x4xf32> -> tensor<8x5xf32>
  return %t : tensor<8x5xf32>
}

// -----

func.func @place_element_type(%g: tensor<2x4xf16>) -> tensor<8x4xf32> {
  // expected-error@+1 {{'shardlin.local_place' op operand 'tensor<2x4xf16>' must be a slice of 'tensor<8x4xf32>'}}
  %t = shardlin.local_place %g dim = 0 ranges = [0, 2, 2, 4] : tensor<2x4xf16> -> tensor<8x4xf32>
  return %t : tensor<8x4xf32>
}

// -----

func.func @place_dim(%g: tensor<2x4xf32>) -> tensor<8x4xf32> {
  // expected-error@+1 {{'shardlin.local_place' op dim 2 is out of range for 'tensor<8x4xf32>'}}
  %t = shardlin.local_place %g dim = 2 ranges = [0, 2, 2, 4] : tensor<2x4xf32> -> tensor<8x4xf32>
  return %t : tensor<8x4xf32>
}

// -----

func.func @place_odd_ranges(%g: tensor<2x4xf32>) -> tensor<8x4xf32> {
  // expected-error@+1 {{'shardlin.local_place' op ranges must hold W pairs [begin, end), got 3 values}}
  %t = shardlin.local_place %g dim = 0 ranges = [0, 2, 2] : tensor<2x4xf32> -> tensor<8x4xf32>
  return %t : tensor<8x4xf32>
}

// -----

// shardlin.attention_grad: the rules of shardlin.attention, and its own.

func.func @grad_wrt(%q: tensor<8x8xf32>, %k: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error@+1 {{wrt must be "q", "k" or "v", got "o"}}
  %d = shardlin.attention_grad %q, %k, %k, %q {wrt = "o", head_dim = 4 : i64} : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  return %d : tensor<8x8xf32>
}

// -----

func.func @grad_result_type(%q: tensor<8x24xf32>, %k: tensor<8x8xf32>) -> tensor<8x24xf32> {
  // expected-error@+1 {{the gradient wrt v has type 'tensor<8x8xf32>', not 'tensor<8x24xf32>'}}
  %d = shardlin.attention_grad %q, %k, %k, %q {wrt = "v", head_dim = 4 : i64} : tensor<8x24xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x24xf32> -> tensor<8x24xf32>
  return %d : tensor<8x24xf32>
}

// -----

func.func @grad_dout_type(%q: tensor<8x24xf32>, %k: tensor<8x8xf32>) -> tensor<8x24xf32> {
  // expected-error@+1 {{expects dout of q's type 'tensor<8x24xf32>' (the gradient of the attention's result), got 'tensor<8x8xf32>'}}
  %d = shardlin.attention_grad %q, %k, %k, %k {wrt = "q", head_dim = 4 : i64} : tensor<8x24xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x24xf32>
  return %d : tensor<8x24xf32>
}

// -----

func.func @grad_tables(%q: tensor<8x?xf32>, %k: tensor<8x?xf32>) -> tensor<8x?xf32> {
  // expected-error@+1 {{rank 1's query heads [2, 4) need kv heads [0, 2) (group 3), but kv_heads gives it [1, 2)}}
  %d = shardlin.attention_grad %q, %k, %k, %q {wrt = "q", head_dim = 4 : i64, group = 3 : i64, q_heads = array<i64: 0, 2, 2, 4, 4, 6>, kv_heads = array<i64: 0, 1, 1, 2, 1, 2>} : tensor<8x?xf32>, tensor<8x?xf32>, tensor<8x?xf32>, tensor<8x?xf32> -> tensor<8x?xf32>
  return %d : tensor<8x?xf32>
}

// -----

func.func @grad_global_heads(%q: tensor<8x28xf32>, %k: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error@+1 {{the 7 query heads must be a multiple of the 2 kv heads (GQA groups)}}
  %d = shardlin.attention_grad %q, %k, %k, %q {wrt = "k", head_dim = 4 : i64} : tensor<8x28xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x28xf32> -> tensor<8x8xf32>
  return %d : tensor<8x8xf32>
}
