// RUN: shardlin-opt %s -split-input-file --lower-sharded-linear=strategy=gather-weight | FileCheck %s --check-prefix=GATHER
// RUN: shardlin-opt %s -split-input-file --lower-sharded-linear=strategy=activations | FileCheck %s --check-prefix=ACT
// RUN: shardlin-opt %s -split-input-file --lower-sharded-linear | FileCheck %s --check-prefix=AUTO
// RUN: shardlin-opt %s -split-input-file --lower-sharded-linear=strategy=gather-weight | shardlin-opt -split-input-file > /dev/null
// RUN: shardlin-opt %s -split-input-file --lower-sharded-linear='explain=true' 2>&1 >/dev/null | FileCheck %s --check-prefix=EXPLAIN

// Strategy choice. gather-weight: all_gather of the weight's chunks by its
// own spec, then one GEMM with the bias fused and no output collective. The
// GEMM carries the decision and the exact bytes each rank sends: here K = 19
// over 4 ranks in the order [2, 3, 0, 1] gives ranks 0..3 chunks of 5, 4, 5,
// 5 columns, so gathering sends 3 * 11 * k_r * 4 bytes and moving activations
// sends (5 * (19 - k_r) + 3 * 5 * 11) * 4 bytes.

// GATHER-LABEL: func.func @row_small
// GATHER-SAME: (%[[X:.*]]: tensor<5x19xf32>, %[[W:.*]]: !shardlin.sharded<{{.*}}>, %[[B:.*]]: tensor<11xf32>)
// GATHER-NEXT: %[[A:.*]] = shardlin.local_shard %[[W]] {{.*}} -> tensor<11x?xf32>
// GATHER-NEXT: %[[FULL:.*]] = shardlin.all_gather %[[A]] along <dim = 1, placements = [2, 3, 0, 1]> : tensor<11x?xf32> -> tensor<11x19xf32>
// GATHER-NEXT: %[[Y:.*]] = shardlin.gemm %[[X]], %[[FULL]] bias %[[B]] transpose_rhs {shardlin.lowering = {bytes_received = array<i64: 616, 660, 616, 616>, bytes_sent = array<i64: 660, 528, 660, 660>, estimated_us = {{.*}}, peak_extra_bytes = array<i64: 1672, 1672, 1672, 1672>, strategy = "gather-weight"}} : (tensor<5x19xf32>, tensor<11x19xf32>, tensor<11xf32>) -> tensor<5x11xf32>
// GATHER-NEXT: return %[[Y]]
// ACT-LABEL: func.func @row_small
// ACT: shardlin.all_to_all
// ACT: shardlin.gemm {{.*}} {shardlin.lowering = {{{.*}}bytes_sent = array<i64: 940, 960, 940, 940>{{.*}}strategy = "activations"}}
// ACT: shardlin.reduce_scatter
// ACT: shardlin.bias_add
// EXPLAIN: remark: lowered row-wise with gather-weight (cheapest estimate); activations: est. {{.*}} us, max 960 bytes sent, max {{[0-9]+}} extra bytes per rank; gather-weight: est. {{.*}} us, max 660 bytes sent, max 1672 extra bytes per rank
func.func @row_small(%x: tensor<5x19xf32>, %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>, %b: tensor<11xf32>) -> tensor<5x11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<5x19xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>, tensor<11xf32>) -> tensor<5x11xf32>
  return %y : tensor<5x11xf32>
}

// -----

// Col-wise gather: chunks are rows of A, gathered along dim 0.
// GATHER-LABEL: func.func @col_small
// GATHER: %[[A:.*]] = shardlin.local_shard {{.*}} -> tensor<?x19xbf16>
// GATHER-NEXT: %[[FULL:.*]] = shardlin.all_gather %[[A]] along <dim = 0, placements = [1, 0, 2]> : tensor<?x19xbf16> -> tensor<11x19xbf16>
// GATHER-NEXT: shardlin.gemm %{{.*}}, %[[FULL]] transpose_rhs {shardlin.lowering = {{{.*}}strategy = "gather-weight"}}
// GATHER-NOT: shardlin.all_to_all
// GATHER-NOT: shardlin.reduce_scatter
// GATHER: return
func.func @col_small(%x: tensor<2x3x19xbf16>, %w: !shardlin.sharded<tensor<11x19xbf16>, #shardlin.chunk<dim = 0, placements = [1, 0, 2]>>) -> tensor<2x3x11xbf16> {
  %y = shardlin.linear %x, %w : (tensor<2x3x19xbf16>, !shardlin.sharded<tensor<11x19xbf16>, #shardlin.chunk<dim = 0, placements = [1, 0, 2]>>) -> tensor<2x3x11xbf16>
  return %y : tensor<2x3x11xbf16>
}

// -----

// One row against a large weight: moving activations is far cheaper than
// gathering 4096 x 4096 elements, and auto picks it.
// AUTO-LABEL: func.func @decode_step
// AUTO: shardlin.all_to_all
// AUTO: strategy = "activations"
// AUTO: shardlin.reduce_scatter
// EXPLAIN: remark: lowered row-wise with activations (cheapest estimate)
func.func @decode_step(%x: tensor<1x4096xf16>, %w: !shardlin.sharded<tensor<4096x4096xf16>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>) -> tensor<1x4096xf16> {
  %y = shardlin.linear %x, %w : (tensor<1x4096xf16>, !shardlin.sharded<tensor<4096x4096xf16>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>) -> tensor<1x4096xf16>
  return %y : tensor<1x4096xf16>
}

// -----

// Many rows (batch x sequence) against a small weight: gathering the weight
// moves orders of magnitude fewer bytes, and auto picks it.
// AUTO-LABEL: func.func @prefill
// AUTO: shardlin.all_gather {{.*}} along <dim = 0, placements = [3, 2, 1, 0]> : tensor<64x256xf32> -> tensor<256x256xf32>
// AUTO: strategy = "gather-weight"
// AUTO-NOT: shardlin.all_to_all
// EXPLAIN: remark: lowered col-wise with gather-weight (cheapest estimate)
func.func @prefill(%x: tensor<8x2048x256xf32>, %w: !shardlin.sharded<tensor<256x256xf32>, #shardlin.chunk<dim = 0, placements = [3, 2, 1, 0]>>) -> tensor<8x2048x256xf32> {
  %y = shardlin.linear %x, %w : (tensor<8x2048x256xf32>, !shardlin.sharded<tensor<256x256xf32>, #shardlin.chunk<dim = 0, placements = [3, 2, 1, 0]>>) -> tensor<8x2048x256xf32>
  return %y : tensor<8x2048x256xf32>
}

// -----

// W = 1 has no strategy to choose: one local GEMM.
// AUTO-LABEL: func.func @single
// AUTO: shardlin.gemm {{.*}} {shardlin.lowering = {strategy = "local"}}
func.func @single(%x: tensor<5x19xf64>, %w: !shardlin.sharded<tensor<11x19xf64>, #shardlin.chunk<dim = 0, placements = [0]>>) -> tensor<5x11xf64> {
  %y = shardlin.linear %x, %w : (tensor<5x19xf64>, !shardlin.sharded<tensor<11x19xf64>, #shardlin.chunk<dim = 0, placements = [0]>>) -> tensor<5x11xf64>
  return %y : tensor<5x11xf64>
}
