// f16, col-wise over W = 4 (N = 9: chunks 3, 3, 3, 0), with a bias.
func.func @main(%x: tensor<3x6xf16>,
                %w: !shardlin.sharded<tensor<9x6xf16>, #shardlin.chunk<dim = 0, placements = [3, 2, 1, 0]>>,
                %b: tensor<9xf16>) -> tensor<3x9xf16> {
  %y = shardlin.linear %x, %w, %b : (tensor<3x6xf16>, !shardlin.sharded<tensor<9x6xf16>, #shardlin.chunk<dim = 0, placements = [3, 2, 1, 0]>>, tensor<9xf16>) -> tensor<3x9xf16>
  return %y : tensor<3x9xf16>
}
