//===- BackwardPasses.td - shardlin's backward pass --------*- tablegen -*-===//
//
// --shardlin-generate-backward (docs/training.md). In a file of its own, with
// its own registration (registerShardlinBackwardPasses), so that the pass
// list of Passes.td and the command-line entries of PassRegistration.td stay
// as they are.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_BACKWARDPASSES_TD
#define SHARDLIN_BACKWARDPASSES_TD

include "shardlin/Dialect/Shardlin/Transforms/LowerShardedLinearOptions.td"

def GenerateBackward : Pass<"shardlin-generate-backward", "::mlir::ModuleOp"> {
  let summary = "Add the backward function of each public function";
  let description = [{
    For each public function `@f` with a body, made of `shardlin.linear`,
    the lowered shardlin ops, reshapes and the rank-local elementwise ops
    shardlin runs (GELU, SiLU, ReLU, SwiGLU's product, residual adds, ...),
    adds a public function `@f_backward`:

    - arguments: `@f`'s arguments, then the gradient of each of `@f`'s
      results (of the result's type), then, when the forward saves
      activations, the saved values (below);
    - results: the gradient of each of `@f`'s arguments, of its type. The
      loss is the sum over ranks of each rank's loss, so a plain (rank-local)
      tensor's gradient is its rank's own; a sharded weight's gradient has
      the weight's sharded type, each rank holding the gradient of its own
      chunk summed over every rank's rows (`shardlin.from_local`); a
      replicated argument (a bias, or what a bias is computed from: a
      linear's bias or, in lowered IR, a bias_add's or gemm's bias or a
      local_chunk's source) gets the full vector on every rank, summed over
      all ranks.

    The backward is reverse mode over the program `--lower-sharded-linear`
    makes of `@f` (run here, with this pass's lowering options, on a copy),
    so it is the dual of the lowering chosen, op by op, with the same chunk
    specs: an all_gather becomes a reduce_scatter, a reduce_scatter an
    all_gather, an all_to_all the inverse all_to_all, a GEMM two GEMMs with
    other transposes; a bias's gradient is a `shardlin.sum_rows`, summed
    over ranks by an all_gather of chunks (col-wise), with no communication
    where every rank gathered the rows (row-wise, fused blocks), or by a
    `shardlin.all_reduce` (gathered weights). A fused MLP or SwiGLU block's
    backward sends 2(W-1)·B·H elements per rank, plus (W-1)·B·H if X is
    gathered again, plus its col-wise biases' chunks. Elementwise ops get
    the exact derivative of the expression as written, composed from each
    scalar op's (ReLU'(0) = 0); f16 and bf16 are computed in f32 and
    rounded once per stored tensor, and gradients still to be summed over
    ranks stay f32 until then.

    Recompute or save: the backward needs forward values that
    communication or a GEMM produced (the gathered X of a block and its
    pre-activations, a row-wise layer's exchanged input, a gathered
    weight). Each is either recomputed in `@f_backward` or saved: then a
    public `@f_forward_saving` (the lowered `@f` returning those values
    after its own results) computes them and `@f_backward` takes them as
    its last arguments (each marked `shardlin.saved`). `recompute=auto`
    saves every such value when `memory-cap-mib` is 0; with a cap it saves
    those that save the most estimated time per byte while their total
    bytes per rank fit the cap, and recomputes the others;
    `recompute=always` and `recompute=never` force either. `explain=true`
    says, for each value, which and why, with its bytes and the estimated
    cost of recomputing it.

    Anything else gets a located error naming the op, as does a bias
    computed from values that may differ between ranks. Backward functions
    are already lowered: `--lower-sharded-linear` afterwards lowers `@f`
    and leaves them as they are. `functions=f,g` limits the pass to those
    functions.
  }];
  // The lowering's options, but `explain`, which says here what the
  // backward saves or recomputes (the lowering of @f explains itself when
  // --lower-sharded-linear runs).
  let options = !listconcat(
      !filter(o, LowerShardedLinearOptionList, !ne(o.argument, "explain")), [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark per forward value the backward needs, saying "
           "whether it is saved or recomputed and why (default false)">,
    Option<"recompute", "recompute", "::mlir::shardlin::RecomputeOption",
           /*default=*/"::mlir::shardlin::RecomputeOption::Auto",
           "Forward values the backward needs: auto (the cost model and "
           "memory-cap-mib decide), always (recompute them) or never (save "
           "them in @f_forward_saving)",
           [{::llvm::cl::values(
               clEnumValN(::mlir::shardlin::RecomputeOption::Auto, "auto",
                          "the cost model decides"),
               clEnumValN(::mlir::shardlin::RecomputeOption::Always,
                          "always", "recompute every value"),
               clEnumValN(::mlir::shardlin::RecomputeOption::Never, "never",
                          "save every value"))}]>,
    ListOption<"functions", "functions", "std::string",
               "The functions to differentiate (default: every public "
               "function with a body)">,
  ]);
  // The shardlin dialect too: a function of elementwise ops alone has none
  // of its ops, and its backward may (sum_rows of a broadcast vector).
  let dependentDialects = ["::mlir::shardlin::ShardlinDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect"];
  let statistics = [
    Statistic<"numBackward", "backward-functions", "Backward functions generated">,
    Statistic<"numSaved", "saved-values", "Forward values saved for the backward">,
    Statistic<"numRecomputed", "recomputed-values", "Costly forward values recomputed in the backward">
  ];
}

#endif // SHARDLIN_BACKWARDPASSES_TD
