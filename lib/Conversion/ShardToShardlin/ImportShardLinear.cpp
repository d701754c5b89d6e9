//===- ImportShardLinear.cpp - linalg.matmul to shardlin.linear -----------===//
//
// A linear layer as producers write it: `linalg.matmul` of an activation x
// (M x K) and a weight, stored K x N, or N x K through a transposing
// `indexing_maps` or a `linalg.transpose`; a bias added by a broadcast
// `linalg.generic`, by `linalg.broadcast` + `linalg.add` (or
// `linalg.elementwise`, `arith.addf`), or by initializing the matmul's
// `outs` with the broadcast bias; N-D activations collapsed to rows before
// it and expanded after. A matmul whose weight is split becomes one
// `shardlin.linear` whose layouts follow from x's layout and the weight's
// split, or from the result's layout where the module states one and a
// linear can produce it directly; a matmul of a replicated weight stays a
// rank-local `linalg.matmul`.
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

namespace {

AffineMap map2(MLIRContext *ctx, unsigned a, unsigned b) {
  return AffineMap::get(3, 0,
                        {getAffineDimExpr(a, ctx), getAffineDimExpr(b, ctx)},
                        ctx);
}

/// `v` with the shard.shard ops that annotate it looked through: what
/// produced it.
Value throughShards(Value v) {
  while (auto s = v.getDefiningOp<shard::ShardOp>())
    v = s.getSrc();
  return v;
}

bool isSwap(linalg::TransposeOp t) {
  return t && t.hasPureTensorSemantics() &&
         t.getPermutation() == ArrayRef<int64_t>{1, 0};
}

/// The element types shardlin's linears take.
bool isLinearElementType(Type t) {
  return t.isF16() || t.isBF16() || t.isF32() || t.isF64();
}

/// A 2-D map broadcasting a vector along the last dim: (d0, d1) -> (d1).
bool isRowVectorMap(AffineMap map) {
  return map.getNumDims() == 2 && map.getNumResults() == 1 &&
         map.getResult(0) == getAffineDimExpr(1, map.getContext());
}

/// `v` is linalg.broadcast of a rank-1 vector along the last dim of a 2-D
/// tensor, into a tensor.empty: the vector.
Value broadcastVector(Value v) {
  auto bcast = v.getDefiningOp<linalg::BroadcastOp>();
  if (!bcast || !bcast.hasPureTensorSemantics() ||
      bcast.getDimensions() != ArrayRef<int64_t>{0} ||
      !bcast.getInit().getDefiningOp<tensor::EmptyOp>())
    return Value();
  return bcast.getInput();
}

/// `v` is a linalg.generic that copies a vector broadcast along the last dim
/// into a tensor.empty: the vector.
Value genericBroadcastVector(Value v) {
  auto g = v.getDefiningOp<linalg::GenericOp>();
  if (!g || !g.hasPureTensorSemantics() || g.getNumDpsInputs() != 1 ||
      g.getNumDpsInits() != 1 || !g.isAllParallelLoops() ||
      !g.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>())
    return Value();
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  if (!isRowVectorMap(maps[0]) || !maps[1].isIdentity())
    return Value();
  Block *body = g.getBody();
  if (body->getOperations().size() != 1 ||
      body->getTerminator()->getOperand(0) != body->getArgument(0))
    return Value();
  return g.getDpsInputs()[0];
}

/// `user` adds a vector broadcast along the last dim to `r`, whose only
/// user it is: the vector. The forms: a linalg.generic or
/// linalg.elementwise add with a (d0, d1) -> (d1) map, and linalg.add or
/// arith.addf of a broadcast vector.
Value biasAddVector(Operation *user, Value r) {
  if (auto addf = dyn_cast<arith::AddFOp>(user)) {
    Value other = addf.getLhs() == r ? addf.getRhs() : addf.getLhs();
    return other == r ? Value() : broadcastVector(other);
  }
  auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
  if (!linalgOp || !linalgOp.hasPureTensorSemantics() ||
      linalgOp.getNumDpsInputs() != 2 || linalgOp.getNumDpsInits() != 1 ||
      !linalgOp.isAllParallelLoops())
    return Value();
  // The body adds its two inputs.
  Block *body = linalgOp.getBlock();
  if (body->getOperations().size() != 2)
    return Value();
  auto add = dyn_cast<arith::AddFOp>(body->front());
  if (!add || body->getTerminator()->getOperand(0) != add.getResult())
    return Value();
  auto args = body->getArguments();
  if (!((add.getLhs() == args[0] && add.getRhs() == args[1]) ||
        (add.getLhs() == args[1] && add.getRhs() == args[0])))
    return Value();
  Value init = linalgOp.getDpsInits()[0];
  if (init != r && !init.getDefiningOp<tensor::EmptyOp>())
    return Value();
  OpOperand *in0 = linalgOp.getDpsInputOperand(0);
  OpOperand *in1 = linalgOp.getDpsInputOperand(1);
  if (in1->get() == r)
    std::swap(in0, in1);
  if (in0->get() != r || !linalgOp.getMatchingIndexingMap(in0).isIdentity())
    return Value();
  AffineMap vectorMap = linalgOp.getMatchingIndexingMap(in1);
  if (vectorMap.isIdentity())
    return broadcastVector(in1->get());
  if (isRowVectorMap(vectorMap) &&
      cast<ShapedType>(in1->get().getType()).getRank() == 1)
    return in1->get();
  return Value();
}

/// The matmul's x is `collapse` of an N-D tensor, its (biased) result is
/// expanded back by `expand`: both fold into an N-D linear.
bool foldsIntoNdLinear(tensor::CollapseShapeOp collapse,
                       tensor::ExpandShapeOp expand) {
  auto src = collapse.getSrcType();
  const int64_t rank = src.getRank();
  if (rank < 3 || !expand || expand.getResultType().getRank() != rank)
    return false;
  SmallVector<ReassociationIndices> want{{}, {rank - 1}};
  for (int64_t i = 0; i + 1 < rank; ++i)
    want[0].push_back(i);
  if (collapse.getReassociationIndices() != want ||
      expand.getReassociationIndices() != want)
    return false;
  ArrayRef<int64_t> in = src.getShape(), out = expand.getResultType().getShape();
  for (int64_t i = 0; i + 1 < rank; ++i)
    if (in[i] != out[i])
      return false;
  return true;
}

} // namespace

bool FunctionImporter::feedsLinearsOnly(Operation *op) {
  if (auto t = dyn_cast<linalg::TransposeOp>(op)) {
    if (!isSwap(t) || t->use_empty())
      return false;
    return llvm::all_of(t->getUses(), [](OpOperand &use) {
      return isa<linalg::MatmulOp>(use.getOwner()) &&
             use.getOperandNumber() == 1;
    });
  }
  auto collapse = dyn_cast<tensor::CollapseShapeOp>(op);
  if (!collapse || !collapse->hasOneUse())
    return false;
  OpOperand &use = *collapse->getUses().begin();
  return isa<linalg::MatmulOp>(use.getOwner()) && use.getOperandNumber() == 0 &&
         collapse.getSrcType().getRank() >= 3;
}

LogicalResult FunctionImporter::importMatmul(linalg::MatmulOp op) {
  MLIRContext *ctx = op.getContext();
  if (!op.hasPureTensorSemantics())
    return op.emitError() << "a linalg.matmul on buffers is not supported: "
                             "the import takes tensors";
  Value a = op.getInputs()[0], b = op.getInputs()[1], c = op.getOutputs()[0];
  auto aType = cast<RankedTensorType>(a.getType());
  auto bType = cast<RankedTensorType>(b.getType());
  auto cType = cast<RankedTensorType>(c.getType());
  Type elt = cType.getElementType();
  if (aType.getElementType() != elt || bType.getElementType() != elt ||
      !isLinearElementType(elt))
    return op.emitError()
           << "a matmul of " << aType.getElementType() << " and "
           << bType.getElementType() << " into " << elt
           << " is not supported: shardlin's linears take one element type, "
              "f16, bf16, f32 or f64 (convert with arith.extf/truncf around "
              "the matmul)";
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  const bool plain = maps[0] == map2(ctx, 0, 2) && maps[1] == map2(ctx, 2, 1) &&
                     maps[2] == map2(ctx, 0, 1);
  const bool transposedB = maps[0] == map2(ctx, 0, 2) &&
                           maps[1] == map2(ctx, 1, 2) &&
                           maps[2] == map2(ctx, 0, 1);
  if (!plain && !transposedB)
    return op.emitError()
           << "a matmul with these indexing_maps is not supported: a linear's "
              "weight is K x N ((d0, d2), (d2, d1), (d0, d1)) or N x K "
              "((d0, d2), (d1, d2), (d0, d1))";

  // The weight as stored: through a transpose, the other orientation.
  Value w = b;
  bool kn = plain;
  if (auto t = throughShards(b).getDefiningOp<linalg::TransposeOp>();
      isSwap(t)) {
    w = t.getInput();
    kn = !kn;
  }
  FailureOr<std::optional<ValueLayout>> wLayout = layoutOf(w);
  if (failed(wLayout))
    return failure();

  // A replicated weight: a rank-local matmul on x's rows (or on all of
  // them, for a replicated x).
  if (!*wLayout || (*wLayout)->isReplicated()) {
    FailureOr<std::optional<ValueLayout>> xl = layoutOf(a);
    if (failed(xl))
      return failure();
    ValueLayout l = xl->value_or(ValueLayout::replicated());
    if (!l.isReplicated() && l.dim != 0)
      return op.emitError()
             << "x is " << describe(l)
             << " but the weight is replicated: a contraction over a split K "
                "needs a split weight";
    FailureOr<Value> x = get(a, l);
    FailureOr<Value> weight = get(b, ValueLayout::replicated());
    if (failed(x) || failed(weight))
      return failure();
    FailureOr<Value> init = get(c, l, *x);
    if (failed(init))
      return failure();
    IRMapping mapping;
    mapping.map(a, *x);
    mapping.map(b, *weight);
    mapping.map(c, *init);
    Operation *local = b_.clone(*op, mapping);
    local->getResult(0).setType(init->getType());
    return define(op.getResult(0), local->getResult(0), l);
  }

  const ValueLayout wl = **wLayout;
  const int64_t n = cType.getShape()[1], k = aType.getShape()[1];
  const bool splitsK = wl.dim == (kn ? 0 : 1);

  // The bias: the matmul's init or the add that follows it. Any other init
  // is added after the linear.
  Value bias, addend;
  Value init = throughShards(c);
  if (auto fill = init.getDefiningOp<linalg::FillOp>();
      fill && isBuildableAnywhere(init) &&
      matchPattern(fill.getInputs()[0], m_AnyZeroFloat())) {
  } else if (Value vec = broadcastVector(init)) {
    bias = vec;
  } else if (Value vec = genericBroadcastVector(init)) {
    bias = vec;
  } else if (init.getDefiningOp<tensor::EmptyOp>()) {
    return op.emitError() << "the matmul accumulates into a tensor.empty, "
                             "whose contents are undefined; initialize it "
                             "with linalg.fill or a broadcast bias";
  } else {
    addend = c;
  }
  Value result = op.getResult(0);
  // The add may read the matmul's result twice (as input and as init).
  if (!bias && !addend && !result.use_empty() &&
      llvm::all_equal(result.getUsers())) {
    Operation *user = *result.getUsers().begin();
    if (Value vec = biasAddVector(user, result)) {
      bias = vec;
      absorbed_.insert(user);
      result = user->getResult(0);
    }
  }
  if (bias && cast<RankedTensorType>(bias.getType()).getElementType() != elt)
    return op.emitError() << "the bias's element type differs from the "
                             "matmul's "
                          << elt;
  // N-D activations: collapse -> matmul -> expand folds into one linear on
  // the rank's rows when x is split along them.
  Value x = a;
  tensor::ExpandShapeOp expand;
  auto collapse = a.getDefiningOp<tensor::CollapseShapeOp>();
  if (collapse && deferred_.contains(collapse) && !addend &&
      result.hasOneUse()) {
    auto candidate = dyn_cast<tensor::ExpandShapeOp>(*result.getUsers().begin());
    FailureOr<std::optional<ValueLayout>> srcLayout = layoutOf(collapse.getSrc());
    if (failed(srcLayout))
      return failure();
    if (foldsIntoNdLinear(collapse, candidate) && *srcLayout &&
        (*srcLayout)->dim == 0) {
      expand = candidate;
      x = collapse.getSrc();
      absorbed_.insert(expand);
      result = expand.getResult();
    }
  }
  auto xType = cast<RankedTensorType>(x.getType());
  const int64_t rank = xType.getRank();
  FailureOr<std::optional<ValueLayout>> xLayout = layoutOf(x);
  if (failed(xLayout))
    return failure();
  ValueLayout xl = xLayout->value_or(ValueLayout::replicated());
  ChunkAttr weightChunks = wl.chunks;

  // The input's layout, and the result's that follows from it.
  auto resultType = cast<RankedTensorType>(result.getType());
  const int64_t last = resultType.getRank() - 1;
  ValueLayout out = ValueLayout::replicated();
  ValueLayout featuresOut = ValueLayout::replicated();
  featuresOut.dim = last;
  featuresOut.chunks = weightChunks.withDim(last);
  shardlin::Layout inKind, outKind;
  if (xl.isReplicated()) {
    inKind = shardlin::Layout::Replicated;
    outKind = splitsK ? shardlin::Layout::Replicated : shardlin::Layout::Features;
    out = splitsK ? ValueLayout::replicated() : featuresOut;
  } else if (xl.dim == 0) {
    inKind = outKind = shardlin::Layout::Rows;
    out = xl; // the same rows of the same global rows
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
    inKind = shardlin::Layout::Features;
    outKind = shardlin::Layout::Replicated;
  } else {
    return op.emitError() << "x is " << describe(xl)
                          << "; shardlin splits activations along their first "
                             "(rows) or last (features) dim";
  }
  // A layout the module states for the result, where a linear produces it
  // directly; else the linear's own, resharded after (define).
  ChunkAttr rowChunks;
  if (std::optional<ValueLayout> want = declared(result); want && *want != out) {
    if (want->isReplicated() && inKind != shardlin::Layout::Rows) {
      outKind = shardlin::Layout::Replicated;
      out = *want;
    } else if (want->dim == 0 && inKind != shardlin::Layout::Rows) {
      outKind = shardlin::Layout::Rows;
      out = *want;
      rowChunks = want->chunks;
    } else if (want->dim == last && !splitsK &&
               want->chunks.sameChunks(weightChunks, n) && !expand &&
               inKind == shardlin::Layout::Rows) {
      outKind = shardlin::Layout::Features;
      out = *want;
      rowChunks = xl.chunks;
    }
  }
  // The default row chunks (rank order, the ceil rule) are left out.
  if (rowChunks && !rowChunks.hasExplicitBounds())
    rowChunks = ChunkAttr();

  // The operands.
  // A split argument is passed as it is (annotations only name its
  // layout); any other weight is assembled from the rank's chunks.
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
        ctx, cast<RankedTensorType>(w.getType()), wl.chunks);
    if (!sharded)
      return failure();
    weight = FromLocalOp::create(b_, op.getLoc(), sharded, *local);
  }
  FailureOr<Value> xLocal = get(x, xl);
  if (failed(xLocal))
    return failure();
  Value biasLocal;
  if (bias) {
    FailureOr<Value> v = get(bias, ValueLayout::replicated());
    if (failed(v))
      return failure();
    biasLocal = *v;
  }
  RankedTensorType type = localType(resultType, out);
  if (inKind == shardlin::Layout::Rows && outKind == shardlin::Layout::Rows) {
    // The rank's rows: as many as x's.
    SmallVector<int64_t> shape(cast<RankedTensorType>(xLocal->getType()).getShape());
    shape.back() = n;
    type = RankedTensorType::get(shape, elt);
  }
  auto linear = LinearOp::create(b_, op.getLoc(), type, *xLocal, weight,
                                 biasLocal, kn, inKind, outKind, rowChunks);
  if (failed(mlir::verify(linear)))
    return failure();
  Value y = linear.getResult();
  if (addend) {
    FailureOr<Value> extra = get(addend, out, y);
    if (failed(extra))
      return failure();
    y = arith::AddFOp::create(b_, op.getLoc(), y, *extra);
  }
  return define(result, y, out);
}
