//===- LowerShardedLinear.h - Lowering entry points for embedders -*- C++ -*-===//
//
// For pipelines that want the lowering patterns without the pass.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_DIALECT_SHARDLIN_TRANSFORMS_LOWERSHARDEDLINEAR_H
#define SHARDLIN_DIALECT_SHARDLIN_TRANSFORMS_LOWERSHARDEDLINEAR_H

#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"
#include "shardlin/Dialect/Shardlin/Transforms/LoweringOptions.h"

#include "mlir/IR/PatternMatch.h"

#include <vector>

namespace mlir::shardlin {

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
