// The import of attention as torch-mlir exports it (docs/attention.md, From
// torch-mlir): the committed exports of integration_test/frontends/
// export_attention.py, F.scaled_dot_product_attention(is_causal=True) written
// as tm_tensor.attention on (B*H) x S x D with the causal mask generic, into
// one shardlin.attention on the projections' [B, S, H*D] values; q, k, v
// col-wise and o row-wise linears with the plan's head-aligned bounds. With x
// split along the batch (sequence-parallel), --lower-sharded-linear fuses the
// block: one all_gather of x, one reduce_scatter, no other collective.

// RUN: shardlin-opt %S/../../../integration_test/frontends/attention/gpt2_sdpa_seq.mlir --shardlin-import-shard | FileCheck %s --check-prefix=MHA \
// RUN:   --implicit-check-not=tm_tensor --implicit-check-not=linalg.transpose --implicit-check-not=linalg.generic
// MHA-LABEL: func.func @main(%arg0: !shardlin.sharded<tensor<2x6x32xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>)
// MHA: %[[Q:.*]] = shardlin.linear %[[X:.*]], %{{.*}}, %{{.*}}  : (tensor<?x6x32xf32>, !shardlin.sharded<tensor<32x32xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>, tensor<32xf32>) -> tensor<?x6x32xf32>
// MHA: %[[K:.*]] = shardlin.linear %[[X]], %{{.*}}, %{{.*}}  : (tensor<?x6x32xf32>, !shardlin.sharded<tensor<32x32xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>, tensor<32xf32>) -> tensor<?x6x32xf32>
// MHA: %[[V:.*]] = shardlin.linear %[[X]], %{{.*}}, %{{.*}}  : (tensor<?x6x32xf32>, !shardlin.sharded<tensor<32x32xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>, tensor<32xf32>) -> tensor<?x6x32xf32>
// MHA: %[[A:.*]] = shardlin.attention %[[Q]], %[[K]], %[[V]] {causal, head_dim = 4 : i64} : tensor<?x6x32xf32>, tensor<?x6x32xf32>, tensor<?x6x32xf32> -> tensor<?x6x32xf32>
// MHA: shardlin.linear %[[A]], %{{.*}}, %{{.*}}  : (tensor<?x6x32xf32>, !shardlin.sharded<tensor<32x32xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>, tensor<32xf32>) -> tensor<?x6x32xf32>

// RUN: shardlin-opt %S/../../../integration_test/frontends/attention/gpt2_sdpa_seq.mlir --shardlin-import-shard --lower-sharded-linear | FileCheck %s --check-prefix=MHA-LOW \
// RUN:   --implicit-check-not=shardlin.all_gather --implicit-check-not=shardlin.reduce_scatter \
// RUN:   --implicit-check-not=shardlin.all_to_all --implicit-check-not=shardlin.all_reduce \
// RUN:   --implicit-check-not='shardlin.linear '
// MHA-LOW: shardlin.all_gather %{{.*}} along <dim = 0, placements = [0, 1, 2, 3]> : tensor<?x32xf32> -> tensor<?x32xf32>
// MHA-LOW: shardlin.attention %{{.*}} {causal, group = 1 : i64, head_dim = 4 : i64, kv_heads = array<i64: 0, 2, 2, 4, 4, 6, 6, 8>, q_heads = array<i64: 0, 2, 2, 4, 4, 6, 6, 8>, scale = 5.000000e-01 : f64} : tensor<?x6x8xf32>, tensor<?x6x8xf32>, tensor<?x6x8xf32> -> tensor<?x6x8xf32>
// MHA-LOW: shardlin.reduce_scatter %{{.*}} along <dim = 0, placements = [0, 1, 2, 3]> : tensor<?x32xf32> -> tensor<?x32xf32>

// RUN: shardlin-opt %S/../../../integration_test/frontends/attention/gpt2_sdpa_seq.mlir --shardlin-import-shard '--lower-sharded-linear=explain=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=MHA-EXPLAIN
// MHA-EXPLAIN: remark: attention block fused: 8 query heads, 8 kv heads (group 1), head_dim 4, 4 ranks; query heads by rank [0, 2) [2, 4) [4, 6) [6, 8); kv heads by rank [0, 2) [2, 4) [4, 6) [6, 8); one all_gather of x and one reduce_scatter

// GQA (Hq, Hkv) = (8, 4): repeat_interleave's expand + broadcast of k and v
// becomes the op's group; the plan's uneven head-aligned bounds: q in groups
// of g * D = 8 features (2, 1, 1, 0 groups), k and v their kv heads.
// RUN: shardlin-opt %S/../../../integration_test/frontends/attention/gqa_sdpa_seq.mlir --shardlin-import-shard | FileCheck %s --check-prefix=GQA
// GQA: %[[Q:.*]] = shardlin.linear {{.*}}bounds = [0, 16, 24, 32, 32]>>, tensor<32xf32>) -> tensor<?x6x32xf32>
// GQA: %[[K:.*]] = shardlin.linear {{.*}}!shardlin.sharded<tensor<16x32xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], bounds = [0, 8, 12, 16, 16]>>, tensor<16xf32>) -> tensor<?x6x16xf32>
// GQA: %[[V:.*]] = shardlin.linear {{.*}}!shardlin.sharded<tensor<16x32xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], bounds = [0, 8, 12, 16, 16]>>, tensor<16xf32>) -> tensor<?x6x16xf32>
// GQA: %[[A:.*]] = shardlin.attention %[[Q]], %[[K]], %[[V]] {causal, head_dim = 4 : i64} : tensor<?x6x32xf32>, tensor<?x6x16xf32>, tensor<?x6x16xf32> -> tensor<?x6x32xf32>
// GQA: shardlin.linear %[[A]], {{.*}}#shardlin.chunk<dim = 1, placements = [0, 1, 2, 3], bounds = [0, 16, 24, 32, 32]>>

// RUN: shardlin-opt %S/../../../integration_test/frontends/attention/gqa_sdpa_seq.mlir --shardlin-import-shard --lower-sharded-linear | FileCheck %s --check-prefix=GQA-LOW \
// RUN:   --implicit-check-not=shardlin.all_gather --implicit-check-not=shardlin.reduce_scatter \
// RUN:   --implicit-check-not=shardlin.all_to_all --implicit-check-not=shardlin.all_reduce \
// RUN:   --implicit-check-not='shardlin.linear '
// GQA-LOW: shardlin.all_gather
// GQA-LOW: shardlin.attention %{{.*}} {causal, group = 2 : i64, head_dim = 4 : i64, kv_heads = array<i64: 0, 2, 2, 3, 3, 4, 4, 4>, q_heads = array<i64: 0, 4, 4, 6, 6, 8, 8, 8>, scale = 5.000000e-01 : f64}
// GQA-LOW: shardlin.reduce_scatter

// With x whole on every rank, the projections are replicated -> replicated
// linears; the attention is imported the same way, on the whole batch.
// RUN: shardlin-opt %S/../../../integration_test/frontends/attention/gpt2_sdpa.mlir --shardlin-import-shard | FileCheck %s --check-prefix=REP
// REP: shardlin.linear {{.*}} layouts replicated -> replicated : (tensor<12x32xf32>, !shardlin.sharded<tensor<32x32xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], bounds = [0, 12, 24, 28, 32]>>
// REP: shardlin.attention %{{.*}}, %{{.*}}, %{{.*}} {causal, head_dim = 4 : i64} : tensor<2x6x32xf32>, tensor<2x6x32xf32>, tensor<2x6x32xf32> -> tensor<2x6x32xf32>
// REP: shardlin.linear {{.*}} layouts replicated -> replicated : (tensor<12x32xf32>, !shardlin.sharded<tensor<32x32xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3], bounds = [0, 12, 24, 28, 32]>>

// With x replicated --lower-sharded-linear fuses the block through the
// replicated linears' collapse and expand: no collective before or inside
// the attention, each rank's heads from its weight chunks (the plan's
// [0, 12, 24, 28, 32]: 3, 3, 1, 1 heads), O's partial products summed by one
// all_reduce.
// RUN: shardlin-opt %S/../../../integration_test/frontends/attention/gpt2_sdpa.mlir --shardlin-import-shard --lower-sharded-linear | FileCheck %s --check-prefix=REP-LOW \
// RUN:   --implicit-check-not=shardlin.all_gather --implicit-check-not=shardlin.reduce_scatter \
// RUN:   --implicit-check-not=shardlin.all_to_all --implicit-check-not=shardlin.all_reduce \
// RUN:   --implicit-check-not='shardlin.linear '
// REP-LOW: shardlin.gemm %[[X:.*]], %{{.*}} bias %{{.*}} transpose_rhs {{.*}} : (tensor<12x32xf32>, tensor<?x32xf32>, tensor<?xf32>) -> tensor<12x?xf32>
// REP-LOW: shardlin.gemm %[[X]], %{{.*}} bias %{{.*}} transpose_rhs {{.*}} : (tensor<12x32xf32>, tensor<?x32xf32>, tensor<?xf32>) -> tensor<12x?xf32>
// REP-LOW: shardlin.gemm %[[X]], %{{.*}} bias %{{.*}} transpose_rhs {{.*}} : (tensor<12x32xf32>, tensor<?x32xf32>, tensor<?xf32>) -> tensor<12x?xf32>
// REP-LOW: shardlin.attention %{{.*}} {causal, group = 1 : i64, head_dim = 4 : i64, kv_heads = array<i64: 0, 3, 3, 6, 6, 7, 7, 8>, q_heads = array<i64: 0, 3, 3, 6, 6, 7, 7, 8>, scale = 5.000000e-01 : f64} : tensor<2x6x?xf32>, tensor<2x6x?xf32>, tensor<2x6x?xf32> -> tensor<2x6x?xf32>
// REP-LOW: shardlin.gemm %{{.*}}, %{{.*}} transpose_rhs {{.*}} : (tensor<12x?xf32>, tensor<32x?xf32>) -> tensor<12x32xf32>
// REP-LOW: shardlin.all_reduce %{{.*}} world_size = 4 : tensor<12x32xf32>
// REP-LOW: return %{{.*}} : tensor<2x6x32xf32>

// RUN: shardlin-opt %S/../../../integration_test/frontends/attention/gpt2_sdpa.mlir --shardlin-import-shard '--lower-sharded-linear=explain=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=REP-EXPLAIN
// REP-EXPLAIN: remark: attention block fused: 8 query heads, 8 kv heads (group 1), head_dim 4, 4 ranks; query heads by rank [0, 3) [3, 6) [6, 7) [7, 8); kv heads by rank [0, 3) [3, 6) [6, 7) [7, 8); x replicated: one all_reduce

// Llama (GQA (8, 4), x replicated after an RMSNorm): torch-mlir's
// rotate-half RoPE on q's and k's heads (x * cos + concat(-x2, x1) * sin
// with [S, D] constants) becomes shardlin.rope on the projection with the
// [S, D/2] half of each table (its halves equal), a whole shardlin.constant;
// the whole [S, D] tables, the slices, the concat and the products are gone.
// RUN: shardlin-opt %S/../../../integration_test/frontends/attention/llama_gqa.mlir --shardlin-import-shard | FileCheck %s --check-prefix=LLAMA \
// RUN:   --implicit-check-not=tm_tensor --implicit-check-not=linalg.transpose --implicit-check-not=tensor.concat \
// RUN:   --implicit-check-not=tensor.extract_slice '--implicit-check-not=tensor<6x4xf32>'
// LLAMA: %[[Q:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [1, 6, 32] : tensor<6x32xf32> into tensor<1x6x32xf32>
// LLAMA: %[[K:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [1, 6, 16] : tensor<6x16xf32> into tensor<1x6x16xf32>
// LLAMA: %[[V:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [1, 6, 16] : tensor<6x16xf32> into tensor<1x6x16xf32>
// LLAMA: %[[QC:.*]] = shardlin.constant dense<{{\[}}[1.000000e+00, 1.000000e+00], [0.540302336, 0.999949991], {{.*}}]> : tensor<6x2xf32> -> tensor<6x2xf32>
// LLAMA: %[[QS:.*]] = shardlin.constant dense<{{\[}}[0.000000e+00, 0.000000e+00], [0.841470957, 0.00999983306], {{.*}}]> : tensor<6x2xf32> -> tensor<6x2xf32>
// LLAMA: %[[QR:.*]] = shardlin.rope %[[Q]], %[[QC]], %[[QS]] {head_dim = 4 : i64} : tensor<1x6x32xf32>, tensor<6x2xf32>, tensor<6x2xf32> -> tensor<1x6x32xf32>
// LLAMA: %[[KR:.*]] = shardlin.rope %[[K]], %{{.*}}, %{{.*}} {head_dim = 4 : i64} : tensor<1x6x16xf32>, tensor<6x2xf32>, tensor<6x2xf32> -> tensor<1x6x16xf32>
// LLAMA: shardlin.attention %[[QR]], %[[KR]], %[[V]] {causal, head_dim = 4 : i64} : tensor<1x6x32xf32>, tensor<1x6x16xf32>, tensor<1x6x16xf32> -> tensor<1x6x32xf32>

// Lowered: the block fuses with the ropes inside it (their tables are the
// same on every rank): the rank's q/k/v heads (q [0, 16, 24, 32, 32]: 4, 2,
// 2, 0 heads; kv heads [0, 2) [2, 3) [3, 4) none), rank-local ropes and
// attention, one all_reduce.
// RUN: shardlin-opt %S/../../../integration_test/frontends/attention/llama_gqa.mlir --shardlin-import-shard --lower-sharded-linear | FileCheck %s --check-prefix=LLAMA-LOW \
// RUN:   --implicit-check-not=shardlin.all_gather --implicit-check-not=shardlin.reduce_scatter \
// RUN:   --implicit-check-not=shardlin.all_to_all --implicit-check-not=shardlin.all_reduce \
// RUN:   --implicit-check-not='shardlin.linear '
// LLAMA-LOW: shardlin.rope %{{.*}} {head_dim = 4 : i64} : tensor<1x6x?xf32>, tensor<6x2xf32>, tensor<6x2xf32> -> tensor<1x6x?xf32>
// LLAMA-LOW: shardlin.rope %{{.*}} {head_dim = 4 : i64} : tensor<1x6x?xf32>, tensor<6x2xf32>, tensor<6x2xf32> -> tensor<1x6x?xf32>
// LLAMA-LOW: shardlin.attention %{{.*}} {causal, group = 2 : i64, head_dim = 4 : i64, kv_heads = array<i64: 0, 2, 2, 3, 3, 4, 4, 4>, q_heads = array<i64: 0, 4, 4, 6, 6, 8, 8, 8>, scale = 5.000000e-01 : f64}
// LLAMA-LOW: shardlin.all_reduce %{{.*}} world_size = 4 : tensor<6x32xf32>

// RUN: shardlin-opt %S/../../../integration_test/frontends/attention/llama_gqa.mlir --shardlin-import-shard '--lower-sharded-linear=explain=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=LLAMA-EXPLAIN
// LLAMA-EXPLAIN: remark: attention block fused: 8 query heads, 4 kv heads (group 2), head_dim 4, 4 ranks; query heads by rank [0, 4) [4, 6) [6, 8) [8, 8); kv heads by rank [0, 2) [2, 3) [3, 4) [4, 4); x replicated: one all_reduce

// The imported module round-trips.
// RUN: shardlin-opt %S/../../../integration_test/frontends/attention/gqa_sdpa_seq.mlir --shardlin-import-shard | shardlin-opt --verify-roundtrip > /dev/null
// RUN: shardlin-opt %S/../../../integration_test/frontends/attention/llama_gqa.mlir --shardlin-import-shard | shardlin-opt --verify-roundtrip > /dev/null

// The tools parse the exporter's tm_tensor.attention (a minimal tm_tensor
// dialect registered with the import's dialects) and print it as written.
// RUN: shardlin-opt %S/../../../integration_test/frontends/attention/gpt2_sdpa.mlir | FileCheck %s --check-prefix=PARSE
// PARSE: tm_tensor.attention ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<16x6x4xf32>, tensor<16x6x4xf32>, tensor<16x6x4xf32>, tensor<16x6x6xf32>) outs(%{{.*}} : tensor<16x6x4xf32>) -> tensor<16x6x4xf32>
// RUN: shardlin-opt %S/../../../integration_test/frontends/attention/gpt2_sdpa.mlir | shardlin-opt --verify-roundtrip > /dev/null
