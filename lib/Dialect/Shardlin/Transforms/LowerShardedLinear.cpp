//===- LowerShardedLinear.cpp - shardlin.linear to collectives + GEMM -----===//
//
// Each lowering strategy is one rewrite pattern on shardlin.linear. They share
// the reshaping of N-D inputs to rows (and back) and all derive every
// rank-dependent size from the weight's #shardlin.chunk, so the emitted program
// is SPMD: one program, sizes resolved per rank at run time.
//
// The pass (LowerShardedLinearPass.cpp) decides once per linear which
// strategy lowers it (forced by the `strategy` option or picked by the cost
// model, LinearDecisions.h) and the patterns follow that decision;
// docs/lowering.md lists what adding a strategy touches. This file holds the
// linears of the default layouts (each rank its own rows); LowerLayouts.cpp
// those of the other layouts.
//
//===----------------------------------------------------------------------===//

#include "shardlin/Dialect/Shardlin/Transforms/LowerShardedLinear.h"

#include "LinearDecisions.h"
#include "shardlin/Dialect/Shardlin/Transforms/LoweringSupport.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <memory>

using namespace mlir;
using namespace mlir::shardlin;
using namespace mlir::shardlin::detail;

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
  /// The GEMM's transpose_rhs: an N x K weight is transposed, a K x N one
  /// (weight_kn) is not.
  bool transposeWeight;
};

/// Flattens the input of `op` to a B x K matrix: 1-D inputs become one row,
/// N-D inputs collapse their leading dims.
FlatLinear flattenInput(LinearOp op, PatternRewriter &rewriter) {
  FlatLinear flat;
  flat.n = op.getN();
  flat.k = op.getK();
  flat.worldSize = op.getWeightType().getNumRanks();
  flat.transposeWeight = !op.getWeightKn();
  flat.elementType =
      cast<RankedTensorType>(op.getInput().getType()).getElementType();
  flat.rows = flattenToRows(rewriter, op.getLoc(), op.getInput(),
                            flat.batch); // Checked by checkSizes.
  return flat;
}

/// Reshapes the B x N result back to the linear's result type.
Value restoreShape(LinearOp op, Value rows, PatternRewriter &rewriter) {
  return restoreFromRows(rewriter, op.getLoc(), rows,
                         cast<RankedTensorType>(op.getResult().getType()),
                         op.getInput());
}

//===----------------------------------------------------------------------===//
// Strategies
//===----------------------------------------------------------------------===//

/// W = 1: the whole weight is local; one GEMM with the bias fused. Every
/// layout is the whole tensor on the one rank.
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
    Value a = LocalShardOp::create(
        rewriter, loc, op.getWeightType().getLocalType(), op.getWeight());
    auto gemm = GemmOp::create(
        rewriter, loc, tensorOf({f.batch, f.n}, f.elementType), f.rows, a,
        op.getBias(), /*transpose_lhs=*/false, f.transposeWeight);
    annotate(gemm, nullptr);
    rewriter.replaceOp(op, restoreShape(op, gemm, rewriter));
    return success();
  }
};

/// What both moving-activations lowerings start from: the decision, the
/// input as rows, the weight's chunks, the rank-order row blocks of the
/// stacked (W*B)-row tensor, the rank's size along the split dim and its
/// weight chunk.
struct ActivationsStart {
  LoweringDecision decision;
  FlatLinear f;
  ChunkAttr chunks, rowBlocks;
  int64_t stacked = 0, local = 0;
  Value a;
};

/// `SplitsK`: the row-wise (K split) or col-wise (N split) lowering of a
/// linear of the default layouts.
template <bool SplitsK>
struct ActivationsPattern : StrategyPattern<::shardlin::Strategy::Activations> {
  using StrategyPattern::StrategyPattern;

  /// Fails to match unless the weight is split on K (or N) and activations
  /// was chosen; else flattens the input and takes the weight's chunk.
  FailureOr<ActivationsStart> start(LinearOp op,
                                    PatternRewriter &rewriter) const {
    if (!op.hasDefaultLayouts())
      return rewriter.notifyMatchFailure(op, "other layouts");
    if (op.splitsK() != SplitsK)
      return rewriter.notifyMatchFailure(op, SplitsK ? "not a row-wise split"
                                                     : "not a col-wise split");
    std::optional<LoweringDecision> decision = chosen(op);
    if (!decision)
      return rewriter.notifyMatchFailure(op, "another strategy was chosen");
    ShardedType wType = op.getWeightType();
    ActivationsStart s;
    s.decision = *decision;
    s.f = flattenInput(op, rewriter);
    s.chunks = wType.getSharding();
    s.rowBlocks = rankOrderRows(op.getContext(), s.f.worldSize);
    // Checked by checkSizes; dynamic if B is.
    s.stacked = stackedRows(s.f.worldSize, s.f.batch);
    s.local = s.chunks.getLocalSize(SplitsK ? s.f.k : s.f.n);
    s.a = LocalShardOp::create(rewriter, op.getLoc(), wType.getLocalType(),
                               op.getWeight());
    return s;
  }

  /// The lowering proper: the rank's rows of the result, before the input's
  /// batch dims are restored.
  virtual Value lower(LinearOp op, const ActivationsStart &s,
                      PatternRewriter &rewriter) const = 0;

  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const final {
    FailureOr<ActivationsStart> s = start(op, rewriter);
    if (failed(s))
      return failure();
    rewriter.replaceOp(op, restoreShape(op, lower(op, *s, rewriter), rewriter));
    return success();
  }
};

/// Row-wise (K split), moving activations:
///   all_to_all  x[:, K_c(s)] to rank s, stacked by source rank: (W*B) x k_s
///   gemm        P_s = X_s A_s^T                                 (W*B) x N
///   reduce_scatter (sum) row block r to rank r                  B x N
///   bias_add    once, after the reduction
/// For f16/bf16, P_s, the sum and the bias addition are f32, rounded once
/// at the end (reduceRowBlocks).
struct LowerRowWiseActivations : ActivationsPattern<true> {
  using ActivationsPattern::ActivationsPattern;
  Value lower(LinearOp op, const ActivationsStart &s,
              PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    const FlatLinear &f = s.f;
    // x's K columns are split as the weight's K (its chunks and bounds).
    Value xs = AllToAllOp::create(
        rewriter, loc, tensorOf({s.stacked, s.local}, f.elementType), f.rows,
        /*split=*/s.chunks.withDim(1), /*concat=*/s.rowBlocks);
    auto p = GemmOp::create(
        rewriter, loc,
        tensorOf({s.stacked, f.n}, partialSumType(f.elementType)), xs, s.a,
        /*bias=*/Value(), /*transpose_lhs=*/false, f.transposeWeight);
    annotate(p, &s.decision);
    return reduceRowBlocks(rewriter, loc, p, s.rowBlocks, f.batch, f.n,
                           f.elementType, op.getBias());
  }
};

/// Col-wise (N split), moving activations:
///   all_gather  every rank's rows, in rank order                (W*B) x K
///   gemm        Q_s = X A_s^T + b[N_c(s)]                       (W*B) x n_s
///   all_to_all  row block r to rank r; the block from rank s lands at the
///               N offset of the chunk s holds                   B x N
struct LowerColWiseActivations : ActivationsPattern<false> {
  using ActivationsPattern::ActivationsPattern;
  Value lower(LinearOp op, const ActivationsStart &s,
              PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    const FlatLinear &f = s.f;
    Value x = AllGatherOp::create(rewriter, loc,
                                  tensorOf({s.stacked, f.k}, f.elementType),
                                  f.rows, s.rowBlocks);
    Value biasChunk;
    if (Value bias = op.getBias())
      biasChunk = LocalChunkOp::create(rewriter, loc,
                                       tensorOf({s.local}, f.elementType), bias,
                                       s.chunks.withDim(0));
    auto q = GemmOp::create(
        rewriter, loc, tensorOf({s.stacked, s.local}, f.elementType), x, s.a,
        biasChunk, /*transpose_lhs=*/false, f.transposeWeight);
    annotate(q, &s.decision);
    return AllToAllOp::create(
        rewriter, loc, tensorOf({f.batch, f.n}, f.elementType), q,
        /*split=*/s.rowBlocks, /*concat=*/s.chunks.withDim(1));
  }
};

/// Either dim, gathering the weight:
///   all_gather  every rank's chunk of A, by the weight's own spec   N x K
///   gemm        y = x A^T + b                                      B x N
/// No output communication; each rank computes its own rows in full.
struct LowerGatherWeight : StrategyPattern<::shardlin::Strategy::GatherWeight> {
  using StrategyPattern::StrategyPattern;
  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasDefaultLayouts())
      return rewriter.notifyMatchFailure(op, "other layouts");
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
    auto y = GemmOp::create(
        rewriter, loc, tensorOf({f.batch, f.n}, f.elementType), f.rows, full,
        op.getBias(), /*transpose_lhs=*/false, f.transposeWeight);
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
  return llvm::cl::values(clEnumValN(StrategyOption::Auto, "auto",
                                     "the cost model picks, per linear"),
                          clEnumValN(StrategyOption::Activations,
                                     info(Strategy::Activations).name,
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

/// Adds the pattern(s) that emit `strategy`, for every layout. The switch
/// has no default, so a strategy added to the cost model's list without its
/// patterns is a -Wswitch warning here rather than a linear left unlowered.
static void addStrategyPatterns(::shardlin::Strategy strategy,
                                RewritePatternSet &patterns,
                                const std::shared_ptr<DecisionTable> &table) {
  MLIRContext *ctx = patterns.getContext();
  switch (strategy) {
  case ::shardlin::Strategy::Activations:
    patterns.add<LowerRowWiseActivations, LowerColWiseActivations>(ctx, table);
    break;
  case ::shardlin::Strategy::GatherWeight:
    patterns.add<LowerGatherWeight>(ctx, table);
    break;
  }
  addLayoutPatterns(strategy, patterns, table);
}

void mlir::shardlin::detail::populateLinearPatterns(
    RewritePatternSet &patterns, const std::shared_ptr<DecisionTable> &table) {
  patterns.add<LowerSingleRank>(patterns.getContext());
  for (const ::shardlin::StrategyInfo &info : ::shardlin::strategies())
    addStrategyPatterns(info.strategy, patterns, table);
}

void mlir::shardlin::populateLowerShardedLinearPatterns(
    RewritePatternSet &patterns, const LoweringOptions &options) {
  // Without the pass nothing has been decided: the patterns decide each
  // linear on first match, once, in a table of their own.
  populateLinearPatterns(patterns, std::make_shared<DecisionTable>(options));
}
