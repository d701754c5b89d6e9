// Col-wise lowering (weight split along dim 0, N): local_shard, all_gather of
// every rank's rows in rank order (identity on dim 0), the rank's bias chunk
// (local_chunk with the weight's placements), ONE gemm with transpose_rhs and
// the bias fused, and one all_to_all returning each rank its rows (split =
// identity on dim 0) with the column blocks placed by the weight's
// placements (concat on dim 1). No separate reordering op, no bias_add.

// N = 12 over W = 4: static local sizes.
func.func @even(%x: tensor<5x19xf32>,
    %w: !shardlin.sharded<tensor<12x19xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>,
    %b: tensor<12xf32>) -> tensor<5x12xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<5x19xf32>,
      !shardlin.sharded<tensor<12x19xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>,
      tensor<12xf32>) -> tensor<5x12xf32>
  return %y : tensor<5x12xf32>
}

// Without a bias: no local_chunk and no bias operand on the gemm.
func.func @even_no_bias(%x: tensor<5x19xf32>,
    %w: !shardlin.sharded<tensor<12x19xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>) -> tensor<5x12xf32> {
  %y = shardlin.linear %x, %w : (tensor<5x19xf32>,
      !shardlin.sharded<tensor<12x19xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>) -> tensor<5x12xf32>
  return %y : tensor<5x12xf32>
}

// N = 11 over W = 4 (chunks 3, 3, 3, 2) with placements [2, 3, 0, 1]: the
// local N is `?`; the bias chunk and the all_to_all's concat spec both use
// the weight's placements.
func.func @uneven_permuted(%x: tensor<5x19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [2, 3, 0, 1]>>,
    %b: tensor<11xf32>) -> tensor<5x11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<5x19xf32>,
      !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [2, 3, 0, 1]>>,
      tensor<11xf32>) -> tensor<5x11xf32>
  return %y : tensor<5x11xf32>
}

// A multi-hop permutation [3, 1, 0, 2], uneven, no bias.
func.func @uneven_multi_hop(%x: tensor<5x19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [3, 1, 0, 2]>>) -> tensor<5x11xf32> {
  %y = shardlin.linear %x, %w : (tensor<5x19xf32>,
      !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [3, 1, 0, 2]>>) -> tensor<5x11xf32>
  return %y : tensor<5x11xf32>
}

// N = 3 over W = 5: chunk sizes 1, 1, 1, 0, 0.
func.func @empty_chunks_n3_w5(%x: tensor<2x4xf32>,
    %w: !shardlin.sharded<tensor<3x4xf32>, #shardlin.chunk<dim = 0, placements = [4, 2, 0, 1, 3]>>,
    %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<2x4xf32>,
      !shardlin.sharded<tensor<3x4xf32>, #shardlin.chunk<dim = 0, placements = [4, 2, 0, 1, 3]>>,
      tensor<3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// N = 5 over W = 4: chunk sizes 2, 2, 1, 0.
func.func @empty_chunk_n5_w4(%x: tensor<3x6xf32>,
    %w: !shardlin.sharded<tensor<5x6xf32>, #shardlin.chunk<dim = 0, placements = [1, 3, 2, 0]>>,
    %b: tensor<5xf32>) -> tensor<3x5xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<3x6xf32>,
      !shardlin.sharded<tensor<5x6xf32>, #shardlin.chunk<dim = 0, placements = [1, 3, 2, 0]>>,
      tensor<5xf32>) -> tensor<3x5xf32>
  return %y : tensor<3x5xf32>
}
