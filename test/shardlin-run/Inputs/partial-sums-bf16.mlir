// bf16, row-wise over W = 2 (K = 2: one column of the weight per rank), with a
// bias: the per-rank partial products of partial_sums.py's crafted rows do
// not fit bf16 (partial-sums.mlir).
func.func @main(%x: tensor<4x2xbf16>,
                %w: !shardlin.sharded<tensor<3x2xbf16>, #shardlin.chunk<dim = 1, placements = [0, 1]>>,
                %b: tensor<3xbf16>) -> tensor<4x3xbf16> {
  %y = shardlin.linear %x, %w, %b : (tensor<4x2xbf16>, !shardlin.sharded<tensor<3x2xbf16>, #shardlin.chunk<dim = 1, placements = [0, 1]>>, tensor<3xbf16>) -> tensor<4x3xbf16>
  return %y : tensor<4x3xbf16>
}
