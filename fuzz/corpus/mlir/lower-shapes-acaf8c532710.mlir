// Input shapes: a 1-D input is one row (expand_shape to 1 x K, collapse the
// 1 x N result back); N-D inputs collapse their batch dims to rows and the
// result is expanded back; batch 0 and W = 1 lower like any other.

func.func @row_wise_1d(%x: tensor<19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>,
    %b: tensor<11xf32>) -> tensor<11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<19xf32>,
      !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>,
      tensor<11xf32>) -> tensor<11xf32>
  return %y : tensor<11xf32>
}

func.func @col_wise_1d(%x: tensor<19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<11xf32> {
  %y = shardlin.linear %x, %w : (tensor<19xf32>,
      !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<11xf32>
  return %y : tensor<11xf32>
}

func.func @row_wise_3d(%x: tensor<2x3x19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [3, 1, 0, 2]>>,
    %b: tensor<11xf32>) -> tensor<2x3x11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<2x3x19xf32>,
      !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [3, 1, 0, 2]>>,
      tensor<11xf32>) -> tensor<2x3x11xf32>
  return %y : tensor<2x3x11xf32>
}

func.func @col_wise_4d(%x: tensor<2x1x3x19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [2, 3, 0, 1]>>,
    %b: tensor<11xf32>) -> tensor<2x1x3x11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<2x1x3x19xf32>,
      !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [2, 3, 0, 1]>>,
      tensor<11xf32>) -> tensor<2x1x3x11xf32>
  return %y : tensor<2x1x3x11xf32>
}

// Batch 0: every collective moves zero rows, and every rank still calls it.
func.func @row_wise_batch0(%x: tensor<0x19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>,
    %b: tensor<11xf32>) -> tensor<0x11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<0x19xf32>,
      !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [2, 3, 0, 1]>>,
      tensor<11xf32>) -> tensor<0x11xf32>
  return %y : tensor<0x11xf32>
}

func.func @col_wise_batch0_3d(%x: tensor<2x0x19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [2, 3, 0, 1]>>) -> tensor<2x0x11xf32> {
  %y = shardlin.linear %x, %w : (tensor<2x0x19xf32>,
      !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [2, 3, 0, 1]>>) -> tensor<2x0x11xf32>
  return %y : tensor<2x0x11xf32>
}

// W = 1 (either dim): the whole weight is local; one gemm with the bias
// fused and no collectives.
func.func @single_rank_dim1(%x: tensor<5x19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [0]>>,
    %b: tensor<11xf32>) -> tensor<5x11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<5x19xf32>,
      !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [0]>>,
      tensor<11xf32>) -> tensor<5x11xf32>
  return %y : tensor<5x11xf32>
}

func.func @single_rank_dim0_3d(%x: tensor<2x3x19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [0]>>) -> tensor<2x3x11xf32> {
  %y = shardlin.linear %x, %w : (tensor<2x3x19xf32>,
      !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [0]>>) -> tensor<2x3x11xf32>
  return %y : tensor<2x3x11xf32>
}

func.func @single_rank_1d(%x: tensor<19xf32>,
    %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [0]>>,
    %b: tensor<11xf32>) -> tensor<11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<19xf32>,
      !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 0, placements = [0]>>,
      tensor<11xf32>) -> tensor<11xf32>
  return %y : tensor<11xf32>
}

// An empty weight: K = 0 (every rank's chunk is empty, the gemm contracts over
// nothing and gives zeros plus the bias) and N = 0 (an empty result).
func.func @row_wise_k0(%x: tensor<5x0xf32>,
    %w: !shardlin.sharded<tensor<11x0xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>,
    %b: tensor<11xf32>) -> tensor<5x11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<5x0xf32>,
      !shardlin.sharded<tensor<11x0xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>,
      tensor<11xf32>) -> tensor<5x11xf32>
  return %y : tensor<5x11xf32>
}

func.func @col_wise_n0(%x: tensor<5x3xf32>,
    %w: !shardlin.sharded<tensor<0x3xf32>, #shardlin.chunk<dim = 0, placements = [1, 0, 2]>>,
    %b: tensor<0xf32>) -> tensor<5x0xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<5x3xf32>,
      !shardlin.sharded<tensor<0x3xf32>, #shardlin.chunk<dim = 0, placements = [1, 0, 2]>>,
      tensor<0xf32>) -> tensor<5x0xf32>
  return %y : tensor<5x0xf32>
}
