//===- Passes.h - The backward pass -----------------------------*- C++ -*-===//
//
// --shardlin-generate-backward (Passes.td, docs/training.md).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_DIALECT_SHARDLIN_BACKWARD_PASSES_H
#define SHARDLIN_DIALECT_SHARDLIN_BACKWARD_PASSES_H

#include "shardlin/Dialect/Shardlin/Transforms/LoweringOptions.h"

#include "mlir/Pass/Pass.h"

namespace mlir::shardlin {

/// The `recompute` option: which forward values the backward recomputes
/// rather than takes from the forward.
enum class RecomputeOption { Auto, Always, Never };

/// createGenerateBackward(options): a module pass.
/// registerShardlinBackwardPasses(): its command-line registration.
#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "shardlin/Dialect/Shardlin/Backward/Passes.h.inc"

} // namespace mlir::shardlin

#endif
