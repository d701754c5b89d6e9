// A block on dynamic rows, its ReLU a linalg.generic whose init is sized by
// tensor.dim of the col-wise result: fused, the tensor.dim and tensor.empty
// go with the chain (the fused generic reuses its input as init).
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @mlp(%x: tensor<?x8xf32>, %w1: !shardlin.sharded<tensor<10x8xf32>, #shardlin.chunk<dim = 0, placements = [2, 0, 1]>>, %b1: tensor<10xf32>, %w2: !shardlin.sharded<tensor<8x10xf32>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>) -> tensor<?x8xf32> {
  %h = shardlin.linear %x, %w1, %b1 : (tensor<?x8xf32>, !shardlin.sharded<tensor<10x8xf32>, #shardlin.chunk<dim = 0, placements = [2, 0, 1]>>, tensor<10xf32>) -> tensor<?x10xf32>
  %c0 = arith.constant 0 : index
  %rows = tensor.dim %h, %c0 : tensor<?x10xf32>
  %init = tensor.empty(%rows) : tensor<?x10xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%h : tensor<?x10xf32>) outs(%init : tensor<?x10xf32>) {
  ^bb0(%in: f32, %out: f32):
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x10xf32>
  %y = shardlin.linear %a, %w2 : (tensor<?x10xf32>, !shardlin.sharded<tensor<8x10xf32>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
