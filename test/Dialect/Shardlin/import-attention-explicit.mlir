// An attention written out (softmax(q @ k^T / sqrt(D) masked_fill(~tril,
// -inf)) @ v), as torch-mlir exports it: gpt2_explicit of
// integration_test/frontends/export_attention.py, and that export with one
// part changed at a time (sed) so that each condition of the matcher is seen
// to refuse, with a located error and a non-zero exit.

// The whole form imports as one shardlin.attention on the projections
// (the default scale 1/sqrt(4): the export divides by 2.0), nothing of the
// scores, mask or softmax left; the block fuses (x replicated: one
// all_reduce).
// RUN: shardlin-opt %S/../../../integration_test/frontends/attention/gpt2_explicit.mlir --shardlin-import-shard | FileCheck %s --check-prefix=IMPORT \
// RUN:   --implicit-check-not=linalg.generic --implicit-check-not=linalg.batch_matmul --implicit-check-not=linalg.transpose \
// RUN:   --implicit-check-not=i1 --implicit-check-not=i64
// IMPORT: %[[Q:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [2, 6, 32]
// IMPORT: %[[K:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [2, 6, 32]
// IMPORT: %[[V:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [2, 6, 32]
// IMPORT: shardlin.attention %[[Q]], %[[K]], %[[V]] {causal, head_dim = 4 : i64} :
// IMPORT-NOT: scale
// RUN: shardlin-opt %S/../../../integration_test/frontends/attention/gpt2_explicit.mlir --shardlin-import-shard '--lower-sharded-linear=explain=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=FUSED
// FUSED: gpt2_explicit.mlir:169:11: remark: attention block fused: 8 query heads, 8 kv heads (group 1), head_dim 4, 4 ranks; query heads by rank [0, 3) [3, 6) [6, 7) [7, 8); kv heads by rank [0, 3) [3, 6) [6, 7) [7, 8); x replicated: one all_reduce

// Another scale (dividing by 4.0, not sqrt(4)): stated on the op.
// RUN: sed 's/%cst_20 = arith.constant 2.000000e+00 : f32/%cst_20 = arith.constant 4.000000e+00 : f32/' \
// RUN:   %S/../../../integration_test/frontends/attention/gpt2_explicit.mlir | shardlin-opt --shardlin-import-shard | FileCheck %s --check-prefix=SCALE
// SCALE: shardlin.attention %{{.*}}, %{{.*}}, %{{.*}} {causal, head_dim = 4 : i64, scale = 2.500000e-01 : f64}

// The scale: not by a constant (the scores divided by themselves).
// RUN: sed 's/arith.divf %in, %cst_20 : f32/arith.divf %in, %in : f32/' %S/../../../integration_test/frontends/attention/gpt2_explicit.mlir \
// RUN:   | not shardlin-opt --shardlin-import-shard -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOSCALE
// NOSCALE: <stdin>:93:11: error: attention written out: the scores are scaled otherwise than by a float constant (a divf or mulf); the import takes softmax(q @ k^T * scale + causal mask, dim=-1) @ v as torch-mlir writes it

// The mask: tril's j <= i turned into j < i (the diagonal dropped).
// RUN: sed 's/arith.cmpi sle, %45, %43 : i64/arith.cmpi slt, %45, %43 : i64/' %S/../../../integration_test/frontends/attention/gpt2_explicit.mlir \
// RUN:   | not shardlin-opt --shardlin-import-shard -o /dev/null 2>&1 | FileCheck %s --check-prefix=DIAG
// DIAG: <stdin>:114:11: error: attention written out: the mask is not causal: it drops the score at (query 0, key 0)

// The mask: triu instead of tril (j >= i kept, the future seen).
// RUN: sed 's/arith.cmpi sle, %45, %43 : i64/arith.cmpi sge, %45, %43 : i64/' %S/../../../integration_test/frontends/attention/gpt2_explicit.mlir \
// RUN:   | not shardlin-opt --shardlin-import-shard -o /dev/null 2>&1 | FileCheck %s --check-prefix=FUTURE
// FUTURE: <stdin>:114:11: error: attention written out: the mask is not causal: it keeps the score at (query 0, key 1)

// The mask: a masked score set to 0, not -inf.
// RUN: sed 's/%cst_3 = arith.constant dense<0xFF800000> : tensor<f32>/%cst_3 = arith.constant dense<0.0> : tensor<f32>/' \
// RUN:   %S/../../../integration_test/frontends/attention/gpt2_explicit.mlir | not shardlin-opt --shardlin-import-shard -o /dev/null 2>&1 | FileCheck %s --check-prefix=FILL
// FILL: <stdin>:114:11: error: attention written out: a masked score is not set to -inf

// The mask: computed by an op the evaluator does not take (addi for xori).
// RUN: sed 's/arith.xori \(.*\) : i1/arith.addi \1 : i1/' %S/../../../integration_test/frontends/attention/gpt2_explicit.mlir \
// RUN:   | not shardlin-opt --shardlin-import-shard -o /dev/null 2>&1 | FileCheck %s --check-prefix=OPAQUE
// OPAQUE: <stdin>:114:11: error: attention written out: the boolean mask is not computed from linalg.index and constants

// The softmax: the row max added, not subtracted.
// RUN: sed 's/arith.subf %in, %in_38 : f32/arith.addf %in, %in_38 : f32/' %S/../../../integration_test/frontends/attention/gpt2_explicit.mlir \
// RUN:   | not shardlin-opt --shardlin-import-shard -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOSUB
// NOSUB: <stdin>:123:13: error: attention written out: the row max is not subtracted from the scores

// The softmax: a row min instead of the row max.
// RUN: sed 's/%44 = arith.maximumf %in, %out : f32/%44 = arith.minimumf %in, %out : f32/' %S/../../../integration_test/frontends/attention/gpt2_explicit.mlir \
// RUN:   | not shardlin-opt --shardlin-import-shard -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOMAX
// NOMAX: <stdin>:114:11: error: attention written out: the softmax does not subtract the row max (a max reduction over the last dim from -inf)

// The softmax: exp2 instead of exp.
// RUN: sed 's/math.exp %in : f32/math.exp2 %in : f32/' %S/../../../integration_test/frontends/attention/gpt2_explicit.mlir \
// RUN:   | not shardlin-opt --shardlin-import-shard -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOEXP
// NOEXP: <stdin>:133:11: error: attention written out: the scores minus their max are not exponentiated

// The softmax: divided by the row max of the exponentials, not their sum.
// RUN: sed 's/arith.addf %in, %out : f32/arith.maximumf %in, %out : f32/' %S/../../../integration_test/frontends/attention/gpt2_explicit.mlir \
// RUN:   | not shardlin-opt --shardlin-import-shard -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOSUM
// NOSUM: <stdin>:138:11: error: attention written out: exp(scores - max) is not divided by its row sum (a sum reduction over the last dim from 0)

// The weighted sum: the probabilities times q's heads instead of v's (q's
// heads then feed two batch_matmuls: the scores' match stops at q).
// RUN: sed 's/\(%collapsed_32 = tensor.collapse_shape %\)[a-z]*_26 /\1transposed_21 /' \
// RUN:   %S/../../../integration_test/frontends/attention/gpt2_explicit.mlir | not shardlin-opt --shardlin-import-shard -o /dev/null 2>&1 | FileCheck %s --check-prefix=VHEADS
// VHEADS: <stdin>:90:11: error: q of an attention written out (this batch_matmul): is not the transpose [0, 2, 1, 3] of [B, S, H, D]

// An additive mask (gpt2_explicit_addmask: scores + a frozen [S, S]
// parameter, 0 on and below the diagonal, -inf above; x split along the
// batch): read from its dense_resource blob, taken as causal; the block
// fuses (one all_gather, one reduce_scatter).
// RUN: shardlin-opt %S/../../../integration_test/frontends/attention/gpt2_explicit_addmask.mlir --shardlin-import-shard | FileCheck %s --check-prefix=ADD \
// RUN:   --implicit-check-not=linalg.generic --implicit-check-not=linalg.batch_matmul --implicit-check-not=additive
// ADD: shardlin.attention %{{.*}}, %{{.*}}, %{{.*}} {causal, head_dim = 4 : i64} : tensor<?x6x32xf32>
// RUN: shardlin-opt %S/../../../integration_test/frontends/attention/gpt2_explicit_addmask.mlir --shardlin-import-shard '--lower-sharded-linear=explain=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=ADD-FUSED
// ADD-FUSED: remark: attention block fused: 8 query heads, 8 kv heads (group 1), head_dim 4, 4 ranks; {{.*}}; one all_gather of x and one reduce_scatter

// The additive mask with its (0, 0) entry 1.0 instead of 0.
// RUN: sed 's/additive: "0x0400000000000000/additive: "0x040000000000803F/' %S/../../../integration_test/frontends/attention/gpt2_explicit_addmask.mlir \
// RUN:   | not shardlin-opt --shardlin-import-shard -o /dev/null 2>&1 | FileCheck %s --check-prefix=ADD-BAD
// ADD-BAD: <stdin>:{{[0-9]+}}:11: error: attention written out: the additive mask is not causal (0 where key <= query, -inf elsewhere) at (query 0, key 0)

// The additive mask with its (0, 1) entry 0 instead of -inf (the future
// seen).
// RUN: sed 's/additive: "0x0400000000000000000080FF/additive: "0x040000000000000000000000/' %S/../../../integration_test/frontends/attention/gpt2_explicit_addmask.mlir \
// RUN:   | not shardlin-opt --shardlin-import-shard -o /dev/null 2>&1 | FileCheck %s --check-prefix=ADD-FUTURE
// ADD-FUTURE: <stdin>:{{[0-9]+}}:11: error: attention written out: the additive mask is not causal (0 where key <= query, -inf elsewhere) at (query 0, key 1)
