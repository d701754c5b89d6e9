//===- BackwardPasses.h - The backward pass ---------------------*- C++ -*-===//
//
// --shardlin-generate-backward (BackwardPasses.td, docs/training.md).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_DIALECT_SHARDLIN_TRANSFORMS_BACKWARDPASSES_H
#define SHARDLIN_DIALECT_SHARDLIN_TRANSFORMS_BACKWARDPASSES_H

#include "shardlin/Dialect/Shardlin/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::shardlin {

/// The `recompute` option: which forward values the backward recomputes
/// rather than takes from the forward.
enum class RecomputeOption { Auto, Always, Never };

/// createGenerateBackward(options): a module pass.
/// registerShardlinBackwardPasses(): its command-line registration.
#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "shardlin/Dialect/Shardlin/Transforms/BackwardPasses.h.inc"

} // namespace mlir::shardlin

#endif
