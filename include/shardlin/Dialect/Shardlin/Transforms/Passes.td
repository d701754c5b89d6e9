//===- Passes.td - shardlin passes -------------------------*- tablegen -*-===//
#ifndef SHARDLIN_PASSES_TD
#define SHARDLIN_PASSES_TD

include "shardlin/Dialect/Shardlin/Transforms/LowerShardedLinearOptions.td"

// A pass on func.func, as upstream's shard-partition runs per function: a
// pass that names its op is nested implicitly by command lines (so that
// `shardlin-opt m.mlir --lower-sharded-linear` runs it on every function of
// the module) and explicitly in C++ (`pm.addNestedPass<func::FuncOp>`).
def LowerShardedLinear : Pass<"lower-sharded-linear", "::mlir::func::FuncOp"> {
  let summary = "Lower shardlin.linear into explicit collectives and GEMMs";
  let description = [{
    Rewrites every `shardlin.linear` into an SPMD program of
    `shardlin.local_shard`, collectives (`all_gather`, `all_to_all`,
    `reduce_scatter`), one `shardlin.gemm` and reshapes, chosen by the weight's
    sharding dim:

    - Row-wise (dim 1, K split): `all_to_all` sends every rank the columns of
      every rank's input that match its K chunk, stacked by source rank; one
      GEMM computes every rank's partial product; `reduce_scatter` sums them
      and returns each rank its own rows; the bias is added once, after the
      reduction.
    - Col-wise (dim 0, N split): `all_gather` stacks every rank's input; one
      GEMM (with the rank's bias chunk fused) computes the rank's features of
      every rank's output; `all_to_all` returns each rank its rows, placing
      the block from rank s at the N offset of the chunk s holds.
    - W = 1: one GEMM, no collectives.

    A second strategy exists for both dims, gathering the weight: an
    `all_gather` of the weight's chunks, then one local GEMM with the bias
    fused, and no output communication. Moving activations costs about
    B*K + (W-1)*B*N (row-wise) or (W-1)*B*(K + N/W) (col-wise) elements per
    rank; gathering the weight costs N*K*(W-1)/W. Small B favours moving
    activations, large B favours gathering the weight.

    With `strategy=auto` (the default) a cost model picks, per linear, the
    strategy with the lowest estimated time: exact bytes each rank sends and
    receives (uneven chunks included), a per-message latency, a per-rank
    bandwidth and a GEMM rate, subject to an optional cap on the extra memory
    per rank. `strategy=activations` or `strategy=gather-weight` forces one.
    The GEMM of every lowered linear carries a `shardlin.lowering` attribute
    with the chosen strategy, its bytes sent and received per rank, its peak
    extra memory per rank and its estimated time; `explain=true` also emits a
    remark comparing every strategy.

    Uneven and empty chunks and any placement order are handled by the chunk
    tables of the collectives (no reordering op is ever needed); N-D inputs
    are flattened to rows with `tensor.collapse_shape` and the result
    restored with `tensor.expand_shape`.

    Dynamic batch dims (`tensor<?x?x19xf32>`) stay dynamic: the rows, the
    stacked W*B rows and every value computed from them are `?`, the result
    is restored with `tensor.expand_shape` whose output sizes are
    `tensor.dim`s of the input, and the runtime takes the sizes from each
    rank's input (they may differ between ranks, under every strategy). The
    cost model, which needs a row count, assumes `assumed-rows` rows per rank
    for such a linear; the `shardlin.lowering` attribute then records
    `assumed_rows`, and `explain=true` says so.

    Blocks: a row-wise linear whose input is computed, through rank-local
    elementwise ops only (arith/math on tensors, linalg ops with parallel
    iterators), from col-wise linears on one input whose weights' chunks
    match its own (same chunk spec of the shared features F) is lowered
    with them as one block, as Megatron-LM does under sequence parallelism:
    `all_gather` of the input, the col-wise GEMM(s) on the rank's F chunk
    (bias chunk fused), the elementwise ops as one `linalg.generic` on that
    (W*B) x f_r block, the row-wise GEMM, `reduce_scatter`, the row-wise bias
    once. Each rank sends 2(W-1)*B*H elements (for an H -> F -> H MLP)
    and no `all_to_all`. `strategy=activations` fuses every such block;
    `auto` fuses when the cost model estimates the block cheaper than the
    separate lowerings; `gather-weight` and `fuse-blocks=false` do not.
    A chain that reads a vector by broadcast (which may differ between
    ranks) is not fused. `explain=true` says for each row-wise linear that
    such a chain reaches what was chosen, or why it was not fused; the
    fused GEMMs carry `shardlin.lowering = {strategy = "fused", ...}`.

    The pass runs on one `func.func` at a time; the ops around the linears
    are left untouched. In C++, add it nested:
    `pm.addNestedPass<func::FuncOp>(createLowerShardedLinear(options))`. On
    the command line, `--lower-sharded-linear[=options]` on a module runs it
    on every function (command lines nest passes implicitly), as does
    `--pass-pipeline='builtin.module(func.func(lower-sharded-linear))'`.
    shardlin-run takes the same options as flags of its own
    (`--strategy=...`, `--latency-us=...`), read from this declaration.
  }];
  let options = LowerShardedLinearOptionList;
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect"];
  let statistics = [
    Statistic<"numRowWise", "row-wise", "Linears lowered row-wise (K split)">,
    Statistic<"numColWise", "col-wise", "Linears lowered col-wise (N split)">,
    Statistic<"numSingleRank", "single-rank", "Linears lowered with W = 1">,
    Statistic<"numGatherWeight", "gather-weight", "Linears lowered by gathering the weight">,
    Statistic<"numFusedBlocks", "fused-blocks", "Col-wise -> elementwise -> row-wise blocks fused">
  ];
}

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

#endif // SHARDLIN_PASSES_TD
