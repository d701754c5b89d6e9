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

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"

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
FunctionImporter::traceHeads(Operation *op, Value v, StringRef name,
                             SmallVectorImpl<Operation *> &absorbed,
                             int64_t &group, arith::ConstantOp &cos,
                             arith::ConstantOp &sin, ArrayRef<int64_t> perm) {
  const bool sdpa = isa<tmtensor::AttentionOp>(op);
  auto fail =
      [&](const Twine &what) {
        return op->emitError()
               << name
               << (sdpa ? " of tm_tensor.attention: "
                        : " of an attention written out (this batch_matmul): ")
               << what << "; the import takes torch-mlir's form of "
               << (sdpa ? "F.scaled_dot_product_attention"
                        : "softmax(q @ k^T * scale + causal mask) @ v")
               << " (docs/attention.md, From torch-mlir)";
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
      transpose.getPermutation() != perm)
    return fail(
        "is not the transpose [" +
        llvm::join(
            llvm::map_range(perm, [](int64_t p) { return std::to_string(p); }),
            ", ") +
        "] of [B, S, H, D], or a "
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
  if (failed(matchResultReshapes(op, op.getResult(), m)))
    return failure();
  recordAttention(m);
  return success();
}

LogicalResult FunctionImporter::matchResultReshapes(Operation *op, Value r,
                                                    AttentionMatch &m) {
  // The result: [B*H, S, D] -> [B, H, S, D] -> [B, S, H, D] -> [B, S, H*D].
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
    return op->emitError() << (isa<tmtensor::AttentionOp>(op)
                                   ? "tm_tensor.attention"
                                   : "attention written out (softmax @ v)")
                           << ": its result is not reshaped back to [B, S, "
                              "H*D] (expand, transpose [0, 2, 1, 3], collapse)";
  m.absorbed.append({expand, transpose, collapse});
  m.result = collapse.getResult();
  return success();
}

void FunctionImporter::recordAttention(AttentionMatch &m) {
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
  attentions_[m.op] = m;
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
    if (bmm && !absorbed_.contains(bmm) && mergesHeads(bmm.getDpsInputs()[0]) &&
        mergesHeads(bmm.getDpsInputs()[1]))
      return failed(matchExplicitAttention(bmm)) ? WalkResult::interrupt()
                                                 : WalkResult::advance();
    return WalkResult::advance();
  });
  return failure(walked.wasInterrupted());
}

LogicalResult FunctionImporter::importAttention(Operation *op) {
  auto it = attentions_.find(op);
  if (it == attentions_.end())
    return op->emitError("internal: the attention was not matched");
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
        return op->emitError()
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
        RopeOp::create(b_, op->getLoc(), locals[i].getType(), locals[i], *c, *s,
                       b_.getI64IntegerAttr(m.headDim), UnitAttr());
  }
  auto qType = cast<RankedTensorType>(locals[0].getType());
  auto att = AttentionOp::create(
      b_, op->getLoc(), qType, locals[0], locals[1], locals[2], Value(),
      b_.getI64IntegerAttr(m.headDim),
      m.scale != 0 ? b_.getF64FloatAttr(m.scale) : FloatAttr(),
      b_.getUnitAttr(), IntegerAttr(), DenseI64ArrayAttr(),
      DenseI64ArrayAttr());
  return define(m.result, att.getResult(), l);
}

FailureOr<Value> FunctionImporter::halfRopeTable(Operation *op,
                                                 arith::ConstantOp table,
                                                 StringRef name,
                                                 int64_t headDim) {
  if (Value built = ropeTables_.lookup(table))
    return built;
  auto type = cast<RankedTensorType>(table.getType());
  auto value = dyn_cast<ElementsAttr>(table.getValue());
  if (!value || !isSupportedElementType(type.getElementType()) ||
      type.getDimSize(1) != headDim)
    return op->emitError() << name << " table " << type
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
          op->emitError()
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

//===----------------------------------------------------------------------===//
// Attention written out
//===----------------------------------------------------------------------===//
//
// torch-mlir writes `softmax(q @ k.transpose(-2, -1) / sqrt(D) masked_fill
// (~tril, -inf), dim=-1) @ v` on heads [B, H, S, D] as
//
//   scores = batch_matmul(collapse(transpose(q, [0, 2, 1, 3])),
//                         collapse(transpose(k, [0, 2, 3, 1])))  [B*H, S, S]
//   expand to [B, H, S, S]; a generic divf by the constant sqrt(D)
//   the mask: a generic select(m, -inf, s) with m [S, S] i1 (map (d2, d3))
//     computed from linalg.index and constants (xori(tril), tril a select
//     over index(1) <= index(0)); or an additive mask (addf of an [S, S]
//     constant, or of the causal generic over linalg.index)
//   max over the last dim (a generic with the argmax as a second, unused
//     result) expanded to [B, H, S, 1]; subf; math.exp; the sum over the
//     last dim into [B, H, S, 1]; divf
//   collapse to [B*H, S, S]; batch_matmul with v's heads; the result's
//   reshapes as tm_tensor.attention's.
//
// The mask is read by evaluating it at every (i, j) (evalIntMask), so any
// way of writing the causal mask from indices and constants is taken and
// any other mask is refused at the position where it differs.

namespace {

/// A generic of `loops` loops whose body is one op `Op` and the yield of
/// its result, or null.
template <typename Op> Op singleBodyOp(linalg::GenericOp g) {
  Block &body = g.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (body.getOperations().size() != 2 || yield.getNumOperands() < 1)
    return {};
  return yield.getOperand(0).getDefiningOp<Op>();
}

/// The only user of `v`, or null.
Operation *soleUser(Value v) {
  return v.hasOneUse() ? *v.getUsers().begin() : nullptr;
}

/// An all-parallel generic of 4 loops with one init under the identity map
/// and `numInputs` inputs, not reading indices, or null.
linalg::GenericOp pointwise4(Operation *op, unsigned numInputs) {
  auto g = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!g || g.getNumDpsInputs() != numInputs || g.getNumDpsInits() != 1 ||
      g.getNumLoops() != 4 || !g.isAllParallelLoops() ||
      g.hasIndexSemantics() || !g.getIndexingMapsArray().back().isIdentity())
    return {};
  return g;
}

/// Whether `init` is a linalg.fill with the constant `value`.
bool isFillOf(Value init, double value) {
  auto fill = init.getDefiningOp<linalg::FillOp>();
  FloatAttr f;
  return fill && matchPattern(fill.getInputs()[0], m_Constant(&f)) &&
         (std::isinf(value)
              ? f.getValue().isInfinity() && f.getValue().isNegative()
              : f.getValueAsDouble() == value);
}

/// The map (d0, d1, d2, 0) of a row statistic kept as [B, H, S, 1].
AffineMap rowStatMap(MLIRContext *ctx) {
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  return AffineMap::get(4, 0, {d(0), d(1), d(2), getAffineConstantExpr(0, ctx)},
                        ctx);
}

/// The map (d2, d3) of an [S, S] operand broadcast over [B, H].
AffineMap lastTwoMap(MLIRContext *ctx) {
  return AffineMap::get(
      4, 0, {getAffineDimExpr(2, ctx), getAffineDimExpr(3, ctx)}, ctx);
}

/// The value of an integer (i1, index, i64) scalar inside a mask generic at
/// (i, j), or nullopt if something else computes it.
struct MaskEvaluator {
  /// The generics read, to absorb those only the mask uses.
  llvm::SetVector<Operation *> generics;

  std::optional<int64_t> scalar(Value v,
                                const llvm::DenseMap<Value, int64_t> &known) {
    auto it = known.find(v);
    if (it != known.end())
      return it->second;
    APInt c;
    if (matchPattern(v, m_ConstantInt(&c)))
      return c.getBitWidth() == 1 ? int64_t(c.getZExtValue())
                                  : c.getSExtValue();
    return std::nullopt;
  }

  static std::optional<bool> compare(arith::CmpIPredicate p, int64_t a,
                                     int64_t b) {
    using P = arith::CmpIPredicate;
    switch (p) {
    case P::eq:
      return a == b;
    case P::ne:
      return a != b;
    case P::slt:
    case P::ult:
      return a < b;
    case P::sle:
    case P::ule:
      return a <= b;
    case P::sgt:
    case P::ugt:
      return a > b;
    case P::sge:
    case P::uge:
      return a >= b;
    }
    return std::nullopt;
  }

  /// One body op's value from its operands' (known), or nullopt.
  std::optional<int64_t> step(Operation &op, int64_t i, int64_t j,
                              const llvm::DenseMap<Value, int64_t> &known) {
    auto arg = [&](unsigned n) { return scalar(op.getOperand(n), known); };
    if (auto index = dyn_cast<linalg::IndexOp>(op))
      return index.getDim() == 0 ? i : index.getDim() == 1 ? j : -1;
    if (isa<arith::IndexCastOp, arith::ExtUIOp, arith::ExtSIOp>(op))
      return arg(0);
    if (auto c = dyn_cast<arith::ConstantOp>(op))
      return scalar(c.getResult(), known);
    if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
      std::optional<int64_t> a = arg(0), b = arg(1);
      if (!a || !b)
        return std::nullopt;
      std::optional<bool> r = compare(cmp.getPredicate(), *a, *b);
      return r ? std::optional<int64_t>(*r) : std::nullopt;
    }
    if (isa<arith::SelectOp>(op)) {
      std::optional<int64_t> c = arg(0);
      return c ? arg(*c ? 1 : 2) : std::nullopt;
    }
    if (isa<arith::XOrIOp, arith::AndIOp, arith::OrIOp>(op)) {
      std::optional<int64_t> a = arg(0), b = arg(1);
      if (!a || !b)
        return std::nullopt;
      int64_t r = isa<arith::XOrIOp>(op)   ? (*a ^ *b)
                  : isa<arith::AndIOp>(op) ? (*a & *b)
                                           : (*a | *b);
      return op.getResult(0).getType().isInteger(1) ? (r & 1) : r;
    }
    return std::nullopt;
  }

  /// Element (i, j) of `v`, a 2-D integer tensor: a dense constant, or a
  /// 2-D all-parallel generic with identity maps of such tensors whose body
  /// computes from linalg.index, constants and its inputs.
  std::optional<int64_t> at(Value v, int64_t i, int64_t j, unsigned depth) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || type.getRank() != 2 || depth > 8 ||
        !type.getElementType().isSignlessInteger())
      return std::nullopt;
    DenseIntElementsAttr dense;
    if (matchPattern(v, m_Constant(&dense))) {
      APInt e = dense.getValues<APInt>()[{uint64_t(i), uint64_t(j)}];
      return e.getBitWidth() == 1 ? int64_t(e.getZExtValue())
                                  : e.getSExtValue();
    }
    auto g = v.getDefiningOp<linalg::GenericOp>();
    if (!g || g.getNumDpsInits() != 1 || g->getNumResults() != 1 ||
        !g.isAllParallelLoops() ||
        !llvm::all_of(g.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); }))
      return std::nullopt;
    generics.insert(g);
    Block &body = g.getRegion().front();
    llvm::DenseMap<Value, int64_t> known;
    for (auto [n, input] : llvm::enumerate(g.getDpsInputs())) {
      std::optional<int64_t> e = at(input, i, j, depth + 1);
      if (!e)
        return std::nullopt;
      known[body.getArgument(n)] = *e;
    }
    for (Operation &op : body.without_terminator()) {
      if (op.getNumResults() != 1)
        return std::nullopt;
      std::optional<int64_t> r = step(op, i, j, known);
      if (!r)
        return std::nullopt;
      known[op.getResult(0)] = *r;
    }
    return scalar(body.getTerminator()->getOperand(0), known);
  }
};

/// Whether float `x` drops a score: -inf or the type's lowest finite value
/// (what masks built with torch.finfo(dtype).min hold).
bool isDropValue(const APFloat &x) {
  if (x.isInfinity())
    return x.isNegative();
  return x.isNegative() &&
         x.compare(APFloat::getLargest(x.getSemantics(), /*Negative=*/true)) ==
             APFloat::cmpEqual;
}

} // namespace

namespace {

/// Where a written-out attention stops matching, and why (empty: it
/// matches).
struct Mismatch {
  Operation *at = nullptr;
  std::string what;
};

/// The block argument index of `v` in `body`, or -1.
int argIndex(Value v, Block &body) {
  auto a = dyn_cast<BlockArgument>(v);
  return a && a.getOwner() == &body ? int(a.getArgNumber()) : -1;
}

/// The elements of a float arith.constant, dense or dense_resource (a
/// parameter's blob), in row-major order, or nullopt.
std::optional<SmallVector<APFloat>> floatConstant(Value v) {
  auto cst = v.getDefiningOp<arith::ConstantOp>();
  auto type =
      cst ? dyn_cast<RankedTensorType>(cst.getType()) : RankedTensorType();
  auto elt = type ? dyn_cast<FloatType>(type.getElementType()) : FloatType();
  if (!elt || !type.hasStaticShape())
    return std::nullopt;
  SmallVector<APFloat> out;
  if (auto dense = dyn_cast<DenseFPElementsAttr>(cst.getValue())) {
    llvm::append_range(out, dense.getValues<APFloat>());
    return out;
  }
  auto resource = dyn_cast<DenseResourceElementsAttr>(cst.getValue());
  AsmResourceBlob *blob =
      resource ? resource.getRawHandle().getBlob() : nullptr;
  const unsigned bits = elt.getWidth();
  if (!blob || bits % 8 != 0 ||
      blob->getData().size() != size_t(type.getNumElements()) * bits / 8)
    return std::nullopt;
  ArrayRef<char> data = blob->getData();
  for (int64_t n = 0; n < type.getNumElements(); ++n) {
    uint64_t word = 0;
    std::memcpy(&word, data.data() + n * bits / 8, bits / 8); // little-endian
    out.emplace_back(elt.getFloatSemantics(), APInt(bits, word));
  }
  return out;
}

/// Why `g`, which reads the scores `s` ([B, H, S, S]), is not a causal mask,
/// or empty: select(m, -inf, s) (or select(m, s, -inf)) with m an [S, S]
/// integer tensor of indices and constants; or s + an [S, S] (map (d2, d3))
/// or [B, H, S, S] additive mask, a constant or the causal generic.
std::string causalMaskProblem(linalg::GenericOp g, Value s, int64_t len,
                              SmallVectorImpl<Operation *> &absorbed) {
  MLIRContext *ctx = g.getContext();
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  Block &body = g.getRegion().front();
  auto causal = [](int64_t i, int64_t j) { return j <= i; };
  auto position = [](int64_t i, int64_t j) {
    return "(query " + std::to_string(i) + ", key " + std::to_string(j) + ")";
  };
  auto scoresArg = [&](int n) {
    return n >= 0 && g.getDpsInputs()[n] == s && maps[n].isIdentity();
  };
  if (auto sel = singleBodyOp<arith::SelectOp>(g);
      sel && g.getNumDpsInputs() == 3) {
    const int c = argIndex(sel.getCondition(), body);
    const int t = argIndex(sel.getTrueValue(), body);
    const int f = argIndex(sel.getFalseValue(), body);
    if (c < 0 || c > 2 || (!scoresArg(t) && !scoresArg(f)))
      return "the select does not choose between the scores and a constant";
    const bool keepIfTrue = scoresArg(t);
    Value drop = g.getDpsInputs()[keepIfTrue ? f : t];
    DenseFPElementsAttr d;
    if ((keepIfTrue ? f : t) < 0 || !matchPattern(drop, m_Constant(&d)) ||
        !d.isSplat() || !isDropValue(d.getSplatValue<APFloat>()))
      return "a masked score is not set to -inf";
    if (maps[c] != lastTwoMap(ctx))
      return "the boolean mask is not an [S, S] tensor broadcast over the "
             "batch and the heads (map (d2, d3))";
    MaskEvaluator ev;
    for (int64_t i = 0; i < len; ++i)
      for (int64_t j = 0; j < len; ++j) {
        std::optional<int64_t> e = ev.at(g.getDpsInputs()[c], i, j, 0);
        if (!e)
          return "the boolean mask is not computed from linalg.index and "
                 "constants";
        const bool kept = (*e != 0) == keepIfTrue;
        if (kept != causal(i, j))
          return "the mask is not causal: it " +
                 std::string(kept ? "keeps" : "drops") + " the score at " +
                 position(i, j);
      }
    absorbed.push_back(g);
    for (Operation *op : ev.generics)
      if (llvm::all_of(op->getUsers(), [&](Operation *u) {
            return llvm::is_contained(absorbed, u);
          }))
        absorbed.push_back(op);
    return {};
  }
  auto add = singleBodyOp<arith::AddFOp>(g);
  if (!add || g.getNumDpsInputs() != 2)
    return "the op after the scores (and their scale) is neither a select "
           "of the scores and -inf by a boolean mask nor the scores plus an "
           "additive mask";
  const int a0 = argIndex(add.getLhs(), body),
            a1 = argIndex(add.getRhs(), body);
  if (a0 < 0 || a1 < 0 || a0 == a1 || (!scoresArg(a0) && !scoresArg(a1)))
    return "the addition does not add a mask to the scores";
  const int mi = scoresArg(a0) ? a1 : a0;
  Value mask = g.getDpsInputs()[mi];
  const bool square = maps[mi] == lastTwoMap(ctx);
  if (!square && !maps[mi].isIdentity())
    return "the additive mask is neither [S, S] (map (d2, d3)) nor "
           "[B, H, S, S]";
  if (auto mg = mask.getDefiningOp<linalg::GenericOp>()) {
    if (!isCausalMask(mg))
      return "the additive mask's generic is not select(index(i) >= "
             "index(j), 0, -inf)";
    absorbed.push_back(g);
    if (onlyUsedBy(mask, g))
      absorbed.push_back(mg);
    return {};
  }
  std::optional<SmallVector<APFloat>> values =
      square ? floatConstant(mask) : std::nullopt;
  if (!values || int64_t(values->size()) != len * len)
    return "the additive mask is not an [S, S] constant (dense or "
           "dense_resource) or the causal generic over linalg.index";
  for (int64_t i = 0; i < len; ++i)
    for (int64_t j = 0; j < len; ++j) {
      const APFloat &x = (*values)[i * len + j];
      const bool kept = x.isZero();
      if ((!kept && !isDropValue(x)) || kept != causal(i, j))
        return "the additive mask is not causal (0 where key <= query, -inf "
               "elsewhere) at " +
               position(i, j);
    }
  absorbed.push_back(g);
  return {};
}

/// A reduction over the last of 4 loops: one input under the identity map
/// into inits of map `init`, or null.
linalg::GenericOp lastDimReduction(Operation *op, AffineMap init) {
  auto g = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!g || g.getNumDpsInputs() != 1 || g.getNumLoops() != 4 ||
      g.getNumReductionLoops() != 1 ||
      g.getIteratorTypesArray()[3] != utils::IteratorType::reduction ||
      !g.getIndexingMapsArray()[0].isIdentity() ||
      g.getIndexingMapsArray()[1] != init)
    return {};
  return g;
}

/// Whether the first yielded value of reduction `g` is Op(in, out) of its
/// first input and init, in either order.
template <typename... Ops> bool reducesWith(linalg::GenericOp g) {
  Block &body = g.getRegion().front();
  Operation *op = body.getTerminator()->getOperand(0).getDefiningOp();
  if (!op || !isa<Ops...>(op) || op->getNumOperands() != 2)
    return false;
  Value in = body.getArgument(0), out = body.getArgument(1);
  return (op->getOperand(0) == in && op->getOperand(1) == out) ||
         (op->getOperand(0) == out && op->getOperand(1) == in);
}

/// A pointwise generic `Op(arg0[, arg1])` of its inputs in order, or null.
template <typename Op>
linalg::GenericOp pointwiseOf(Operation *op, unsigned numInputs) {
  linalg::GenericOp g = pointwise4(op, numInputs);
  Op body = g ? singleBodyOp<Op>(g) : Op();
  if (!body)
    return {};
  Block &b = g.getRegion().front();
  for (unsigned i = 0; i < numInputs; ++i)
    if (body->getOperand(i) != b.getArgument(i))
      return {};
  return g;
}

/// softmax over the last dim of `m` ([B, H, S, S]) as torch-mlir writes it:
/// the row max (with the argmax as an unused second result), subf, exp,
/// the row sum, divf. Sets `probs`.
Mismatch matchSoftmax(Value m, SmallVectorImpl<Operation *> &absorbed,
                      Value &probs) {
  MLIRContext *ctx = m.getContext();
  Operation *from = m.getDefiningOp();
  SmallVector<Operation *> users(m.getUsers());
  if (users.size() != 2)
    return {from, "the masked scores are not read by exactly the softmax's "
                  "row max and subtraction"};
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  AffineMap rows = AffineMap::get(4, 0, {d(0), d(1), d(2)}, ctx);
  linalg::GenericOp max = lastDimReduction(users[0], rows);
  if (!max)
    std::swap(users[0], users[1]);
  max = lastDimReduction(users[0], rows);
  if (!max || !reducesWith<arith::MaximumFOp, arith::MaxNumFOp>(max) ||
      !isFillOf(max.getDpsInits()[0], -INFINITY) ||
      (max->getNumResults() == 2 && !max->getResult(1).use_empty()) ||
      max->getNumResults() > 2)
    return {from, "the softmax does not subtract the row max (a max "
                  "reduction over the last dim from -inf)"};
  auto expand =
      dyn_cast_or_null<tensor::ExpandShapeOp>(soleUser(max->getResult(0)));
  linalg::GenericOp sub = pointwiseOf<arith::SubFOp>(users[1], 2);
  if (!expand ||
      !hasReassociation(expand.getReassociationIndices(), {{0}, {1}, {2, 3}}) ||
      !sub || sub.getDpsInputs()[0] != m ||
      sub.getDpsInputs()[1] != expand.getResult() ||
      !onlyUsedBy(expand.getResult(), sub) ||
      sub.getIndexingMapsArray()[1] != rowStatMap(ctx))
    return {max, "the row max is not subtracted from the scores"};
  linalg::GenericOp exp =
      pointwiseOf<math::ExpOp>(soleUser(sub.getResult(0)), 1);
  if (!exp)
    return {sub, "the scores minus their max are not exponentiated"};
  SmallVector<Operation *> expUsers(exp.getResult(0).getUsers());
  if (expUsers.size() != 2)
    return {exp, "exp(scores - max) is not read by exactly the row sum and "
                 "the division"};
  linalg::GenericOp sum = lastDimReduction(expUsers[0], rowStatMap(ctx));
  if (!sum)
    std::swap(expUsers[0], expUsers[1]);
  sum = lastDimReduction(expUsers[0], rowStatMap(ctx));
  linalg::GenericOp div = pointwiseOf<arith::DivFOp>(expUsers[1], 2);
  if (!sum || !reducesWith<arith::AddFOp>(sum) ||
      !isFillOf(sum.getDpsInits()[0], 0) || !div ||
      div.getDpsInputs()[0] != exp.getResult(0) ||
      div.getDpsInputs()[1] != sum.getResult(0) ||
      !onlyUsedBy(sum.getResult(0), div) ||
      div.getIndexingMapsArray()[1] != rowStatMap(ctx))
    return {exp, "exp(scores - max) is not divided by its row sum (a sum "
                 "reduction over the last dim from 0)"};
  absorbed.append({max, expand, sub, exp, sum, div});
  probs = div.getResult(0);
  return {};
}

} // namespace

/// The scale of the scores `s`: a pointwise divf or mulf of `s` by a float
/// constant, or null (no scale).
static linalg::GenericOp matchScale(Value s, double &scale) {
  linalg::GenericOp g = pointwise4(soleUser(s), 1);
  if (!g || !g.getIndexingMapsArray()[0].isIdentity())
    return {};
  Block &body = g.getRegion().front();
  Operation *op = body.getTerminator()->getOperand(0).getDefiningOp();
  if (!op || body.getOperations().size() != 2 ||
      !isa<arith::DivFOp, arith::MulFOp>(op))
    return {};
  Value in = body.getArgument(0);
  const bool div = isa<arith::DivFOp>(op);
  Value c = op->getOperand(0) == in ? op->getOperand(1) : op->getOperand(0);
  FloatAttr f;
  if ((div && op->getOperand(0) != in) ||
      (!div && op->getOperand(0) != in && op->getOperand(1) != in) ||
      !matchPattern(c, m_Constant(&f)) || f.getValueAsDouble() == 0)
    return {};
  scale = div ? 1.0 / f.getValueAsDouble() : f.getValueAsDouble();
  return g;
}

LogicalResult
FunctionImporter::matchExplicitAttention(linalg::BatchMatmulOp scores) {
  auto fail = [&](Operation *at, const Twine &what) {
    return at->emitError()
           << "attention written out: " << what
           << "; the import takes softmax(q @ k^T * scale + causal mask, "
              "dim=-1) @ v as torch-mlir writes it (docs/attention.md, From "
              "torch-mlir)";
  };
  AttentionMatch m;
  int64_t qGroup = 1, vGroup = 1;
  arith::ConstantOp vCos, vSin;
  FailureOr<Value> q = traceHeads(scores, scores.getDpsInputs()[0], "q",
                                  m.absorbed, qGroup, m.qCos, m.qSin);
  if (failed(q))
    return failure();
  FailureOr<Value> k =
      traceHeads(scores, scores.getDpsInputs()[1], "k", m.absorbed, m.group,
                 m.kCos, m.kSin, /*perm=*/{0, 2, 3, 1});
  if (failed(k))
    return failure();
  if (qGroup != 1)
    return fail(scores, "q's heads are repeated");
  if (!isFillOf(scores.getDpsInits()[0], 0))
    return fail(scores, "the scores' batch_matmul does not start from zeros");
  m.absorbed.push_back(scores);
  m.headDim =
      cast<RankedTensorType>(scores.getDpsInputs()[0].getType()).getDimSize(2);
  auto expand =
      dyn_cast_or_null<tensor::ExpandShapeOp>(soleUser(scores.getResult(0)));
  if (!expand ||
      !hasReassociation(expand.getReassociationIndices(), {{0, 1}, {2}, {3}}))
    return fail(scores, "the scores are not expanded to [B, H, S, S] (and "
                        "used by nothing else)");
  m.absorbed.push_back(expand);
  auto sType = expand.getResultType();
  const int64_t len = sType.getDimSize(3);
  if (m.headDim <= 0 || ShapedType::isDynamic(len) ||
      sType.getDimSize(2) != len)
    return fail(scores, "the head dim and the sequence length must be "
                        "static, the scores square");
  Value s = expand.getResult();
  double scale = 1.0;
  if (linalg::GenericOp g = matchScale(s, scale)) {
    m.absorbed.push_back(g);
    s = g.getResult(0);
  } else if (pointwise4(soleUser(s), 1)) {
    return fail(soleUser(s), "the scores are scaled otherwise than by a "
                             "float constant (a divf or mulf)");
  }
  Operation *maskOp = soleUser(s);
  linalg::GenericOp maskG = pointwise4(maskOp, 2);
  if (!maskG)
    maskG = pointwise4(maskOp, 3);
  if (!maskG)
    return fail(s.getDefiningOp(),
                "the scaled scores are not read by a causal mask alone (a "
                "select or an addition on [B, H, S, S]); attention without a "
                "mask, or a scale that is not a constant, is not taken");
  if (std::string problem = causalMaskProblem(maskG, s, len, m.absorbed);
      !problem.empty())
    return fail(maskG, problem);
  Value probs;
  Mismatch softmax = matchSoftmax(maskG.getResult(0), m.absorbed, probs);
  if (!softmax.what.empty())
    return fail(softmax.at, softmax.what);
  auto collapse = dyn_cast_or_null<tensor::CollapseShapeOp>(soleUser(probs));
  auto out = collapse ? dyn_cast_or_null<linalg::BatchMatmulOp>(
                            soleUser(collapse.getResult()))
                      : linalg::BatchMatmulOp();
  if (!out || out.getDpsInputs()[0] != collapse.getResult() ||
      !hasReassociation(collapse.getReassociationIndices(),
                        {{0, 1}, {2}, {3}}) ||
      !isFillOf(out.getDpsInits()[0], 0))
    return fail(probs.getDefiningOp(),
                "the probabilities are not collapsed to [B*H, S, S] and "
                "multiplied by v (a batch_matmul from zeros)");
  m.absorbed.push_back(collapse);
  FailureOr<Value> v = traceHeads(out, out.getDpsInputs()[1], "v", m.absorbed,
                                  vGroup, vCos, vSin);
  if (failed(v))
    return failure();
  if (vCos || vGroup != m.group)
    return fail(out, "v goes through a rotary embedding or is repeated "
                     "otherwise than k");
  m.op = out;
  m.q = *q;
  m.k = *k;
  m.v = *v;
  // The default scale is 1 / sqrt(D); another one is stated on the op.
  if (std::abs(scale * std::sqrt(double(m.headDim)) - 1.0) > 1e-12)
    m.scale = scale;
  if (failed(matchResultReshapes(out, out.getResult(0), m)))
    return failure();
  recordAttention(m);
  return success();
}
