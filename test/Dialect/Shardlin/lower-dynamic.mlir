// Batch dims known only at run time stay dynamic through the lowering, for
// both sharding dims, both strategies, W = 1 and a fused block: the rows and
// the stacked rows of every rank are `?`, and the result gets its batch
// dims back from the input's (tensor.dim into tensor.expand_shape's output
// sizes). The cost model assumes `assumed-rows` rows and says so.
// RUN: shardlin-opt %s -split-input-file '--lower-sharded-linear=strategy=activations' | FileCheck %s --check-prefix=ACT
// RUN: shardlin-opt %s -split-input-file '--lower-sharded-linear=strategy=gather-weight' | FileCheck %s --check-prefix=GW
// RUN: shardlin-opt %s -split-input-file '--lower-sharded-linear=strategy=activations explain=true' 2>&1 >/dev/null | FileCheck %s --check-prefix=EXPLAIN
// RUN: shardlin-opt %s -split-input-file '--lower-sharded-linear=assumed-rows=1' | FileCheck %s --check-prefix=FEW
// RUN: shardlin-opt %s -split-input-file '--lower-sharded-linear=assumed-rows=100000' | FileCheck %s --check-prefix=MANY
// RUN: not shardlin-opt %s '--lower-sharded-linear=assumed-rows=0' 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not shardlin-opt %s '--lower-sharded-linear=assumed-rows=many' 2>&1 | FileCheck %s --check-prefix=NOTINT

// ZERO: error: lower-sharded-linear: assumed-rows must be >= 1, got 0
// NOTINT: error: lower-sharded-linear: invalid value 'many' for option 'assumed-rows': expected an integer

// Row-wise, N-D input with a dynamic batch dim and a static one, uneven and
// permuted K chunks.
// ACT-LABEL: func.func @row
// ACT-SAME: (%[[X:.*]]: tensor<?x3x19xf32>, %[[W:.*]]: !shardlin.sharded<{{.*}}>, %[[B:.*]]: tensor<11xf32>) -> tensor<?x3x11xf32>
// ACT: %[[ROWS:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<?x3x19xf32> into tensor<?x19xf32>
// ACT: %[[A:.*]] = shardlin.local_shard %[[W]] : {{.*}} -> tensor<11x?xf32>
// ACT: %[[XS:.*]] = shardlin.all_to_all %[[ROWS]] split <dim = 1, placements = [2, 0, 1]> concat <dim = 0, placements = [0, 1, 2]> : tensor<?x19xf32> -> tensor<?x?xf32>
// ACT: %[[P:.*]] = shardlin.gemm %[[XS]], %[[A]] transpose_rhs {shardlin.lowering = {assumed_rows = 1024 : i64, {{.*}}strategy = "activations"}} : (tensor<?x?xf32>, tensor<11x?xf32>) -> tensor<?x11xf32>
// ACT: %[[Y:.*]] = shardlin.reduce_scatter %[[P]] along <dim = 0, placements = [0, 1, 2]> : tensor<?x11xf32> -> tensor<?x11xf32>
// ACT: %[[YB:.*]] = shardlin.bias_add %[[Y]], %[[B]] : tensor<?x11xf32>, tensor<11xf32>
// ACT: %[[C0:.*]] = arith.constant 0 : index
// ACT: %[[D0:.*]] = tensor.dim %[[X]], %[[C0]] : tensor<?x3x19xf32>
// ACT: %[[OUT:.*]] = tensor.expand_shape %[[YB]] {{\[}}[0, 1], [2]] output_shape [%[[D0]], 3, 11] : tensor<?x11xf32> into tensor<?x3x11xf32>
// ACT: return %[[OUT]] : tensor<?x3x11xf32>

// GW-LABEL: func.func @row
// GW-SAME: (%[[X:.*]]: tensor<?x3x19xf32>
// GW: %[[ROWS:.*]] = tensor.collapse_shape %[[X]] {{.*}} into tensor<?x19xf32>
// GW: %[[FULL:.*]] = shardlin.all_gather %{{.*}} along <dim = 1, placements = [2, 0, 1]> : tensor<11x?xf32> -> tensor<11x19xf32>
// GW: %[[Y:.*]] = shardlin.gemm %[[ROWS]], %[[FULL]] bias %{{.*}} transpose_rhs {shardlin.lowering = {assumed_rows = 1024 : i64, {{.*}}strategy = "gather-weight"}} : (tensor<?x19xf32>, tensor<11x19xf32>, tensor<11xf32>) -> tensor<?x11xf32>
// GW: %[[D0:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x3x19xf32>
// GW: tensor.expand_shape %[[Y]] {{\[}}[0, 1], [2]] output_shape [%[[D0]], 3, 11] : tensor<?x11xf32> into tensor<?x3x11xf32>

// EXPLAIN: remark: lowered row-wise with activations (forced) for 1024 rows per rank (the batch dims are dynamic; option assumed-rows); activations: est.
func.func @row(%x: tensor<?x3x19xf32>, %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>, %b: tensor<11xf32>) -> tensor<?x3x11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<?x3x19xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>, tensor<11xf32>) -> tensor<?x3x11xf32>
  return %y : tensor<?x3x11xf32>
}

// -----

// auto decides for the assumed rows: few favour moving activations, many
// gathering the weight (a 1024 x 1024 weight over 4 ranks).
// FEW-LABEL: func.func @auto
// FEW: assumed_rows = 1 : i64{{.*}}strategy = "activations"
// MANY-LABEL: func.func @auto
// MANY: assumed_rows = 100000 : i64{{.*}}strategy = "gather-weight"
func.func @auto(%x: tensor<?x1024xf32>, %w: !shardlin.sharded<tensor<1024x1024xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>) -> tensor<?x1024xf32> {
  %y = shardlin.linear %x, %w : (tensor<?x1024xf32>, !shardlin.sharded<tensor<1024x1024xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>) -> tensor<?x1024xf32>
  return %y : tensor<?x1024xf32>
}

// -----

// Col-wise, f16, 2-D: no reshape at all.
// ACT-LABEL: func.func @col
// ACT-SAME: (%[[X:.*]]: tensor<?x19xf16>
// ACT: %[[G:.*]] = shardlin.all_gather %[[X]] along <dim = 0, placements = [0, 1]> : tensor<?x19xf16> -> tensor<?x19xf16>
// ACT: %[[Q:.*]] = shardlin.gemm %[[G]], %{{.*}} bias %{{.*}} transpose_rhs {{.*}} : (tensor<?x19xf16>, tensor<?x19xf16>, tensor<?xf16>) -> tensor<?x?xf16>
// ACT: %[[Y:.*]] = shardlin.all_to_all %[[Q]] split <dim = 0, placements = [0, 1]> concat <dim = 1, placements = [1, 0]> : tensor<?x?xf16> -> tensor<?x11xf16>
// ACT-NOT: expand_shape
// ACT: return %[[Y]] : tensor<?x11xf16>
// GW-LABEL: func.func @col
// GW: shardlin.all_gather %{{.*}} along <dim = 0, placements = [1, 0]> : tensor<?x19xf16> -> tensor<11x19xf16>
// GW: shardlin.gemm %{{.*}} : (tensor<?x19xf16>, tensor<11x19xf16>, tensor<11xf16>) -> tensor<?x11xf16>
// EXPLAIN: remark: lowered col-wise with activations (forced) for 1024 rows per rank
func.func @col(%x: tensor<?x19xf16>, %w: !shardlin.sharded<tensor<11x19xf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, %b: tensor<11xf16>) -> tensor<?x11xf16> {
  %y = shardlin.linear %x, %w, %b : (tensor<?x19xf16>, !shardlin.sharded<tensor<11x19xf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, tensor<11xf16>) -> tensor<?x11xf16>
  return %y : tensor<?x11xf16>
}

// -----

// Two dynamic batch dims: both sizes come back from the input.
// GW-LABEL: func.func @batch_and_sequence
// GW-SAME: (%[[X:.*]]: tensor<?x?x19xbf16>
// GW: tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<?x?x19xbf16> into tensor<?x19xbf16>
// GW-DAG: %[[D0:.*]] = tensor.dim %[[X]], %c0 : tensor<?x?x19xbf16>
// GW-DAG: %[[D1:.*]] = tensor.dim %[[X]], %c1 : tensor<?x?x19xbf16>
// GW: tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [%[[D0]], %[[D1]], 11] : tensor<?x11xbf16> into tensor<?x?x11xbf16>
func.func @batch_and_sequence(%x: tensor<?x?x19xbf16>, %w: !shardlin.sharded<tensor<11x19xbf16>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<?x?x11xbf16> {
  %y = shardlin.linear %x, %w : (tensor<?x?x19xbf16>, !shardlin.sharded<tensor<11x19xbf16>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<?x?x11xbf16>
  return %y : tensor<?x?x11xbf16>
}

// -----

// W = 1: one GEMM on the dynamic rows, no cost model.
// ACT-LABEL: func.func @single_rank
// ACT: shardlin.gemm %{{.*}}, %{{.*}} transpose_rhs {shardlin.lowering = {strategy = "local"}} : (tensor<?x19xf64>, tensor<11x19xf64>) -> tensor<?x11xf64>
func.func @single_rank(%x: tensor<?x19xf64>, %w: !shardlin.sharded<tensor<11x19xf64>, #shardlin.chunk<dim = 0, placements = [0]>>) -> tensor<?x11xf64> {
  %y = shardlin.linear %x, %w : (tensor<?x19xf64>, !shardlin.sharded<tensor<11x19xf64>, #shardlin.chunk<dim = 0, placements = [0]>>) -> tensor<?x11xf64>
  return %y : tensor<?x11xf64>
}

// -----

// A block on dynamic rows, its ReLU a linalg.generic whose init is sized by
// tensor.dim of the col-wise result: fused, the tensor.dim and tensor.empty
// go with the chain (the fused generic reuses its input as init).
#id = affine_map<(d0, d1) -> (d0, d1)>
// ACT-LABEL: func.func @mlp
// ACT-SAME: (%[[X:.*]]: tensor<?x8xf32>
// ACT: %[[G:.*]] = shardlin.all_gather %[[X]] along <dim = 0, placements = [0, 1, 2]> : tensor<?x8xf32> -> tensor<?x8xf32>
// ACT: %[[H:.*]] = shardlin.gemm %[[G]], {{.*}}strategy = "fused"{{.*}} -> tensor<?x?xf32>
// ACT: %[[E:.*]] = linalg.generic {{.*}} ins(%[[H]] : tensor<?x?xf32>) outs(%[[H]] : tensor<?x?xf32>)
// ACT: %[[P:.*]] = shardlin.gemm %[[E]], {{.*}}assumed_rows = 1024 : i64{{.*}}strategy = "fused"{{.*}} -> tensor<?x8xf32>
// ACT: %[[Y:.*]] = shardlin.reduce_scatter %[[P]] along <dim = 0, placements = [0, 1, 2]> : tensor<?x8xf32> -> tensor<?x8xf32>
// ACT-NOT: shardlin.all_to_all
// ACT-NOT: tensor.empty
// ACT-NOT: tensor.dim
// ACT: return %[[Y]]
// EXPLAIN: remark: block fused with 1 col-wise linear (forced) for 1024 rows per rank (the batch dims are dynamic; option assumed-rows): fused est.
func.func @mlp(%x: tensor<?x8xf32>, %w1: !shardlin.sharded<tensor<10x8xf32>, #shardlin.chunk<dim = 0, placements = [2, 0, 1]>>, %b1: tensor<10xf32>, %w2: !shardlin.sharded<tensor<8x10xf32>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>) -> tensor<?x8xf32> {
  %h = shardlin.linear %x, %w1, %b1 : (tensor<?x8xf32>, !shardlin.sharded<tensor<10x8xf32>, #shardlin.chunk<dim = 0, placements = [2, 0, 1]>>, tensor<10xf32>) -> tensor<?x10xf32>
  %c0 = arith.constant 0 : index
  %rows = tensor.dim %h, %c0 : tensor<?x10xf32>
  %init = tensor.empty(%rows) : tensor<?x10xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%h : tensor<?x10xf32>) outs(%init : tensor<?x10xf32>) {
  ^bb0(%in: f32, %out: f32):
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x10xf32>
  %y = shardlin.linear %a, %w2 : (tensor<?x10xf32>, !shardlin.sharded<tensor<8x10xf32>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
