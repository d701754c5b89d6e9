//===- Passes.h - shardlin passes -------------------------------*- C++ -*-===//
#ifndef SHARDLIN_DIALECT_SHARDLIN_TRANSFORMS_PASSES_H
#define SHARDLIN_DIALECT_SHARDLIN_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Pass/Pass.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"
#include "shardlin/Dialect/Shardlin/Transforms/LowerShardedLinear.h"

namespace mlir::shardlin {

/// createLowerShardedLinear(options): the pass, on one FunctionOpInterface
/// op; add it as `pm.addNestedPass<func::FuncOp>(...)`.
#define GEN_PASS_DECL
#include "shardlin/Dialect/Shardlin/Transforms/Passes.h.inc"

/// registerShardlinPasses(): the command-line entries of PassRegistration.td
/// (`lower-sharded-linear` runs the pass on every function of the op it is
/// scheduled on, so that it also works on a module).
#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "shardlin/Dialect/Shardlin/Transforms/PassRegistration.h.inc"

} // namespace mlir::shardlin

#endif
