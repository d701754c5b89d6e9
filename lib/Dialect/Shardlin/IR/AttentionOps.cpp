//===- AttentionOps.cpp - Verifiers of attention and rope -----------------===//
//
// The ops of ShardlinAttentionOps.td (docs/attention.md).
//
//===----------------------------------------------------------------------===//

#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"

#include "mlir/IR/BuiltinTypes.h"

#include <cmath>

using namespace mlir;
using namespace mlir::shardlin;

namespace {

std::string dimText(int64_t d) {
  return ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d);
}

/// Leading dims (all but the last) of `a` and `b` agree where both are
/// static.
bool sameLeadingDims(ShapedType a, ShapedType b) {
  if (a.getRank() != b.getRank())
    return false;
  for (int64_t i = 0; i + 1 < a.getRank(); ++i) {
    int64_t x = a.getDimSize(i), y = b.getDimSize(i);
    if (!ShapedType::isDynamic(x) && !ShapedType::isDynamic(y) && x != y)
      return false;
  }
  return true;
}

/// The pairs of a head table: W pairs [begin, end), begin <= end.
LogicalResult checkPairs(Operation *op, StringRef name, ArrayRef<int64_t> t) {
  if (t.empty() || t.size() % 2 != 0)
    return op->emitOpError() << name << " must hold W pairs [begin, end), got "
                             << t.size() << " values";
  for (size_t r = 0; r < t.size() / 2; ++r)
    if (t[2 * r] < 0 || t[2 * r] > t[2 * r + 1])
      return op->emitOpError()
             << name << " pair " << r << " [" << t[2 * r] << ", "
             << t[2 * r + 1] << ") is not a range of heads";
  return success();
}

/// The rank-local form's tables: q_heads partition [0, Hq) in rank order,
/// and each rank's kv range holds the kv heads its query heads need.
/// (OpT: AttentionOp or AttentionGradOp, which share the attributes.)
template <typename OpT> LogicalResult verifyHeadTables(OpT op) {
  ArrayRef<int64_t> qh = *op.getQHeads();
  std::optional<ArrayRef<int64_t>> kvh = op.getKvHeads();
  if (!kvh || !op.getGroup())
    return op.emitOpError() << "with q_heads needs kv_heads and group (the "
                               "rank-local form)";
  if (failed(checkPairs(op, "q_heads", qh)) ||
      failed(checkPairs(op, "kv_heads", *kvh)))
    return failure();
  if (kvh->size() != qh.size())
    return op.emitOpError() << "q_heads has " << qh.size() / 2
                            << " ranks but kv_heads " << kvh->size() / 2;
  // The query ranges tile [0, Hq) (in the order of the ranks' chunks, which
  // need not be rank order); each rank's kv range holds what they need.
  const int64_t g = *op.getGroup();
  SmallVector<std::pair<int64_t, int64_t>> tiles;
  for (size_t r = 0; r < qh.size() / 2; ++r) {
    if (qh[2 * r] == qh[2 * r + 1])
      continue;
    tiles.push_back({qh[2 * r], qh[2 * r + 1]});
    const int64_t need0 = qh[2 * r] / g, need1 = (qh[2 * r + 1] - 1) / g + 1;
    if ((*kvh)[2 * r] > need0 || (*kvh)[2 * r + 1] < need1)
      return op.emitOpError()
             << "rank " << r << "'s query heads [" << qh[2 * r] << ", "
             << qh[2 * r + 1] << ") need kv heads [" << need0 << ", " << need1
             << ") (group " << g << "), but kv_heads gives it ["
             << (*kvh)[2 * r] << ", " << (*kvh)[2 * r + 1] << ")";
  }
  llvm::sort(tiles);
  int64_t next = 0;
  for (auto [begin, end] : tiles) {
    if (begin != next)
      return op.emitOpError() << "q_heads do not tile the query heads: "
                              << (begin < next ? "overlap" : "gap")
                              << " at head " << std::min(begin, next);
    next = end;
  }
  return success();
}

/// The feature dim `f` of a rank-local operand holds `heads` heads of every
/// rank: static only if they are all the same.
LogicalResult checkLocalFeatures(Operation *op, StringRef name, int64_t f,
                                 ArrayRef<int64_t> table, int64_t d) {
  if (ShapedType::isDynamic(f))
    return success();
  for (size_t r = 0; r < table.size() / 2; ++r)
    if ((table[2 * r + 1] - table[2 * r]) * d != f)
      return op->emitOpError()
             << name << " has " << f << " features, but rank " << r << " holds "
             << table[2 * r + 1] - table[2 * r] << " heads of " << d
             << " (make the dim ?)";
  return success();
}

/// The global form: whole heads, Hq a multiple of Hkv.
template <typename OpT>
LogicalResult verifyGlobalHeads(OpT op, int64_t fq, int64_t fkv, int64_t d) {
  if (ShapedType::isDynamic(fq) || ShapedType::isDynamic(fkv))
    return op.emitOpError() << "needs static feature dims (Hq * head_dim and "
                               "Hkv * head_dim), got "
                            << dimText(fq) << " and " << dimText(fkv)
                            << " (only the rank-local form, with q_heads and "
                               "kv_heads, has rank-dependent ones)";
  if (fq % d != 0 || fkv % d != 0)
    return op.emitOpError()
           << "q's " << fq << " and k's " << fkv
           << " features must be whole heads of head_dim " << d;
  const int64_t hq = fq / d, hkv = fkv / d;
  if (hkv == 0 || hq % hkv != 0)
    return op.emitOpError()
           << "the " << hq << " query heads must be a multiple of the " << hkv
           << " kv heads (GQA groups)";
  if (op.getGroup() && *op.getGroup() != hq / hkv)
    return op.emitOpError() << "group " << *op.getGroup() << " is not " << hq
                            << " / " << hkv << " = " << hq / hkv;
  if (op.getKvHeads())
    return op.emitOpError() << "has kv_heads without q_heads";
  return success();
}

/// Whether two shaped values have one shape and element type (buffers may
/// differ in layout).
bool sameShapeAndType(ShapedType a, ShapedType b) {
  return a.getShape() == b.getShape() &&
         a.getElementType() == b.getElementType();
}

/// What attention and attention_grad share, on tensors and on their buffer
/// forms: q, k, v, the forms' head tables, the mask and the scale.
template <typename OpT> LogicalResult verifyAttentionOperands(OpT op) {
  auto q = cast<ShapedType>(op.getQ().getType());
  auto k = cast<ShapedType>(op.getK().getType());
  auto v = cast<ShapedType>(op.getV().getType());
  if (q.getRank() != 2 && q.getRank() != 3)
    return op.emitOpError() << "expects q of rank 2 ([S, F]) or 3 ([B, S, F]), "
                               "got "
                            << q;
  if (!sameShapeAndType(k, v))
    return op.emitOpError()
           << "expects k and v of one type, got " << k << " and " << v;
  if (k.getElementType() != q.getElementType() || !sameLeadingDims(q, k))
    return op.emitOpError() << "k " << k << " must have q's element type and "
                            << "leading dims (" << q << ")";
  const int64_t d = op.getHeadDim();
  const int64_t fq = q.getShape().back(), fkv = k.getShape().back();
  if (std::optional<ArrayRef<int64_t>> qh = op.getQHeads()) {
    if (failed(verifyHeadTables(op)) ||
        failed(checkLocalFeatures(op, "q", fq, *qh, d)) ||
        failed(checkLocalFeatures(op, "k", fkv, *op.getKvHeads(), d)))
      return failure();
  } else if (failed(verifyGlobalHeads(op, fq, fkv, d))) {
    return failure();
  }
  if (Value m = op.getMask()) {
    auto mt = cast<ShapedType>(m.getType());
    const int64_t s = q.getDimSize(q.getRank() - 2);
    if (mt.getRank() != 2 || mt.getElementType() != q.getElementType())
      return op.emitOpError()
             << "expects an [S, S] mask of q's element type, got " << mt;
    for (int64_t i = 0; i < 2; ++i)
      if (!ShapedType::isDynamic(s) && !mt.isDynamicDim(i) &&
          mt.getDimSize(i) != s)
        return op.emitOpError() << "mask " << mt << " is not [" << s << ", "
                                << s << "] (the sequence length)";
  }
  if (op.getScale() && !(op.getScaleOrDefault() > 0.0))
    return op.emitOpError() << "scale must be positive";
  return success();
}

double scaleOrDefault(std::optional<APFloat> scale, int64_t headDim) {
  if (scale)
    return scale->convertToDouble();
  return 1.0 / std::sqrt(static_cast<double>(headDim));
}

} // namespace

double AttentionOp::getScaleOrDefault() {
  return scaleOrDefault(getScale(), getHeadDim());
}

LogicalResult AttentionOp::verify() { return verifyAttentionOperands(*this); }

double AttentionGradOp::getScaleOrDefault() {
  return scaleOrDefault(getScale(), getHeadDim());
}

namespace {

/// attention_grad (tensor or buffer form, whose result is `out`): wrt, and
/// dout and the result of q's or k's shape.
template <typename OpT> LogicalResult verifyAttentionGrad(OpT op, Value out) {
  if (op.getWrt() != "q" && op.getWrt() != "k" && op.getWrt() != "v")
    return op.emitOpError() << "wrt must be \"q\", \"k\" or \"v\", got \""
                            << op.getWrt() << "\"";
  if (failed(verifyAttentionOperands(op)))
    return failure();
  auto q = cast<ShapedType>(op.getQ().getType());
  if (!sameShapeAndType(cast<ShapedType>(op.getDout().getType()), q))
    return op.emitOpError() << "expects dout of q's type " << q
                            << " (the gradient of the attention's result), got "
                            << op.getDout().getType();
  Value want = op.getWrt() == "q" ? op.getQ() : op.getK();
  if (!sameShapeAndType(cast<ShapedType>(out.getType()),
                        cast<ShapedType>(want.getType())))
    return op.emitOpError()
           << "the gradient wrt " << op.getWrt() << " has type "
           << want.getType() << ", not " << out.getType();
  return success();
}

/// Query heads per kv head: `group`, or Hq / Hkv of the global form (whose
/// verifier checked static whole heads).
template <typename OpT> int64_t groupOrDefault(OpT op) {
  if (std::optional<uint64_t> g = op.getGroup())
    return static_cast<int64_t>(*g);
  return cast<ShapedType>(op.getQ().getType()).getShape().back() /
         cast<ShapedType>(op.getK().getType()).getShape().back();
}

} // namespace

LogicalResult AttentionGradOp::verify() {
  return verifyAttentionGrad(*this, getResult());
}

double BufferAttentionOp::getScaleOrDefault() {
  return scaleOrDefault(getScale(), getHeadDim());
}

int64_t BufferAttentionOp::getGroupOrDefault() { return groupOrDefault(*this); }

LogicalResult BufferAttentionOp::verify() {
  if (failed(verifyAttentionOperands(*this)))
    return failure();
  if (!sameShapeAndType(getOutput().getType(), getQ().getType()))
    return emitOpError() << "expects an output of q's type " << getQ().getType()
                         << ", got " << getOutput().getType();
  return success();
}

double BufferAttentionGradOp::getScaleOrDefault() {
  return scaleOrDefault(getScale(), getHeadDim());
}

int64_t BufferAttentionGradOp::getGroupOrDefault() {
  return groupOrDefault(*this);
}

LogicalResult BufferAttentionGradOp::verify() {
  return verifyAttentionGrad(*this, getOutput());
}

namespace {

/// rope and its buffer form (whose result is `out`).
template <typename OpT> LogicalResult verifyRope(OpT op, Value out) {
  auto x = cast<ShapedType>(op.getX().getType());
  auto c = cast<ShapedType>(op.getCos().getType());
  auto s = cast<ShapedType>(op.getSin().getType());
  const int64_t d = op.getHeadDim();
  if (d % 2 != 0)
    return op.emitOpError()
           << "head_dim " << d << " must be even (pairs (i, i + head_dim / 2))";
  if (x.getRank() != 2 && x.getRank() != 3)
    return op.emitOpError()
           << "expects x of rank 2 ([S, F]) or 3 ([B, S, F]), got " << x;
  if (!sameShapeAndType(x, cast<ShapedType>(out.getType())))
    return op.emitOpError()
           << "expects a result of x's type " << x << ", got " << out.getType();
  const int64_t f = x.getShape().back();
  if (!ShapedType::isDynamic(f) && f % d != 0)
    return op.emitOpError()
           << "x's " << f << " features are not whole heads of head_dim " << d;
  if (!sameShapeAndType(c, s))
    return op.emitOpError()
           << "expects cos and sin of one type, got " << c << " and " << s;
  if (c.getElementType() != x.getElementType())
    return op.emitOpError() << "cos " << c << " must have x's element type";
  const int64_t seq = x.getDimSize(x.getRank() - 2);
  if (c.getRank() != 2 || (!c.isDynamicDim(1) && c.getDimSize(1) != d / 2) ||
      (!c.isDynamicDim(0) && !ShapedType::isDynamic(seq) &&
       c.getDimSize(0) != seq))
    return op.emitOpError()
           << "expects cos and sin of shape [" << dimText(seq) << ", " << d / 2
           << "] ([S, head_dim / 2]), got " << c;
  return success();
}

} // namespace

LogicalResult RopeOp::verify() { return verifyRope(*this, getResult()); }

LogicalResult BufferRopeOp::verify() { return verifyRope(*this, getOutput()); }

namespace {

/// local_slice and local_place: `part` is rank r's [b_r, e_r) of dim `d`
/// of `whole` (static along `d`), the other dims the same, and `part`'s
/// dim `d` static only where every range has one size. `partName` names
/// `part` in the messages (the slice's result, the placement's operand).
LogicalResult verifyRankRanges(Operation *op, RankedTensorType whole,
                               RankedTensorType part, StringRef partName,
                               int64_t d, ArrayRef<int64_t> ranges) {
  if (d >= whole.getRank())
    return op->emitOpError() << "dim " << d << " is out of range for "
                             << whole;
  if (part.getRank() != whole.getRank() ||
      part.getElementType() != whole.getElementType())
    return op->emitOpError()
           << partName << " " << part << " must be a slice of " << whole;
  for (int64_t i = 0; i < whole.getRank(); ++i)
    if (i != d && part.getDimSize(i) != whole.getDimSize(i))
      return op->emitOpError() << partName << " " << part << " differs from "
                               << whole << " in dim " << i
                               << ", which is not sliced";
  if (whole.isDynamicDim(d))
    return op->emitOpError() << "slices dim " << d << " of " << whole
                             << ", which must be static";
  if (ranges.empty() || ranges.size() % 2 != 0)
    return op->emitOpError() << "ranges must hold W pairs [begin, end), got "
                             << ranges.size() << " values";
  const int64_t n = whole.getDimSize(d);
  bool uniform = true;
  for (size_t r = 0; r < ranges.size() / 2; ++r) {
    int64_t b = ranges[2 * r], e = ranges[2 * r + 1];
    if (b < 0 || b > e || e > n)
      return op->emitOpError() << "range " << r << " [" << b << ", " << e
                               << ") is not within [0, " << n << ")";
    uniform &= e - b == ranges[1] - ranges[0];
  }
  const int64_t expected =
      uniform ? ranges[1] - ranges[0] : ShapedType::kDynamic;
  if (part.getDimSize(d) != expected)
    return op->emitOpError()
           << partName << " dim " << d << " is " << dimText(part.getDimSize(d))
           << " but the ranges give " << dimText(expected)
           << " (static only if every range has one size)";
  return success();
}

} // namespace

LogicalResult LocalSliceOp::verify() {
  return verifyRankRanges(*this,
                          cast<RankedTensorType>(getSource().getType()),
                          cast<RankedTensorType>(getResult().getType()),
                          "result", getDim(), getRanges());
}

LogicalResult LocalPlaceOp::verify() {
  return verifyRankRanges(*this,
                          cast<RankedTensorType>(getResult().getType()),
                          cast<RankedTensorType>(getSource().getType()),
                          "operand", getDim(), getRanges());
}
