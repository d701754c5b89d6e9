//===- Passes.td - shardlin passes -------------------------*- tablegen -*-===//
#ifndef SHARDLIN_PASSES_TD
#define SHARDLIN_PASSES_TD

include "shardlin/Dialect/Shardlin/Transforms/LowerShardedLinearOptions.td"

// A pass on func.func, as upstream's shard-partition runs per function: a
// pass that names its op is nested implicitly by command lines (so that
// `shardlin-opt m.mlir --lower-sharded-linear` runs it on every function of
// the module) and explicitly in C++ (`pm.addNestedPass<func::FuncOp>`).
def LowerShardedLinear : Pass<"shardlin-lower-sharded-linear", "::mlir::func::FuncOp"> {
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
    the command line, `--lower-sharded-linear[=options]` (the documented
    spelling, an alias of `--shardlin-lower-sharded-linear`) on a module runs
    it on every function (command lines nest passes implicitly), as does
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

#endif // SHARDLIN_PASSES_TD
