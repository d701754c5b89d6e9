//===- ImportShardLinear.cpp - linalg.matmul to shardlin.linear -----------===//
//
// The plan and the rewrite of a linear's import, after its match
// (ImportShardLinearMatch.cpp): a matmul whose weight is split becomes one
// `shardlin.linear` whose layouts follow from x's layout and the weight's
// split, or from the result's layout where the module states one and a
// linear can produce it directly; N-D activations collapsed to rows before
// it and expanded after fold into it; a matmul of a replicated weight stays
// a rank-local `linalg.matmul`.
//
//===----------------------------------------------------------------------===//

#include "ImportShardInternal.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace mlir::shardlin;
using namespace mlir::shardlin::import;

LogicalResult FunctionImporter::importMatmul(linalg::MatmulOp op) {
  FailureOr<LinearMatch> m = matchMatmul(op);
  if (failed(m))
    return failure();
  FailureOr<std::optional<ValueLayout>> wLayout = layoutOf(m->weight);
  if (failed(wLayout))
    return failure();
  if (!*wLayout || (*wLayout)->isReplicated())
    return importLocalMatmul(*m);
  if (failed(matchBias(*m)))
    return failure();
  const ValueLayout wl = **wLayout;
  FailureOr<LinearPlan> plan = planLinear(*m, wl);
  if (failed(plan))
    return failure();
  return buildLinear(*m, *plan, wl);
}

/// A replicated weight: a rank-local matmul on x's rows (or on all of them,
/// for a replicated x).
LogicalResult FunctionImporter::importLocalMatmul(const LinearMatch &m) {
  Operation *op = m.op;
  FailureOr<std::optional<ValueLayout>> xl = layoutOf(m.x);
  if (failed(xl))
    return failure();
  ValueLayout l = xl->value_or(ValueLayout::replicated());
  if (!l.isReplicated() && l.dim != 0)
    return op->emitError()
           << "x is " << describe(l)
           << " but the weight is replicated: a contraction over a split K "
              "needs a split weight";
  FailureOr<Value> x = get(m.x, l);
  FailureOr<Value> weight = get(m.rhs, ValueLayout::replicated());
  if (failed(x) || failed(weight))
    return failure();
  FailureOr<Value> init = get(m.init, l, *x);
  if (failed(init))
    return failure();
  IRMapping mapping;
  mapping.map(m.x, *x);
  mapping.map(m.rhs, *weight);
  mapping.map(m.init, *init);
  Operation *local = b_.clone(*op, mapping);
  local->getResult(0).setType(init->getType());
  return define(op->getResult(0), local->getResult(0), l);
}

FailureOr<LinearPlan> FunctionImporter::planLinear(LinearMatch &m,
                                                   const ValueLayout &wl) {
  Operation *op = m.op;
  auto aType = cast<RankedTensorType>(m.x.getType());
  auto cType = cast<RankedTensorType>(m.init.getType());
  const int64_t n = cType.getShape()[1], k = aType.getShape()[1];
  const bool splitsK = wl.dim == (m.kn ? 0 : 1);
  LinearPlan plan;
  // N-D activations: collapse -> matmul -> expand folds into one linear on
  // the rank's rows when x is split along them.
  plan.x = m.x;
  auto collapse = m.x.getDefiningOp<tensor::CollapseShapeOp>();
  if (collapse && deferred_.contains(collapse) && !m.addend &&
      m.result.hasOneUse()) {
    auto candidate =
        dyn_cast<tensor::ExpandShapeOp>(*m.result.getUsers().begin());
    FailureOr<std::optional<ValueLayout>> srcLayout =
        layoutOf(collapse.getSrc());
    if (failed(srcLayout))
      return failure();
    if (foldsIntoNdLinear(collapse, candidate) && *srcLayout &&
        (*srcLayout)->dim == 0) {
      plan.expand = candidate;
      plan.x = collapse.getSrc();
      m.result = candidate.getResult();
    }
  }
  const int64_t rank = cast<RankedTensorType>(plan.x.getType()).getRank();
  FailureOr<std::optional<ValueLayout>> xLayout = layoutOf(plan.x);
  if (failed(xLayout))
    return failure();
  const ValueLayout xl = xLayout->value_or(ValueLayout::replicated());
  plan.xl = xl;
  ChunkAttr weightChunks = wl.chunks;

  // The input's layout, and the result's that follows from it.
  auto resultType = cast<RankedTensorType>(m.result.getType());
  const int64_t last = resultType.getRank() - 1;
  ValueLayout featuresOut = ValueLayout::replicated();
  featuresOut.dim = last;
  featuresOut.chunks = weightChunks.withDim(last);
  plan.out = ValueLayout::replicated();
  if (xl.isReplicated()) {
    plan.inKind = Layout::Replicated;
    plan.outKind = splitsK ? Layout::Replicated : Layout::Features;
    plan.out = splitsK ? ValueLayout::replicated() : featuresOut;
  } else if (xl.dim == 0) {
    plan.inKind = plan.outKind = Layout::Rows;
    plan.out = xl; // the same rows of the same global rows
  } else if (xl.dim == rank - 1) {
    if (!splitsK)
      return op->emitError()
             << "x is split along its features (K) but the weight along N: a "
                "linear needs x whole there (conflicting shardings)";
    if (!xl.chunks.sameChunks(weightChunks, k))
      return op->emitError()
             << "x's features are " << describe(xl) << " but the weight's K is "
             << describe(wl) << ": the chunks must be the same (conflicting "
             << "shardings)";
    plan.inKind = Layout::Features;
    plan.outKind = Layout::Replicated;
  } else {
    return op->emitError() << "x is " << describe(xl)
                           << "; shardlin splits activations along their first "
                              "(rows) or last (features) dim";
  }
  // A layout the module states for the result, where a linear produces it
  // directly; else the linear's own, resharded after (define).
  if (std::optional<ValueLayout> want = declared(m.result);
      want && *want != plan.out) {
    if (want->isReplicated() && plan.inKind != Layout::Rows) {
      plan.outKind = Layout::Replicated;
      plan.out = *want;
    } else if (want->dim == 0 && plan.inKind != Layout::Rows) {
      plan.outKind = Layout::Rows;
      plan.out = *want;
      plan.rowChunks = want->chunks;
    } else if (want->dim == last && !splitsK &&
               want->chunks.sameChunks(weightChunks, n) && !plan.expand &&
               plan.inKind == Layout::Rows) {
      plan.outKind = Layout::Features;
      plan.out = *want;
      plan.rowChunks = xl.chunks;
    }
  }
  // The default row chunks (rank order, the ceil rule) are left out.
  if (plan.rowChunks && !plan.rowChunks.hasExplicitBounds())
    plan.rowChunks = ChunkAttr();
  return plan;
}

FailureOr<Value> FunctionImporter::shardedWeight(const LinearMatch &m,
                                                 const ValueLayout &wl) {
  Operation *op = m.op;
  // A split argument is passed as it is (annotations only name its
  // layout); any other weight is assembled from the rank's chunks.
  Value w = m.weight;
  if (Value root = throughShards(w);
      shardedArgs_.count(root) && layouts_.lookup(root) == wl)
    return shardedArgs_.lookup(root);
  FailureOr<Value> local = get(w, wl);
  if (failed(local))
    return failure();
  auto sharded = ShardedType::getChecked(
      [&]() -> InFlightDiagnostic {
        return op->emitError()
               << "the weight (" << cast<RankedTensorType>(w.getType()) << ", "
               << describe(wl) << "): ";
      },
      op->getContext(), cast<RankedTensorType>(w.getType()), wl.chunks);
  if (!sharded)
    return failure();
  return FromLocalOp::create(b_, op->getLoc(), sharded, *local).getResult();
}

LogicalResult FunctionImporter::buildLinear(const LinearMatch &m,
                                            const LinearPlan &plan,
                                            const ValueLayout &wl) {
  Operation *op = m.op;
  if (m.biasAdd)
    absorbed_.insert(m.biasAdd);
  if (m.truncf)
    absorbed_.insert(m.truncf);
  if (plan.expand)
    absorbed_.insert(plan.expand);
  FailureOr<Value> weight = shardedWeight(m, wl);
  if (failed(weight))
    return failure();
  FailureOr<Value> xLocal = get(plan.x, plan.xl);
  if (failed(xLocal))
    return failure();
  Value biasLocal;
  if (m.bias) {
    FailureOr<Value> v = get(m.bias, ValueLayout::replicated());
    if (failed(v))
      return failure();
    biasLocal = *v;
  }
  auto resultType = cast<RankedTensorType>(m.result.getType());
  RankedTensorType type = localType(resultType, plan.out);
  if (plan.inKind == Layout::Rows && plan.outKind == Layout::Rows) {
    // The rank's rows: as many as x's.
    SmallVector<int64_t> shape(
        cast<RankedTensorType>(xLocal->getType()).getShape());
    shape.back() = resultType.getShape().back();
    type = RankedTensorType::get(shape, resultType.getElementType());
  }
  auto linear =
      LinearOp::create(b_, op->getLoc(), type, *xLocal, *weight, biasLocal,
                       m.kn, plan.inKind, plan.outKind, plan.rowChunks);
  if (failed(mlir::verify(linear)))
    return failure();
  Value y = linear.getResult();
  if (m.addend) {
    FailureOr<Value> extra = get(m.addend, plan.out, y);
    if (failed(extra))
      return failure();
    y = arith::AddFOp::create(b_, op->getLoc(), y, *extra);
  }
  return define(m.result, y, plan.out);
}

//===----------------------------------------------------------------------===//
// linalg.batch_matmul of one weight broadcast over the batch
//===----------------------------------------------------------------------===//

namespace {

/// [[0, ..., rank-2], [rank-1]]: an N-D tensor's rows collapsed into one dim.
SmallVector<ReassociationIndices> rowsGroups(int64_t rank) {
  SmallVector<ReassociationIndices> groups(2);
  for (int64_t i = 0; i + 1 < rank; ++i)
    groups[0].push_back(i);
  groups[1].push_back(rank - 1);
  return groups;
}

/// `local` (N-D) collapsed to rows x its last dim.
Value collapseRows(OpBuilder &b, Location loc, Value local) {
  auto type = cast<RankedTensorType>(local.getType());
  return tensor::CollapseShapeOp::create(b, loc, local,
                                         rowsGroups(type.getRank()));
}

/// `y2` (rows x N') expanded to `type`, whose leading dims are those of
/// `rowsOf` (N-D) and whose last dim is y2's.
Value expandRows(OpBuilder &b, Location loc, Value y2, RankedTensorType type,
                 Value rowsOf) {
  const int64_t rank = type.getRank();
  SmallVector<OpFoldResult> shape;
  for (int64_t i = 0; i < rank; ++i) {
    if (!type.isDynamicDim(i)) {
      shape.push_back(b.getIndexAttr(type.getDimSize(i)));
      continue;
    }
    Value src = i + 1 < rank ? rowsOf : y2;
    shape.push_back(
        tensor::DimOp::create(b, loc, src, i + 1 < rank ? i : 1).getResult());
  }
  return tensor::ExpandShapeOp::create(b, loc, type, y2, rowsGroups(rank),
                                       shape);
}

} // namespace

LogicalResult FunctionImporter::importBatchMatmul(linalg::BatchMatmulOp op) {
  FailureOr<LinearMatch> m = matchBatchMatmul(op);
  if (failed(m))
    return failure();
  FailureOr<std::optional<ValueLayout>> wLayout = layoutOf(m->weight);
  if (failed(wLayout))
    return failure();
  if (!*wLayout || (*wLayout)->isReplicated())
    return importLocalBatchMatmul(*m);
  if (failed(matchBias(*m)))
    return failure();
  if (m->addend)
    return op.emitError()
           << "a batch_matmul's init must be a zero linalg.fill or the "
              "broadcast bias: another init is not supported";
  const ValueLayout wl = **wLayout;
  FailureOr<LinearPlan> plan = planBatchLinear(*m, wl);
  if (failed(plan))
    return failure();
  return buildBatchLinear(*m, *plan, wl);
}

FailureOr<LinearPlan> FunctionImporter::planBatchLinear(LinearMatch &m,
                                                        const ValueLayout &wl) {
  Operation *op = m.op;
  LinearPlan plan;
  plan.x = m.ndX ? m.ndX : m.x;
  plan.expand = m.ndExpand;
  auto xType = cast<RankedTensorType>(plan.x.getType());
  const int64_t rank = xType.getRank();
  const bool splitsK = wl.dim == (m.kn ? 0 : 1);
  FailureOr<std::optional<ValueLayout>> xLayout = layoutOf(plan.x);
  if (failed(xLayout))
    return failure();
  plan.xl = xLayout->value_or(ValueLayout::replicated());
  if (plan.xl.isReplicated()) {
    // The 2-D linear on all rows: the rank's features (N split) or all of
    // them (K split, or a replicated result stated for it).
    ValueLayout features = ValueLayout::replicated();
    features.dim = rank - 1;
    features.chunks = wl.chunks.withDim(rank - 1);
    plan.inKind = Layout::Replicated;
    plan.outKind = splitsK ? Layout::Replicated : Layout::Features;
    plan.out = splitsK ? ValueLayout::replicated() : features;
    if (std::optional<ValueLayout> want = declared(m.result);
        want && want->isReplicated()) {
      plan.outKind = Layout::Replicated;
      plan.out = *want;
    }
  } else if (plan.xl.dim < rank - 1) {
    // Split along a leading dim (batch or sequence): each rank's rows of
    // the N-D input, the same rows of the result.
    plan.inKind = plan.outKind = Layout::Rows;
    plan.out = plan.xl;
  } else {
    if (!splitsK)
      return op->emitError()
             << "x is split along its features (K) but the weight along N: a "
                "linear needs x whole there (conflicting shardings)";
    if (!plan.xl.chunks.sameChunks(wl.chunks, xType.getShape().back()))
      return op->emitError()
             << "x's features are " << describe(plan.xl)
             << " but the weight's K is " << describe(wl)
             << ": the chunks must be the same (conflicting shardings)";
    plan.inKind = Layout::Features;
    plan.outKind = Layout::Replicated;
    plan.out = ValueLayout::replicated();
  }
  return plan;
}

LogicalResult FunctionImporter::buildBatchLinear(const LinearMatch &m,
                                                 const LinearPlan &plan,
                                                 const ValueLayout &wl) {
  Operation *op = m.op;
  Location loc = op->getLoc();
  tensor::ExpandShapeOp expand = plan.expand;
  for (Operation *absorbed : {m.biasAdd, m.truncf, expand.getOperation()})
    if (absorbed)
      absorbed_.insert(absorbed);
  FailureOr<Value> weight = shardedWeight(m, wl);
  FailureOr<Value> xLocal = get(plan.x, plan.xl);
  if (failed(weight) || failed(xLocal))
    return failure();
  Value biasLocal;
  if (m.bias) {
    FailureOr<Value> v = get(m.bias, ValueLayout::replicated());
    if (failed(v))
      return failure();
    biasLocal = *v;
  }
  auto resultType = cast<RankedTensorType>(m.result.getType());
  auto xType = cast<RankedTensorType>(xLocal->getType());
  Type elt = resultType.getElementType();
  const int64_t n = resultType.getShape().back();
  if (plan.inKind == Layout::Rows) {
    // The N-D linear on the rank's rows.
    SmallVector<int64_t> shape(xType.getShape());
    shape.back() = n;
    auto linear = LinearOp::create(b_, loc, RankedTensorType::get(shape, elt),
                                   *xLocal, *weight, biasLocal, m.kn,
                                   Layout::Rows, Layout::Rows, ChunkAttr());
    if (failed(mlir::verify(linear)))
      return failure();
    return define(m.result, linear.getResult(), plan.out);
  }
  // A replicated or feature-split input: the 2-D linear on all rows between
  // a collapse and an expand, both rank-local.
  int64_t rows = 1;
  for (int64_t d : xType.getShape().drop_back())
    rows = (ShapedType::isDynamic(d) || ShapedType::isDynamic(rows))
               ? ShapedType::kDynamic
               : rows * d;
  ValueLayout out2 = plan.out;
  if (!out2.isReplicated()) {
    out2.dim = 1;
    out2.chunks = plan.out.chunks.withDim(1);
  }
  RankedTensorType type2 =
      localType(RankedTensorType::get({rows, n}, elt), out2);
  auto linear =
      LinearOp::create(b_, loc, type2, collapseRows(b_, loc, *xLocal), *weight,
                       biasLocal, m.kn, plan.inKind, plan.outKind, ChunkAttr());
  if (failed(mlir::verify(linear)))
    return failure();
  Value y = expandRows(b_, loc, linear.getResult(),
                       localType(resultType, plan.out), *xLocal);
  return define(m.result, y, plan.out);
}

/// A replicated weight: a rank-local linalg.matmul on the rows of x (the
/// batch_matmul's own, split along a leading dim or replicated), between a
/// collapse and an expand.
LogicalResult FunctionImporter::importLocalBatchMatmul(const LinearMatch &m) {
  Operation *op = m.op;
  Location loc = op->getLoc();
  FailureOr<std::optional<ValueLayout>> xl = layoutOf(m.x);
  if (failed(xl))
    return failure();
  ValueLayout l = xl->value_or(ValueLayout::replicated());
  if (!l.isReplicated() && l.dim == 2)
    return op->emitError()
           << "x is " << describe(l)
           << " but the weight is replicated: a contraction over a split K "
              "needs a split weight";
  Value init = throughShards(m.init);
  auto fill = init.getDefiningOp<linalg::FillOp>();
  if (!fill || !isBuildableAnywhere(init) ||
      !matchPattern(fill.getInputs()[0], m_AnyZeroFloat()))
    return op->emitError()
           << "a batch_matmul of a replicated weight must accumulate into a "
              "zero linalg.fill (added after it: a bias)";
  FailureOr<Value> x = get(m.x, l);
  FailureOr<Value> w = get(m.weight, ValueLayout::replicated());
  if (failed(x) || failed(w))
    return failure();
  Value x2 = collapseRows(b_, loc, *x);
  auto initType = cast<RankedTensorType>(m.init.getType());
  auto x2Type = cast<RankedTensorType>(x2.getType());
  SmallVector<Value> dyn;
  if (x2Type.isDynamicDim(0))
    dyn.push_back(tensor::DimOp::create(b_, loc, x2, 0));
  auto type2 =
      RankedTensorType::get({x2Type.getDimSize(0), initType.getShape().back()},
                            initType.getElementType());
  Value empty = tensor::EmptyOp::create(b_, loc, type2, dyn);
  Value zero = arith::ConstantOp::create(
      b_, loc, b_.getZeroAttr(initType.getElementType()));
  Value init2 = linalg::FillOp::create(b_, loc, zero, empty).getResult(0);
  auto matmul = linalg::MatmulOp::create(b_, loc, TypeRange{type2},
                                         ValueRange{x2, *w}, ValueRange{init2});
  if (!m.kn) {
    MLIRContext *ctx = op->getContext();
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    matmul.setIndexingMapsAttr(
        b_.getAffineMapArrayAttr({AffineMap::get(3, 0, {d(0), d(2)}, ctx),
                                  AffineMap::get(3, 0, {d(1), d(2)}, ctx),
                                  AffineMap::get(3, 0, {d(0), d(1)}, ctx)}));
  }
  RankedTensorType type = localType(initType, l);
  Value y = expandRows(b_, loc, matmul.getResult(0), type, *x);
  return define(op->getResult(0), y, l);
}
