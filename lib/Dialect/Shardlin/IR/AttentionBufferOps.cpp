//===- AttentionBufferOps.cpp - Verifiers of buffer.attention and rope ----===//
//
// The buffer forms of shardlin.attention and shardlin.rope
// (ShardlinBufferOps.td): the checks the C ABI call relies on, on memref
// types: ranks, shapes that agree where static, whole heads, head tables of
// W pairs. The tensor ops' verifiers (AttentionOps.cpp) check the rest (the
// query ranges tiling [0, Hq), each rank's kv heads) before bufferization,
// and the runtime checks every rank's pair of the tables against its views
// at run time (shardlin_attention).
//
//===----------------------------------------------------------------------===//

#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::shardlin;

namespace {

/// Whether static sizes agree.
bool agree(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

/// `a` and `b` have one rank and agree in every dim but the last (all dims
/// with `withLast`) where both are static.
bool sameDims(ShapedType a, ShapedType b, bool withLast) {
  if (a.getRank() != b.getRank())
    return false;
  for (int64_t i = 0, e = a.getRank() - (withLast ? 0 : 1); i < e; ++i)
    if (!agree(a.getDimSize(i), b.getDimSize(i)))
      return false;
  return true;
}

/// W pairs [begin, end) with 0 <= begin <= end.
LogicalResult checkTable(Operation *op, StringRef name,
                         ArrayRef<int64_t> table) {
  if (table.empty() || table.size() % 2 != 0)
    return op->emitOpError() << name << " must hold W pairs [begin, end), got "
                             << table.size() << " values";
  for (size_t r = 0; r < table.size() / 2; ++r)
    if (table[2 * r] < 0 || table[2 * r] > table[2 * r + 1])
      return op->emitOpError() << name << " pair " << r << " is not a range";
  return success();
}

/// The heads: W pairs per table, or (the global form) static whole heads
/// with group = Hq / Hkv.
LogicalResult checkHeads(BufferAttentionOp op, ShapedType q, ShapedType k) {
  std::optional<ArrayRef<int64_t>> qh = op.getQHeads(), kvh = op.getKvHeads();
  if (qh.has_value() != kvh.has_value())
    return op.emitOpError("needs both q_heads and kv_heads, or neither (the "
                          "global form)");
  if (qh) {
    if (failed(checkTable(op, "q_heads", *qh)) ||
        failed(checkTable(op, "kv_heads", *kvh)))
      return failure();
    if (qh->size() != kvh->size())
      return op.emitOpError() << "q_heads has " << qh->size() / 2
                              << " ranks but kv_heads " << kvh->size() / 2;
    return success();
  }
  const int64_t d = op.getHeadDim(), fq = q.getShape().back(),
                fkv = k.getShape().back();
  if (ShapedType::isDynamic(fq) || ShapedType::isDynamic(fkv) || fq % d != 0 ||
      fkv % d != 0 || fkv == 0 || fq / d != op.getGroup() * (fkv / d))
    return op.emitOpError()
           << "without head tables needs static whole heads of " << d
           << " with q's heads group = " << op.getGroup() << " times k's, got "
           << q << " and " << k;
  return success();
}

} // namespace

LogicalResult BufferAttentionOp::verify() {
  auto q = cast<ShapedType>(getQ().getType());
  auto k = cast<ShapedType>(getK().getType());
  if (q.getRank() != 2 && q.getRank() != 3)
    return emitOpError() << "expects q of rank 2 ([S, F]) or 3 ([B, S, F]), "
                            "got "
                         << q;
  if (!sameDims(k, cast<ShapedType>(getV().getType()), /*withLast=*/true) ||
      !sameDims(q, k, /*withLast=*/false))
    return emitOpError() << "expects k and v of one shape with q's leading "
                            "dims, got "
                         << q << ", " << k << " and " << getV().getType();
  if (!sameDims(q, getOutput().getType(), /*withLast=*/true))
    return emitOpError() << "expects an output of q's shape " << q << ", got "
                         << getOutput().getType();
  if (Value m = getMask()) {
    auto mt = cast<ShapedType>(m.getType());
    const int64_t s = q.getDimSize(q.getRank() - 2);
    if (mt.getRank() != 2 || !agree(mt.getDimSize(0), s) ||
        !agree(mt.getDimSize(1), s) ||
        mt.getElementType() != q.getElementType())
      return emitOpError() << "expects an [S, S] mask of q's element type, got "
                           << mt;
  }
  if (!(getScale().convertToDouble() > 0.0))
    return emitOpError() << "scale must be positive";
  return checkHeads(*this, q, k);
}

LogicalResult BufferRopeOp::verify() {
  auto x = cast<ShapedType>(getX().getType());
  auto c = cast<ShapedType>(getCos().getType());
  const int64_t d = getHeadDim();
  if (d % 2 != 0)
    return emitOpError() << "head_dim " << d
                         << " must be even (pairs (i, i + head_dim / 2))";
  if (x.getRank() != 2 && x.getRank() != 3)
    return emitOpError() << "expects x of rank 2 ([S, F]) or 3 ([B, S, F]), "
                            "got "
                         << x;
  if (!sameDims(x, getOutput().getType(), /*withLast=*/true) ||
      x.getElementType() != getOutput().getType().getElementType())
    return emitOpError() << "expects an output of x's shape and type " << x
                         << ", got " << getOutput().getType();
  const int64_t f = x.getShape().back();
  if (!ShapedType::isDynamic(f) && f % d != 0)
    return emitOpError() << "x's " << f
                         << " features are not whole heads of head_dim " << d;
  if (c.getElementType() != x.getElementType() && !c.getElementType().isF32())
    return emitOpError() << "expects cos and sin of x's element type or f32, "
                            "got "
                         << c;
  if (c.getRank() != 2 || !agree(c.getDimSize(1), d / 2) ||
      !agree(c.getDimSize(0), x.getDimSize(x.getRank() - 2)))
    return emitOpError() << "expects cos and sin of shape [S, " << d / 2
                         << "] for x " << x << ", got " << c;
  return success();
}
