//===- Passes.td - The upstream shard import --------------*- tablegen -*-===//
//
// --shardlin-import-shard: upstream `shard` + `linalg` (the global view)
// into shardlin IR. A conversion in upstream's sense (ShardToShardlin), in
// the folder a reader of lib/Conversion/<From>To<To>/ would look in.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_CONVERSION_SHARDTOSHARDLIN_PASSES_TD
#define SHARDLIN_CONVERSION_SHARDTOSHARDLIN_PASSES_TD

include "mlir/Pass/PassBase.td"

def ImportShard : Pass<"shardlin-import-shard", "::mlir::ModuleOp"> {
  let summary = "Import upstream shard + linalg (the global view) into shardlin IR";
  let description = [{
    Rewrites a module in the upstream global view, the form compiler
    pipelines produce (`linalg` / `arith` / `math` on whole tensors, with
    the tensor parallelism stated by `shard.grid`, `shard.sharding` and
    `shard.shard`), into shardlin's SPMD form: every `linalg.matmul` whose
    weight is split becomes a `shardlin.linear` on a
    `!shardlin.sharded` weight, and every other value becomes the calling
    rank's part of it (docs/interop.md).

    - **The grid**: one `shard.grid` per module, static. 1-D: its size is
      the world size W, device i of the grid is rank i. 2-D, DP x TP: axis
      0 is data-parallel and may split only dim 0 (the batch) of the
      arguments and what is computed from them row by row, as the first of
      that dim's axes; every replica holds as many rows, split the same way
      over axis 1. The module is first rewritten into one replica's (the
      batch divided by DP, a 1-D grid of TP) and gets
      `shardlin.data_parallel = DP`, which `shardlin-run` runs as DP
      replicas (docs/interop.md, "2-D grids"). A grid of more axes is
      rejected with a diagnostic that names it.
    - **Shardings**: `split_axes` splitting one dim per tensor, with
      `sharded_dims_offsets` (explicit chunk boundaries, empty chunks
      allowed: `#shardlin.chunk<..., bounds = [...]>`) or without (an even
      split; a size W does not divide needs offsets, because the shard
      dialect's types size every shard dimSize / W). `shard.shard` on
      arguments, results and intermediate values, in both forms; the
      sharding of a value without one follows from its operands
      (elementwise ops keep it, a linear's result follows from its input and
      weight), and a value with none is replicated. Conflicting shardings of
      an op's operands are reported at the op.
    - **Linears**: `linalg.matmul` with the weight K x N, or N x K through a
      transposing `indexing_maps` or a `linalg.transpose`; a bias added by a
      broadcast `linalg.generic`, `linalg.broadcast` + `linalg.add`, or as
      the matmul's broadcast init; N-D activations through
      `tensor.collapse_shape` / `expand_shape` around the matmul. An
      activation split along its rows (batch or sequence) is the rank's
      rows, a replicated one is the same on every rank (never gathered),
      one split along its features feeds a K-split weight of the same
      chunks; the result's layout is the one the module states where a
      linear can produce it (`layouts ... -> ...` on the linear: an
      all_reduce for a replicated result of a K split, a reduce_scatter for
      a row-split one).
    - **Elementwise ops** (arith, math, `linalg.generic`,
      `linalg.elementwise`, ..., `arith.extf` / `truncf`) are computed on the
      rank's part of their operands, so that MLP and SwiGLU blocks import as
      blocks and fuse in `--lower-sharded-linear`.
    - **Signature**: a split argument or result becomes a
      `!shardlin.sharded` of the global tensor (the rank's part through
      `shardlin.local_shard` / `shardlin.from_local`), a replicated one
      stays a tensor.

    Anything else gets one located diagnostic naming the op or attribute and
    what is supported; the function is then left as it was and the pass
    fails. A module without a `shard.grid` is left unchanged.
    `shardlin-opt --lower-sharded-linear` runs this pass first when the
    module holds a grid; embedders call `importShard(module)`
    (ImportShard.h).
  }];
  let dependentDialects = ["::mlir::shardlin::ShardlinDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect"];
}

#endif // SHARDLIN_CONVERSION_SHARDTOSHARDLIN_PASSES_TD
