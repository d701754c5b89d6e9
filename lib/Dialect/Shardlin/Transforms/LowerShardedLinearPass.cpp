//===- LowerShardedLinearPass.cpp - The lowering pass --------------------===//
//
// The pass on one function: checks every linear's sizes, fuses the blocks,
// decides every other linear once (reporting what cannot be lowered) and
// applies the patterns of LowerShardedLinear.cpp and LowerLayouts.cpp; and
// its options as other tools' flags (lowerShardedLinearFlags).
//
//===----------------------------------------------------------------------===//

#include "shardlin/Dialect/Shardlin/Transforms/Passes.h"

#include "AttentionBlock.h"
#include "BlockChunks.h"
#include "BlockFusion.h"
#include "LinearDecisions.h"
#include "SimplifyCollectives.h"
#include "shardlin/Dialect/Shardlin/Transforms/PassOptions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "llvm/Support/FormatVariadic.h"

#include <memory>

namespace mlir::shardlin {
#define GEN_PASS_DEF_LOWERSHARDEDLINEAR
#include "shardlin/Dialect/Shardlin/Transforms/Passes.h.inc"
} // namespace mlir::shardlin

using namespace mlir;
using namespace mlir::shardlin;
namespace support = mlir::shardlin::detail;
using support::DecisionTable;

namespace {
using support::checkOptionString;
using support::initLoweringOptions;
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
  template <typename PassT, typename Fn>
  friend void support::forEachOption(PassT &, Fn &&);

  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    if (failed(checkOptionString(*this, options, errorHandler)))
      return failure();
    return LowerShardedLinearBase::initializeOptions(options, errorHandler);
  }

  LogicalResult initialize(MLIRContext *ctx) override {
    if (failed(initLoweringOptions(optionValues(*this), ctx, options)))
      return failure();
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
    // Chunks of whole blocks (heads) as explicit bounds: what the decisions,
    // the patterns and everything downstream read.
    if (failed(support::materializeBlockChunks(getOperation())))
      return signalPassFailure();
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

    // Attention blocks ({q, k, v} -> rope -> attention -> O) as one unit:
    // their rank-local attention runs on the rank's heads.
    if (fuseBlocks) {
      uint64_t fused = 0;
      support::fuseAttentionBlocks(getOperation(), explain, fused);
      numFusedBlocks += fused;
    }

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
      return signalPassFailure();

    // Where the linears' collectives and the import's reshards meet, fewer
    // or cheaper ones that give every rank the same values.
    support::simplifyCollectives(getOperation());
    support::reportStatedReshards(getOperation(), explain);
  }

  FrozenRewritePatternSet patterns;
  LoweringOptions options;
  /// Shared with `patterns`.
  std::shared_ptr<DecisionTable> decisions;
};

} // namespace

void mlir::shardlin::registerShardlinPasses() {
  registerShardlinTransformsPasses();
  // The design's spelling, as a pipeline of the one pass: the same options,
  // parsed and checked by the pass itself; added to the enclosing pass
  // manager, which nests it on functions as it would the pass.
  registerPassPipeline(
      kLowerShardedLinearAlias,
      "Lower shardlin.linear into explicit collectives and GEMMs (the "
      "documented spelling of --shardlin-lower-sharded-linear; the same "
      "options)",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        auto pass = std::make_unique<LowerShardedLinearPass>();
        if (failed(pass->initializeOptions(text, errorHandler)))
          return failure();
        pm.addPass(std::move(pass));
        return success();
      },
      // Its options are the pass's, listed under the pass's own name.
      [](function_ref<void(const mlir::detail::PassOptions &)>) {});
}

std::vector<LoweringFlag> mlir::shardlin::lowerShardedLinearFlags() {
  // The defaults as the pass prints its options:
  // "lower-sharded-linear{assumed-rows=1024 bandwidth-gbps=... }".
  LowerShardedLinearPass pass;
  std::string text;
  llvm::raw_string_ostream os(text);
  pass.printAsTextualPipeline(os);
  llvm::StringMap<std::string> defaults;
  StringRef body = StringRef(text).split('{').second.rsplit('}').first;
  SmallVector<StringRef> pairs;
  body.split(pairs, ' ', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (StringRef pair : pairs) {
    auto [key, value] = pair.split('=');
    defaults[key] = value.str();
  }
  std::vector<LoweringFlag> flags;
  support::forEachOption(pass, [&](auto &option) {
    flags.push_back({option.ArgStr.str(), option.HelpStr.str(),
                     defaults.lookup(option.ArgStr)});
  });
  return flags;
}

FailureOr<LowerShardedLinearOptions>
mlir::shardlin::parseLowerShardedLinearOptions(StringRef options,
                                               std::string &error) {
  LowerShardedLinearPass pass;
  if (failed(pass.initializeOptions(options, [&](const Twine &message) {
        error = message.str();
        return failure();
      })))
    return failure();
  LowerShardedLinearOptions values = optionValues(pass);
  if (failed(toLoweringOptions(values, error)))
    return failure();
  return values;
}
