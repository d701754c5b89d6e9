// RUN: shardlin-opt %s --lower-sharded-linear=strategy=activations | FileCheck %s
// RUN: shardlin-opt %S/Inputs/hand-written-mlp.mlir --lower-sharded-linear=strategy=activations | FileCheck %s

// The same MLP block written by hand in shardlin IR (Inputs/hand-written-mlp.mlir:
// each rank's rows, N x K weights, the biases as the linears' operands) and
// imported from the upstream form (below: sequence-sharded x over 10 rows
// at [0, 3, 6, 9, 10], weights N x K through transposing indexing_maps,
// biases by a broadcast init and by linalg.broadcast + linalg.add) lower to
// the same program: the same collectives, GEMMs, chain and bias steps in
// the same order, on the same types. (The imported one also has its
// arguments' local_shard and its result's from_local, which move no data.)
//
// CHECK: %[[G:.*]] = shardlin.all_gather %[[X:.*]] along <dim = 0, placements = [0, 1, 2, 3]> : tensor<?x16xf32> -> tensor<?x16xf32>
// CHECK: %[[B1:.*]] = shardlin.local_chunk %{{.*}} along <dim = 0, placements = [0, 1, 2, 3]> : tensor<32xf32> -> tensor<8xf32>
// CHECK: %[[H:.*]] = shardlin.gemm %[[G]], %{{.*}} bias %[[B1]] transpose_rhs {shardlin.lowering = {{.*}}strategy = "fused"}} : (tensor<?x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<?x8xf32>
// CHECK: linalg.generic {{.*}} ins(%[[H]] : tensor<?x8xf32>) outs(%[[H]] : tensor<?x8xf32>)
// CHECK: arith.maximumf
// CHECK: shardlin.gemm {{.*}} transpose_rhs {shardlin.lowering = {{.*}}strategy = "fused"}} : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
// CHECK: shardlin.reduce_scatter %{{.*}} along <dim = 0, placements = [0, 1, 2, 3]> : tensor<?x16xf32> -> tensor<?x16xf32>
// CHECK: shardlin.bias_add %{{.*}}, %{{.*}} : tensor<?x16xf32>, tensor<16xf32>
// CHECK-NOT: shardlin.all_

shard.grid @grid(shape = 4)
#nk = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @mlp(%x: tensor<10x16xf32>, %w1: tensor<32x16xf32>, %b1: tensor<32xf32>,
               %w2: tensor<16x32xf32>, %b2: tensor<16xf32>) -> tensor<10x16xf32> {
  %rows = shard.sharding @grid split_axes = [[0]] sharded_dims_offsets = [0, 3, 6, 9, 10] : !shard.sharding
  %sn = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %sk = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %rows : tensor<10x16xf32>
  %w1s = shard.shard %w1 to %sn : tensor<32x16xf32>
  %w2s = shard.shard %w2 to %sk : tensor<16x32xf32>
  %e1 = tensor.empty() : tensor<10x32xf32>
  %bb1 = linalg.broadcast ins(%b1 : tensor<32xf32>) outs(%e1 : tensor<10x32xf32>) dimensions = [0]
  %h = linalg.matmul indexing_maps = #nk ins(%xs, %w1s : tensor<10x16xf32>, tensor<32x16xf32>) outs(%bb1 : tensor<10x32xf32>) -> tensor<10x32xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<10x32xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<10x32xf32>) outs(%e2 : tensor<10x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<10x32xf32>
  %e3 = tensor.empty() : tensor<10x16xf32>
  %i3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<10x16xf32>) -> tensor<10x16xf32>
  %y = linalg.matmul indexing_maps = #nk ins(%a, %w2s : tensor<10x32xf32>, tensor<16x32xf32>) outs(%i3 : tensor<10x16xf32>) -> tensor<10x16xf32>
  %e4 = tensor.empty() : tensor<10x16xf32>
  %bb2 = linalg.broadcast ins(%b2 : tensor<16xf32>) outs(%e4 : tensor<10x16xf32>) dimensions = [0]
  %e5 = tensor.empty() : tensor<10x16xf32>
  %z = linalg.add ins(%y, %bb2 : tensor<10x16xf32>, tensor<10x16xf32>) outs(%e5 : tensor<10x16xf32>) -> tensor<10x16xf32>
  %zs = shard.shard %z to %rows : tensor<10x16xf32>
  return %zs : tensor<10x16xf32>
}
