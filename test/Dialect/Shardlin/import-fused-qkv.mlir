// The import of a fused q/k/v weight (docs/attention.md, "Fused QKV") on the
// committed exports of integration_test/frontends/export_attention.py:
// GPT-2's c_attn Linear(H, (Hq + 2 Hkv) D) whose output is split into q, k
// and v, its weight annotated split on dim 0 without offsets. The import
// makes three col-wise linears on the weight's row ranges, each split in
// whole heads (the chunk rule on heads, or on GQA groups), so that
// --lower-sharded-linear fuses the attention block.

// 7 heads of D = 4 over W = 3 ranks: 3, 3, 1 heads of each of q, k, v.
// RUN: shardlin-opt %S/../../../integration_test/frontends/attention/gpt2_fused_qkv.mlir --shardlin-import-shard | FileCheck %s --check-prefix=MHA \
// RUN:   --implicit-check-not=tm_tensor --implicit-check-not=tensor.extract_slice --implicit-check-not='tensor<84x28xf32>'
// MHA-LABEL: func.func @main(%arg0: tensor<2x6x28xf32> {shardlin.replicated})
// MHA: %[[Q:.*]] = shardlin.linear %{{.*}}, %{{.*}}, %{{.*}} layouts replicated -> replicated : (tensor<12x28xf32>, !shardlin.sharded<tensor<28x28xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2], bounds = [0, 12, 24, 28]>>, tensor<28xf32>) -> tensor<12x28xf32>
// MHA: %[[K:.*]] = shardlin.linear %{{.*}}, %{{.*}}, %{{.*}} layouts replicated -> replicated : (tensor<12x28xf32>, !shardlin.sharded<tensor<28x28xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2], bounds = [0, 12, 24, 28]>>, tensor<28xf32>) -> tensor<12x28xf32>
// MHA: %[[V:.*]] = shardlin.linear %{{.*}}, %{{.*}}, %{{.*}} layouts replicated -> replicated : (tensor<12x28xf32>, !shardlin.sharded<tensor<28x28xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2], bounds = [0, 12, 24, 28]>>, tensor<28xf32>) -> tensor<12x28xf32>
// MHA: shardlin.attention %{{.*}}, %{{.*}}, %{{.*}} {causal, head_dim = 4 : i64} : tensor<2x6x28xf32>, tensor<2x6x28xf32>, tensor<2x6x28xf32> -> tensor<2x6x28xf32>
// MHA: shardlin.linear %{{.*}} : (tensor<12x28xf32>, !shardlin.sharded<tensor<28x28xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2], bounds = [0, 12, 24, 28]>>, tensor<28xf32>) -> tensor<12x28xf32>

// Lowered: the block fuses, one all_reduce and no other collective.
// RUN: shardlin-opt %S/../../../integration_test/frontends/attention/gpt2_fused_qkv.mlir --shardlin-import-shard --lower-sharded-linear | FileCheck %s --check-prefix=MHA-LOW \
// RUN:   --implicit-check-not=shardlin.all_gather --implicit-check-not=shardlin.reduce_scatter --implicit-check-not=shardlin.all_to_all --implicit-check-not='shardlin.linear '
// MHA-LOW: shardlin.attention {{.*}}kv_heads = array<i64: 0, 3, 3, 6, 6, 7>, q_heads = array<i64: 0, 3, 3, 6, 6, 7>
// MHA-LOW: shardlin.all_reduce
// MHA-LOW-NOT: shardlin.all_reduce
// RUN: shardlin-opt %S/../../../integration_test/frontends/attention/gpt2_fused_qkv.mlir --shardlin-import-shard '--lower-sharded-linear=explain=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=MHA-EXPLAIN
// MHA-EXPLAIN: remark: attention block fused: 7 query heads, 7 kv heads (group 1), head_dim 4, 3 ranks; query heads by rank [0, 3) [3, 6) [6, 7); kv heads by rank [0, 3) [3, 6) [6, 7); x replicated: one all_reduce

// Externalized (--params): the fused weight and bias are arguments, each
// split into three parameter arguments of the same name with the rows of
// their part: q [0, 28), k [28, 56), v [56, 84); each rank reads its chunk
// of each (test/shardlin-run/fused-qkv-params-mpi.test counts the bytes).
// RUN: rm -rf %t && mkdir -p %t
// RUN: shardlin-opt %S/../../../integration_test/frontends/attention/gpt2_fused_qkv.mlir --shardlin-externalize-parameters="file=%t/p.safetensors" \
// RUN:   | shardlin-opt --shardlin-import-shard | FileCheck %s --check-prefix=EXT
// EXT-LABEL: func.func @main(
// EXT-SAME: %arg3: !shardlin.sharded<tensor<28x28xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2], bounds = [0, 12, 24, 28]>> {shardlin.parameter = "c_attn.weight", shardlin.parameter_rows = array<i64: 0, 28>}
// EXT-SAME: %arg4: !shardlin.sharded<tensor<28x28xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2], bounds = [0, 12, 24, 28]>> {shardlin.parameter = "c_attn.weight", shardlin.parameter_rows = array<i64: 28, 56>}
// EXT-SAME: %arg5: !shardlin.sharded<tensor<28x28xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2], bounds = [0, 12, 24, 28]>> {shardlin.parameter = "c_attn.weight", shardlin.parameter_rows = array<i64: 56, 84>}
// EXT-SAME: %arg6: !shardlin.sharded<tensor<28xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2], bounds = [0, 12, 24, 28]>> {shardlin.parameter = "c_attn.bias", shardlin.parameter_rows = array<i64: 0, 28>}
// EXT-SAME: %arg7: !shardlin.sharded<tensor<28xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2], bounds = [0, 12, 24, 28]>> {shardlin.parameter = "c_attn.bias", shardlin.parameter_rows = array<i64: 28, 56>}
// EXT-SAME: %arg8: !shardlin.sharded<tensor<28xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2], bounds = [0, 12, 24, 28]>> {shardlin.parameter = "c_attn.bias", shardlin.parameter_rows = array<i64: 56, 84>}

// GQA (Hq, Hkv) = (8, 4) over W = 3: q in groups of g = 2 heads (2, 2, 0
// groups: features [0, 16), [16, 32), none), k and v their kv heads.
// RUN: shardlin-opt %S/../../../integration_test/frontends/attention/gqa_fused_qkv.mlir --shardlin-import-shard | FileCheck %s --check-prefix=GQA
// GQA: shardlin.linear {{.*}} : (tensor<12x32xf32>, !shardlin.sharded<tensor<32x32xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2], bounds = [0, 16, 32, 32]>>, tensor<32xf32>) -> tensor<12x32xf32>
// GQA: shardlin.linear {{.*}} : (tensor<12x32xf32>, !shardlin.sharded<tensor<16x32xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2], bounds = [0, 8, 16, 16]>>, tensor<16xf32>) -> tensor<12x16xf32>
// GQA: shardlin.linear {{.*}} : (tensor<12x32xf32>, !shardlin.sharded<tensor<16x32xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2], bounds = [0, 8, 16, 16]>>, tensor<16xf32>) -> tensor<12x16xf32>
// GQA: shardlin.attention {{.*}} : tensor<2x6x32xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32> -> tensor<2x6x32xf32>

// GQA (Hq, Hkv) = (6, 2) over W = 4 > Hkv: q in whole heads (2, 2, 2, 0),
// k and v replicated: whole [8, 24] constants on every rank.
// RUN: shardlin-opt %S/../../../integration_test/frontends/attention/gqa_fused_qkv_w4.mlir --shardlin-import-shard | FileCheck %s --check-prefix=GQA4
// GQA4: shardlin.linear {{.*}} : (tensor<12x24xf32>, !shardlin.sharded<tensor<24x24xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], bounds = [0, 8, 16, 24, 24]>>, tensor<24xf32>) -> tensor<12x24xf32>
// GQA4: shardlin.constant dense<{{.*}}> : tensor<8x24xf32> -> tensor<8x24xf32>
// GQA4: shardlin.constant dense<{{.*}}> : tensor<8x24xf32> -> tensor<8x24xf32>
// GQA4: shardlin.attention {{.*}} : tensor<2x6x24xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32> -> tensor<2x6x24xf32>

// 12 heads over W = 5: 3, 3, 3, 3, 0 heads.
// RUN: shardlin-opt %S/../../../integration_test/frontends/attention/gpt2_fused_qkv_w5.mlir --shardlin-import-shard '--lower-sharded-linear=explain=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=W5
// W5: remark: attention block fused: 12 query heads, 12 kv heads (group 1), head_dim 4, 5 ranks; query heads by rank [0, 3) [3, 6) [6, 9) [9, 12) [12, 12)

// A contiguous split of the fused rows (PyTorch DTensor's ColwiseParallel:
// rank 0 would hold all of q and a third of k) is refused.
// RUN: sed 's/split_axes = \[\[0\]\] : !shard.sharding/split_axes = [[0]] sharded_dims_offsets = [0, 28, 56, 84] : !shard.sharding/' \
// RUN:   %S/../../../integration_test/frontends/attention/gpt2_fused_qkv.mlir | not shardlin-opt --shardlin-import-shard -o /dev/null 2>&1 | FileCheck %s --check-prefix=DTENSOR
// DTENSOR: <stdin>:19:29: error: a fused q/k/v weight is split in whole heads of each of q, k and v (three row ranges per rank), which sharded_dims_offsets (one range per rank) cannot state

// The 2-D form (Inputs/fused-qkv-2d.mlir: a [24, 8] weight whose row i is
// all i, bias 100 + i; q, k, v 2 heads of 4 each, W = 2): each part's
// constant holds exactly its rows, [0, 8), [8, 16), [16, 24), and its bias.
// RUN: shardlin-opt %S/Inputs/fused-qkv-2d.mlir --shardlin-import-shard | FileCheck %s --check-prefix=TWOD --implicit-check-not='tensor<24x8xf32>'
// TWOD: %[[WQ:.*]] = shardlin.constant dense<{{\[\[}}0.000000e+00, {{.*}}], [7.000000e+00, 7.000000e+00, 7.000000e+00, 7.000000e+00, 7.000000e+00, 7.000000e+00, 7.000000e+00, 7.000000e+00]]> : tensor<8x8xf32> -> !shardlin.sharded<tensor<8x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1]>>
// TWOD: shardlin.constant dense<[1.000000e+02, {{.*}}, 1.070000e+02]> : tensor<8xf32>
// TWOD: shardlin.linear %arg0, %[[WQ]], %{{.*}} layouts replicated -> features
// TWOD: %[[WK:.*]] = shardlin.constant dense<{{\[\[}}8.000000e+00, {{.*}}], [1.500000e+01, 1.500000e+01, 1.500000e+01, 1.500000e+01, 1.500000e+01, 1.500000e+01, 1.500000e+01, 1.500000e+01]]> : tensor<8x8xf32>
// TWOD: shardlin.constant dense<[1.080000e+02, {{.*}}, 1.150000e+02]> : tensor<8xf32>
// TWOD: shardlin.linear %arg0, %[[WK]], %{{.*}} layouts replicated -> features
// TWOD: %[[WV:.*]] = shardlin.constant dense<{{\[\[}}1.600000e+01, {{.*}}], [2.300000e+01, 2.300000e+01, 2.300000e+01, 2.300000e+01, 2.300000e+01, 2.300000e+01, 2.300000e+01, 2.300000e+01]]> : tensor<8x8xf32>
// TWOD: shardlin.constant dense<[1.160000e+02, {{.*}}, 1.230000e+02]> : tensor<8xf32>
// TWOD: shardlin.linear %arg0, %[[WV]], %{{.*}} layouts replicated -> features
