// RUN: shardlin-opt %s -split-input-file -verify-diagnostics

// The buffer forms share their tensor forms' verifiers (with "output" for
// the result), plus the C ABI's rank-2 bias_add.

func.func @rank_zero() {
  // expected-error@+1 {{attribute 'world_size' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %r = shardlin.rank world_size = 0
  return
}

// -----

func.func @all_gather_wrong_chunk(%x: memref<5x3xf32>, %g: memref<5x7xf32>) {
  // expected-error@+1 {{input dim 1 is 3 but the local chunk of 7 over 3 ranks is ? (chunks are uneven)}}
  shardlin.buffer.all_gather %x into %g along <dim = 1, placements = [2, 0, 1]> : memref<5x3xf32> into memref<5x7xf32>
  return
}

// -----

func.func @all_to_all_same_dims(%x: memref<6x6xf32>, %y: memref<6x6xf32>) {
  // expected-error@+1 {{split and concat dims must differ, both are 0}}
  shardlin.buffer.all_to_all %x into %y split <dim = 0, placements = [0, 1]> concat <dim = 0, placements = [0, 1]> : memref<6x6xf32> into memref<6x6xf32>
  return
}

// -----

func.func @reduce_scatter_other_dim(%p: memref<8x4xf32>, %y: memref<4x5xf32>) {
  // expected-error@+1 {{input dim 1 (4) and output dim 1 (5) must be equal}}
  shardlin.buffer.reduce_scatter %p into %y along <dim = 0, placements = [0, 1]> : memref<8x4xf32> into memref<4x5xf32>
  return
}

// -----

func.func @collective_element_types(%x: memref<4x4xf32>, %y: memref<8x4xf16>) {
  // expected-error@+1 {{failed to verify that all of {input, output} have same element type}}
  shardlin.buffer.all_gather %x into %y along <dim = 0, placements = [0, 1]> : memref<4x4xf32> into memref<8x4xf16>
  return
}

// -----

func.func @gemm_shape(%a: memref<4x3xf32>, %b: memref<3x5xf32>, %c: memref<4x6xf32>) {
  // expected-error@+1 {{output shape [4, 6] does not match [4, 5]}}
  shardlin.buffer.gemm %a, %b into %c : memref<4x3xf32>, memref<3x5xf32> into memref<4x6xf32>
  return
}

// -----

func.func @gemm_f32_output_bias(%a: memref<4x3xf16>, %b: memref<3x5xf16>, %bias: memref<5xf16>, %c: memref<4x5xf32>) {
  // expected-error@+1 {{an f32 output of 'f16' operands takes no bias}}
  shardlin.buffer.gemm %a, %b bias %bias into %c : memref<4x3xf16>, memref<3x5xf16>, memref<5xf16> into memref<4x5xf32>
  return
}

// -----

func.func @bias_add_rank(%y: memref<2x3x4xf32>, %b: memref<4xf32>) {
  // expected-error@+1 {{expects a rank-2 input and output, got 'memref<2x3x4xf32>'}}
  shardlin.buffer.bias_add %y, %b into %y : memref<2x3x4xf32>, memref<4xf32> into memref<2x3x4xf32>
  return
}

// -----

func.func @bias_add_size(%y: memref<3x4xf32>, %b: memref<5xf32>) {
  // expected-error@+1 {{bias size 5 does not match the input's last dim 4}}
  shardlin.buffer.bias_add %y, %b into %y : memref<3x4xf32>, memref<5xf32> into memref<3x4xf32>
  return
}

// -----

func.func @convert_pair(%x: memref<3x4xf32>, %y: memref<3x4xf64>) {
  // expected-error@+1 {{converts f32 to f16 or bf16, or f16 or bf16 to f32; got 'f32' to 'f64'}}
  shardlin.buffer.convert %x into %y : memref<3x4xf32> into memref<3x4xf64>
  return
}

// -----

func.func @not_strided(%x: memref<4x4xf32, affine_map<(d0, d1) -> (d1, d0)>>, %y: memref<8x4xf32>) {
  // expected-error@+1 {{operand #0 must be strided memref of f16, bf16, f32 or f64 values}}
  shardlin.buffer.all_gather %x into %y along <dim = 0, placements = [0, 1]> : memref<4x4xf32, affine_map<(d0, d1) -> (d1, d0)>> into memref<8x4xf32>
  return
}

// -----

func.func @sum_rows_buffer(%x: memref<3x4xbf16>, %y: memref<4xf64>) {
  // expected-error@+1 {{'shardlin.buffer.sum_rows' op result element type 'f64' must be the input's ('bf16'), or f32 when the input is f16 or bf16}}
  shardlin.buffer.sum_rows %x into %y : memref<3x4xbf16> into memref<4xf64>
  return
}

// -----

func.func @sum_rows_buffer_size(%x: memref<3x4xf32>, %y: memref<5xf32>) {
  // expected-error@+1 {{'shardlin.buffer.sum_rows' op result size 5 differs from the input's 4 columns}}
  shardlin.buffer.sum_rows %x into %y : memref<3x4xf32> into memref<5xf32>
  return
}

// -----

func.func @all_reduce_shape(%p: memref<8x11xf32>, %s: memref<8x12xf32>) {
  // expected-error@+1 {{'shardlin.buffer.all_reduce' op expects an output of the input's shape, got 'memref<8x11xf32>' into 'memref<8x12xf32>'}}
  shardlin.buffer.all_reduce %p into %s world_size = 2 : memref<8x11xf32> into memref<8x12xf32>
  return
}

// -----

func.func @all_reduce_dtype(%p: memref<8x11xf32>, %s: memref<8x11xf16>) {
  // expected-error@+1 {{'shardlin.buffer.all_reduce' op failed to verify that all of {input, output} have same element type}}
  shardlin.buffer.all_reduce %p into %s world_size = 2 : memref<8x11xf32> into memref<8x11xf16>
  return
}

// -----

func.func @gather_bounds_layout(%x: memref<?x4xf32>, %b: memref<3xi64, strided<[2]>>) {
  // expected-error@+1 {{'shardlin.buffer.gather_bounds' op bounds 'memref<3xi64, strided<[2]>>' must be 3 i64 (one more than the spec's 2 chunks, identity layout)}}
  shardlin.buffer.gather_bounds %x into %b along <dim = 0, placements = [1, 0]> : memref<?x4xf32> into memref<3xi64, strided<[2]>>
  return
}

// -----

func.func @bounds_operand_layout(%x: memref<?x4xf32>, %b: memref<3xi64, strided<[2]>>, %g: memref<?x4xf32>) {
  // expected-error@+1 {{'shardlin.buffer.all_gather' op along bounds 'memref<3xi64, strided<[2]>>' must be 3 i64 (one more than the spec's 2 chunks, identity layout)}}
  shardlin.buffer.all_gather %x into %g along <dim = 0, placements = [1, 0]> bounds(%b : memref<3xi64, strided<[2]>>) : memref<?x4xf32> into memref<?x4xf32>
  return
}

// -----

func.func @attention_tables(%q: memref<3x8xf32>, %k: memref<3x4xf32>) {
  // expected-error@+1 {{'shardlin.buffer.attention' op with q_heads needs kv_heads and group (the rank-local form)}}
  shardlin.buffer.attention %q, %k, %k into %q {group = 2 : i64, head_dim = 4 : i64, q_heads = array<i64: 0, 2>} : memref<3x8xf32>, memref<3x4xf32>, memref<3x4xf32> into memref<3x8xf32>
  return
}

// -----

func.func @attention_global_group(%q: memref<3x8xf32>, %k: memref<3x4xf32>) {
  // expected-error@+1 {{'shardlin.buffer.attention' op group 3 is not 2 / 1 = 2}}
  shardlin.buffer.attention %q, %k, %k into %q {group = 3 : i64, head_dim = 4 : i64} : memref<3x8xf32>, memref<3x4xf32>, memref<3x4xf32> into memref<3x8xf32>
  return
}

// -----

func.func @attention_output(%q: memref<3x8xf32>, %k: memref<3x4xf32>, %o: memref<4x8xf32>) {
  // expected-error@+1 {{'shardlin.buffer.attention' op expects an output of q's type 'memref<3x8xf32>', got 'memref<4x8xf32>'}}
  shardlin.buffer.attention %q, %k, %k into %o {head_dim = 4 : i64} : memref<3x8xf32>, memref<3x4xf32>, memref<3x4xf32> into memref<4x8xf32>
  return
}

// -----

func.func @attention_mask(%q: memref<3x8xf32>, %k: memref<3x4xf32>, %m: memref<3x2xf32>) {
  // expected-error@+1 {{'shardlin.buffer.attention' op mask 'memref<3x2xf32>' is not [3, 3] (the sequence length)}}
  shardlin.buffer.attention %q, %k, %k mask %m into %q {head_dim = 4 : i64} : memref<3x8xf32>, memref<3x4xf32>, memref<3x4xf32>, memref<3x2xf32> into memref<3x8xf32>
  return
}

// -----

func.func @attention_grad_output(%q: memref<3x8xf32>, %k: memref<3x4xf32>) {
  // expected-error@+1 {{'shardlin.buffer.attention_grad' op the gradient wrt k has type 'memref<3x4xf32>', not 'memref<3x8xf32>'}}
  shardlin.buffer.attention_grad %q, %k, %k, %q into %q {head_dim = 4 : i64, wrt = "k"} : memref<3x8xf32>, memref<3x4xf32>, memref<3x4xf32>, memref<3x8xf32> into memref<3x8xf32>
  return
}

// -----

func.func @rope_table(%x: memref<3x8xf32>, %c: memref<3x4xf32>) {
  // expected-error@+1 {{'shardlin.buffer.rope' op expects cos and sin of shape [3, 2] ([S, head_dim / 2]), got 'memref<3x4xf32>'}}
  shardlin.buffer.rope %x, %c, %c into %x {head_dim = 4 : i64} : memref<3x8xf32>, memref<3x4xf32>, memref<3x4xf32> into memref<3x8xf32>
  return
}
