// What the attention import refuses, on the committed exports of
// integration_test/frontends/export_attention.py: located diagnostics and a
// non-zero exit.

// A plan that splits a head: gpt2_sdpa_seq's bounds [0, 8, 16, 24, 32] moved
// to [0, 10, 16, 24, 32] (head_dim 4).
// RUN: sed 's/sharded_dims_offsets = \[0, 8, 16, 24, 32\]/sharded_dims_offsets = [0, 10, 16, 24, 32]/' %S/../../../integration_test/frontends/attention/gpt2_sdpa_seq.mlir \
// RUN:   | not shardlin-opt --shardlin-import-shard -o /dev/null 2>&1 | FileCheck %s --check-prefix=SPLIT
// SPLIT: <stdin>:90:11: error: q's weight is split at feature 10, inside head 2 (head_dim 4): attention needs whole heads per rank; give sharded_dims_offsets that are multiples of the head dim

// Llama's rotate-half RoPE with a cos table whose halves differ: llama_gqa's
// q table cos with its row 0 [1, 1, 1, 1] turned into [1, 1, 1, 0.5]
// (shardlin.rope takes [S, D/2]: it needs cat(freqs, freqs)).
// RUN: sed 's/cos: "0x040000000000803F0000803F0000803F0000803F/cos: "0x040000000000803F0000803F0000803F0000003F/' \
// RUN:   %S/../../../integration_test/frontends/attention/llama_gqa.mlir \
// RUN:   | not shardlin-opt --shardlin-import-shard -o /dev/null 2>&1 | FileCheck %s --check-prefix=HALVES
// HALVES: <stdin>:183:11: error: q's rotary cos table differs between its two halves at position 0: shardlin.rope takes rotate-half tables [S, head_dim / 2] whose halves are equal
// HALVES: <stdin>:26:14: note: the table

// An op on the heads other than the rotate-half RoPE: llama_gqa's q RoPE with
// the concat's halves swapped (concat(x1, -x2), not rotate_half).
// RUN: sed 's/tensor.concat dim(3) %27, %extracted_slice :/tensor.concat dim(3) %extracted_slice, %27 :/' \
// RUN:   %S/../../../integration_test/frontends/attention/llama_gqa.mlir \
// RUN:   | not shardlin-opt --shardlin-import-shard -o /dev/null 2>&1 | FileCheck %s --check-prefix=ROPE
// ROPE: <stdin>:183:11: error: q of tm_tensor.attention: is not the transpose [0, 2, 1, 3] of [B, S, H, D], or a rotate-half RoPE of it (x * cos + concat(-x2, x1) * sin with [S, D] constants); another op on the heads is not recognized

// An attention written out: import-attention-explicit.mlir.

// A mask other than is_causal's: gpt2_sdpa_seq's select(i >= j, 0, -inf)
// turned into select(i <= j, ...).
// RUN: sed 's/arith.cmpi sge/arith.cmpi sle/' %S/../../../integration_test/frontends/attention/gpt2_sdpa_seq.mlir \
// RUN:   | not shardlin-opt --shardlin-import-shard -o /dev/null 2>&1 | FileCheck %s --check-prefix=MASK
// MASK: <stdin>:90:11: error: tm_tensor.attention: the mask is not the causal mask that is_causal=True writes

// The tm_tensor op's own form: q, k, v and an optional mask.
// RUN: sed 's/ins(%collapsed, %collapsed_25, %collapsed_26, %collapsed_27 : tensor<16x6x4xf32>, tensor<16x6x4xf32>, tensor<16x6x4xf32>, tensor<16x6x6xf32>)/ins(%collapsed, %collapsed_25 : tensor<16x6x4xf32>, tensor<16x6x4xf32>)/' \
// RUN:   %S/../../../integration_test/frontends/attention/gpt2_sdpa.mlir | not shardlin-opt -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORM
// FORM: <stdin>:90:11: error: 'tm_tensor.attention' op takes ins(q, k, v[, mask]) and outs(init)
