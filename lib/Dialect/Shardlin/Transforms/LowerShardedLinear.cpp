//===- LowerShardedLinear.cpp - shardlin.linear to collectives + GEMM -----===//
//
// Each lowering strategy is one rewrite pattern on shardlin.linear. They share
// the reshaping of N-D inputs to rows (and back) and all derive every
// rank-dependent size from the weight's #shardlin.chunk, so the emitted program
// is SPMD: one program, sizes resolved per rank at run time.
//
// The pass decides once per linear which strategy lowers it (forced by the
// `strategy` option or picked by the cost model) and the patterns follow that
// decision; docs/lowering.md lists what adding a strategy touches.
//
//===----------------------------------------------------------------------===//

#include "shardlin/Dialect/Shardlin/Transforms/LowerShardedLinear.h"
#include "shardlin/Dialect/Shardlin/Transforms/Passes.h"

#include "BlockFusion.h"
#include "LoweringSupport.h"
#include "PassOptions.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstdio>
#include <memory>
#include <mutex>

namespace mlir::shardlin {
#define GEN_PASS_DEF_LOWERSHARDEDLINEAR
#include "shardlin/Dialect/Shardlin/Transforms/Passes.h.inc"
} // namespace mlir::shardlin

using namespace mlir;
using namespace mlir::shardlin;
namespace support = mlir::shardlin::detail;
using support::rankOrderRows;
using support::tensorOf;

//===----------------------------------------------------------------------===//
// Shared pieces
//===----------------------------------------------------------------------===//

namespace {

/// The linear's operands and sizes with the input flattened to B x K rows.
struct FlatLinear {
  Value rows;    // B x K
  int64_t batch; // B
  int64_t n, k;
  int64_t worldSize;
  Type elementType;
};

/// Flattens the input of `op` to a B x K matrix: 1-D inputs become one row,
/// N-D inputs collapse their leading dims.
FlatLinear flattenInput(LinearOp op, PatternRewriter &rewriter) {
  ShardedType wType = op.getWeightType();
  FlatLinear flat;
  flat.n = wType.getShape()[0];
  flat.k = wType.getShape()[1];
  flat.worldSize = wType.getNumRanks();
  flat.elementType =
      cast<RankedTensorType>(op.getInput().getType()).getElementType();
  flat.rows = support::flattenToRows(rewriter, op.getLoc(), op.getInput(),
                                    flat.batch); // Checked by checkSizes.
  return flat;
}

/// Reshapes the B x N result back to the linear's result type.
Value restoreShape(LinearOp op, Value rows, PatternRewriter &rewriter) {
  return support::restoreFromRows(
      rewriter, op.getLoc(), rows,
      cast<RankedTensorType>(op.getResult().getType()), op.getInput());
}

/// Whether the input's batch dims include a dynamic one (B is then known
/// only at run time).
bool hasDynamicBatch(LinearOp op) {
  return !cast<RankedTensorType>(op.getInput().getType()).hasStaticShape();
}

/// The shape the cost model sees: B is the product of the batch dims, or
/// `assumedRows` when one of them is dynamic.
::shardlin::LinearShape linearShape(LinearOp op, int64_t assumedRows) {
  auto xType = cast<RankedTensorType>(op.getInput().getType());
  ShardedType w = op.getWeightType();
  ::shardlin::LinearShape shape;
  shape.rows = 1;
  if (hasDynamicBatch(op))
    shape.rows = assumedRows;
  else
    for (int64_t i = 0; i + 1 < xType.getRank(); ++i)
      shape.rows *= xType.getShape()[i]; // Checked by checkSizes.
  shape.n = w.getShape()[0];
  shape.k = w.getShape()[1];
  shape.dim = w.getSharding().getDim();
  shape.placements.assign(w.getSharding().getPlacements().begin(),
                          w.getSharding().getPlacements().end());
  shape.elementBytes = (xType.getElementType().getIntOrFloatBitWidth() + 7) / 8;
  return shape;
}

/// Fails if the sizes of `op` overflow 64-bit arithmetic once flattened and
/// stacked over ranks (with a diagnostic when `emitErrors`). Every other
/// size computation of the lowering relies on this check. With dynamic
/// batch dims, the static ones are checked, and the cost model's sizes
/// with `assumedRows` rows.
LogicalResult checkSizes(LinearOp op, bool emitErrors, int64_t assumedRows) {
  auto xType = cast<RankedTensorType>(op.getInput().getType());
  int64_t batch = 1;
  for (int64_t i = 0; i + 1 < xType.getRank(); ++i) {
    if (xType.isDynamicDim(i))
      continue;
    std::optional<int64_t> prod = llvm::checkedMul(batch, xType.getShape()[i]);
    if (!prod) {
      if (!emitErrors)
        return failure();
      return op.emitOpError() << "the input's batch dims (" << xType
                              << ") overflow a 64-bit row count";
    }
    batch = *prod;
  }
  if (hasDynamicBatch(op))
    batch = assumedRows;
  int64_t w = op.getWeightType().getNumRanks();
  ShardedType wType = op.getWeightType();
  int64_t n = wType.getShape()[0], k = wType.getShape()[1];
  std::optional<int64_t> stacked = llvm::checkedMul(batch, w);
  if (!stacked || !llvm::checkedMul(*stacked, n) ||
      !llvm::checkedMul(*stacked, k) || !llvm::checkedMul(n, k)) {
    if (!emitErrors)
      return failure();
    return op.emitOpError() << "sizes overflow 64-bit arithmetic: " << batch
                            << " rows x " << w << " ranks with a " << n
                            << " x " << k << " weight";
  }
  // Byte counts of the cost model are 64-bit too. Every product and sum
  // here is checked: the operands themselves may be near the int64 limit.
  const int64_t elt = 8;
  std::optional<int64_t> stackedBytes = llvm::checkedMul(*stacked, elt);
  std::optional<int64_t> nPlusK = llvm::checkedAdd(n, k);
  std::optional<int64_t> rankBytes = llvm::checkedMul(elt, w);
  if (!stackedBytes || !nPlusK || !rankBytes ||
      !llvm::checkedMul(*stackedBytes, *nPlusK) ||
      !llvm::checkedMul(n * k, *rankBytes)) {
    if (!emitErrors)
      return failure();
    return op.emitOpError() << "sizes overflow 64-bit byte counts: " << batch
                            << " rows x " << w << " ranks with a " << n
                            << " x " << k << " weight";
  }
  return success();
}

/// What deciding a linear gives, fitting or not: every strategy's cost and,
/// if one fits the memory cap, the chosen one.
struct Outcome {
  bool fits = false;
  LoweringDecision decision; // strategy and cost are set only if fits
};

Outcome decide(LinearOp op, const LoweringOptions &options) {
  ::shardlin::LinearShape shape = linearShape(op, options.assumedRows);
  Outcome out;
  LoweringDecision &d = out.decision;
  if (hasDynamicBatch(op))
    d.assumedRows = options.assumedRows;
  for (const ::shardlin::StrategyInfo &info : ::shardlin::strategies())
    d.candidates.push_back(
        ::shardlin::estimateCost(shape, info.strategy, options.machine));
  std::optional<::shardlin::Strategy> pick = options.forced;
  if (!pick)
    pick = ::shardlin::chooseStrategy(shape, options.machine,
                                      options.memoryCapBytes);
  if (!pick)
    return out;
  out.fits = true;
  d.strategy = *pick;
  // The chosen strategy's cost is its candidate, found by strategy rather
  // than by its position in the list above.
  for (const ::shardlin::StrategyCost &c : d.candidates)
    if (c.strategy == *pick)
      d.cost = c;
  return out;
}

/// The diagnostic of a linear for which no strategy fits the memory cap.
void reportNoFit(LinearOp op, const LoweringOptions &options,
                 const LoweringDecision &d) {
  InFlightDiagnostic diag = op.emitOpError()
                            << "no lowering strategy fits the memory cap of "
                            << options.memoryCapBytes << " bytes per rank";
  for (const ::shardlin::StrategyCost &c : d.candidates)
    diag << "; " << ::shardlin::strategyName(c.strategy) << " needs "
         << c.maxPeakExtraBytes();
}

/// The decisions of one pattern set, each made once and recorded: the pass
/// decides every linear before rewriting, and the patterns read what it
/// recorded; patterns used without the pass decide on first match.
///
/// A decision depends only on the linear's types and the options, so it is
/// recorded by (input type, weight type). Types live as long as the
/// context, so a key cannot come to name another linear, as the address of
/// an erased op could. One frozen pattern set may lower several functions on
/// several threads at once, hence the lock.
class DecisionTable {
public:
  /// A linear's recorded outcome, or nullopt if its sizes overflow (see
  /// checkSizes); then nothing about it may be computed.
  using Entry = std::optional<Outcome>;

  explicit DecisionTable(const LoweringOptions &options) : options(options) {}

  /// The outcome for `op` (W >= 2), decided on the first request for its
  /// types. Emits no diagnostic.
  Entry get(LinearOp op) {
    std::pair<Type, Type> key{op.getInput().getType(),
                              op.getWeight().getType()};
    std::lock_guard<std::mutex> lock(mutex);
    auto it = entries.find(key);
    if (it != entries.end())
      return it->second;
    Entry e;
    if (succeeded(checkSizes(op, /*emitErrors=*/false, options.assumedRows)))
      e = decide(op, options);
    entries.try_emplace(key, e);
    return e;
  }

private:
  const LoweringOptions options;
  std::mutex mutex;
  llvm::DenseMap<std::pair<Type, Type>, Entry> entries;
};

//===----------------------------------------------------------------------===//
// Strategies
//===----------------------------------------------------------------------===//

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
/// IR says which strategy was used and what it was predicted to cost.
void annotate(Operation *gemm, const LoweringDecision *d) {
  if (!d)
    return support::annotateLowering(gemm, "local", nullptr);
  support::annotateLowering(gemm, ::shardlin::strategyName(d->strategy),
                            &d->cost, d->assumedRows);
}

/// W = 1: the whole weight is local; one GEMM with the bias fused.
struct LowerSingleRank : OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getWeightType().getNumRanks() != 1)
      return rewriter.notifyMatchFailure(op, "more than one rank");
    // As in StrategyPattern::chosen: sizes are checked before use (W = 1
    // has no cost model, hence no assumed rows).
    if (failed(checkSizes(op, /*emitErrors=*/false, /*assumedRows=*/1)))
      return rewriter.notifyMatchFailure(op, "sizes overflow");
    Location loc = op.getLoc();
    FlatLinear f = flattenInput(op, rewriter);
    Value a = LocalShardOp::create(rewriter, loc,
                                   op.getWeightType().getLocalType(),
                                   op.getWeight());
    auto gemm = GemmOp::create(rewriter, loc,
                               tensorOf({f.batch, f.n}, f.elementType), f.rows,
                               a, op.getBias(), /*transpose_lhs=*/false,
                               /*transpose_rhs=*/true);
    annotate(gemm, nullptr);
    rewriter.replaceOp(op, restoreShape(op, gemm, rewriter));
    return success();
  }
};

/// What both moving-activations lowerings start from: the decision, the
/// input as rows, the weight's chunks along `SplitDim`, the rank-order row
/// blocks of the stacked (W*B)-row tensor, the rank's size along the split
/// dim and its weight chunk.
struct ActivationsStart {
  LoweringDecision decision;
  FlatLinear f;
  ChunkAttr chunks, rowBlocks;
  int64_t stacked = 0, local = 0;
  Value a;
};

template <int64_t SplitDim>
struct ActivationsPattern
    : StrategyPattern<::shardlin::Strategy::Activations> {
  using StrategyPattern::StrategyPattern;

  /// Fails to match unless the weight is split on SplitDim and activations
  /// was chosen; else flattens the input and takes the weight's chunk.
  FailureOr<ActivationsStart> start(LinearOp op,
                                    PatternRewriter &rewriter) const {
    ShardedType wType = op.getWeightType();
    if (wType.getSharding().getDim() != SplitDim)
      return rewriter.notifyMatchFailure(op, SplitDim == 1
                                                 ? "not a row-wise split"
                                                 : "not a col-wise split");
    std::optional<LoweringDecision> decision = chosen(op);
    if (!decision)
      return rewriter.notifyMatchFailure(op, "another strategy was chosen");
    ActivationsStart s;
    s.decision = *decision;
    s.f = flattenInput(op, rewriter);
    s.chunks = wType.getSharding();
    s.rowBlocks = rankOrderRows(op.getContext(), s.f.worldSize);
    // Checked by checkSizes; dynamic if B is.
    s.stacked = support::stackedRows(s.f.worldSize, s.f.batch);
    s.local = s.chunks.getLocalSize(SplitDim == 1 ? s.f.k : s.f.n);
    s.a = LocalShardOp::create(rewriter, op.getLoc(), wType.getLocalType(),
                               op.getWeight());
    return s;
  }
};

/// Row-wise (dim 1, K split), moving activations:
///   all_to_all  x[:, K_c(s)] to rank s, stacked by source rank: (W*B) x k_s
///   gemm        P_s = X_s A_s^T                                 (W*B) x N
///   reduce_scatter (sum) row block r to rank r                  B x N
///   bias_add    once, after the reduction
/// For f16/bf16, P_s, the sum and the bias addition are f32, rounded once
/// at the end (reduceRowBlocks).
struct LowerRowWiseActivations : ActivationsPattern<1> {
  using ActivationsPattern::ActivationsPattern;
  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<ActivationsStart> s = start(op, rewriter);
    if (failed(s))
      return failure();
    Location loc = op.getLoc();
    const FlatLinear &f = s->f;
    Value xs = AllToAllOp::create(
        rewriter, loc, tensorOf({s->stacked, s->local}, f.elementType), f.rows,
        /*split=*/ChunkAttr::get(op.getContext(), 1, s->chunks.getPlacements()),
        /*concat=*/s->rowBlocks);
    auto p = GemmOp::create(
        rewriter, loc,
        tensorOf({s->stacked, f.n}, support::partialSumType(f.elementType)),
        xs, s->a, /*bias=*/Value(), /*transpose_lhs=*/false,
        /*transpose_rhs=*/true);
    annotate(p, &s->decision);
    Value y = support::reduceRowBlocks(rewriter, loc, p, s->rowBlocks, f.batch,
                                       f.n, f.elementType, op.getBias());
    rewriter.replaceOp(op, restoreShape(op, y, rewriter));
    return success();
  }
};

/// Col-wise (dim 0, N split), moving activations:
///   all_gather  every rank's rows, in rank order                (W*B) x K
///   gemm        Q_s = X A_s^T + b[N_c(s)]                       (W*B) x n_s
///   all_to_all  row block r to rank r; the block from rank s lands at the
///               N offset of the chunk s holds                   B x N
struct LowerColWiseActivations : ActivationsPattern<0> {
  using ActivationsPattern::ActivationsPattern;
  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<ActivationsStart> s = start(op, rewriter);
    if (failed(s))
      return failure();
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    const FlatLinear &f = s->f;
    Value x = AllGatherOp::create(
        rewriter, loc, tensorOf({s->stacked, f.k}, f.elementType), f.rows,
        s->rowBlocks);
    Value biasChunk;
    if (Value bias = op.getBias())
      biasChunk = LocalChunkOp::create(
          rewriter, loc, tensorOf({s->local}, f.elementType), bias,
          ChunkAttr::get(ctx, 0, s->chunks.getPlacements()));
    auto q = GemmOp::create(rewriter, loc,
                            tensorOf({s->stacked, s->local}, f.elementType), x,
                            s->a, biasChunk, /*transpose_lhs=*/false,
                            /*transpose_rhs=*/true);
    annotate(q, &s->decision);
    Value y = AllToAllOp::create(
        rewriter, loc, tensorOf({f.batch, f.n}, f.elementType), q,
        /*split=*/s->rowBlocks,
        /*concat=*/ChunkAttr::get(ctx, 1, s->chunks.getPlacements()));
    rewriter.replaceOp(op, restoreShape(op, y, rewriter));
    return success();
  }
};

/// Either dim, gathering the weight:
///   all_gather  every rank's chunk of A, by the weight's own spec   N x K
///   gemm        y = x A^T + b                                      B x N
/// No output communication; each rank computes its own rows in full.
struct LowerGatherWeight
    : StrategyPattern<::shardlin::Strategy::GatherWeight> {
  using StrategyPattern::StrategyPattern;
  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<LoweringDecision> decision = chosen(op);
    if (!decision)
      return rewriter.notifyMatchFailure(op, "another strategy was chosen");
    ShardedType wType = op.getWeightType();
    Location loc = op.getLoc();
    FlatLinear f = flattenInput(op, rewriter);
    Value a = LocalShardOp::create(rewriter, loc, wType.getLocalType(),
                                   op.getWeight());
    Value full = AllGatherOp::create(rewriter, loc, wType.getTensorType(), a,
                                     wType.getSharding());
    auto y = GemmOp::create(rewriter, loc,
                            tensorOf({f.batch, f.n}, f.elementType), f.rows,
                            full, op.getBias(), /*transpose_lhs=*/false,
                            /*transpose_rhs=*/true);
    annotate(y, &*decision);
    rewriter.replaceOp(op, restoreShape(op, y, rewriter));
    return success();
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// Public entry points
//===----------------------------------------------------------------------===//

llvm::cl::ValuesClass mlir::shardlin::strategyOptionValues() {
  using ::shardlin::Strategy;
  auto info = [](Strategy s) -> const ::shardlin::StrategyInfo & {
    return ::shardlin::strategyInfo(s);
  };
  return llvm::cl::values(
      clEnumValN(StrategyOption::Auto, "auto",
                 "the cost model picks, per linear"),
      clEnumValN(StrategyOption::Activations, info(Strategy::Activations).name,
                 info(Strategy::Activations).description),
      clEnumValN(StrategyOption::GatherWeight,
                 info(Strategy::GatherWeight).name,
                 info(Strategy::GatherWeight).description));
}

std::optional<::shardlin::Strategy>
mlir::shardlin::forcedStrategy(StrategyOption option) {
  if (option == StrategyOption::Auto)
    return std::nullopt;
  return static_cast<::shardlin::Strategy>(option);
}

std::optional<StrategyOption>
mlir::shardlin::parseStrategyOption(llvm::StringRef name) {
  if (name == "auto")
    return StrategyOption::Auto;
  if (std::optional<::shardlin::Strategy> s =
          ::shardlin::parseStrategy(name.str()))
    return static_cast<StrategyOption>(*s);
  return std::nullopt;
}

FailureOr<LoweringDecision>
mlir::shardlin::decideLowering(LinearOp op, const LoweringOptions &options) {
  Outcome out = decide(op, options);
  if (!out.fits) {
    reportNoFit(op, options, out.decision);
    return failure();
  }
  return out.decision;
}

LogicalResult mlir::shardlin::checkLowerable(LinearOp op,
                                             const LoweringOptions &options) {
  if (failed(checkSizes(op, /*emitErrors=*/true, options.assumedRows)))
    return failure();
  if (op.getWeightType().getNumRanks() > 1 &&
      failed(decideLowering(op, options)))
    return failure();
  return success();
}

/// Adds the pattern(s) that emit `strategy`. The switch has no default, so
/// a strategy added to the cost model's list without its patterns is a
/// -Wswitch warning here rather than a linear left unlowered.
static void addStrategyPatterns(::shardlin::Strategy strategy,
                                RewritePatternSet &patterns,
                                const std::shared_ptr<DecisionTable> &table) {
  MLIRContext *ctx = patterns.getContext();
  switch (strategy) {
  case ::shardlin::Strategy::Activations:
    patterns.add<LowerRowWiseActivations, LowerColWiseActivations>(ctx, table);
    return;
  case ::shardlin::Strategy::GatherWeight:
    patterns.add<LowerGatherWeight>(ctx, table);
    return;
  }
}

/// Every pattern, all reading `table`.
static void populatePatterns(RewritePatternSet &patterns,
                             const std::shared_ptr<DecisionTable> &table) {
  patterns.add<LowerSingleRank>(patterns.getContext());
  for (const ::shardlin::StrategyInfo &info : ::shardlin::strategies())
    addStrategyPatterns(info.strategy, patterns, table);
}

void mlir::shardlin::populateLowerShardedLinearPatterns(
    RewritePatternSet &patterns, const LoweringOptions &options) {
  // Without the pass nothing has been decided: the patterns decide each
  // linear on first match, once, in a table of their own.
  populatePatterns(patterns, std::make_shared<DecisionTable>(options));
}

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
    std::string error;
    FailureOr<LoweringOptions> checked =
        toLoweringOptions(optionValues(*this), error);
    if (failed(checked))
      return emitError(UnknownLoc::get(ctx)) << error;
    options = *checked;
    decisions = std::make_shared<DecisionTable>(options);
    RewritePatternSet set(ctx);
    populatePatterns(set, decisions);
    patterns = std::move(set);
    return success();
  }

  void explainDecision(LinearOp op, const LoweringDecision &d) {
    InFlightDiagnostic r = op.emitRemark();
    r << "lowered " << (op.getWeightType().getSharding().getDim() == 1
                            ? "row-wise"
                            : "col-wise")
      << " with " << ::shardlin::strategyName(d.strategy) << " ("
      << (options.forced ? "forced" : "cheapest estimate") << ")";
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
      if (failed(checkSizes(op, /*emitErrors=*/true, options.assumedRows)))
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
        reportNoFit(op, options, d);
        ok = false;
        return;
      }
      if (explain)
        explainDecision(op, d);
      if (d.strategy == ::shardlin::Strategy::GatherWeight)
        ++numGatherWeight;
      else if (w.getSharding().getDim() == 1)
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

} // namespace

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
