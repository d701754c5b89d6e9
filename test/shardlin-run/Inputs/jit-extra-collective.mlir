// A program whose ranks make different collectives: rank 0 gathers twice,
// rank 1 once, so rank 0's second all_gather waits for a rank that has
// returned, until the collective timeout.
func.func @main(%x: tensor<2x4xf32>) -> tensor<4x4xf32> {
  %g = shardlin.all_gather %x along <dim = 0, placements = [0, 1]> : tensor<2x4xf32> -> tensor<4x4xf32>
  %r = shardlin.rank world_size = 2
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %r, %c0 : index
  %y = scf.if %first -> tensor<4x4xf32> {
    %h = shardlin.all_gather %x along <dim = 0, placements = [0, 1]> : tensor<2x4xf32> -> tensor<4x4xf32>
    %s = arith.addf %g, %h : tensor<4x4xf32>
    scf.yield %s : tensor<4x4xf32>
  } else {
    scf.yield %g : tensor<4x4xf32>
  }
  return %y : tensor<4x4xf32>
}
