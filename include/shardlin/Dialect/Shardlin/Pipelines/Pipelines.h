//===- Pipelines.h - shardlin's pass pipelines ------------------*- C++ -*-===//
//
// `--shardlin-lower-to-llvm` for embedders: the same definition backs the
// command line (shardlin-opt), a compiler that embeds shardlin, and a
// launcher that JIT-compiles the result. See docs/native.md.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_DIALECT_SHARDLIN_PIPELINES_PIPELINES_H
#define SHARDLIN_DIALECT_SHARDLIN_PIPELINES_PIPELINES_H

#include "shardlin/Dialect/Shardlin/Transforms/Passes.h"

namespace mlir {
class DialectRegistry;
class OpPassManager;

namespace shardlin {

struct LowerToLLVMOptions {
  /// The options of the --lower-sharded-linear step (strategy, machine
  /// model, ...).
  LowerShardedLinearOptions lowering;
  /// Public functions whose results all have static shapes write them into
  /// buffers the caller passes, appended after the arguments
  /// (`buffer-results-to-out-params` with the results' allocations hoisted:
  /// the op that computes a result writes the caller's buffer directly),
  /// instead of returning new allocations. What a launcher that owns the
  /// result buffers wants (shardlin-run --jit, as the plan executor writes
  /// into its caller's buffers). A function with a dynamic result keeps
  /// returning its results. On the command line:
  /// `--shardlin-lower-to-llvm=results-as-out-params=true`.
  bool resultsAsOutParams = false;
};

/// Adds the passes that take a module of shardlin linears (or their lowered
/// SPMD ops) and upstream tensor ops to the LLVM dialect, with every
/// shardlin op a call of the runtime's C ABI (shardlin-c/Runtime.h) and
/// every public function an entry with a C interface
/// (`_mlir_ciface_<name>`). `pm` is a pass manager on the module.
void buildLowerToLLVMPipeline(OpPassManager &pm,
                              const LowerToLLVMOptions &options = {});

/// Registers, in `registry`, the dialects and the interfaces (bufferization,
/// deallocation, ...) that the pipeline's passes need on the ops of the
/// dialects it accepts: shardlin, func, arith, math, linalg, tensor, scf,
/// cf, memref, bufferization. Call it on the registry the MLIRContext is
/// created with.
void registerLowerToLLVMDialects(DialectRegistry &registry);

/// Registers `--shardlin-lower-to-llvm` and the passes it is made of that
/// are shardlin's (shardlin-localize-sharded, shardlin-prepare-native,
/// shardlin-convert-to-llvm), for command lines.
void registerShardlinPipelines();

} // namespace shardlin
} // namespace mlir

#endif
