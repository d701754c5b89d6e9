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
#include <cstring>

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

/// A generic of 4 parallel loops whose body is `yield <Op>(args...)` of its
/// block arguments in either order (one or two inputs), or null.
template <typename Op>
linalg::GenericOp matchElementwise(Value v, unsigned numInputs) {
  auto g = v.getDefiningOp<linalg::GenericOp>();
  if (!g || g.getNumDpsInputs() != numInputs || g.getNumDpsInits() != 1 ||
      !g.isAllParallelLoops() || g.hasIndexSemantics() ||
      g.getNumLoops() != 4 || !g.getIndexingMapsArray().back().isIdentity())
    return {};
  Block &body = g.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto op = yield.getOperand(0).getDefiningOp<Op>();
  if (!op || body.getOperations().size() != 2)
    return {};
  SmallVector<Value> args(op->getOperands());
  SmallVector<Value> want(body.getArguments().take_front(numInputs));
  if (args != want &&
      !(numInputs == 2 && args[0] == want[1] && args[1] == want[0]))
    return {};
  return g;
}

/// `x * table` on [B, H, S, D] heads (identity map) and an [S, D] constant
/// (map (d2, d3)), in either order: the heads and the constant, or nulls.
std::pair<Value, arith::ConstantOp> matchMulByTable(Value v) {
  linalg::GenericOp g = matchElementwise<arith::MulFOp>(v, 2);
  if (!g)
    return {};
  MLIRContext *ctx = g.getContext();
  auto sd = AffineMap::get(
      4, 0, {getAffineDimExpr(2, ctx), getAffineDimExpr(3, ctx)}, ctx);
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  for (unsigned i : {0u, 1u}) {
    auto table = g.getDpsInputs()[1 - i].getDefiningOp<arith::ConstantOp>();
    if (maps[i].isIdentity() && maps[1 - i] == sd && table)
      return {g.getDpsInputs()[i], table};
  }
  return {};
}

/// Whether `v` is the slice [..., offset, offset + D/2) of the last dim of
/// heads `x` ([B, H, S, D]), whole in the other dims.
bool isHalfOf(Value v, Value x, bool upper) {
  auto slice = v.getDefiningOp<tensor::ExtractSliceOp>();
  auto type = cast<RankedTensorType>(x.getType());
  if (!slice || slice.getSource() != x || !type.hasStaticShape() ||
      slice.getResultType().getRank() != 4 || type.getDimSize(3) % 2 != 0)
    return false;
  const int64_t half = type.getDimSize(3) / 2;
  SmallVector<int64_t> sizes(type.getShape());
  sizes.back() = half;
  SmallVector<int64_t> offsets{0, 0, 0, upper ? half : 0};
  return slice.getStaticOffsets() == ArrayRef(offsets) &&
         slice.getStaticSizes() == ArrayRef(sizes) &&
         llvm::all_of(slice.getStaticStrides(),
                      [](int64_t s) { return s == 1; });
}

/// Llama's rotate-half RoPE on heads as torch-mlir writes it:
///   x * cos + concat(-x[..., D/2:], x[..., :D/2], dim 3) * sin
/// with cos and sin [S, D] constants.
struct RopeForm {
  Value x;
  arith::ConstantOp cos, sin;
  SmallVector<Operation *> ops;
};

std::optional<RopeForm> matchRope(Value v) {
  linalg::GenericOp add = matchElementwise<arith::AddFOp>(v, 2);
  if (!add || !llvm::all_of(add.getIndexingMapsArray(),
                            [](AffineMap m) { return m.isIdentity(); }))
    return std::nullopt;
  for (unsigned i : {0u, 1u}) {
    Value direct = add.getDpsInputs()[i], rotated = add.getDpsInputs()[1 - i];
    auto [x, cos] = matchMulByTable(direct);
    auto [r, sin] = matchMulByTable(rotated);
    auto concat = r ? r.getDefiningOp<tensor::ConcatOp>() : tensor::ConcatOp();
    if (!x || !concat || concat.getDim() != 3 || concat.getInputs().size() != 2)
      continue;
    linalg::GenericOp neg =
        matchElementwise<arith::NegFOp>(concat.getInputs()[0], 1);
    if (!neg || !neg.getIndexingMapsArray()[0].isIdentity() ||
        !isHalfOf(neg.getDpsInputs()[0], x, /*upper=*/true) ||
        !isHalfOf(concat.getInputs()[1], x, /*upper=*/false))
      continue;
    auto type = cast<RankedTensorType>(x.getType());
    for (arith::ConstantOp table : {cos, sin})
      if (table.getType() !=
          RankedTensorType::get(type.getShape().drop_front(2),
                                type.getElementType()))
        return std::nullopt;
    Operation *hi = neg.getDpsInputs()[0].getDefiningOp();
    Operation *lo = concat.getInputs()[1].getDefiningOp();
    // Nothing else reads what is absorbed: x feeds the two slices and the
    // cos product only.
    const bool closed =
        direct.hasOneUse() && rotated.hasOneUse() && r.hasOneUse() &&
        neg->hasOneUse() && hi->hasOneUse() && lo->hasOneUse() &&
        llvm::all_of(x.getUsers(), [&](Operation *u) {
          return u == hi || u == lo || u == direct.getDefiningOp();
        });
    if (!closed)
      return std::nullopt;
    return RopeForm{x,
                    cos,
                    sin,
                    {add, direct.getDefiningOp(), rotated.getDefiningOp(),
                     concat, neg, hi, lo}};
  }
  return std::nullopt;
}

} // namespace

FailureOr<Value>
FunctionImporter::traceHeads(tmtensor::AttentionOp op, Value v, StringRef name,
                             SmallVectorImpl<Operation *> &absorbed,
                             int64_t &group, arith::ConstantOp &cos,
                             arith::ConstantOp &sin) {
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
  // Llama's rotate-half RoPE on the heads (q and k).
  bool userChecked = false;
  if (std::optional<RopeForm> rope = matchRope(v)) {
    if (!onlyUsedBy(v, user))
      return fail("its rotary embedding is also used elsewhere");
    absorbed.append(rope->ops);
    cos = rope->cos;
    sin = rope->sin;
    v = rope->x;
    userChecked = true;
  }
  auto transpose = v.getDefiningOp<linalg::TransposeOp>();
  if (!transpose || (!userChecked && !onlyUsedBy(v, user)) ||
      transpose.getPermutation() != ArrayRef<int64_t>{0, 2, 1, 3})
    return fail("is not the transpose [0, 2, 1, 3] of [B, S, H, D], or a "
                "rotate-half RoPE of it (x * cos + concat(-x2, x1) * sin "
                "with [S, D] constants); another op on the heads is not "
                "recognized");
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
  arith::ConstantOp vCos, vSin;
  FailureOr<Value> q =
      traceHeads(op, op.getQ(), "q", m.absorbed, qGroup, m.qCos, m.qSin);
  if (failed(q))
    return failure();
  FailureOr<Value> k =
      traceHeads(op, op.getK(), "k", m.absorbed, m.group, m.kCos, m.kSin);
  if (failed(k))
    return failure();
  FailureOr<Value> v =
      traceHeads(op, op.getV(), "v", m.absorbed, vGroup, vCos, vSin);
  if (failed(v))
    return failure();
  if (vCos)
    return op.emitError() << "v of tm_tensor.attention goes through a rotary "
                             "embedding: only q and k may";
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
  // A rope table that only the absorbed ropes read is not built whole: the
  // import builds its [S, D/2] half (halfRopeTable).
  for (arith::ConstantOp table : {m.qCos, m.qSin, m.kCos, m.kSin})
    if (table && llvm::all_of(table->getUsers(), [&](Operation *u) {
          return absorbed_.contains(u);
        }))
      absorbed_.insert(table);
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
  // The rotate-half RoPEs on q's and k's projections.
  const std::pair<arith::ConstantOp, arith::ConstantOp> ropes[] = {
      {m.qCos, m.qSin}, {m.kCos, m.kSin}};
  for (unsigned i = 0; i < 2; ++i) {
    auto [cos, sin] = ropes[i];
    if (!cos)
      continue;
    FailureOr<Value> c =
        halfRopeTable(op, cos, (names[i] + "'s rotary cos").str(), m.headDim);
    FailureOr<Value> s =
        halfRopeTable(op, sin, (names[i] + "'s rotary sin").str(), m.headDim);
    if (failed(c) || failed(s))
      return failure();
    locals[i] =
        RopeOp::create(b_, op.getLoc(), locals[i].getType(), locals[i], *c, *s,
                       b_.getI64IntegerAttr(m.headDim), UnitAttr());
  }
  auto qType = cast<RankedTensorType>(locals[0].getType());
  auto att = AttentionOp::create(
      b_, op.getLoc(), qType, locals[0], locals[1], locals[2], Value(),
      b_.getI64IntegerAttr(m.headDim), FloatAttr(), b_.getUnitAttr(),
      IntegerAttr(), DenseI64ArrayAttr(), DenseI64ArrayAttr());
  return define(m.result, att.getResult(), l);
}

FailureOr<Value> FunctionImporter::halfRopeTable(tmtensor::AttentionOp op,
                                                 arith::ConstantOp table,
                                                 StringRef name,
                                                 int64_t headDim) {
  if (Value built = ropeTables_.lookup(table))
    return built;
  auto type = cast<RankedTensorType>(table.getType());
  auto value = dyn_cast<ElementsAttr>(table.getValue());
  if (!value || !isSupportedElementType(type.getElementType()) ||
      type.getDimSize(1) != headDim)
    return op.emitError() << name << " table " << type
                          << " is not a dense<...> or dense_resource<...> "
                             "[S, head_dim] tensor of f16, bf16, f32 or f64";
  // Its elements, read as the whole constant would hold them.
  auto whole = shardlin::ConstantOp::create(b_, table.getLoc(), type, value);
  FailureOr<std::vector<char>> bytes = whole.getBytes();
  whole.erase();
  if (failed(bytes))
    return failure();
  const int64_t s = type.getDimSize(0), half = headDim / 2;
  const size_t e = type.getElementTypeBitWidth() / 8;
  std::vector<char> first;
  first.reserve(s * half * e);
  for (int64_t row = 0; row < s; ++row) {
    const char *lo = bytes->data() + row * headDim * e;
    if (std::memcmp(lo, lo + half * e, half * e) != 0) {
      InFlightDiagnostic diag =
          op.emitError()
          << name << " table differs between its two halves at position " << row
          << ": shardlin.rope takes rotate-half tables [S, head_dim / 2] "
             "whose halves are equal (cat(freqs, freqs), as Llama builds "
             "them)";
      diag.attachNote(table.getLoc()) << "the table";
      return diag;
    }
    first.insert(first.end(), lo, lo + half * e);
  }
  auto halfType = RankedTensorType::get({s, half}, type.getElementType());
  auto dense = DenseElementsAttr::getFromRawBuffer(halfType, first);
  Value built =
      shardlin::ConstantOp::create(b_, table.getLoc(), halfType, dense);
  ropeTables_[table] = built;
  return built;
}
