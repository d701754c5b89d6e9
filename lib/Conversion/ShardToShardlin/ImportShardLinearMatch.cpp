//===- ImportShardLinearMatch.cpp - Recognizing a linear ------------------===//
//
// The first phase of a linear's import: what a `linalg.matmul` and the ops
// around it mean, read from the IR alone (no layouts, nothing built). The
// forms producers write: an activation x (M x K) times a weight stored
// K x N, or N x K through a transposing `indexing_maps` or a
// `linalg.transpose`; a bias added by a broadcast `linalg.generic`, by
// `linalg.broadcast` + `linalg.add` (or `linalg.elementwise`, `arith.addf`),
// or by initializing the matmul's `outs` with the broadcast bias. What
// torch-mlir writes besides: an N-D `nn.Linear` as a `linalg.batch_matmul`
// whose weight is broadcast over the batch by a `linalg.generic` (its
// leading dims collapsed into one for a 4-D or deeper input, expanded
// after), and an f16 / bf16 linear as a matmul into an f32 init rounded by
// an `arith.truncf` generic after it. ImportShardLinear.cpp plans and builds
// the linear from the match.
//
//===----------------------------------------------------------------------===//

#include "ImportShardInternal.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::shardlin;
using namespace mlir::shardlin::import;

Value mlir::shardlin::import::throughShards(Value v) {
  while (auto s = v.getDefiningOp<shard::ShardOp>())
    v = s.getSrc();
  return v;
}

namespace {

AffineMap map2(MLIRContext *ctx, unsigned a, unsigned b) {
  return AffineMap::get(3, 0,
                        {getAffineDimExpr(a, ctx), getAffineDimExpr(b, ctx)},
                        ctx);
}

/// The map of `numDims` dims whose results are `dims`.
AffineMap dimsMap(MLIRContext *ctx, unsigned numDims, ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d : dims)
    exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(numDims, 0, exprs, ctx);
}

bool isHalfType(Type t) { return t.isF16() || t.isBF16(); }

bool isSwap(linalg::TransposeOp t) {
  return t && t.hasPureTensorSemantics() &&
         t.getPermutation() == ArrayRef<int64_t>{1, 0};
}

/// The element types shardlin's linears take.
bool isLinearElementType(Type t) {
  return t.isF16() || t.isBF16() || t.isF32() || t.isF64();
}

/// A map broadcasting a vector along the last dim: (d0, ..., dn) -> (dn).
bool isRowVectorMap(AffineMap map) {
  const unsigned n = map.getNumDims();
  return n >= 2 && map.getNumResults() == 1 &&
         map.getResult(0) == getAffineDimExpr(n - 1, map.getContext());
}

/// `v` is linalg.broadcast of a rank-1 vector along the last dim of a
/// tensor (dimensions [0, ..., r-2]), into a tensor.empty: the vector.
Value broadcastVector(Value v) {
  auto bcast = v.getDefiningOp<linalg::BroadcastOp>();
  if (!bcast || !bcast.hasPureTensorSemantics() ||
      !bcast.getInit().getDefiningOp<tensor::EmptyOp>())
    return Value();
  const int64_t rank = bcast.getInit().getType().getRank();
  ArrayRef<int64_t> dims = bcast.getDimensions();
  if (rank < 2 || static_cast<int64_t>(dims.size()) != rank - 1)
    return Value();
  for (int64_t i = 0; i + 1 < rank; ++i)
    if (dims[i] != i)
      return Value();
  return bcast.getInput();
}

/// [[0, ..., j], [j+1], [j+2]]: the leading dims of a rank j + 3 tensor
/// (j >= 1) collapsed into one batch dim, as torch-mlir collapses a 4-D or
/// deeper input and its broadcast weight for a batch_matmul.
bool collapsesLeadingDims(ArrayRef<ReassociationIndices> groups,
                          int64_t srcRank) {
  if (srcRank < 4 || groups.size() != 3)
    return false;
  ReassociationIndices lead;
  for (int64_t i = 0; i + 2 < srcRank; ++i)
    lead.push_back(i);
  return groups[0] == lead && groups[1] == ReassociationIndices{srcRank - 2} &&
         groups[2] == ReassociationIndices{srcRank - 1};
}

/// `g` copies a 2-D tensor (the weight) into every batch of a tensor.empty
/// of rank >= 3: maps (d0, ..., dn) -> (dn-1, dn) and the identity, a body
/// that yields its input.
bool isWeightBroadcast(linalg::GenericOp g) {
  if (!g || !g.hasPureTensorSemantics() || g.getNumDpsInputs() != 1 ||
      g.getNumDpsInits() != 1 || !g.isAllParallelLoops() ||
      !g.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>())
    return false;
  auto in = dyn_cast<RankedTensorType>(g.getDpsInputs()[0].getType());
  const unsigned n = g.getNumLoops();
  if (!in || in.getRank() != 2 || n < 3)
    return false;
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  if (maps[0] != dimsMap(g.getContext(), n, {n - 2, n - 1}) ||
      !maps[1].isIdentity())
    return false;
  Block *body = g.getBody();
  return body->getOperations().size() == 1 &&
         body->getTerminator()->getOperand(0) == body->getArgument(0);
}

/// The 2-D weight that `v` broadcasts over a batch: a weight broadcast
/// (isWeightBroadcast), its leading dims collapsed into one or not.
Value broadcastWeight(Value v) {
  v = throughShards(v);
  if (auto c = v.getDefiningOp<tensor::CollapseShapeOp>();
      c && collapsesLeadingDims(c.getReassociationIndices(),
                                c.getSrcType().getRank()))
    v = c.getSrc();
  auto g = v.getDefiningOp<linalg::GenericOp>();
  return isWeightBroadcast(g) ? g.getDpsInputs()[0] : Value();
}

/// Whether every use of `v` is a batch_matmul's right-hand operand.
bool feedsBatchWeightsOnly(Value v) {
  return !v.use_empty() && llvm::all_of(v.getUses(), [](OpOperand &use) {
    return isa<linalg::BatchMatmulOp>(use.getOwner()) &&
           use.getOperandNumber() == 1;
  });
}

/// The linalg.generic that rounds `r` (f32), its only user, to `narrow`
/// (f16 or bf16) with one arith.truncf per element into a tensor.empty.
Operation *truncfUser(Value r, Type narrow) {
  if (!r.hasOneUse())
    return nullptr;
  auto g = dyn_cast<linalg::GenericOp>(*r.getUsers().begin());
  if (!g || !g.hasPureTensorSemantics() || g.getNumDpsInputs() != 1 ||
      g.getNumDpsInits() != 1 || g.getDpsInputs()[0] != r ||
      !g.isAllParallelLoops() ||
      !g.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>() ||
      !llvm::all_of(g.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return nullptr;
  Block *body = g.getBody();
  if (body->getOperations().size() != 2)
    return nullptr;
  auto trunc = dyn_cast<arith::TruncFOp>(body->front());
  if (!trunc || trunc.getIn() != body->getArgument(0) ||
      trunc.getType() != narrow ||
      body->getTerminator()->getOperand(0) != trunc.getResult())
    return nullptr;
  return g;
}

/// The element types of `m`'s matmul: one type that a linear takes, or f16
/// / bf16 operands into f32 rounded by the truncf generic after (recorded
/// in `m`); else a diagnostic that names the form.
LogicalResult matchElementTypes(LinearMatch &m) {
  Operation *op = m.op;
  Type a = cast<RankedTensorType>(m.x.getType()).getElementType();
  Type b = cast<RankedTensorType>(m.rhs.getType()).getElementType();
  Type c = cast<RankedTensorType>(m.init.getType()).getElementType();
  if (a == b && isHalfType(a) && c.isF32()) {
    Operation *trunc = truncfUser(op->getResult(0), a);
    if (!trunc)
      return op->emitError()
             << "a matmul of " << a << " and " << b << " into " << c
             << " is imported only when its f32 result is rounded to " << a
             << " by the linalg.generic of arith.truncf that is its only user "
                "(torch-mlir's form: shardlin's "
             << a
             << " linear accumulates in f32 and rounds once); a linear has "
                "no f32 result for "
             << a << " operands";
    m.truncf = trunc;
    m.result = trunc->getResult(0);
    return success();
  }
  if (a != c || b != c || !isLinearElementType(c))
    return op->emitError()
           << "a matmul of " << a << " and " << b << " into " << c
           << " is not supported: shardlin's linears take one element type, "
              "f16, bf16, f32 or f64, or f16 / bf16 operands accumulated "
              "into f32 and rounded by an arith.truncf linalg.generic after "
              "(convert with arith.extf/truncf around the matmul)";
  return success();
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

} // namespace

/// The matmul's x is `collapse` of an N-D tensor, its (biased) result is
/// expanded back by `expand`: both fold into an N-D linear.
bool mlir::shardlin::import::foldsIntoNdLinear(tensor::CollapseShapeOp collapse,
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


bool mlir::shardlin::import::feedsLinearsOnly(Operation *op) {
  // A weight's broadcast over a batch, its leading dims collapsed or not.
  if (auto g = dyn_cast<linalg::GenericOp>(op)) {
    if (!isWeightBroadcast(g) || g->use_empty())
      return false;
    return llvm::all_of(g->getUses(), [](OpOperand &use) {
      auto c = dyn_cast<tensor::CollapseShapeOp>(use.getOwner());
      if (c)
        return collapsesLeadingDims(c.getReassociationIndices(),
                                    c.getSrcType().getRank()) &&
               feedsBatchWeightsOnly(c.getResult());
      return isa<linalg::BatchMatmulOp>(use.getOwner()) &&
             use.getOperandNumber() == 1;
    });
  }
  if (auto t = dyn_cast<linalg::TransposeOp>(op)) {
    if (!isSwap(t) || t->use_empty())
      return false;
    return llvm::all_of(t->getUses(), [](OpOperand &use) {
      Operation *user = use.getOwner();
      if (auto g = dyn_cast<linalg::GenericOp>(user))
        return feedsLinearsOnly(g);
      return isa<linalg::MatmulOp, linalg::BatchMatmulOp>(user) &&
             use.getOperandNumber() == 1;
    });
  }
  auto collapse = dyn_cast<tensor::CollapseShapeOp>(op);
  if (!collapse || collapse->use_empty())
    return false;
  // The collapsed broadcast weight of a batch_matmul.
  if (broadcastWeight(collapse.getResult()) &&
      feedsBatchWeightsOnly(collapse.getResult()))
    return true;
  if (!collapse->hasOneUse())
    return false;
  OpOperand &use = *collapse->getUses().begin();
  if (isa<linalg::BatchMatmulOp>(use.getOwner()))
    return use.getOperandNumber() == 0 &&
           collapsesLeadingDims(collapse.getReassociationIndices(),
                                collapse.getSrcType().getRank());
  return isa<linalg::MatmulOp>(use.getOwner()) && use.getOperandNumber() == 0 &&
         collapse.getSrcType().getRank() >= 3;
}

FailureOr<LinearMatch> mlir::shardlin::import::matchMatmul(linalg::MatmulOp op) {
  MLIRContext *ctx = op.getContext();
  if (!op.hasPureTensorSemantics())
    return op.emitError() << "a linalg.matmul on buffers is not supported: "
                             "the import takes tensors";
  LinearMatch m;
  m.op = op;
  m.x = op.getInputs()[0];
  m.rhs = op.getInputs()[1];
  m.init = op.getOutputs()[0];
  m.result = op.getResult(0);
  if (failed(matchElementTypes(m)))
    return failure();
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
  m.weight = m.rhs;
  m.kn = plain;
  if (auto t = throughShards(m.rhs).getDefiningOp<linalg::TransposeOp>();
      isSwap(t)) {
    m.weight = t.getInput();
    m.kn = !m.kn;
  }
  return m;
}

FailureOr<LinearMatch>
mlir::shardlin::import::matchBatchMatmul(linalg::BatchMatmulOp op) {
  MLIRContext *ctx = op.getContext();
  if (!op.hasPureTensorSemantics())
    return op.emitError() << "a linalg.batch_matmul on buffers is not "
                             "supported: the import takes tensors";
  LinearMatch m;
  m.op = op;
  m.x = op.getInputs()[0];
  m.rhs = op.getInputs()[1];
  m.init = op.getOutputs()[0];
  m.result = op.getResult(0);
  if (failed(matchElementTypes(m)))
    return failure();
  // (batch, m, n, k) = (d0, d1, d2, d3): x (d0, d1, d3), y (d0, d1, d2); the
  // weight per batch, K x N or N x K, or one K x N weight for all through the
  // maps (MLIR 22's broadcast; its verifier takes no other for the
  // right-hand operand).
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps[0] != dimsMap(ctx, 4, {0, 1, 3}) ||
      maps[2] != dimsMap(ctx, 4, {0, 1, 2}))
    return op.emitError()
           << "a batch_matmul with these indexing_maps is not supported: a "
              "linear's x is (d0, d1, d3) and its result (d0, d1, d2)";
  const bool byMaps = maps[1].getNumResults() == 2;
  if (maps[1] == dimsMap(ctx, 4, {0, 3, 2}) ||
      maps[1] == dimsMap(ctx, 4, {3, 2}))
    m.kn = true;
  else if (maps[1] == dimsMap(ctx, 4, {0, 2, 3}))
    m.kn = false;
  else
    return op.emitError()
           << "a batch_matmul with these indexing_maps is not supported: a "
              "linear's weight is K x N ((d0, d3, d2) or (d3, d2)) or N x K "
              "((d0, d2, d3))";
  m.weight = byMaps ? m.rhs : broadcastWeight(m.rhs);
  if (!m.weight)
    return op.emitError()
           << "a batch_matmul is imported as a linear when its right-hand "
              "operand is one weight for every batch: a linalg.generic that "
              "copies a 2-D tensor with the map (d0, ..., dn) -> (dn-1, dn) "
              "into a tensor.empty (its leading dims collapsed or not), or "
              "the batch_matmul's broadcasting indexing_maps; a batch of "
              "different matrices is not a linear";
  if (auto t = throughShards(m.weight).getDefiningOp<linalg::TransposeOp>();
      isSwap(t)) {
    m.weight = t.getInput();
    m.kn = !m.kn;
  }
  // An input of rank >= 4, its leading dims collapsed into the batch and
  // expanded back after (the rounding, if any, comes first).
  auto collapse = m.x.getDefiningOp<tensor::CollapseShapeOp>();
  if (collapse &&
      collapsesLeadingDims(collapse.getReassociationIndices(),
                           collapse.getSrcType().getRank()) &&
      m.result.hasOneUse()) {
    auto expand = dyn_cast<tensor::ExpandShapeOp>(*m.result.getUsers().begin());
    if (expand &&
        expand.getReassociationIndices() ==
            collapse.getReassociationIndices() &&
        expand.getResultType().getShape().drop_back() ==
            collapse.getSrcType().getShape().drop_back()) {
      m.ndX = collapse.getSrc();
      m.ndExpand = expand;
      m.result = expand.getResult();
    }
  }
  return m;
}

LogicalResult mlir::shardlin::import::matchBias(LinearMatch &m) {
  Operation *op = m.op;
  // The bias: the matmul's init or the add that follows it. Any other init
  // is added after the linear.
  Value init = throughShards(m.init);
  auto fill = init.getDefiningOp<linalg::FillOp>();
  const bool zero = fill && isBuildableAnywhere(init) &&
                    matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
  if (m.truncf) {
    // A bias added after the rounding is a rounded add of its own, not the
    // linear's (which adds it in f32 before rounding): it stays an
    // elementwise op.
    if (!zero)
      return op->emitError()
             << "the f32 accumulator of a matmul rounded by arith.truncf "
                "must start as a zero linalg.fill: a bias or addend summed "
                "in f32 before the rounding has no shardlin form (add it "
                "after the arith.truncf)";
    return success();
  }
  if (zero) {
  } else if (Value vec = broadcastVector(init)) {
    m.bias = vec;
  } else if (Value vec = genericBroadcastVector(init)) {
    m.bias = vec;
  } else if (init.getDefiningOp<tensor::EmptyOp>()) {
    return op->emitError() << "the matmul accumulates into a tensor.empty, "
                              "whose contents are undefined; initialize it "
                              "with linalg.fill or a broadcast bias";
  } else {
    m.addend = m.init;
  }
  // The add may read the matmul's result twice (as input and as init).
  Value result = m.result;
  if (!m.bias && !m.addend && !result.use_empty() &&
      llvm::all_equal(result.getUsers())) {
    Operation *user = *result.getUsers().begin();
    if (Value vec = biasAddVector(user, result)) {
      m.bias = vec;
      m.biasAdd = user;
      m.result = user->getResult(0);
    }
  }
  Type elt = cast<RankedTensorType>(m.init.getType()).getElementType();
  if (m.bias && cast<RankedTensorType>(m.bias.getType()).getElementType() != elt)
    return op->emitError() << "the bias's element type differs from the "
                              "matmul's "
                           << elt;
  return success();
}
