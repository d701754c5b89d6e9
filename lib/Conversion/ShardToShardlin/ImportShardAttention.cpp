//===- ImportShardAttention.cpp - tm_tensor.attention as shardlin.attention
//===//
//
// torch-mlir's FX importer writes F.scaled_dot_product_attention on q, k, v
// of [B, H, S, D] as `tm_tensor.attention` on their (B*H) x S x D collapse,
// each of them the transpose [0, 2, 1, 3] of a projection [B, S, H*D]
// expanded to [B, S, H, D]; GQA's repeat_interleave of k and v as a
// broadcast generic to [B, Hkv, g, S, D] collapsed to [B, Hkv*g, S, D]; the
// causal mask as an additive [B, H, S, S] linalg.generic over linalg.index
// (0 where i >= j, -inf elsewhere); the result back through the same
// reshapes to [B, S, H*D]. The import recognizes that whole form before the
// walk (prepareAttentions: the reshapes, transposes, broadcasts and the mask
// are absorbed) and builds one global-form shardlin.attention on the
// projections' [B, S, H*D] values when the walk reaches the op
// (importAttention), so that --lower-sharded-linear sees the q/k/v linears,
// the attention and O as one attention block (docs/attention.md).
//
//===----------------------------------------------------------------------===//

#include "ImportShardInternal.h"
#include "TMTensor.h"

#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;
using namespace mlir::shardlin;
using namespace mlir::shardlin::import;

namespace {

bool hasReassociation(ArrayRef<ReassociationIndices> r,
                      ArrayRef<ArrayRef<int64_t>> want) {
  if (r.size() != want.size())
    return false;
  for (auto [a, b] : llvm::zip(r, want))
    if (ArrayRef<int64_t>(a) != b)
      return false;
  return true;
}

/// `v` with its single use by `user` required: the importer drops what it
/// absorbs, so nothing else may read it.
bool onlyUsedBy(Value v, Operation *user) {
  return v.hasOneUse() && *v.getUsers().begin() == user;
}

/// A broadcast generic [B, Hkv, S, D] -> [B, Hkv, g, S, D] (GQA's
/// repeat_interleave), or null.
linalg::GenericOp matchRepeat(Value v) {
  auto g = v.getDefiningOp<linalg::GenericOp>();
  if (!g || g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 ||
      !g.isAllParallelLoops() || g.hasIndexSemantics() || g.getNumLoops() != 5)
    return {};
  MLIRContext *ctx = g.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  auto in = AffineMap::get(5, 0, {d(0), d(1), d(3), d(4)}, ctx);
  if (g.getIndexingMapsArray()[0] != in ||
      !g.getIndexingMapsArray()[1].isIdentity())
    return {};
  Block &body = g.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (body.getOperations().size() != 1 ||
      yield.getOperand(0) != body.getArgument(0))
    return {};
  return g;
}

/// The causal mask generic: no inputs, an [.., S, S] output, body
/// `select(index(rank-2) >= index(rank-1), 0, -inf)`.
bool isCausalMask(linalg::GenericOp g) {
  if (g.getNumDpsInputs() != 0 || g.getNumDpsInits() != 1 ||
      !g.isAllParallelLoops() || !g.getIndexingMapsArray()[0].isIdentity())
    return false;
  const int64_t rank = g.getNumLoops();
  Block &body = g.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto select = yield.getOperand(0).getDefiningOp<arith::SelectOp>();
  if (!select)
    return false;
  auto cmp = select.getCondition().getDefiningOp<arith::CmpIOp>();
  if (!cmp)
    return false;
  auto row = cmp.getLhs().getDefiningOp<linalg::IndexOp>();
  auto col = cmp.getRhs().getDefiningOp<linalg::IndexOp>();
  if (!row || !col || row.getDim() != rank - 2 || col.getDim() != rank - 1)
    return false;
  const bool ge = cmp.getPredicate() == arith::CmpIPredicate::sge ||
                  cmp.getPredicate() == arith::CmpIPredicate::uge;
  FloatAttr keep, drop;
  if (!ge || !matchPattern(select.getTrueValue(), m_Constant(&keep)) ||
      !matchPattern(select.getFalseValue(), m_Constant(&drop)))
    return false;
  return keep.getValue().isZero() && drop.getValue().isInfinity() &&
         drop.getValue().isNegative() && body.getOperations().size() == 5;
}

} // namespace

FailureOr<Value>
FunctionImporter::traceHeads(tmtensor::AttentionOp op, Value v, StringRef name,
                             SmallVectorImpl<Operation *> &absorbed,
                             int64_t &group) {
  auto fail = [&](const Twine &what) {
    return op.emitError() << name << " of tm_tensor.attention: " << what
                          << "; the import takes torch-mlir's form of "
                             "F.scaled_dot_product_attention (docs/"
                             "attention.md, From torch-mlir)";
  };
  Operation *user = op;
  auto collapse = v.getDefiningOp<tensor::CollapseShapeOp>();
  if (!collapse || !onlyUsedBy(v, user) ||
      !hasReassociation(collapse.getReassociationIndices(), {{0, 1}, {2}, {3}}))
    return fail("is not a collapse [[0, 1], [2], [3]] of [B, H, S, D]");
  absorbed.push_back(collapse);
  v = collapse.getSrc();
  user = collapse;
  group = 1;
  if (auto heads = v.getDefiningOp<tensor::CollapseShapeOp>()) {
    // GQA: [B, Hkv, g, S, D] -> [B, Hkv*g, S, D] of a broadcast.
    linalg::GenericOp repeat = matchRepeat(heads.getSrc());
    if (!onlyUsedBy(v, user) || !repeat ||
        !hasReassociation(heads.getReassociationIndices(),
                          {{0}, {1, 2}, {3}, {4}}) ||
        !onlyUsedBy(heads.getSrc(), heads))
      return fail("merges heads other than by repeat_interleave's broadcast");
    group = heads.getSrcType().getDimSize(2);
    absorbed.push_back(heads);
    absorbed.push_back(repeat);
    user = repeat;
    v = repeat.getDpsInputs()[0];
  }
  auto transpose = v.getDefiningOp<linalg::TransposeOp>();
  if (!transpose || !onlyUsedBy(v, user) ||
      transpose.getPermutation() != ArrayRef<int64_t>{0, 2, 1, 3})
    return fail("is not the transpose [0, 2, 1, 3] of [B, S, H, D] (a "
                "rotary embedding or another op on the heads is not "
                "recognized yet)");
  absorbed.push_back(transpose);
  v = transpose.getInput();
  auto expand = v.getDefiningOp<tensor::ExpandShapeOp>();
  if (!expand || !onlyUsedBy(v, transpose) ||
      !hasReassociation(expand.getReassociationIndices(), {{0}, {1}, {2, 3}}))
    return fail("is not the heads [B, S, H, D] of a projection [B, S, H*D] "
                "(tensor.expand_shape [[0], [1], [2, 3]])");
  absorbed.push_back(expand);
  if (expand.getSrcType().isDynamicDim(2) ||
      expand.getResultType().isDynamicDim(3))
    return fail("has a dynamic number of features or head dim");
  return expand.getSrc();
}

LogicalResult FunctionImporter::matchAttention(tmtensor::AttentionOp op) {
  AttentionMatch m;
  m.op = op;
  int64_t qGroup = 1, vGroup = 1;
  FailureOr<Value> q = traceHeads(op, op.getQ(), "q", m.absorbed, qGroup);
  if (failed(q))
    return failure();
  FailureOr<Value> k = traceHeads(op, op.getK(), "k", m.absorbed, m.group);
  if (failed(k))
    return failure();
  FailureOr<Value> v = traceHeads(op, op.getV(), "v", m.absorbed, vGroup);
  if (failed(v))
    return failure();
  if (qGroup != 1 || vGroup != m.group)
    return op.emitError() << "tm_tensor.attention: q repeated or k and v "
                             "repeated differently (groups "
                          << m.group << " and " << vGroup << ")";
  m.q = *q;
  m.k = *k;
  m.v = *v;
  m.headDim = cast<RankedTensorType>(op.getQ().getType()).getDimSize(2);
  if (m.headDim <= 0)
    return op.emitError() << "tm_tensor.attention: the head dim of q must be "
                             "static and positive";
  if (Value mask = op.getMask()) {
    auto collapse = mask.getDefiningOp<tensor::CollapseShapeOp>();
    auto generic = collapse
                       ? collapse.getSrc().getDefiningOp<linalg::GenericOp>()
                       : linalg::GenericOp();
    if (!generic || !onlyUsedBy(mask, op) ||
        !onlyUsedBy(collapse.getSrc(), collapse) || !isCausalMask(generic))
      return op.emitError()
             << "tm_tensor.attention: the mask is not the causal mask that "
                "is_causal=True writes (a generic of select(i >= j, 0, "
                "-inf)); other masks are not supported yet";
    m.absorbed.push_back(collapse);
    m.absorbed.push_back(generic);
  } else {
    return op.emitError() << "tm_tensor.attention without a mask: only "
                             "causal attention (is_causal=True) is supported";
  }
  for (NamedAttribute attr : op->getAttrs())
    if (attr.getName() != "num_ins")
      return op.emitError() << "tm_tensor.attention: attribute '"
                            << attr.getName() << "' is not supported";
  // The result: [B*H, S, D] -> [B, H, S, D] -> [B, S, H, D] -> [B, S, H*D].
  Value r = op.getResult();
  auto expand = r.hasOneUse()
                    ? dyn_cast<tensor::ExpandShapeOp>(*r.getUsers().begin())
                    : tensor::ExpandShapeOp();
  auto transpose = expand && expand.getResult().hasOneUse()
                       ? dyn_cast<linalg::TransposeOp>(
                             *expand.getResult().getUsers().begin())
                       : linalg::TransposeOp();
  auto collapse = transpose && transpose.getResult()[0].hasOneUse()
                      ? dyn_cast<tensor::CollapseShapeOp>(
                            *transpose.getResult()[0].getUsers().begin())
                      : tensor::CollapseShapeOp();
  if (!collapse || transpose.getInput() != expand.getResult() ||
      transpose.getPermutation() != ArrayRef<int64_t>{0, 2, 1, 3} ||
      !hasReassociation(expand.getReassociationIndices(), {{0, 1}, {2}, {3}}) ||
      !hasReassociation(collapse.getReassociationIndices(), {{0}, {1}, {2, 3}}))
    return op.emitError() << "tm_tensor.attention: its result is not "
                             "reshaped back to [B, S, H*D] (expand, transpose "
                             "[0, 2, 1, 3], collapse)";
  m.absorbed.append({expand, transpose});
  m.result = collapse.getResult();
  absorbed_.insert(collapse);
  for (Operation *a : m.absorbed)
    absorbed_.insert(a);
  // With x whole on every rank, the projections are wanted whole (O's
  // layouts replicated -> replicated): taken only where it comes free.
  for (Value p : {m.q, m.k, m.v})
    if (!statedLayout(p))
      preferred_[p] = ValueLayout::replicated();
  attentions_[op] = m;
  return success();
}

/// Whether `v` is [B*H, ...] collapsed from a transpose to [B, H, ...]:
/// the heads of an attention (q, or k transposed) merged with the batch.
static bool mergesHeads(Value v) {
  auto collapse = v.getDefiningOp<tensor::CollapseShapeOp>();
  return collapse && collapse.getSrcType().getRank() == 4 &&
         collapse.getSrc().getDefiningOp<linalg::TransposeOp>() &&
         hasReassociation(collapse.getReassociationIndices(),
                          {{0, 1}, {2}, {3}});
}

LogicalResult FunctionImporter::prepareAttentions() {
  WalkResult walked = func_.walk([&](Operation *op) {
    if (auto att = dyn_cast<tmtensor::AttentionOp>(op))
      return failed(matchAttention(att)) ? WalkResult::interrupt()
                                         : WalkResult::advance();
    // An attention written out (scores = q @ k^T, softmax, @ v): batched
    // over B*H, both operands transposed activations (a linear's right-hand
    // side is a weight broadcast over the batch).
    auto bmm = dyn_cast<linalg::BatchMatmulOp>(op);
    if (bmm && mergesHeads(bmm.getDpsInputs()[0]) &&
        mergesHeads(bmm.getDpsInputs()[1])) {
      bmm.emitError()
          << "a batch_matmul of two activations over the heads ([B*H, ...] "
             "collapsed from [B, H, ...]): an explicitly written attention "
             "(q @ k^T, softmax, @ v) is not supported by the import; write "
             "it as F.scaled_dot_product_attention, which torch-mlir exports "
             "as tm_tensor.attention";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walked.wasInterrupted());
}

LogicalResult FunctionImporter::importAttention(tmtensor::AttentionOp op) {
  auto it = attentions_.find(op);
  if (it == attentions_.end())
    return op.emitError("internal: tm_tensor.attention was not matched");
  const AttentionMatch &m = it->second;
  // Each rank's whole sequences (split along the batch) or everything.
  FailureOr<std::optional<ValueLayout>> ql = layoutOf(m.q);
  if (failed(ql))
    return failure();
  ValueLayout l = ql->value_or(ValueLayout::replicated());
  if (!l.isReplicated() && l.dim != 0)
    l = ValueLayout::replicated();
  SmallVector<Value> locals;
  for (Value p : {m.q, m.k, m.v}) {
    FailureOr<Value> local = get(p, l);
    if (failed(local))
      return failure();
    locals.push_back(*local);
  }
  // A chunking of a projection's weight that splits a head.
  const Value olds[] = {m.q, m.k, m.v};
  const StringRef names[] = {"q", "k", "v"};
  for (unsigned i = 0; i < 3; ++i) {
    Value old = olds[i];
    StringRef name = names[i];
    auto lin = locals[i].getDefiningOp<LinearOp>();
    if (!lin || lin.splitsK())
      continue;
    const int64_t n = cast<RankedTensorType>(old.getType()).getShape().back();
    for (int64_t bound : lin.getWeightType().getSharding().getBoundsFor(n))
      if (bound % m.headDim != 0)
        return op.emitError()
               << name << "'s weight is split at feature " << bound
               << ", inside head " << bound / m.headDim << " (head_dim "
               << m.headDim << "): attention needs whole heads per rank; "
               << "give sharded_dims_offsets that are multiples of the "
                  "head dim";
  }
  auto qType = cast<RankedTensorType>(locals[0].getType());
  auto att = AttentionOp::create(
      b_, op.getLoc(), qType, locals[0], locals[1], locals[2], Value(),
      b_.getI64IntegerAttr(m.headDim), FloatAttr(), b_.getUnitAttr(),
      IntegerAttr(), DenseI64ArrayAttr(), DenseI64ArrayAttr());
  return define(m.result, att.getResult(), l);
}
