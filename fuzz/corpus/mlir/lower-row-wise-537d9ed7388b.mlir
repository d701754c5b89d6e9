// Row-wise lowering (weight split along dim 1, K): local_shard, one all_to_all
// (split = the weight's spec on dim 1, concat = identity on dim 0, result
// (W*B) x k_local), ONE gemm with transpose_rhs, reduce_scatter back to B rows
// in rank order, and the bias added exactly once, after the reduction.

// K = 16 over W = 4: every chunk has 4 columns, so all local sizes are static.
func.func @even(%x: tensor<5x16xf32>,
    %w: !shardlin.sharded<tensor<11x16xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>,
    %b: tensor<11xf32>) -> tensor<5x11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<5x16xf32>,
      !shardlin.sharded<tensor<11x16xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>,
      tensor<11xf32>) -> tensor<5x11xf32>
  return %y : tensor<5x11xf32>
}

// Without a bias there is no bias_add.
func.func @even_no_bias(%x: tensor<5x16xf32>,
    %w: !shardlin.sharded<tensor<11x16xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>) -> tensor<5x11xf32> {
  %y = shardlin.linear %x, %w : (tensor<5x16xf32>,
      !shardlin.sharded<tensor<11x16xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>) -> tensor<5x11xf32>
  return %y : tensor<5x11xf32>
}

// K = 19 over W = 4 (chunks 5, 5, 5, 4): the local K is `?`; the reduction
// still returns equal B x N blocks. Permuted placements [2, 3, 0, 1] are the
// all_to_all's split spec; the row blocks stay in rank order.
func.func @uneven_permuted(%x: tensor<5x19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>,
    %b: tensor<11xf32>) -> tensor<5x11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<5x19xf32>,
      !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>,
      tensor<11xf32>) -> tensor<5x11xf32>
  return %y : tensor<5x11xf32>
}

// A multi-hop permutation [3, 1, 0, 2] with uneven chunks and no bias.
func.func @uneven_multi_hop(%x: tensor<5x19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [3, 1, 0, 2]>>) -> tensor<5x11xf32> {
  %y = shardlin.linear %x, %w : (tensor<5x19xf32>,
      !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [3, 1, 0, 2]>>) -> tensor<5x11xf32>
  return %y : tensor<5x11xf32>
}

// K = 3 over W = 5: chunk sizes 1, 1, 1, 0, 0; two ranks hold an empty chunk
// and still take part in every collective.
func.func @empty_chunks_k3_w5(%x: tensor<2x3xf32>,
    %w: !shardlin.sharded<tensor<7x3xf32>, #shardlin.chunk<dim = 1, placements = [4, 2, 0, 1, 3]>>,
    %b: tensor<7xf32>) -> tensor<2x7xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<2x3xf32>,
      !shardlin.sharded<tensor<7x3xf32>, #shardlin.chunk<dim = 1, placements = [4, 2, 0, 1, 3]>>,
      tensor<7xf32>) -> tensor<2x7xf32>
  return %y : tensor<2x7xf32>
}

// K = 5 over W = 4: chunk sizes 2, 2, 1, 0.
func.func @empty_chunk_k5_w4(%x: tensor<3x5xf32>,
    %w: !shardlin.sharded<tensor<6x5xf32>, #shardlin.chunk<dim = 1, placements = [1, 3, 2, 0]>>) -> tensor<3x6xf32> {
  %y = shardlin.linear %x, %w : (tensor<3x5xf32>,
      !shardlin.sharded<tensor<6x5xf32>, #shardlin.chunk<dim = 1, placements = [1, 3, 2, 0]>>) -> tensor<3x6xf32>
  return %y : tensor<3x6xf32>
}

// W = 2, reversed placements, even K: static local sizes again.
func.func @two_ranks_reversed(%x: tensor<1x8xf32>,
    %w: !shardlin.sharded<tensor<3x8xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>,
    %b: tensor<3xf32>) -> tensor<1x3xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<1x8xf32>,
      !shardlin.sharded<tensor<3x8xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>,
      tensor<3xf32>) -> tensor<1x3xf32>
  return %y : tensor<1x3xf32>
}
