// Two dynamic batch dims: both sizes come back from the input.
func.func @batch_and_sequence(%x: tensor<?x?x19xbf16>, %w: !shardlin.sharded<tensor<11x19xbf16>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<?x?x11xbf16> {
  %y = shardlin.linear %x, %w : (tensor<?x?x19xbf16>, !shardlin.sharded<tensor<11x19xbf16>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<?x?x11xbf16>
  return %y : tensor<?x?x11xbf16>
}
