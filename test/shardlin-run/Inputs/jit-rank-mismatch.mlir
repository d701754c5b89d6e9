// A program that is wrong only at run time: an all_gather of 3 rows over 2
// ranks takes chunks of 2 and 1 rows, but rank r passes r + 1 rows of x, so
// rank 0's call fails in the runtime's C ABI (its view has 1 row, not 2),
// and rank 1's with it.
func.func @main(%x: tensor<4x4xf32>) -> tensor<3x4xf32> {
  %r = shardlin.rank world_size = 2
  %c1 = arith.constant 1 : index
  %n = arith.addi %r, %c1 : index
  %s = tensor.extract_slice %x[0, 0] [%n, 4] [1, 1] : tensor<4x4xf32> to tensor<?x4xf32>
  %g = shardlin.all_gather %s along <dim = 0, placements = [0, 1]> : tensor<?x4xf32> -> tensor<3x4xf32>
  return %g : tensor<3x4xf32>
}
