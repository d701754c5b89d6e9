// Many rows (batch x sequence) against a small weight: gathering the weight
// moves orders of magnitude fewer bytes, and auto picks it.
// AUTO-LABEL: func.func @prefill
// AUTO: shardlin.all_gather {{.*}} along <dim = 0, placements = [3, 2, 1, 0]> : tensor<64x256xf32> -> tensor<256x256xf32>
// AUTO: strategy = "gather-weight"
// AUTO-NOT: shardlin.all_to_all
// EXPLAIN: remark: lowered col-wise with gather-weight (cheapest estimate)
func.func @prefill(%x: tensor<8x2048x256xf32>, %w: !shardlin.sharded<tensor<256x256xf32>, #shardlin.chunk<dim = 0, placements = [3, 2, 1, 0]>>) -> tensor<8x2048x256xf32> {
  %y = shardlin.linear %x, %w : (tensor<8x2048x256xf32>, !shardlin.sharded<tensor<256x256xf32>, #shardlin.chunk<dim = 0, placements = [3, 2, 1, 0]>>) -> tensor<8x2048x256xf32>
  return %y : tensor<8x2048x256xf32>
}
