//===- LinearDecisions.cpp - Deciding how each linear is lowered ----------===//

#include "LinearDecisions.h"

#include "shardlin/Dialect/Shardlin/Transforms/LoweringSupport.h"

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

::shardlin::LinearShape mlir::shardlin::detail::linearShape(LinearOp op,
                                                           int64_t assumedRows) {
  auto xType = cast<RankedTensorType>(op.getInput().getType());
  ShardedType w = op.getWeightType();
  ChunkAttr chunks = w.getSharding();
  ::shardlin::LinearShape shape;
  shape.rows = 1;
  if (hasDynamicBatch(op))
    shape.rows = assumedRows;
  else
    for (int64_t i = 0; i + 1 < xType.getRank(); ++i)
      shape.rows *= xType.getShape()[i]; // Checked by checkSizes.
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
    batch = assumedRows;
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
  if (hasDynamicBatch(op))
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
          op->getPropertiesAsAttribute()};
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
