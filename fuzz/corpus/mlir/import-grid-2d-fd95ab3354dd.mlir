// A 2-D shard.grid, DP x TP (ImportShardGrid.cpp, docs/interop.md): axis 0
// splits the batch over the data-parallel replicas, axis 1 is the tensor
// parallelism. The module becomes one replica's on a 1-D grid of TP
// devices: the batch's dim 0 divided by DP, every sharding without axis 0,
// and shardlin.data_parallel = DP on the module for the runner.

// import-equivalence.mlir's MLP block on a 2 x 4 grid: x's 20 rows split
// over both axes ([[0, 1]]: device (d, t) holds chunk 4 d + t), each
// replica's 10 rows at [0, 3, 6, 9, 10] as there; biases by broadcast inits
// and linalg.add, which the replica's rows rebuild at 10 rows. One
// replica's program is the 1-D module's: the same collectives and GEMMs on
// the same types.
// LOWER-LABEL: func.func @mlp(
// LOWER: %[[G:.*]] = shardlin.all_gather %[[X:.*]] along <dim = 0, placements = [0, 1, 2, 3]> : tensor<?x16xf32> -> tensor<?x16xf32>
// LOWER: %[[B1:.*]] = shardlin.local_chunk %{{.*}} along <dim = 0, placements = [0, 1, 2, 3]> : tensor<32xf32> -> tensor<8xf32>
// LOWER: %[[H:.*]] = shardlin.gemm %[[G]], %{{.*}} bias %[[B1]] transpose_rhs {shardlin.lowering = {{.*}}strategy = "fused"}} : (tensor<?x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<?x8xf32>
// LOWER: linalg.generic {{.*}} ins(%[[H]] : tensor<?x8xf32>) outs(%[[H]] : tensor<?x8xf32>)
// LOWER: arith.maximumf
// LOWER: shardlin.gemm {{.*}} transpose_rhs {shardlin.lowering = {{.*}}strategy = "fused"}} : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
// LOWER: shardlin.reduce_scatter %{{.*}} along <dim = 0, placements = [0, 1, 2, 3]> : tensor<?x16xf32> -> tensor<?x16xf32>
// LOWER: shardlin.bias_add %{{.*}}, %{{.*}} : tensor<?x16xf32>, tensor<16xf32>
// LOWER-NOT: shardlin.all_
// LOWER-LABEL: func.func @row3d(

shard.grid @grid(shape = 2x4)
#nk = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @mlp(%x: tensor<20x16xf32>, %w1: tensor<32x16xf32>, %b1: tensor<32xf32>,
               %w2: tensor<16x32xf32>, %b2: tensor<16xf32>) -> tensor<20x16xf32> {
  %rows = shard.sharding @grid split_axes = [[0, 1]] sharded_dims_offsets = [0, 3, 6, 9, 10, 13, 16, 19, 20] : !shard.sharding
  %sn = shard.sharding @grid split_axes = [[1]] : !shard.sharding
  %sk = shard.sharding @grid split_axes = [[], [1]] : !shard.sharding
  %xs = shard.shard %x to %rows : tensor<20x16xf32>
  %w1s = shard.shard %w1 to %sn : tensor<32x16xf32>
  %w2s = shard.shard %w2 to %sk : tensor<16x32xf32>
  %e1 = tensor.empty() : tensor<20x32xf32>
  %bb1 = linalg.broadcast ins(%b1 : tensor<32xf32>) outs(%e1 : tensor<20x32xf32>) dimensions = [0]
  %h = linalg.matmul indexing_maps = #nk ins(%xs, %w1s : tensor<20x16xf32>, tensor<32x16xf32>) outs(%bb1 : tensor<20x32xf32>) -> tensor<20x32xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<20x32xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<20x32xf32>) outs(%e2 : tensor<20x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<20x32xf32>
  %e3 = tensor.empty() : tensor<20x16xf32>
  %i3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<20x16xf32>) -> tensor<20x16xf32>
  %y = linalg.matmul indexing_maps = #nk ins(%a, %w2s : tensor<20x32xf32>, tensor<16x32xf32>) outs(%i3 : tensor<20x16xf32>) -> tensor<20x16xf32>
  %e4 = tensor.empty() : tensor<20x16xf32>
  %bb2 = linalg.broadcast ins(%b2 : tensor<16xf32>) outs(%e4 : tensor<20x16xf32>) dimensions = [0]
  %e5 = tensor.empty() : tensor<20x16xf32>
  %z = linalg.add ins(%y, %bb2 : tensor<20x16xf32>, tensor<20x16xf32>) outs(%e5 : tensor<20x16xf32>) -> tensor<20x16xf32>
  %zs = shard.shard %z to %rows : tensor<20x16xf32>
  return %zs : tensor<20x16xf32>
}
