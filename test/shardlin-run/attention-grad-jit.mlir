// shardlin.attention_grad under shardlin-run --jit (docs/native.md): each
// gradient of a rank-local attention (2 ranks holding query heads [0, 3)
// and [3, 6), kv heads [0, 1) and [1, 2): group 3, head_dim 2, causal)
// bufferized into shardlin.buffer.attention_grad, one call each of
// shardlin_attention_grad (the plan executor's kernel). Every rank's dq, dk
// and dv against the float64 gradients of Inputs/attention_grad_ref.py
// (f32 within 1e-5 of the largest magnitude), and equal byte for byte to
// the plan executor's (the runtime's attention_grad instructions).

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/attention_grad_ref.py --world-size 2 --seq 5 --heads 3 --kv-heads 1 --head-dim 2 --seed 7 --out-dir %t
// RUN: shardlin-run %s --jit --world-size=2 --arg=%t/q.{rank}.npy --arg=%t/k.{rank}.npy --arg=%t/v.{rank}.npy --arg=%t/do.{rank}.npy --out=%t/jq.{rank}.npy --out=%t/jk.{rank}.npy --out=%t/jv.{rank}.npy
// RUN: %python %shardlin_src/testing/tools/attention_ref.py check --dir %t/dq --out '%t/jq.{rank}.npy' --world-size 2 | FileCheck %s
// RUN: %python %shardlin_src/testing/tools/attention_ref.py check --dir %t/dk --out '%t/jk.{rank}.npy' --world-size 2 | FileCheck %s
// RUN: %python %shardlin_src/testing/tools/attention_ref.py check --dir %t/dv --out '%t/jv.{rank}.npy' --world-size 2 | FileCheck %s
// CHECK: ok: 2 ranks
// RUN: shardlin-run %s --world-size=2 --arg=%t/q.{rank}.npy --arg=%t/k.{rank}.npy --arg=%t/v.{rank}.npy --arg=%t/do.{rank}.npy --out=%t/pq.{rank}.npy --out=%t/pk.{rank}.npy --out=%t/pv.{rank}.npy
// RUN: cmp %t/jq.0.npy %t/pq.0.npy
// RUN: cmp %t/jq.1.npy %t/pq.1.npy
// RUN: cmp %t/jk.0.npy %t/pk.0.npy
// RUN: cmp %t/jk.1.npy %t/pk.1.npy
// RUN: cmp %t/jv.0.npy %t/pv.0.npy
// RUN: cmp %t/jv.1.npy %t/pv.1.npy
// A gradient of another seed's inputs fails the check.
// RUN: %python %S/Inputs/attention_grad_ref.py --world-size 2 --seq 5 --heads 3 --kv-heads 1 --head-dim 2 --seed 8 --out-dir %t/other
// RUN: not %python %shardlin_src/testing/tools/attention_ref.py check --dir %t/other/dk --out '%t/jk.{rank}.npy' --world-size 2 | FileCheck %s --check-prefix=BAD
// BAD: MISMATCH: rank

func.func @grads(%q: tensor<5x6xf32>, %k: tensor<5x2xf32>, %v: tensor<5x2xf32>, %do: tensor<5x6xf32>) -> (tensor<5x6xf32>, tensor<5x2xf32>, tensor<5x2xf32>) {
  %dq = shardlin.attention_grad %q, %k, %v, %do {wrt = "q", causal, head_dim = 2 : i64, group = 3 : i64, q_heads = array<i64: 0, 3, 3, 6>, kv_heads = array<i64: 0, 1, 1, 2>} : tensor<5x6xf32>, tensor<5x2xf32>, tensor<5x2xf32>, tensor<5x6xf32> -> tensor<5x6xf32>
  %dk = shardlin.attention_grad %q, %k, %v, %do {wrt = "k", causal, head_dim = 2 : i64, group = 3 : i64, q_heads = array<i64: 0, 3, 3, 6>, kv_heads = array<i64: 0, 1, 1, 2>} : tensor<5x6xf32>, tensor<5x2xf32>, tensor<5x2xf32>, tensor<5x6xf32> -> tensor<5x2xf32>
  %dv = shardlin.attention_grad %q, %k, %v, %do {wrt = "v", causal, head_dim = 2 : i64, group = 3 : i64, q_heads = array<i64: 0, 3, 3, 6>, kv_heads = array<i64: 0, 1, 1, 2>} : tensor<5x6xf32>, tensor<5x2xf32>, tensor<5x2xf32>, tensor<5x6xf32> -> tensor<5x2xf32>
  return %dq, %dk, %dv : tensor<5x6xf32>, tensor<5x2xf32>, tensor<5x2xf32>
}
