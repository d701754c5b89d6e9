// How shardings propagate and how values move between them: elementwise
// ops keep the sharding of their operands (a replicated operand is sliced
// locally, a constant built in the rank's shape), annotate_for_users
// reshards (local_chunk, all_gather), a linear produces the result layout
// the module states where it can, and the signature says what each rank
// holds.

shard.grid @grid(shape = 4)
// A sequence-sharded x through elementwise ops: the rank's rows all along;
// the replicated residual r is sliced to the rank's rows; a splat constant
// is built in the rank's shape.
func.func @elementwise_rows(%x: tensor<8x16xf32>, %r: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %rows = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %rows : tensor<8x16xf32>
  %two = arith.constant dense<2.0> : tensor<8x16xf32>
  %m = arith.mulf %xs, %two : tensor<8x16xf32>
  %s = arith.addf %m, %r : tensor<8x16xf32>
  %t = math.tanh %s : tensor<8x16xf32>
  return %t : tensor<8x16xf32>
}
