//===- Passes.td - shardlin passes -------------------------*- tablegen -*-===//
#ifndef SHARDLIN_PASSES_TD
#define SHARDLIN_PASSES_TD

include "shardlin/Dialect/Shardlin/Transforms/LowerShardedLinearOptions.td"

def LowerShardedLinear : InterfacePass<"lower-sharded-linear", "mlir::FunctionOpInterface"> {
  let summary = LowerShardedLinearSummary;
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

    The pass runs on one function (any `FunctionOpInterface` op) at a time;
    the ops around the linears are left untouched. In C++, add it nested:
    `pm.addNestedPass<func::FuncOp>(createLowerShardedLinear(options))`.
    On the command line `--lower-sharded-linear` keeps working on a module:
    `registerShardlinPasses()` registers, under this name and with these
    options, a thin entry that runs the pass on every function of the op it
    is scheduled on (the module, or a function in
    `--pass-pipeline='builtin.module(func.func(lower-sharded-linear))'`).
  }];
  let options = LowerShardedLinearOptionList;
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numRowWise", "row-wise", "Linears lowered row-wise (K split)">,
    Statistic<"numColWise", "col-wise", "Linears lowered col-wise (N split)">,
    Statistic<"numSingleRank", "single-rank", "Linears lowered with W = 1">,
    Statistic<"numGatherWeight", "gather-weight", "Linears lowered by gathering the weight">
  ];
}

#endif // SHARDLIN_PASSES_TD
