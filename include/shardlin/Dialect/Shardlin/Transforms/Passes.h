//===- Passes.h - The lowering pass -----------------------------*- C++ -*-===//
//
// --shardlin-lower-sharded-linear (Passes.td), documented and accepted as
// --lower-sharded-linear. Declarations only: the dialects the pass works on
// are the .cpp's business, so including this header costs a user nothing
// but mlir/Pass/Pass.h.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_DIALECT_SHARDLIN_TRANSFORMS_PASSES_H
#define SHARDLIN_DIALECT_SHARDLIN_TRANSFORMS_PASSES_H

#include "shardlin/Dialect/Shardlin/Transforms/LoweringOptions.h"

#include "mlir/Pass/Pass.h"

#include <string>
#include <vector>

namespace mlir::shardlin {

/// createLowerShardedLinear(options): the pass, on one func.func; add it as
/// `pm.addNestedPass<func::FuncOp>(createLowerShardedLinear())`.
#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "shardlin/Dialect/Shardlin/Transforms/Passes.h.inc"

/// The pass's name on command lines, and the spelling the design documents
/// (an alias that command lines and textual pipelines accept alike).
inline constexpr llvm::StringLiteral kLowerShardedLinearArg =
    "shardlin-lower-sharded-linear";
inline constexpr llvm::StringLiteral kLowerShardedLinearAlias =
    "lower-sharded-linear";

/// Registers the lowering for command lines: `--shardlin-lower-sharded-linear`
/// and its alias `--lower-sharded-linear` (nested implicitly on a module).
void registerShardlinPasses();

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
