// local-place-backward.test: slices of replicated values, whose backward
// places each rank's gradient with shardlin.local_place.
func.func @sliced(%x: tensor<4x8xf32>, %w: tensor<8x8xf32> {shardlin.replicated}, %b: tensor<2x8x6xf32> {shardlin.replicated}) -> (tensor<4x?xf32>, tensor<2x8x2xf32>) {
  %s = shardlin.local_slice %w dim = 0 ranges = [0, 4, 2, 6, 6, 8] : tensor<8x8xf32> -> tensor<?x8xf32>
  %y = shardlin.gemm %x, %s transpose_rhs : (tensor<4x8xf32>, tensor<?x8xf32>) -> tensor<4x?xf32>
  %c = shardlin.local_slice %b dim = 2 ranges = [0, 2, 2, 4, 4, 6] : tensor<2x8x6xf32> -> tensor<2x8x2xf32>
  return %y, %c : tensor<4x?xf32>, tensor<2x8x2xf32>
}
