// A fused q/k/v linear in the exporter's 2-D form (transpose, matmul into a
// zero fill, bias add), its weight's row i all i and its bias 100 + i, so
// that each part's rows can be read off: see import-fused-qkv.mlir.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
shard.grid @tp(shape = 2)
func.func @f(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %w = arith.constant dense<[[0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0],[1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0],[2.0,2.0,2.0,2.0,2.0,2.0,2.0,2.0],[3.0,3.0,3.0,3.0,3.0,3.0,3.0,3.0],[4.0,4.0,4.0,4.0,4.0,4.0,4.0,4.0],[5.0,5.0,5.0,5.0,5.0,5.0,5.0,5.0],[6.0,6.0,6.0,6.0,6.0,6.0,6.0,6.0],[7.0,7.0,7.0,7.0,7.0,7.0,7.0,7.0],[8.0,8.0,8.0,8.0,8.0,8.0,8.0,8.0],[9.0,9.0,9.0,9.0,9.0,9.0,9.0,9.0],[10.0,10.0,10.0,10.0,10.0,10.0,10.0,10.0],[11.0,11.0,11.0,11.0,11.0,11.0,11.0,11.0],[12.0,12.0,12.0,12.0,12.0,12.0,12.0,12.0],[13.0,13.0,13.0,13.0,13.0,13.0,13.0,13.0],[14.0,14.0,14.0,14.0,14.0,14.0,14.0,14.0],[15.0,15.0,15.0,15.0,15.0,15.0,15.0,15.0],[16.0,16.0,16.0,16.0,16.0,16.0,16.0,16.0],[17.0,17.0,17.0,17.0,17.0,17.0,17.0,17.0],[18.0,18.0,18.0,18.0,18.0,18.0,18.0,18.0],[19.0,19.0,19.0,19.0,19.0,19.0,19.0,19.0],[20.0,20.0,20.0,20.0,20.0,20.0,20.0,20.0],[21.0,21.0,21.0,21.0,21.0,21.0,21.0,21.0],[22.0,22.0,22.0,22.0,22.0,22.0,22.0,22.0],[23.0,23.0,23.0,23.0,23.0,23.0,23.0,23.0]]> : tensor<24x8xf32>
  %b = arith.constant dense<[100.0,101.0,102.0,103.0,104.0,105.0,106.0,107.0,108.0,109.0,110.0,111.0,112.0,113.0,114.0,115.0,116.0,117.0,118.0,119.0,120.0,121.0,122.0,123.0]> : tensor<24xf32>
  %s = shard.sharding @tp split_axes = [[0]] : !shard.sharding
  %wa = shard.shard %w to %s : tensor<24x8xf32>
  %ba = shard.shard %b to %s : tensor<24xf32>
  %e0 = tensor.empty() : tensor<8x24xf32>
  %t = linalg.transpose ins(%wa : tensor<24x8xf32>) outs(%e0 : tensor<8x24xf32>) permutation = [1, 0]
  %z = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4x24xf32>
  %f = linalg.fill ins(%z : f32) outs(%e1 : tensor<4x24xf32>) -> tensor<4x24xf32>
  %m = linalg.matmul ins(%x, %t : tensor<4x8xf32>, tensor<8x24xf32>) outs(%f : tensor<4x24xf32>) -> tensor<4x24xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%m, %ba : tensor<4x24xf32>, tensor<24xf32>) outs(%e1 : tensor<4x24xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %sum = arith.addf %in, %bias : f32
    linalg.yield %sum : f32
  } -> tensor<4x24xf32>
  %p0 = tensor.extract_slice %p[0, 0] [4, 8] [1, 1] : tensor<4x24xf32> to tensor<4x8xf32>
  %p1 = tensor.extract_slice %p[0, 8] [4, 8] [1, 1] : tensor<4x24xf32> to tensor<4x8xf32>
  %p2 = tensor.extract_slice %p[0, 16] [4, 8] [1, 1] : tensor<4x24xf32> to tensor<4x8xf32>
  %h0 = tensor.expand_shape %p0 [[0], [1, 2]] output_shape [4, 2, 4] : tensor<4x8xf32> into tensor<4x2x4xf32>
  %h1 = tensor.expand_shape %p1 [[0], [1, 2]] output_shape [4, 2, 4] : tensor<4x8xf32> into tensor<4x2x4xf32>
  %h2 = tensor.expand_shape %p2 [[0], [1, 2]] output_shape [4, 2, 4] : tensor<4x8xf32> into tensor<4x2x4xf32>
  %c0 = tensor.collapse_shape %h0 [[0], [1, 2]] : tensor<4x2x4xf32> into tensor<4x8xf32>
  %c1 = tensor.collapse_shape %h1 [[0], [1, 2]] : tensor<4x2x4xf32> into tensor<4x8xf32>
  %c2 = tensor.collapse_shape %h2 [[0], [1, 2]] : tensor<4x2x4xf32> into tensor<4x8xf32>
  return %c0, %c1, %c2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
