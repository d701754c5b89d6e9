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
  linalg::MatmulOp op = m.op;
  FailureOr<std::optional<ValueLayout>> xl = layoutOf(m.x);
  if (failed(xl))
    return failure();
  ValueLayout l = xl->value_or(ValueLayout::replicated());
  if (!l.isReplicated() && l.dim != 0)
    return op.emitError()
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
  return define(op.getResult(0), local->getResult(0), l);
}

FailureOr<LinearPlan> FunctionImporter::planLinear(LinearMatch &m,
                                                   const ValueLayout &wl) {
  linalg::MatmulOp op = m.op;
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
      return op.emitError()
             << "x is split along its features (K) but the weight along N: a "
                "linear needs x whole there (conflicting shardings)";
    if (!xl.chunks.sameChunks(weightChunks, k))
      return op.emitError()
             << "x's features are " << describe(xl) << " but the weight's K is "
             << describe(wl) << ": the chunks must be the same (conflicting "
             << "shardings)";
    plan.inKind = Layout::Features;
    plan.outKind = Layout::Replicated;
  } else {
    return op.emitError() << "x is " << describe(xl)
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

LogicalResult FunctionImporter::buildLinear(const LinearMatch &m,
                                            const LinearPlan &plan,
                                            const ValueLayout &wl) {
  linalg::MatmulOp op = m.op;
  if (m.biasAdd)
    absorbed_.insert(m.biasAdd);
  if (plan.expand)
    absorbed_.insert(plan.expand);
  // A split argument is passed as it is (annotations only name its
  // layout); any other weight is assembled from the rank's chunks.
  Value w = m.weight;
  Value weight;
  if (Value root = throughShards(w);
      shardedArgs_.count(root) && layouts_.lookup(root) == wl)
    weight = shardedArgs_.lookup(root);
  if (!weight) {
    FailureOr<Value> local = get(w, wl);
    if (failed(local))
      return failure();
    auto sharded = ShardedType::getChecked(
        [&]() -> InFlightDiagnostic {
          return op.emitError() << "the weight ("
                                << cast<RankedTensorType>(w.getType()) << ", "
                                << describe(wl) << "): ";
        },
        op.getContext(), cast<RankedTensorType>(w.getType()), wl.chunks);
    if (!sharded)
      return failure();
    weight = FromLocalOp::create(b_, op.getLoc(), sharded, *local);
  }
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
    auto cType = cast<RankedTensorType>(m.init.getType());
    shape.back() = cType.getShape()[1];
    type = RankedTensorType::get(shape, cType.getElementType());
  }
  auto linear =
      LinearOp::create(b_, op.getLoc(), type, *xLocal, weight, biasLocal,
                       m.kn, plan.inKind, plan.outKind, plan.rowChunks);
  if (failed(mlir::verify(linear)))
    return failure();
  Value y = linear.getResult();
  if (m.addend) {
    FailureOr<Value> extra = get(m.addend, plan.out, y);
    if (failed(extra))
      return failure();
    y = arith::AddFOp::create(b_, op.getLoc(), y, *extra);
  }
  return define(m.result, y, plan.out);
}
