// Batch dims known only at run time: a linear's leading dims may be
// dynamic (K stays static: invalid.mlir), and the collectives accept a
// dynamic dim of stacked rows on either side (its chunks are the ranks'
// blocks, known at run time).

func.func @linear_dynamic_rows(%x: tensor<?x19xf32>, %w: !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, %b: tensor<11xf32>) -> tensor<?x11xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<?x19xf32>, !shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, tensor<11xf32>) -> tensor<?x11xf32>
  return %y : tensor<?x11xf32>
}

func.func @linear_batch_and_sequence(%x: tensor<?x4x?x19xbf16>, %w: !shardlin.sharded<tensor<11x19xbf16>, #shardlin.chunk<dim = 0, placements = [2, 0, 1]>>) -> tensor<?x4x?x11xbf16> {
  %y = shardlin.linear %x, %w : (tensor<?x4x?x19xbf16>, !shardlin.sharded<tensor<11x19xbf16>, #shardlin.chunk<dim = 0, placements = [2, 0, 1]>>) -> tensor<?x4x?x11xbf16>
  return %y : tensor<?x4x?x11xbf16>
}

func.func @collectives_on_dynamic_rows(%x: tensor<?x19xf32>, %p: tensor<?x11xf32>, %q: tensor<?x?xf32>) {
  %g = shardlin.all_gather %x along <dim = 0, placements = [0, 1]> : tensor<?x19xf32> -> tensor<?x19xf32>
  %s = shardlin.all_to_all %x split <dim = 1, placements = [1, 0]> concat <dim = 0, placements = [0, 1]> : tensor<?x19xf32> -> tensor<?x?xf32>
  %r = shardlin.reduce_scatter %p along <dim = 0, placements = [0, 1]> : tensor<?x11xf32> -> tensor<?x11xf32>
  %c = shardlin.all_to_all %q split <dim = 0, placements = [0, 1]> concat <dim = 1, placements = [1, 0]> : tensor<?x?xf32> -> tensor<?x11xf32>
  return
}
