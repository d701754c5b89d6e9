//===- Passes.td - shardlin passes -------------------------*- tablegen -*-===//
#ifndef SHARDLIN_PASSES_TD
#define SHARDLIN_PASSES_TD

include "mlir/Pass/PassBase.td"

def LowerShardedLinear : Pass<"lower-sharded-linear"> {
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

    Uneven and empty chunks and any placement order are handled by the chunk
    tables of the collectives (no reordering op is ever needed); N-D inputs
    are flattened to rows with `tensor.collapse_shape` and the result
    restored with `tensor.expand_shape`.

    Works on any op that holds `shardlin.linear` ops (usually a module or a
    function); the ops around them are left untouched.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numRowWise", "row-wise", "Linears lowered row-wise (K split)">,
    Statistic<"numColWise", "col-wise", "Linears lowered col-wise (N split)">,
    Statistic<"numSingleRank", "single-rank", "Linears lowered with W = 1">
  ];
}

#endif // SHARDLIN_PASSES_TD
