// Col-wise, f16, 2-D: no reshape at all.
func.func @col(%x: tensor<?x19xf16>, %w: !shardlin.sharded<tensor<11x19xf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, %b: tensor<11xf16>) -> tensor<?x11xf16> {
  %y = shardlin.linear %x, %w, %b : (tensor<?x19xf16>, !shardlin.sharded<tensor<11x19xf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, tensor<11xf16>) -> tensor<?x11xf16>
  return %y : tensor<?x11xf16>
}
