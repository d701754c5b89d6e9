//===- LinearDecisions.h - Deciding how each linear is lowered --*- C++ -*-===//
//
// Internal to the Transforms library: what the cost model sees of a linear
// (its shape, layouts and chunks), the checks every lowering relies on, and
// the table of decisions that the pass fills and the patterns read
// (LowerShardedLinear.cpp, LowerLayouts.cpp, LowerShardedLinearPass.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_LIB_TRANSFORMS_LINEARDECISIONS_H
#define SHARDLIN_LIB_TRANSFORMS_LINEARDECISIONS_H

#include "shardlin/Dialect/Shardlin/Transforms/LowerShardedLinear.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"

#include <memory>
#include <mutex>
#include <tuple>

namespace mlir::shardlin::detail {

/// The cost model's layout of a dialect layout.
::shardlin::Layout toCostLayout(Layout layout);

/// The shape the cost model sees: B is the product of the batch dims (the
/// rows of a 2-D input), or with dynamic ones costRows.
::shardlin::LinearShape linearShape(LinearOp op, int64_t assumedRows);

/// Whether the input's batch dims include a dynamic one (B is then known
/// only at run time).
bool hasDynamicBatch(LinearOp op);

/// The most rows (the product of the batch dims) any rank's `x` has when
/// its dynamic batch dims are chunks of static dims: a sharded argument's
/// local_shard or a local_chunk (the largest chunk), through reshapes,
/// elementwise ops and linears with the default layouts (the import makes
/// a module's static rows split over ranks so). nullopt when a batch dim
/// has no static bound (rows of run-time size: assumed-rows).
std::optional<int64_t> staticRowBound(Value x);

/// The rows per rank the cost model sees for `op`: static, bounded by
/// staticRowBound, or `assumedRows`; `assumed` says which.
int64_t costRows(LinearOp op, int64_t assumedRows, bool &assumed);

/// Fails if the sizes of `op` overflow 64-bit arithmetic once flattened and
/// stacked over ranks (with a diagnostic when `emitErrors`). Every other
/// size computation of the lowering relies on this check. With dynamic
/// batch dims, the static ones are checked, and the cost model's sizes
/// with `assumedRows` rows.
LogicalResult checkSizes(LinearOp op, bool emitErrors, int64_t assumedRows);

/// What deciding a linear gives, fitting or not: every applicable
/// strategy's cost and, if one fits the memory cap, the chosen one.
struct Outcome {
  bool fits = false;
  LoweringDecision decision; // strategy and cost are set only if fits
};

/// Decides `op` (W >= 2) under `options`. A forced strategy that does not
/// apply to the linear's layouts (gather-weight of a features input or
/// result) gives way to the cost model's choice among those that do.
Outcome decide(LinearOp op, const LoweringOptions &options);

/// The diagnostic of a linear for which no strategy fits the memory cap.
void reportNoFit(LinearOp op, const LoweringOptions &options,
                 const LoweringDecision &d);

/// The decisions of one pattern set, each made once and recorded: the pass
/// decides every linear before rewriting, and the patterns read what it
/// recorded; patterns used without the pass decide on first match.
///
/// A decision depends only on the linear's types, its attributes (weight
/// storage, layouts) and the options, so it is recorded by those. Types and
/// attributes live as long as the context, so a key cannot come to name
/// another linear, as the address of an erased op could. One frozen pattern
/// set may lower several functions on several threads at once, hence the
/// lock.
class DecisionTable {
public:
  /// A linear's recorded outcome, or nullopt if its sizes overflow (see
  /// checkSizes); then nothing about it may be computed.
  using Entry = std::optional<Outcome>;

  explicit DecisionTable(const LoweringOptions &options) : options(options) {}

  /// The outcome for `op` (W >= 2), decided on the first request for its
  /// key. Emits no diagnostic.
  Entry get(LinearOp op);

private:
  /// The types, the attributes, and the rows bound (staticRowBound, or -1),
  /// which the input's type alone does not give.
  using Key = std::tuple<Type, Type, Attribute, int64_t>;
  const LoweringOptions options;
  std::mutex mutex;
  llvm::DenseMap<Key, Entry> entries;
};

/// Base of the multi-rank strategies: matches only the linears for which
/// `Kind` was decided. The decision is the one recorded in the table shared
/// by every pattern of the set (and by the pass), so a linear is decided
/// once, however many patterns look at it.
template <::shardlin::Strategy Kind>
struct StrategyPattern : OpRewritePattern<LinearOp> {
  StrategyPattern(MLIRContext *ctx, std::shared_ptr<DecisionTable> decisions)
      : OpRewritePattern<LinearOp>(ctx), decisions(std::move(decisions)) {}

  /// The decision if this strategy is the one chosen for `op`.
  std::optional<LoweringDecision> chosen(LinearOp op) const {
    if (op.getWeightType().getNumRanks() == 1)
      return std::nullopt;
    // Diagnostics were emitted by the pass before rewriting. Pipelines that
    // use the patterns alone may not have checked: a linear whose sizes
    // overflow, or for which no strategy fits, then does not match.
    DecisionTable::Entry e = decisions->get(op);
    if (!e || !e->fits || e->decision.strategy != Kind)
      return std::nullopt;
    return e->decision;
  }

  std::shared_ptr<DecisionTable> decisions;
};

/// Records the decision on the GEMM of a lowered linear, so that the output
/// IR says which strategy was used and what it was predicted to cost
/// (`local` for W = 1, when `d` is null).
void annotate(Operation *gemm, const LoweringDecision *d);

/// Every lowering pattern (LowerShardedLinear.cpp), all reading `table`.
void populateLinearPatterns(RewritePatternSet &patterns,
                            const std::shared_ptr<DecisionTable> &table);

/// Adds the patterns of the non-default layouts (LowerLayouts.cpp) that
/// emit `strategy`.
void addLayoutPatterns(::shardlin::Strategy strategy,
                       RewritePatternSet &patterns,
                       const std::shared_ptr<DecisionTable> &table);

} // namespace mlir::shardlin::detail

#endif
