// RUN: shardlin-opt %s --lower-sharded-linear | FileCheck %s \
// RUN:   --implicit-check-not=shardlin.all_gather --implicit-check-not=shardlin.reduce_scatter \
// RUN:   --implicit-check-not=shardlin.all_to_all --implicit-check-not=shardlin.all_reduce \
// RUN:   --implicit-check-not='shardlin.linear '
// RUN: shardlin-opt %s '--lower-sharded-linear=explain=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN

// Numerically (Inputs/attention_interp.py, float64, random inputs; every
// rank's result against the unlowered function's, bound 1e-9 of the largest
// magnitude):
// RUN: rm -rf %t && mkdir -p %t
// RUN: shardlin-opt %s -mlir-print-op-generic -o %t/before.mlir
// RUN: shardlin-opt %s --lower-sharded-linear -mlir-print-op-generic -o %t/after.mlir
// RUN: %python %S/Inputs/attention_interp.py %t/before.mlir %t/after.mlir --seed 11 | FileCheck %s --check-prefix=NUM
// NUM: ok: llama_like 4 ranks
// NUM: ok: mha_like 3 ranks

// An attention block on a replicated 3-D x in the form --shardlin-import-shard
// gives torch-mlir's N-D linears (docs/attention.md, From torch-mlir): each
// projection a 2-D `layouts replicated -> replicated` linear between
// tensor.collapse_shape [[0, 1], [2]] of x and tensor.expand_shape back, O
// the same on the collapsed attention. The block lowering sees through the
// reshapes: no collective before or inside the attention, one all_reduce.

// GQA (Hq, Hkv, W) = (8, 4, 4), llama_gqa's head-aligned bounds (q in groups
// of 2 heads: 4, 2, 2, 0 heads), rotate-half ropes on q and k.
!wq = !shardlin.sharded<tensor<32x16xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], bounds = [0, 16, 24, 32, 32]>>
!wkv = !shardlin.sharded<tensor<16x16xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], bounds = [0, 8, 12, 16, 16]>>
!wo = !shardlin.sharded<tensor<16x32xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3], bounds = [0, 16, 24, 32, 32]>>

// CHECK-LABEL: func.func @llama_like
// CHECK: %[[X:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1], [2]] : tensor<2x6x16xf32> into tensor<12x16xf32>
// CHECK: shardlin.gemm %[[X]], %{{.*}} bias %{{.*}} transpose_rhs {{.*}} : (tensor<12x16xf32>, tensor<?x16xf32>, tensor<?xf32>) -> tensor<12x?xf32>
// CHECK: shardlin.rope %{{.*}}, %arg5, %arg6 {head_dim = 4 : i64} : tensor<2x6x?xf32>, tensor<6x2xf32>, tensor<6x2xf32> -> tensor<2x6x?xf32>
// CHECK: shardlin.gemm %[[X]], {{.*}} -> tensor<12x?xf32>
// CHECK: shardlin.rope %{{.*}}, %arg5, %arg6 {head_dim = 4 : i64}
// CHECK: shardlin.gemm %[[X]], {{.*}} -> tensor<12x?xf32>
// CHECK: shardlin.attention %{{.*}} {causal, group = 2 : i64, head_dim = 4 : i64, kv_heads = array<i64: 0, 2, 2, 3, 3, 4, 4, 4>, q_heads = array<i64: 0, 4, 4, 6, 6, 8, 8, 8>, scale = 5.000000e-01 : f64} : tensor<2x6x?xf32>, tensor<2x6x?xf32>, tensor<2x6x?xf32> -> tensor<2x6x?xf32>
// CHECK: shardlin.gemm %{{.*}}, %{{.*}} transpose_rhs {{.*}} : (tensor<12x?xf32>, tensor<16x?xf32>) -> tensor<12x16xf32>
// CHECK: shardlin.all_reduce %{{.*}} world_size = 4 : tensor<12x16xf32>
// CHECK: shardlin.bias_add
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [2, 6, 16] : tensor<12x16xf32> into tensor<2x6x16xf32>
// EXPLAIN: remark: attention block fused: 8 query heads, 4 kv heads (group 2), head_dim 4, 4 ranks; query heads by rank [0, 4) [4, 6) [6, 8) [8, 8); kv heads by rank [0, 2) [2, 3) [3, 4) [4, 4); x replicated: one all_reduce
func.func @llama_like(%x: tensor<2x6x16xf32> {shardlin.replicated}, %wq: !wq, %wk: !wkv, %wv: !wkv,
                      %bq: tensor<32xf32>, %cos: tensor<6x2xf32> {shardlin.replicated},
                      %sin: tensor<6x2xf32> {shardlin.replicated}, %wo: !wo,
                      %bo: tensor<16xf32>) -> tensor<2x6x16xf32> {
  %xq = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x6x16xf32> into tensor<12x16xf32>
  %q2 = shardlin.linear %xq, %wq, %bq layouts replicated -> replicated : (tensor<12x16xf32>, !wq, tensor<32xf32>) -> tensor<12x32xf32>
  %q = tensor.expand_shape %q2 [[0, 1], [2]] output_shape [2, 6, 32] : tensor<12x32xf32> into tensor<2x6x32xf32>
  %xk = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x6x16xf32> into tensor<12x16xf32>
  %k2 = shardlin.linear %xk, %wk layouts replicated -> replicated : (tensor<12x16xf32>, !wkv) -> tensor<12x16xf32>
  %k = tensor.expand_shape %k2 [[0, 1], [2]] output_shape [2, 6, 16] : tensor<12x16xf32> into tensor<2x6x16xf32>
  %xv = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x6x16xf32> into tensor<12x16xf32>
  %v2 = shardlin.linear %xv, %wv layouts replicated -> replicated : (tensor<12x16xf32>, !wkv) -> tensor<12x16xf32>
  %v = tensor.expand_shape %v2 [[0, 1], [2]] output_shape [2, 6, 16] : tensor<12x16xf32> into tensor<2x6x16xf32>
  %qr = shardlin.rope %q, %cos, %sin {head_dim = 4 : i64} : tensor<2x6x32xf32>, tensor<6x2xf32>, tensor<6x2xf32> -> tensor<2x6x32xf32>
  %kr = shardlin.rope %k, %cos, %sin {head_dim = 4 : i64} : tensor<2x6x16xf32>, tensor<6x2xf32>, tensor<6x2xf32> -> tensor<2x6x16xf32>
  %a = shardlin.attention %qr, %kr, %v {head_dim = 4 : i64, causal} : tensor<2x6x32xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32> -> tensor<2x6x32xf32>
  %a2 = tensor.collapse_shape %a [[0, 1], [2]] : tensor<2x6x32xf32> into tensor<12x32xf32>
  %y2 = shardlin.linear %a2, %wo, %bo layouts replicated -> replicated : (tensor<12x32xf32>, !wo, tensor<16xf32>) -> tensor<12x16xf32>
  %y = tensor.expand_shape %y2 [[0, 1], [2]] output_shape [2, 6, 16] : tensor<12x16xf32> into tensor<2x6x16xf32>
  return %y : tensor<2x6x16xf32>
}

// MHA, 7 heads over 3 ranks by the chunk rule on whole heads (3, 3, 1), one
// collapse of x shared by q, k and v (all of them read the same rows), a
// weight_kn O.
!w7 = !shardlin.sharded<tensor<28x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2], block = 4>>
!w7o = !shardlin.sharded<tensor<28x8xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2], block = 4>>

// CHECK-LABEL: func.func @mha_like
// CHECK: shardlin.attention %{{.*}} {causal, group = 1 : i64, head_dim = 4 : i64, kv_heads = array<i64: 0, 3, 3, 6, 6, 7>, q_heads = array<i64: 0, 3, 3, 6, 6, 7>, scale = 5.000000e-01 : f64} : tensor<1x5x?xf32>
// CHECK: shardlin.all_reduce %{{.*}} world_size = 3 : tensor<5x8xf32>
// CHECK: return %{{.*}} : tensor<1x5x8xf32>
// EXPLAIN: remark: attention block fused: 7 query heads, 7 kv heads (group 1), head_dim 4, 3 ranks; query heads by rank [0, 3) [3, 6) [6, 7); kv heads by rank [0, 3) [3, 6) [6, 7); x replicated: one all_reduce
func.func @mha_like(%x: tensor<1x5x8xf32> {shardlin.replicated}, %wq: !w7, %wk: !w7, %wv: !w7,
                    %wo: !w7o) -> tensor<1x5x8xf32> {
  %xr = tensor.collapse_shape %x [[0, 1], [2]] : tensor<1x5x8xf32> into tensor<5x8xf32>
  %q2 = shardlin.linear %xr, %wq layouts replicated -> replicated : (tensor<5x8xf32>, !w7) -> tensor<5x28xf32>
  %q = tensor.expand_shape %q2 [[0, 1], [2]] output_shape [1, 5, 28] : tensor<5x28xf32> into tensor<1x5x28xf32>
  %k2 = shardlin.linear %xr, %wk layouts replicated -> replicated : (tensor<5x8xf32>, !w7) -> tensor<5x28xf32>
  %k = tensor.expand_shape %k2 [[0, 1], [2]] output_shape [1, 5, 28] : tensor<5x28xf32> into tensor<1x5x28xf32>
  %v2 = shardlin.linear %xr, %wv layouts replicated -> replicated : (tensor<5x8xf32>, !w7) -> tensor<5x28xf32>
  %v = tensor.expand_shape %v2 [[0, 1], [2]] output_shape [1, 5, 28] : tensor<5x28xf32> into tensor<1x5x28xf32>
  %a = shardlin.attention %q, %k, %v {head_dim = 4 : i64, causal} : tensor<1x5x28xf32>, tensor<1x5x28xf32>, tensor<1x5x28xf32> -> tensor<1x5x28xf32>
  %a2 = tensor.collapse_shape %a [[0, 1], [2]] : tensor<1x5x28xf32> into tensor<5x28xf32>
  %y2 = shardlin.linear %a2, %wo weight_kn layouts replicated -> replicated : (tensor<5x28xf32>, !w7o) -> tensor<5x8xf32>
  %y = tensor.expand_shape %y2 [[0, 1], [2]] output_shape [1, 5, 8] : tensor<5x8xf32> into tensor<1x5x8xf32>
  return %y : tensor<1x5x8xf32>
}
