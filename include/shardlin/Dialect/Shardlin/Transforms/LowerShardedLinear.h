//===- LowerShardedLinear.h - Lowering entry points for embedders -*- C++ -*-===//
//
// For pipelines that want the lowering patterns without the pass.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_DIALECT_SHARDLIN_TRANSFORMS_LOWERSHARDEDLINEAR_H
#define SHARDLIN_DIALECT_SHARDLIN_TRANSFORMS_LOWERSHARDEDLINEAR_H

#include "mlir/IR/PatternMatch.h"
#include "shardlin/Analysis/CostModel.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"
#include "llvm/Support/CommandLine.h"

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

/// The strategy for one linear and what it costs (W >= 2).
struct LoweringDecision {
  ::shardlin::Strategy strategy = ::shardlin::Strategy::Activations;
  ::shardlin::StrategyCost cost;
  /// Every strategy's cost, chosen or not.
  std::vector<::shardlin::StrategyCost> candidates;
  /// For dynamic batch dims: the rows per rank the costs assume
  /// (LoweringOptions::assumedRows); 0 otherwise.
  int64_t assumedRows = 0;
};

/// Decides how `op` (with W >= 2) is lowered under `options`. Fails, with a
/// diagnostic, if no strategy fits the memory cap.
FailureOr<LoweringDecision> decideLowering(LinearOp op,
                                           const LoweringOptions &options);

/// Adds the patterns that rewrite shardlin.linear into collectives and GEMMs,
/// one per strategy; the decision above makes exactly one match any linear
/// that passes checkLowerable.
void populateLowerShardedLinearPatterns(RewritePatternSet &patterns,
                                        const LoweringOptions &options = {});

/// Emits a diagnostic and fails if `op` cannot be lowered under `options`:
/// its sizes overflow 64-bit arithmetic once flattened and stacked over
/// ranks, or no strategy fits the memory cap.
LogicalResult checkLowerable(LinearOp op, const LoweringOptions &options = {});

} // namespace mlir::shardlin

#endif
