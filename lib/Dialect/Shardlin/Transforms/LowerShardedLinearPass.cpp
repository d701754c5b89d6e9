//===- LowerShardedLinearPass.cpp - The --lower-sharded-linear pass ------===//
//
// The pass on one function: checks every linear's sizes, fuses the blocks,
// decides every other linear once (reporting what cannot be lowered) and
// applies the patterns of LowerShardedLinear.cpp and LowerLayouts.cpp; and
// its command-line entry, which runs it on every function of a module.
//
//===----------------------------------------------------------------------===//

#include "shardlin/Dialect/Shardlin/Transforms/ImportShard.h"
#include "shardlin/Dialect/Shardlin/Transforms/Passes.h"

#include "BlockFusion.h"
#include "LinearDecisions.h"
#include "PassOptions.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "llvm/Support/FormatVariadic.h"

#include <memory>

namespace mlir::shardlin {
#define GEN_PASS_DEF_LOWERSHARDEDLINEAR
#include "shardlin/Dialect/Shardlin/Transforms/Passes.h.inc"
#define GEN_PASS_DEF_LOWERSHARDEDLINEARONFUNCTIONS
#include "shardlin/Dialect/Shardlin/Transforms/PassRegistration.h.inc"
} // namespace mlir::shardlin

using namespace mlir;
using namespace mlir::shardlin;
namespace support = mlir::shardlin::detail;
using support::DecisionTable;

namespace {
using support::checkOptionString;
using support::optionValues;
using support::toLoweringOptions;

struct LowerShardedLinearPass
    : mlir::shardlin::impl::LowerShardedLinearBase<LowerShardedLinearPass> {
  using LowerShardedLinearBase::LowerShardedLinearBase;
  friend LowerShardedLinearOptions
  support::optionValues<>(const LowerShardedLinearPass &);
  friend LogicalResult support::checkOptionString<>(
      LowerShardedLinearPass &, StringRef,
      function_ref<LogicalResult(const Twine &)>);

  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    if (failed(checkOptionString(*this, options, errorHandler)))
      return failure();
    return LowerShardedLinearBase::initializeOptions(options, errorHandler);
  }

  LogicalResult initialize(MLIRContext *ctx) override {
    FailureOr<LoweringOptions> checked =
        toLoweringOptions(ctx, optionValues(*this));
    if (failed(checked))
      return failure();
    options = *checked;
    decisions = std::make_shared<DecisionTable>(options);
    RewritePatternSet set(ctx);
    support::populateLinearPatterns(set, decisions);
    patterns = std::move(set);
    return success();
  }

  void explainDecision(LinearOp op, const LoweringDecision &d) {
    InFlightDiagnostic r = op.emitRemark();
    r << "lowered " << (op.splitsK() ? "row-wise" : "col-wise");
    if (!op.hasDefaultLayouts())
      r << " (layouts " << stringifyLayout(op.getInputLayout()) << " -> "
        << stringifyLayout(op.getResultLayout()) << ")";
    r << " with " << ::shardlin::strategyName(d.strategy) << " (";
    if (!options.forced)
      r << "cheapest estimate";
    else if (*options.forced == d.strategy)
      r << "forced";
    else
      r << "cheapest estimate: the forced "
        << ::shardlin::strategyName(*options.forced)
        << " does not apply to these layouts";
    r << ")";
    if (d.assumedRows > 0)
      r << " for " << d.assumedRows
        << " rows per rank (the batch dims are dynamic; option assumed-rows)";
    for (const ::shardlin::StrategyCost &c : d.candidates)
      r << "; " << ::shardlin::strategyName(c.strategy) << ": est. "
        << llvm::formatv("{0:F3}", c.estimatedUs).str() << " us, max "
        << c.maxBytesSent() << " bytes sent, max " << c.maxPeakExtraBytes()
        << " extra bytes per rank";
  }

  void runOnOperation() override {
    bool ok = true;
    // Every linear's sizes first: the block fusion and the decisions below
    // compute with them.
    getOperation()->walk([&](LinearOp op) {
      if (failed(support::checkSizes(op, /*emitErrors=*/true,
                                     options.assumedRows)))
        ok = false;
    });
    if (!ok)
      return signalPassFailure();

    // Blocks (col-wise -> elementwise -> row-wise) fused as one unit; the
    // linears of a fused block are gone before the per-linear decisions.
    if (fuseBlocks) {
      uint64_t fused = 0;
      support::fuseBlocks(getOperation(), options, explain, fused);
      numFusedBlocks += fused;
    }

    // Decide every other linear once, reporting what cannot be lowered;
    // the patterns then read the decisions recorded here.
    getOperation()->walk([&](LinearOp op) {
      ShardedType w = op.getWeightType();
      if (w.getNumRanks() == 1) {
        ++numSingleRank;
        return;
      }
      DecisionTable::Entry e = decisions->get(op);
      const LoweringDecision &d = e->decision; // Sizes checked above.
      if (!e->fits) {
        support::reportNoFit(op, options, d);
        ok = false;
        return;
      }
      if (explain)
        explainDecision(op, d);
      if (d.strategy == ::shardlin::Strategy::GatherWeight)
        ++numGatherWeight;
      else if (op.splitsK())
        ++numRowWise;
      else
        ++numColWise;
    });
    if (!ok)
      return signalPassFailure();

    walkAndApplyPatterns(getOperation(), patterns);

    // Every verified linear matches exactly one pattern; anything left is a
    // bug, reported as a diagnostic rather than silently passed on.
    getOperation()->walk([&](LinearOp op) {
      op.emitOpError() << "no lowering strategy applies to this linear";
      ok = false;
    });
    if (!ok)
      signalPassFailure();
  }

  FrozenRewritePatternSet patterns;
  LoweringOptions options;
  /// Shared with `patterns`.
  std::shared_ptr<DecisionTable> decisions;
};

/// `--lower-sharded-linear` on the command line: runs LowerShardedLinearPass,
/// with the same option values, on every function under (or equal to) the
/// op it is scheduled on, one after another in the order of the IR, as a
/// dynamic pipeline (PassRegistration.td says why).
struct LowerShardedLinearOnFunctionsPass
    : mlir::shardlin::impl::LowerShardedLinearOnFunctionsBase<
          LowerShardedLinearOnFunctionsPass> {
  using LowerShardedLinearOnFunctionsBase::LowerShardedLinearOnFunctionsBase;
  friend LowerShardedLinearOptions
  support::optionValues<>(const LowerShardedLinearOnFunctionsPass &);
  friend LogicalResult support::checkOptionString<>(
      LowerShardedLinearOnFunctionsPass &, StringRef,
      function_ref<LogicalResult(const Twine &)>);

  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    if (failed(checkOptionString(*this, options, errorHandler)))
      return failure();
    return LowerShardedLinearOnFunctionsBase::initializeOptions(options,
                                                                errorHandler);
  }

  LogicalResult initialize(MLIRContext *ctx) override {
    LowerShardedLinearOptions o = optionValues(*this);
    if (failed(toLoweringOptions(ctx, o)))
      return failure();
    functionPipeline = OpPassManager(OpPassManager::Nesting::Explicit);
    functionPipeline.addPass(createLowerShardedLinear(o));
    return success();
  }

  void runOnOperation() override {
    // An upstream-form module (a shard.grid) is imported first.
    if (auto module = dyn_cast<ModuleOp>(getOperation());
        module && hasShardGrid(module) && failed(importShard(module)))
      return signalPassFailure();
    SmallVector<FunctionOpInterface> functions;
    getOperation()->walk<WalkOrder::PreOrder>([&](FunctionOpInterface f) {
      functions.push_back(f);
      return WalkResult::skip(); // Its linears are lowered with it.
    });
    // Every function is lowered, or reports why not, before failing, as a
    // pass on the whole module would.
    bool ok = true;
    for (FunctionOpInterface f : functions)
      if (failed(runPipeline(functionPipeline, f)))
        ok = false;
    if (!ok)
      signalPassFailure();
  }

  OpPassManager functionPipeline;
};
} // namespace
