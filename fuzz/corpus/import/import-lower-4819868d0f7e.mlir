// The upstream-form cases of Inputs/upstream (docs/interop.md's table),
// imported and lowered by `shardlin-opt --lower-sharded-linear`, which runs
// the import first when a module holds a shard.grid. The collectives are
// the cheapest correct ones: no all_gather of a replicated x, an
// all_reduce for a K split with a replicated result, a reduce_scatter for a
// sequence-sharded one, and for an MLP, SwiGLU or bf16 block with
// sequence-sharded activations one all_gather and one reduce_scatter.
//
// A replicated x, the weight split on N, a replicated result: the rank's
// features of x, then one all_gather of the result's features.
// COLREP: func.func
// COLREP-NOT: shardlin.all_gather %arg0
// COLREP: shardlin.gemm %arg0,
// COLREP-NEXT: shardlin.all_gather %{{.*}} along <dim = 1, placements = [0, 1, 2, 3]> : tensor<8x3xf32> -> tensor<8x12xf32>
// COLREP-NOT: shardlin.all_
//
// UNEVEN: shardlin.all_gather %{{.*}} along <dim = 1, placements = [0, 1, 2, 3]> : tensor<8x?xf32> -> tensor<8x10xf32>
// EMPTY: shardlin.all_gather %{{.*}} along <dim = 1, placements = [0, 1, 2, 3], bounds = [0, 4, 4, 8, 10]> : tensor<8x?xf32> -> tensor<8x10xf32>
//
// x split along its features, the weight along K, a replicated result:
// the partial sums, one all_reduce.
// ROWREP: shardlin.gemm
// ROWREP-NEXT: shardlin.all_reduce %{{.*}} world_size = 4 : tensor<8x12xf32>
// ROWREP-NOT: shardlin.all_gather
// ROWREP-NOT: shardlin.all_to_all
//
// The same with a sequence-sharded result: one reduce_scatter.
// ROWSEQ: shardlin.gemm
// ROWSEQ-NEXT: shardlin.reduce_scatter %{{.*}} along <dim = 0, placements = [0, 1, 2, 3]> : tensor<8x12xf32> -> tensor<2x12xf32>
// ROWSEQ-NOT: shardlin.all_
//
// A sequence-sharded x, the weight split on N: shardlin's col-wise
// algorithm on each rank's rows.
// COLSEQ: shardlin.all_gather
// COLSEQ: shardlin.gemm
// COLSEQ: shardlin.all_to_all
//
// ROWSEQX: shardlin.all_to_all
// ROWSEQX: shardlin.gemm
// ROWSEQX: shardlin.reduce_scatter
//
// Megatron's MLP and a SwiGLU on a replicated x: local GEMMs and the chain
// on each rank's features, one all_reduce.
// MLPREP-NOT: shardlin.all_gather
// MLPREP-NOT: shardlin.all_to_all
// MLPREP-NOT: shardlin.reduce_scatter
// MLPREP: shardlin.all_reduce
// MLPREP-NOT: shardlin.all_reduce
//
// Sequence-sharded blocks fuse: one all_gather, one reduce_scatter.
// BLOCK: shardlin.all_gather
// BLOCK-NOT: shardlin.all_gather
// BLOCK: strategy = "fused"
// BLOCK-NOT: shardlin.all_to_all
// BLOCK: shardlin.reduce_scatter
// BLOCK-NOT: shardlin.all_
//
// NOOFFSETS: error: tensor dim 1 of 'tensor<16x10xf32>' (10 elements) is split over the 4 devices of grid @grid without sharded_dims_offsets, but 4 does not divide 10

// A SwiGLU with sequence-sharded activations: gate and up share the
// all_gather.
shard.grid @grid(shape = 2)
func.func @swiglu_sequence(%x: tensor<4x16xf32>, %wg: tensor<16x24xf32>, %wu: tensor<16x24xf32>, %wd: tensor<24x16xf32>) -> tensor<4x16xf32> {
  %rows = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %sn = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %sk = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %rows : tensor<4x16xf32>
  %wgs = shard.shard %wg to %sn : tensor<16x24xf32>
  %wus = shard.shard %wu to %sn : tensor<16x24xf32>
  %wds = shard.shard %wd to %sk : tensor<24x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x24xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<4x24xf32>) -> tensor<4x24xf32>
  %g = linalg.matmul ins(%xs, %wgs : tensor<4x16xf32>, tensor<16x24xf32>) outs(%i : tensor<4x24xf32>) -> tensor<4x24xf32>
  %u = linalg.matmul ins(%xs, %wus : tensor<4x16xf32>, tensor<16x24xf32>) outs(%i : tensor<4x24xf32>) -> tensor<4x24xf32>
  %one = arith.constant dense<1.0> : tensor<4x24xf32>
  %ng = arith.negf %g : tensor<4x24xf32>
  %ex = math.exp %ng : tensor<4x24xf32>
  %den = arith.addf %one, %ex : tensor<4x24xf32>
  %silu = arith.divf %g, %den : tensor<4x24xf32>
  %h = arith.mulf %silu, %u : tensor<4x24xf32>
  %e2 = tensor.empty() : tensor<4x16xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%h, %wds : tensor<4x24xf32>, tensor<24x16xf32>) outs(%i2 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %ys = shard.shard %y to %rows : tensor<4x16xf32>
  return %ys : tensor<4x16xf32>
}
