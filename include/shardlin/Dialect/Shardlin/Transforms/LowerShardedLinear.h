//===- LowerShardedLinear.h - Lowering entry points for embedders -*- C++ -*-===//
//
// For pipelines that want the lowering patterns without the pass.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_DIALECT_SHARDLIN_TRANSFORMS_LOWERSHARDEDLINEAR_H
#define SHARDLIN_DIALECT_SHARDLIN_TRANSFORMS_LOWERSHARDEDLINEAR_H

#include "mlir/IR/PatternMatch.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"

namespace mlir::shardlin {

/// Adds the patterns that rewrite shardlin.linear into collectives and GEMMs
/// (one per strategy; exactly one matches any verified linear).
void populateLowerShardedLinearPatterns(RewritePatternSet &patterns);

/// Emits a diagnostic and fails if `op` cannot be lowered (its sizes
/// overflow 64-bit arithmetic once flattened and stacked over ranks).
LogicalResult checkLowerable(LinearOp op);

} // namespace mlir::shardlin

#endif
