//===- LinearDecisions.cpp - Deciding how each linear is lowered ----------===//

#include "LinearDecisions.h"

#include "shardlin/Dialect/Shardlin/Transforms/ElementwiseChains.h"
#include "shardlin/Dialect/Shardlin/Transforms/LoweringSupport.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace mlir::shardlin;
using namespace mlir::shardlin::detail;

::shardlin::Layout mlir::shardlin::detail::toCostLayout(Layout layout) {
  switch (layout) {
  case Layout::Rows:
    return ::shardlin::Layout::Rows;
  case Layout::Replicated:
    return ::shardlin::Layout::Replicated;
  case Layout::Features:
    return ::shardlin::Layout::Features;
  }
  return ::shardlin::Layout::Rows;
}

bool mlir::shardlin::detail::hasDynamicBatch(LinearOp op) {
  return !cast<RankedTensorType>(op.getInput().getType()).hasStaticShape();
}

namespace {

/// The largest chunk `spec` makes of a dim of at most `n` elements.
int64_t largestChunk(ChunkAttr spec, int64_t n) {
  if (!spec.hasExplicitBounds()) {
    const int64_t w = spec.getNumChunks();
    return (n + w - 1) / w;
  }
  ArrayRef<int64_t> bounds = spec.getBounds();
  int64_t largest = 0;
  for (size_t i = 1; i < bounds.size(); ++i)
    largest = std::max(largest, bounds[i] - bounds[i - 1]);
  return largest;
}

/// Upper bounds of `v`'s dims on every rank (staticRowBound), nullopt for
/// a dim without one.
SmallVector<std::optional<int64_t>> dimBounds(Value v, unsigned depth) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<std::optional<int64_t>> dims;
  for (int64_t d : type.getShape())
    dims.push_back(ShapedType::isDynamic(d) ? std::nullopt
                                            : std::optional<int64_t>(d));
  Operation *def = v.getDefiningOp();
  if (type.hasStaticShape() || !def || depth > 32)
    return dims;
  auto fill = [&](auto &&bound) {
    for (auto [i, d] : llvm::enumerate(dims))
      if (!d)
        d = bound(i);
    return dims;
  };
  if (auto shard = dyn_cast<LocalShardOp>(def)) {
    ShardedType sharded = shard.getSource().getType();
    ChunkAttr spec = sharded.getSharding();
    return fill([&](size_t i) -> std::optional<int64_t> {
      int64_t global = sharded.getShape()[i];
      if (ShapedType::isDynamic(global))
        return std::nullopt;
      return int64_t(i) == spec.getDim() ? largestChunk(spec, global) : global;
    });
  }
  SmallVector<std::optional<int64_t>> src;
  if (def->getNumOperands() > 0 &&
      isa<RankedTensorType>(def->getOperand(0).getType()))
    src = dimBounds(def->getOperand(0), depth + 1);
  if (auto chunk = dyn_cast<LocalChunkOp>(def)) {
    ChunkAttr spec = chunk.getAlong();
    return fill([&](size_t i) -> std::optional<int64_t> {
      if (!src[i] || int64_t(i) != spec.getDim())
        return src[i];
      return largestChunk(spec, *src[i]);
    });
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def)) {
    for (auto [i, group] :
         llvm::enumerate(collapse.getReassociationIndices())) {
      std::optional<int64_t> p = 1;
      for (int64_t g : group)
        p = p && src[g] ? std::optional<int64_t>(*p * *src[g]) : std::nullopt;
      dims[i] = p;
    }
    return dims;
  }
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def)) {
    for (auto [i, group] : llvm::enumerate(expand.getReassociationIndices())) {
      int64_t known = 1, dynamic = 0;
      for (int64_t g : group) {
        if (type.isDynamicDim(g))
          ++dynamic;
        else
          known *= type.getShape()[g];
      }
      for (int64_t g : group)
        if (type.isDynamicDim(g) && dynamic == 1 && src[i] && known > 0)
          dims[g] = (*src[i] + known - 1) / known;
    }
    return dims;
  }
  // Row by row: elementwise ops, and a linear that keeps each rank's rows.
  auto linear = dyn_cast<LinearOp>(def);
  bool member = false;
  const bool rowwise =
      (linear && linear.hasDefaultLayouts()) ||
      (succeeded(isChainMember(*def, member, /*emitErrors=*/false)) && member);
  if (!rowwise || src.size() != dims.size())
    return dims;
  return fill([&](size_t i) -> std::optional<int64_t> {
    return i + 1 < dims.size() || !linear ? src[i] : std::nullopt;
  });
}

} // namespace

std::optional<int64_t> mlir::shardlin::detail::staticRowBound(Value x) {
  SmallVector<std::optional<int64_t>> dims = dimBounds(x, 0);
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < dims.size(); ++i) {
    if (!dims[i])
      return std::nullopt;
    std::optional<int64_t> p = llvm::checkedMul(rows, *dims[i]);
    if (!p)
      return std::nullopt;
    rows = *p;
  }
  return rows;
}

int64_t mlir::shardlin::detail::costRows(LinearOp op, int64_t assumedRows,
                                         bool &assumed) {
  auto xType = cast<RankedTensorType>(op.getInput().getType());
  assumed = false;
  if (!hasDynamicBatch(op)) {
    int64_t rows = 1;
    for (int64_t i = 0; i + 1 < xType.getRank(); ++i)
      rows *= xType.getShape()[i]; // Checked by checkSizes.
    return rows;
  }
  if (std::optional<int64_t> bound = staticRowBound(op.getInput()))
    return *bound;
  assumed = true;
  return assumedRows;
}

::shardlin::LinearShape mlir::shardlin::detail::linearShape(LinearOp op,
                                                           int64_t assumedRows) {
  auto xType = cast<RankedTensorType>(op.getInput().getType());
  ShardedType w = op.getWeightType();
  ChunkAttr chunks = w.getSharding();
  ::shardlin::LinearShape shape;
  bool assumed = false;
  shape.rows = costRows(op, assumedRows, assumed);
  shape.n = op.getN();
  shape.k = op.getK();
  shape.dim = op.splitsK() ? 1 : 0;
  shape.placements.assign(chunks.getPlacements().begin(),
                          chunks.getPlacements().end());
  shape.bounds.assign(chunks.getBounds().begin(), chunks.getBounds().end());
  shape.elementBytes = (xType.getElementType().getIntOrFloatBitWidth() + 7) / 8;
  shape.input = toCostLayout(op.getInputLayout());
  shape.result = toCostLayout(op.getResultLayout());
  const bool rowsToFeatures = op.getInputLayout() == Layout::Rows &&
                              op.getResultLayout() == Layout::Features;
  if ((op.getResultLayout() == Layout::Rows &&
       op.getInputLayout() != Layout::Rows) ||
      rowsToFeatures) {
    ChunkAttr rows = op.getRowSplit();
    shape.rowPlacements.assign(rows.getPlacements().begin(),
                               rows.getPlacements().end());
    // Bounds need static rows (the verifier), so they never meet the
    // assumed rows of a dynamic dim.
    shape.rowBounds.assign(rows.getBounds().begin(), rows.getBounds().end());
  }
  return shape;
}

LogicalResult mlir::shardlin::detail::checkSizes(LinearOp op, bool emitErrors,
                                                 int64_t assumedRows) {
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
    batch = staticRowBound(op.getInput()).value_or(assumedRows);
  int64_t w = op.getWeightType().getNumRanks();
  int64_t n = op.getN(), k = op.getK();
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

Outcome mlir::shardlin::detail::decide(LinearOp op,
                                       const LoweringOptions &options) {
  ::shardlin::LinearShape shape = linearShape(op, options.assumedRows);
  Outcome out;
  LoweringDecision &d = out.decision;
  bool assumed = false;
  costRows(op, options.assumedRows, assumed);
  if (assumed)
    d.assumedRows = options.assumedRows;
  for (const ::shardlin::StrategyInfo &info : ::shardlin::strategies())
    if (info.applies(shape))
      d.candidates.push_back(
          ::shardlin::estimateCost(shape, info.strategy, options.machine));
  std::optional<::shardlin::Strategy> pick = options.forced;
  if (pick && !::shardlin::strategyApplies(shape, *pick))
    pick.reset();
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

void mlir::shardlin::detail::reportNoFit(LinearOp op,
                                         const LoweringOptions &options,
                                         const LoweringDecision &d) {
  InFlightDiagnostic diag = op.emitOpError()
                            << "no lowering strategy fits the memory cap of "
                            << options.memoryCapBytes << " bytes per rank";
  for (const ::shardlin::StrategyCost &c : d.candidates)
    diag << "; " << ::shardlin::strategyName(c.strategy) << " needs "
         << c.maxPeakExtraBytes();
}

DecisionTable::Entry DecisionTable::get(LinearOp op) {
  // The properties hold the weight storage and the layouts.
  Key key{op.getInput().getType(), op.getWeight().getType(),
          op->getPropertiesAsAttribute(),
          staticRowBound(op.getInput()).value_or(-1)};
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

void mlir::shardlin::detail::annotate(Operation *gemm,
                                      const LoweringDecision *d) {
  if (!d)
    return annotateLowering(gemm, "local", nullptr);
  annotateLowering(gemm, ::shardlin::strategyName(d->strategy), &d->cost,
                   d->assumedRows);
}
