//===- LowerLayouts.cpp - Linears of replicated and feature-split layouts -===//
//
// The lowerings of `shardlin.linear ... layouts IN -> OUT` (2-D inputs; see
// the op's description and docs/interop.md), per rank s with weight chunk
// c(s) and B input rows:
//
//   rows -> features, N split (moving activations)
//     all_gather x by row_chunks      (W*B) x K
//     gemm + bias chunk               (W*B) x n_s          the result
//   replicated -> *, N split (moving activations)
//     gemm x A_s^T + bias chunk       B x n_s              features: done
//     replicated: all_gather along the features by the weight's chunks
//     rows: all_to_all, the rows split by row_chunks, the features
//           concatenated by the weight's chunks           r_s x N
//   replicated | features -> *, K split (moving activations)
//     local_chunk x's K columns (replicated input; a features input holds
//     them already)                   B x k_s
//     gemm, partial sums              B x N (f32 for f16/bf16)
//     replicated: all_reduce; rows: reduce_scatter by row_chunks
//     bias_add once, convert
//   replicated -> replicated | rows, either split (gathering the weight)
//     rows: local_chunk of x's rows by row_chunks (no communication)
//     all_gather the weight; gemm + bias: no output communication
//
// No replicated x is ever gathered: every rank already has it.
//
//===----------------------------------------------------------------------===//

#include "LinearDecisions.h"
#include "shardlin/Dialect/Shardlin/Transforms/LoweringSupport.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::shardlin;
using namespace mlir::shardlin::detail;

namespace {

/// The sizes all layout lowerings share (the input is 2-D).
struct LayoutLinear {
  int64_t rows, n, k, w;
  Type elt;
  bool transposeWeight;
  ChunkAttr chunks;
  /// The rank's chunk of the split dim (`?` when chunks differ).
  int64_t local;
};

LayoutLinear layoutLinear(LinearOp op) {
  LayoutLinear l;
  auto xType = cast<RankedTensorType>(op.getInput().getType());
  l.rows = xType.getShape()[0];
  l.n = op.getN();
  l.k = op.getK();
  l.w = op.getWeightType().getNumRanks();
  l.elt = xType.getElementType();
  l.transposeWeight = !op.getWeightKn();
  l.chunks = op.getWeightType().getSharding();
  l.local = l.chunks.getLocalSize(op.splitsK() ? l.k : l.n);
  return l;
}

/// The rank's chunk of the weight.
Value localWeight(OpBuilder &b, LinearOp op) {
  return LocalShardOp::create(b, op.getLoc(),
                              op.getWeightType().getLocalType(),
                              op.getWeight());
}

/// The rank's chunk of the bias (N split), if there is a bias.
Value localBias(OpBuilder &b, LinearOp op, const LayoutLinear &l) {
  Value bias = op.getBias();
  if (!bias)
    return Value();
  return LocalChunkOp::create(b, op.getLoc(), tensorOf({l.local}, l.elt), bias,
                              l.chunks.withDim(0));
}

template <::shardlin::Strategy Kind>
struct LayoutPattern : StrategyPattern<Kind> {
  using StrategyPattern<Kind>::StrategyPattern;

  /// The decision, if `op` has layouts other than the default, is split as
  /// `splitsK` says (any split if nullopt) and `accept` takes its layouts.
  std::optional<LoweringDecision>
  match(LinearOp op, std::optional<bool> splitsK,
        function_ref<bool(Layout, Layout)> accept) const {
    if (op.hasDefaultLayouts() || (splitsK && op.splitsK() != *splitsK) ||
        !accept(op.getInputLayout(), op.getResultLayout()))
      return std::nullopt;
    return this->chosen(op);
  }
};

/// rows -> features, N split: all_gather x, then the rank's features of
/// every rank's rows in one GEMM with the bias chunk fused.
struct LowerRowsToFeatures
    : LayoutPattern<::shardlin::Strategy::Activations> {
  using LayoutPattern::LayoutPattern;
  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<LoweringDecision> d =
        match(op, /*splitsK=*/false, [](Layout in, Layout out) {
          return in == Layout::Rows && out == Layout::Features;
        });
    if (!d)
      return rewriter.notifyMatchFailure(op, "not rows -> features");
    LayoutLinear l = layoutLinear(op);
    Location loc = op.getLoc();
    // As many rows as the result: every rank's, stacked by row_chunks.
    const int64_t stacked =
        cast<RankedTensorType>(op.getResult().getType()).getShape()[0];
    Value x = AllGatherOp::create(rewriter, loc, tensorOf({stacked, l.k}, l.elt),
                                  op.getInput(), op.getRowSplit());
    // One statement each: the order of the ops they create must not depend
    // on the compiler's order of evaluating arguments.
    Value bias = localBias(rewriter, op, l);
    Value a = localWeight(rewriter, op);
    auto q = GemmOp::create(rewriter, loc, op.getResult().getType(), x, a, bias,
                            /*transpose_lhs=*/false, l.transposeWeight);
    annotate(q, &*d);
    rewriter.replaceOp(op, q);
    return success();
  }
};

/// replicated -> features | replicated | rows, N split: the rank's
/// features of all rows in one local GEMM, then nothing, an all_gather of
/// the features, or an all_to_all that gives each rank its rows.
struct LowerReplicatedColWise
    : LayoutPattern<::shardlin::Strategy::Activations> {
  using LayoutPattern::LayoutPattern;
  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<LoweringDecision> d =
        match(op, /*splitsK=*/false, [](Layout in, Layout) {
          return in == Layout::Replicated;
        });
    if (!d)
      return rewriter.notifyMatchFailure(op, "not a replicated col-wise input");
    LayoutLinear l = layoutLinear(op);
    Location loc = op.getLoc();
    Value bias = localBias(rewriter, op, l);
    Value a = localWeight(rewriter, op);
    auto q = GemmOp::create(rewriter, loc, tensorOf({l.rows, l.local}, l.elt),
                            op.getInput(), a, bias,
                            /*transpose_lhs=*/false, l.transposeWeight);
    annotate(q, &*d);
    Value y = q;
    auto resType = cast<RankedTensorType>(op.getResult().getType());
    if (op.getResultLayout() == Layout::Replicated)
      y = AllGatherOp::create(rewriter, loc, resType, q, l.chunks.withDim(1));
    else if (op.getResultLayout() == Layout::Rows)
      y = AllToAllOp::create(rewriter, loc, resType, q,
                             /*split=*/op.getRowSplit(),
                             /*concat=*/l.chunks.withDim(1));
    rewriter.replaceOp(op, y);
    return success();
  }
};

/// replicated | features -> replicated | rows, K split: the partial sums
/// of all rows over the rank's K chunk in one GEMM, summed by an all_reduce
/// (replicated) or a reduce_scatter of the rows (rows); the bias once.
struct LowerPartialSums : LayoutPattern<::shardlin::Strategy::Activations> {
  using LayoutPattern::LayoutPattern;
  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<LoweringDecision> d =
        match(op, /*splitsK=*/true,
              [](Layout in, Layout) { return in != Layout::Rows; });
    if (!d)
      return rewriter.notifyMatchFailure(op, "not a K split of whole rows");
    LayoutLinear l = layoutLinear(op);
    Location loc = op.getLoc();
    Value x = op.getInput();
    if (op.getInputLayout() == Layout::Replicated)
      x = LocalChunkOp::create(rewriter, loc, tensorOf({l.rows, l.local}, l.elt),
                               x, l.chunks.withDim(1));
    auto p = GemmOp::create(
        rewriter, loc, tensorOf({l.rows, l.n}, partialSumType(l.elt)), x,
        localWeight(rewriter, op), /*bias=*/Value(), /*transpose_lhs=*/false,
        l.transposeWeight);
    annotate(p, &*d);
    Value y;
    if (op.getResultLayout() == Layout::Replicated) {
      y = allReduceRows(rewriter, loc, p, l.w, l.elt, op.getBias());
    } else {
      ChunkAttr rows = op.getRowSplit();
      y = reduceRowBlocks(rewriter, loc, p, rows, rows.getLocalSize(l.rows),
                          l.n, l.elt, op.getBias());
    }
    rewriter.replaceOp(op, y);
    return success();
  }
};

/// replicated -> replicated | rows, either split, gathering the weight: the
/// rank's rows (all of them, or its chunk by row_chunks, a view), the
/// weight gathered by its own chunks, one GEMM with the bias.
struct LowerReplicatedGatherWeight
    : LayoutPattern<::shardlin::Strategy::GatherWeight> {
  using LayoutPattern::LayoutPattern;
  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<LoweringDecision> d =
        match(op, /*splitsK=*/std::nullopt, [](Layout in, Layout out) {
          return in == Layout::Replicated && out != Layout::Features;
        });
    if (!d)
      return rewriter.notifyMatchFailure(op, "not a replicated input");
    LayoutLinear l = layoutLinear(op);
    Location loc = op.getLoc();
    Value x = op.getInput();
    if (op.getResultLayout() == Layout::Rows) {
      ChunkAttr rows = op.getRowSplit();
      x = LocalChunkOp::create(
          rewriter, loc, tensorOf({rows.getLocalSize(l.rows), l.k}, l.elt), x,
          rows);
    }
    ShardedType wType = op.getWeightType();
    Value full = AllGatherOp::create(rewriter, loc, wType.getTensorType(),
                                     localWeight(rewriter, op),
                                     wType.getSharding());
    auto y = GemmOp::create(rewriter, loc, op.getResult().getType(), x, full,
                            op.getBias(), /*transpose_lhs=*/false,
                            l.transposeWeight);
    annotate(y, &*d);
    rewriter.replaceOp(op, y);
    return success();
  }
};

} // namespace

void mlir::shardlin::detail::addLayoutPatterns(
    ::shardlin::Strategy strategy, RewritePatternSet &patterns,
    const std::shared_ptr<DecisionTable> &table) {
  MLIRContext *ctx = patterns.getContext();
  switch (strategy) {
  case ::shardlin::Strategy::Activations:
    patterns.add<LowerRowsToFeatures, LowerReplicatedColWise, LowerPartialSums>(
        ctx, table);
    return;
  case ::shardlin::Strategy::GatherWeight:
    patterns.add<LowerReplicatedGatherWeight>(ctx, table);
    return;
  }
}
