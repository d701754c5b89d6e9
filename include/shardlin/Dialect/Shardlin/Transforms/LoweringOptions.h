//===- LoweringOptions.h - What the lowering is asked to do -----*- C++ -*-===//
//
// The lowering's options as values: the `strategy` option and the machine
// model the cost model reads. Plain data (no IR), so that the pass
// declarations (Passes.h) and the tools that take the options as flags need
// no dialect headers.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_DIALECT_SHARDLIN_TRANSFORMS_LOWERINGOPTIONS_H
#define SHARDLIN_DIALECT_SHARDLIN_TRANSFORMS_LOWERINGOPTIONS_H

#include "shardlin/Analysis/CostModel.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <optional>

namespace mlir::shardlin {

/// The value of a `strategy` option (the pass's and shardlin-run's): Auto
/// lets the cost model pick per linear; any other value forces the strategy
/// of the same number.
enum class StrategyOption : int {
  Auto = -1,
  Activations = static_cast<int>(::shardlin::Strategy::Activations),
  GatherWeight = static_cast<int>(::shardlin::Strategy::GatherWeight),
};

/// The values of a `strategy` option, for llvm::cl and pass options alike:
/// "auto", then each strategy by the name in ::shardlin::strategies().
llvm::cl::ValuesClass strategyOptionValues();

/// The strategy an option forces; nullopt for Auto.
std::optional<::shardlin::Strategy> forcedStrategy(StrategyOption option);

/// The option spelled `name` ("auto" or a strategy's name), or nullopt.
std::optional<StrategyOption> parseStrategyOption(llvm::StringRef name);

struct LoweringOptions {
  /// A forced strategy; nullopt lets the cost model choose.
  std::optional<::shardlin::Strategy> forced;
  ::shardlin::MachineModel machine;
  /// Cap on a strategy's peak extra memory per rank, bytes (0: none).
  uint64_t memoryCapBytes = 0;
  /// The rows per rank the cost model assumes for a linear whose batch
  /// dims are dynamic (their product is known only at run time).
  int64_t assumedRows = 1024;
  /// The row chunks of each fused block's pipeline: -1 the cost model's
  /// choice (chooseOverlapChunks), 0 or 1 none, N >= 2 that many.
  int overlapChunks = -1;
};

} // namespace mlir::shardlin

#endif // SHARDLIN_DIALECT_SHARDLIN_TRANSFORMS_LOWERINGOPTIONS_H
