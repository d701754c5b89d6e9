// One row against a large weight: moving activations is far cheaper than
// gathering 4096 x 4096 elements, and auto picks it.
// AUTO-LABEL: func.func @decode_step
// AUTO: shardlin.all_to_all
// AUTO: strategy = "activations"
// AUTO: shardlin.reduce_scatter
// EXPLAIN: remark: lowered row-wise with activations (cheapest estimate)
func.func @decode_step(%x: tensor<1x4096xf16>, %w: !shardlin.sharded<tensor<4096x4096xf16>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>) -> tensor<1x4096xf16> {
  %y = shardlin.linear %x, %w : (tensor<1x4096xf16>, !shardlin.sharded<tensor<4096x4096xf16>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>) -> tensor<1x4096xf16>
  return %y : tensor<1x4096xf16>
}
