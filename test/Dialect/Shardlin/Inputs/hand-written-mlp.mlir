// The MLP of import-equivalence.mlir written by hand in shardlin IR: each
// rank's rows of x (3, 3, 3 and 1 of them: `?`), N x K weights, the biases as
// the linears' operands.
!w1 = !shardlin.sharded<tensor<32x16xf32>, #shardlin.chunk<dim = 0, placements = [0, 1, 2, 3]>>
!w2 = !shardlin.sharded<tensor<16x32xf32>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @mlp(%x: tensor<?x16xf32>, %w1: !w1, %b1: tensor<32xf32>, %w2: !w2, %b2: tensor<16xf32>) -> tensor<?x16xf32> {
  %h = shardlin.linear %x, %w1, %b1 : (tensor<?x16xf32>, !w1, tensor<32xf32>) -> tensor<?x32xf32>
  %zero = arith.constant 0.0 : f32
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<?x32xf32>) outs(%h : tensor<?x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x32xf32>
  %y = shardlin.linear %a, %w2, %b2 : (tensor<?x32xf32>, !w2, tensor<16xf32>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}
