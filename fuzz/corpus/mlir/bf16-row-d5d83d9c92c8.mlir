// bf16, row-wise over W = 4 (K = 10: chunks 3, 3, 3, 1), with a bias.
func.func @main(%x: tensor<3x10xbf16>,
                %w: !shardlin.sharded<tensor<5x10xbf16>, #shardlin.chunk<dim = 1, placements = [1, 3, 0, 2]>>,
                %b: tensor<5xbf16>) -> tensor<3x5xbf16> {
  %y = shardlin.linear %x, %w, %b : (tensor<3x10xbf16>, !shardlin.sharded<tensor<5x10xbf16>, #shardlin.chunk<dim = 1, placements = [1, 3, 0, 2]>>, tensor<5xbf16>) -> tensor<3x5xbf16>
  return %y : tensor<3x5xbf16>
}
