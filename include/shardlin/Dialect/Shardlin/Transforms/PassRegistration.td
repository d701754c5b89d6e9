//===- PassRegistration.td - shardlin's command-line passes -*- tablegen -*-===//
//
// What registerShardlinPasses() registers for command lines such as
// shardlin-opt's. Not in the generated pass reference: it documents the
// passes of Passes.td, which these entries run.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_PASSREGISTRATION_TD
#define SHARDLIN_PASSREGISTRATION_TD

include "shardlin/Dialect/Shardlin/Transforms/LowerShardedLinearOptions.td"

// MLIR nests a pass added to a module's pass manager only when the pass
// names one op; an interface pass such as LowerShardedLinear is scheduled
// on the module itself and refused there. This op-agnostic entry keeps the
// command line `--lower-sharded-linear[=options]` working on a module: it
// runs LowerShardedLinear, with its own option values, on every
// FunctionOpInterface op it finds (the op it runs on, if it is one).
def LowerShardedLinearOnFunctions : Pass<"lower-sharded-linear"> {
  let summary = LowerShardedLinearSummary;
  let description = [{
    Runs `LowerShardedLinear` (Passes.td) on every function under, or equal
    to, the op it is scheduled on, as a dynamic pass pipeline. On a module
    that holds a `shard.grid` (the upstream global view), runs the import
    (`--shardlin-import-shard`) first.
  }];
  let options = LowerShardedLinearOptionList;
  // The dependent dialects of the pass it runs and of the import: a dynamic
  // pipeline may not load dialects, and an upstream-form module may hold no
  // shardlin op yet.
  let dependentDialects = ["::mlir::shardlin::ShardlinDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect"];
}

#endif // SHARDLIN_PASSREGISTRATION_TD
