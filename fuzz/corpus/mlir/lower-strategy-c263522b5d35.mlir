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
