// RUN: shardlin-opt %s -split-input-file --lower-sharded-linear=strategy=activations | FileCheck %s
// RUN: shardlin-opt %s -split-input-file --lower-sharded-linear=strategy=gather-weight | FileCheck %s --check-prefix=GW
// RUN: shardlin-opt %s -split-input-file --verify-roundtrip | FileCheck %s --check-prefix=RT
// RUN: shardlin-opt %s -split-input-file '--lower-sharded-linear=explain=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN

// The linears of the layouts an importer needs (`layouts IN -> OUT`), and a
// K x N weight (`weight_kn`). W = 4; x has 8 rows and 16 features; N = 12.
// A replicated x is never gathered.

!wn = !shardlin.sharded<tensor<16x12xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>

// replicated -> features: one local GEMM with the rank's bias chunk; no
// collective.
// RT-LABEL: func.func @replicated_to_features
// RT: shardlin.linear %{{.*}}, %{{.*}}, %{{.*}} weight_kn layouts replicated -> features
// CHECK-LABEL: func.func @replicated_to_features
// CHECK-NEXT: shardlin.local_chunk %{{.*}} along <dim = 0, placements = [0, 1, 2, 3]> : tensor<12xf32> -> tensor<3xf32>
// CHECK-NEXT: shardlin.local_shard %{{.*}} -> tensor<16x3xf32>
// CHECK-NEXT: shardlin.gemm %{{.*}}, %{{.*}} bias %{{.*}} {shardlin.lowering = {bytes_received = array<i64: 0, 0, 0, 0>, bytes_sent = array<i64: 0, 0, 0, 0>{{.*}}strategy = "activations"}} : (tensor<8x16xf32>, tensor<16x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
// CHECK-NEXT: return
// EXPLAIN: remark: lowered col-wise (layouts replicated -> features) with activations (cheapest estimate)
// The forced gather-weight does not apply to a features result.
// GW-LABEL: func.func @replicated_to_features
// GW-NOT: shardlin.all_gather
// GW: strategy = "activations"
func.func @replicated_to_features(%x: tensor<8x16xf32>, %w: !wn, %b: tensor<12xf32>) -> tensor<8x3xf32> {
  %y = shardlin.linear %x, %w, %b weight_kn layouts replicated -> features : (tensor<8x16xf32>, !wn, tensor<12xf32>) -> tensor<8x3xf32>
  return %y : tensor<8x3xf32>
}

// -----

!wn = !shardlin.sharded<tensor<16x12xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>

// replicated -> replicated, N split: the local GEMM, then an all_gather of
// the features (3 x 8 x 3 x 4 bytes per rank); gathering the weight
// instead sends 3 x 16 x 3 x 4.
// CHECK-LABEL: func.func @replicated_to_replicated_n
// CHECK: shardlin.gemm {{.*}}bytes_sent = array<i64: 288, 288, 288, 288>{{.*}} -> tensor<8x3xf32>
// CHECK-NEXT: shardlin.all_gather %{{.*}} along <dim = 1, placements = [0, 1, 2, 3]> : tensor<8x3xf32> -> tensor<8x12xf32>
// GW-LABEL: func.func @replicated_to_replicated_n
// GW: shardlin.all_gather %{{.*}} along <dim = 1, placements = [0, 1, 2, 3]> : tensor<16x3xf32> -> tensor<16x12xf32>
// GW-NEXT: shardlin.gemm %{{.*}}, %{{.*}} bias %{{.*}} {{{.*}}bytes_sent = array<i64: 576, 576, 576, 576>{{.*}}strategy = "gather-weight"}} : (tensor<8x16xf32>, tensor<16x12xf32>, tensor<12xf32>) -> tensor<8x12xf32>
func.func @replicated_to_replicated_n(%x: tensor<8x16xf32>, %w: !wn, %b: tensor<12xf32>) -> tensor<8x12xf32> {
  %y = shardlin.linear %x, %w, %b weight_kn layouts replicated -> replicated : (tensor<8x16xf32>, !wn, tensor<12xf32>) -> tensor<8x12xf32>
  return %y : tensor<8x12xf32>
}

// -----

!wk = !shardlin.sharded<tensor<12x16xf32>, #shardlin.chunk<dim = 1, placements = [3, 2, 1, 0]>>

// replicated -> replicated, K split (an N x K weight): the rank's K columns
// of x (no communication), the partial sums, one all_reduce, the bias
// once. An all_reduce of 8 x 12 f32 counts as a reduce-scatter and an
// all-gather of its 96 elements: 2 x 72 x 4 bytes sent per rank.
// CHECK-LABEL: func.func @replicated_to_replicated_k
// CHECK-NEXT: shardlin.local_chunk %{{.*}} along <dim = 1, placements = [3, 2, 1, 0]> : tensor<8x16xf32> -> tensor<8x4xf32>
// CHECK-NEXT: shardlin.local_shard %{{.*}} -> tensor<12x4xf32>
// CHECK-NEXT: shardlin.gemm %{{.*}}, %{{.*}} transpose_rhs {{{.*}}bytes_sent = array<i64: 576, 576, 576, 576>{{.*}}} : (tensor<8x4xf32>, tensor<12x4xf32>) -> tensor<8x12xf32>
// CHECK-NEXT: shardlin.all_reduce %{{.*}} world_size = 4 : tensor<8x12xf32>
// CHECK-NEXT: shardlin.bias_add
// CHECK-NEXT: return
func.func @replicated_to_replicated_k(%x: tensor<8x16xf32>, %w: !wk, %b: tensor<12xf32>) -> tensor<8x12xf32> {
  %y = shardlin.linear %x, %w, %b layouts replicated -> replicated : (tensor<8x16xf32>, !wk, tensor<12xf32>) -> tensor<8x12xf32>
  return %y : tensor<8x12xf32>
}

// -----

!wk = !shardlin.sharded<tensor<16x12xbf16>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>

// features -> replicated in bf16: the partial sums, their all_reduce and
// the bias in f32, one rounding at the end.
// CHECK-LABEL: func.func @features_to_replicated_bf16
// CHECK-NEXT: shardlin.local_shard %{{.*}} -> tensor<4x12xbf16>
// CHECK-NEXT: shardlin.gemm %{{.*}}, %{{.*}} {{{.*}}} : (tensor<8x4xbf16>, tensor<4x12xbf16>) -> tensor<8x12xf32>
// CHECK-NEXT: shardlin.all_reduce %{{.*}} world_size = 4 : tensor<8x12xf32>
// CHECK-NEXT: shardlin.convert %{{.*}} : tensor<12xbf16> -> tensor<12xf32>
// CHECK-NEXT: shardlin.bias_add %{{.*}}, %{{.*}} : tensor<8x12xf32>, tensor<12xf32>
// CHECK-NEXT: shardlin.convert %{{.*}} : tensor<8x12xf32> -> tensor<8x12xbf16>
func.func @features_to_replicated_bf16(%x: tensor<8x4xbf16>, %w: !wk, %b: tensor<12xbf16>) -> tensor<8x12xbf16> {
  %y = shardlin.linear %x, %w, %b weight_kn layouts features -> replicated : (tensor<8x4xbf16>, !wk, tensor<12xbf16>) -> tensor<8x12xbf16>
  return %y : tensor<8x12xbf16>
}

// -----

!wk = !shardlin.sharded<tensor<16x12xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>

// features -> rows and replicated -> rows, K split: the partial sums
// reduce-scattered by the row chunks (here 10 rows at [0, 3, 6, 9, 10], so
// each rank's rows are `?`); a replicated x gives the rank's K columns
// first.
// CHECK-LABEL: func.func @features_to_rows
// CHECK: shardlin.gemm {{.*}} : (tensor<10x4xf32>, tensor<4x12xf32>) -> tensor<10x12xf32>
// CHECK-NEXT: shardlin.reduce_scatter %{{.*}} along <dim = 0, placements = [0, 1, 2, 3], bounds = [0, 3, 6, 9, 10]> : tensor<10x12xf32> -> tensor<?x12xf32>
func.func @features_to_rows(%x: tensor<10x4xf32>, %w: !wk) -> tensor<?x12xf32> {
  %y = shardlin.linear %x, %w weight_kn layouts features -> rows along <dim = 0, placements = [0, 1, 2, 3], bounds = [0, 3, 6, 9, 10]> : (tensor<10x4xf32>, !wk) -> tensor<?x12xf32>
  return %y : tensor<?x12xf32>
}
// CHECK-LABEL: func.func @replicated_to_rows_k
// CHECK-NEXT: shardlin.local_chunk %{{.*}} along <dim = 1, placements = [0, 1, 2, 3]> : tensor<8x16xf32> -> tensor<8x4xf32>
// CHECK: shardlin.reduce_scatter %{{.*}} along <dim = 0, placements = [0, 1, 2, 3]> : tensor<8x12xf32> -> tensor<2x12xf32>
// CHECK-NEXT: shardlin.bias_add
// GW-LABEL: func.func @replicated_to_rows_k
// GW-NEXT: shardlin.local_chunk %{{.*}} along <dim = 0, placements = [0, 1, 2, 3]> : tensor<8x16xf32> -> tensor<2x16xf32>
// GW: shardlin.all_gather {{.*}} -> tensor<16x12xf32>
// GW-NEXT: shardlin.gemm {{.*}} : (tensor<2x16xf32>, tensor<16x12xf32>, tensor<12xf32>) -> tensor<2x12xf32>
func.func @replicated_to_rows_k(%x: tensor<8x16xf32>, %w: !wk, %b: tensor<12xf32>) -> tensor<2x12xf32> {
  %y = shardlin.linear %x, %w, %b weight_kn layouts replicated -> rows : (tensor<8x16xf32>, !wk, tensor<12xf32>) -> tensor<2x12xf32>
  return %y : tensor<2x12xf32>
}

// -----

!wn = !shardlin.sharded<tensor<16x10xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3], bounds = [0, 4, 4, 8, 10]>>

// replicated -> rows, N split: the local GEMM of the rank's features, then
// an all_to_all that gives each rank its rows, all N features.
// CHECK-LABEL: func.func @replicated_to_rows_n
// CHECK: shardlin.gemm {{.*}} -> tensor<8x?xf32>
// CHECK-NEXT: shardlin.all_to_all %{{.*}} split <dim = 0, placements = [0, 1, 2, 3]> concat <dim = 1, placements = [0, 1, 2, 3], bounds = [0, 4, 4, 8, 10]> : tensor<8x?xf32> -> tensor<2x10xf32>
func.func @replicated_to_rows_n(%x: tensor<8x16xf32>, %w: !wn) -> tensor<2x10xf32> {
  %y = shardlin.linear %x, %w weight_kn layouts replicated -> rows : (tensor<8x16xf32>, !wn) -> tensor<2x10xf32>
  return %y : tensor<2x10xf32>
}

// -----

!wn = !shardlin.sharded<tensor<16x12xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>

// rows -> features: every rank's rows gathered by the row chunks (10 rows
// at [0, 3, 6, 9, 10]: the rank's 3 or 1 rows are `?`), the rank's
// features of all of them; no all_to_all.
// CHECK-LABEL: func.func @rows_to_features
// CHECK-NEXT: shardlin.all_gather %{{.*}} along <dim = 0, placements = [0, 1, 2, 3], bounds = [0, 3, 6, 9, 10]> : tensor<?x16xf32> -> tensor<10x16xf32>
// CHECK: shardlin.gemm {{.*}} -> tensor<10x3xf32>
// CHECK-NOT: shardlin.all_to_all
func.func @rows_to_features(%x: tensor<?x16xf32>, %w: !wn) -> tensor<10x3xf32> {
  %y = shardlin.linear %x, %w weight_kn layouts rows -> features along <dim = 0, placements = [0, 1, 2, 3], bounds = [0, 3, 6, 9, 10]> : (tensor<?x16xf32>, !wn) -> tensor<10x3xf32>
  return %y : tensor<10x3xf32>
}

// -----

// weight_kn with the default layouts: the same programs as an N x K weight
// but for the GEMM's transpose flag.
// CHECK-LABEL: func.func @kn_row_wise
// CHECK: shardlin.all_to_all %{{.*}} split <dim = 1, placements = [1, 0]> concat <dim = 0, placements = [0, 1]> : tensor<3x6xf32> -> tensor<6x3xf32>
// CHECK: shardlin.gemm %{{.*}}, %{{.*}} {{{.*}}} : (tensor<6x3xf32>, tensor<3x4xf32>) -> tensor<6x4xf32>
// CHECK: shardlin.reduce_scatter
func.func @kn_row_wise(%x: tensor<3x6xf32>, %w: !shardlin.sharded<tensor<6x4xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<3x4xf32> {
  %y = shardlin.linear %x, %w weight_kn : (tensor<3x6xf32>, !shardlin.sharded<tensor<6x4xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}
// CHECK-LABEL: func.func @kn_col_wise
// CHECK: shardlin.gemm %{{.*}}, %{{.*}} bias %{{.*}} {{{.*}}} : (tensor<6x6xf32>, tensor<6x2xf32>, tensor<2xf32>) -> tensor<6x2xf32>
// CHECK: shardlin.all_to_all %{{.*}} split <dim = 0, placements = [0, 1]> concat <dim = 1, placements = [1, 0]>
// GW-LABEL: func.func @kn_col_wise
// GW: shardlin.all_gather %{{.*}} along <dim = 1, placements = [1, 0]> : tensor<6x2xf32> -> tensor<6x4xf32>
// GW-NEXT: shardlin.gemm %{{.*}}, %{{.*}} bias %{{.*}} {{{.*}}} : (tensor<3x6xf32>, tensor<6x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
func.func @kn_col_wise(%x: tensor<3x6xf32>, %w: !shardlin.sharded<tensor<6x4xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, %b: tensor<4xf32>) -> tensor<3x4xf32> {
  %y = shardlin.linear %x, %w, %b weight_kn : (tensor<3x6xf32>, !shardlin.sharded<tensor<6x4xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, tensor<4xf32>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----

// W = 1: one GEMM whatever the layouts.
// CHECK-LABEL: func.func @single_rank
// CHECK-NEXT: shardlin.local_shard
// CHECK-NEXT: shardlin.gemm {{.*}}strategy = "local"
// CHECK-NEXT: return
func.func @single_rank(%x: tensor<8x16xf32>, %w: !shardlin.sharded<tensor<16x12xf32>, #shardlin.chunk<dim = 0, placements = [0]>>) -> tensor<8x12xf32> {
  %y = shardlin.linear %x, %w weight_kn layouts features -> replicated : (tensor<8x16xf32>, !shardlin.sharded<tensor<16x12xf32>, #shardlin.chunk<dim = 0, placements = [0]>>) -> tensor<8x12xf32>
  return %y : tensor<8x12xf32>
}

// -----

// all_reduce and from_local on their own.
// RT-LABEL: func.func @ops
// RT: shardlin.all_reduce %{{.*}} world_size = 4 : tensor<?x12xf16>
// RT: shardlin.from_local %{{.*}} : tensor<?x16xf32> -> !shardlin.sharded<tensor<10x16xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], bounds = [0, 3, 6, 9, 10]>>
func.func @ops(%p: tensor<?x12xf16>, %l: tensor<?x16xf32>) -> (tensor<?x12xf16>, !shardlin.sharded<tensor<10x16xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], bounds = [0, 3, 6, 9, 10]>>) {
  %s = shardlin.all_reduce %p world_size = 4 : tensor<?x12xf16>
  %g = shardlin.from_local %l : tensor<?x16xf32> -> !shardlin.sharded<tensor<10x16xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], bounds = [0, 3, 6, 9, 10]>>
  return %s, %g : tensor<?x12xf16>, !shardlin.sharded<tensor<10x16xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3], bounds = [0, 3, 6, 9, 10]>>
}
