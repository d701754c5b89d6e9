// Several linears per function and per module: each is lowered in place by
// its own strategy, and every other op (arith, tensor, func) is left
// untouched, in order. Lowered IR is a fixed point of the pass (4th RUN).

// A row-wise linear (W = 2) chained into a col-wise one (W = 3, uneven N),
// with arith and tensor ops before, between and after.
func.func @row_then_col(%x: tensor<2x3x8xf32>,
    %w1: !shardlin.sharded<tensor<6x8xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>,
    %w2: !shardlin.sharded<tensor<4x6xf32>, #shardlin.chunk<dim = 0, placements = [2, 0, 1]>>,
    %b2: tensor<4xf32>) -> tensor<3x4xf32> {
  %c = arith.constant dense<1.0> : tensor<2x3x8xf32>
  %xa = arith.addf %x, %c : tensor<2x3x8xf32>
  %h = shardlin.linear %xa, %w1 : (tensor<2x3x8xf32>,
      !shardlin.sharded<tensor<6x8xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<2x3x6xf32>
  %h2 = arith.mulf %h, %h : tensor<2x3x6xf32>
  %y = shardlin.linear %h2, %w2, %b2 : (tensor<2x3x6xf32>,
      !shardlin.sharded<tensor<4x6xf32>, #shardlin.chunk<dim = 0, placements = [2, 0, 1]>>,
      tensor<4xf32>) -> tensor<2x3x4xf32>
  %s = tensor.extract_slice %y[0, 0, 0] [1, 3, 4] [1, 1, 1] : tensor<2x3x4xf32> to tensor<3x4xf32>
  return %s : tensor<3x4xf32>
}

// Two independent linears on one input (a col-wise and a W = 1 one) whose
// results are combined: each gets its own lowering.
func.func @independent(%x: tensor<5x8xf64>,
    %wc: !shardlin.sharded<tensor<6x8xf64>, #shardlin.chunk<dim = 0, placements = [1, 0]>>,
    %ws: !shardlin.sharded<tensor<6x8xf64>, #shardlin.chunk<dim = 1, placements = [0]>>) -> tensor<5x6xf64> {
  %y1 = shardlin.linear %x, %wc : (tensor<5x8xf64>,
      !shardlin.sharded<tensor<6x8xf64>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<5x6xf64>
  %y2 = shardlin.linear %x, %ws : (tensor<5x8xf64>,
      !shardlin.sharded<tensor<6x8xf64>, #shardlin.chunk<dim = 1, placements = [0]>>) -> tensor<5x6xf64>
  %s = arith.subf %y1, %y2 : tensor<5x6xf64>
  return %s : tensor<5x6xf64>
}

// A function without shardlin ops is left as it is.
func.func @no_linear(%x: tensor<5x8xf32>) -> tensor<5x8xf32> {
  %e = tensor.empty() : tensor<5x8xf32>
  %s = arith.addf %x, %e : tensor<5x8xf32>
  return %s : tensor<5x8xf32>
}

// A col-wise linear chained into a row-wise one, with biases, in a third
// function of the module.
func.func @col_then_row(%x: tensor<4x8xbf16>,
    %w1: !shardlin.sharded<tensor<6x8xbf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>>,
    %b1: tensor<6xbf16>,
    %w2: !shardlin.sharded<tensor<8x6xbf16>, #shardlin.chunk<dim = 1, placements = [1, 0]>>,
    %b2: tensor<8xbf16>) -> tensor<4x8xbf16> {
  %h = shardlin.linear %x, %w1, %b1 : (tensor<4x8xbf16>,
      !shardlin.sharded<tensor<6x8xbf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>>,
      tensor<6xbf16>) -> tensor<4x6xbf16>
  %y = shardlin.linear %h, %w2, %b2 : (tensor<4x6xbf16>,
      !shardlin.sharded<tensor<8x6xbf16>, #shardlin.chunk<dim = 1, placements = [1, 0]>>,
      tensor<8xbf16>) -> tensor<4x8xbf16>
  return %y : tensor<4x8xbf16>
}
