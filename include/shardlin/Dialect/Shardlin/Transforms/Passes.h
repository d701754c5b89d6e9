//===- Passes.h - shardlin passes -------------------------------*- C++ -*-===//
#ifndef SHARDLIN_DIALECT_SHARDLIN_TRANSFORMS_PASSES_H
#define SHARDLIN_DIALECT_SHARDLIN_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Pass/Pass.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"
#include "shardlin/Dialect/Shardlin/Transforms/LowerShardedLinear.h"

#include <string>
#include <vector>

namespace mlir::shardlin {

/// createLowerShardedLinear(options): the pass, on one func.func; add it as
/// `pm.addNestedPass<func::FuncOp>(createLowerShardedLinear())`.
/// registerShardlinPasses(): registers it for command lines
/// (`--lower-sharded-linear`, nested implicitly on a module).
#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "shardlin/Dialect/Shardlin/Transforms/Passes.h.inc"

/// One of the pass's options as another tool's flag (shardlin-run's): its
/// name, its description and its default value, as the pass declares them.
struct LoweringFlag {
  std::string name;
  std::string description;
  std::string defaultValue;
};

/// The pass's options, in declaration order, read from the pass itself.
std::vector<LoweringFlag> lowerShardedLinearFlags();

/// Parses `name=value ...` (space-separated, as the pass option string) as
/// the pass does, with its checks and messages: the options, or failure
/// with the message in `error`.
FailureOr<LowerShardedLinearOptions>
parseLowerShardedLinearOptions(StringRef options, std::string &error);

} // namespace mlir::shardlin

#endif
