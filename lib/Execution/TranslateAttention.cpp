//===- TranslateAttention.cpp - attention, rope, local_slice/place --------===//
//
// The runtime instructions of issue 41's ops (docs/attention.md,
// docs/runtime.md "Attention and RoPE" and "local_slice"). Their op table
// entries list no IR ops: the dialect holds head_dim, group and dim as
// plain integers and scale as an optional F64Attr, while the runtime's
// instructions hold one-element integer lists and a double, so each is built
// here from the op's accessors.
//
//  - shardlin.attention, rank-local (q_heads, kv_heads, group: what
//    --lower-sharded-linear emits) -> `attention` with those tables; the
//    global form (every rank all heads on its own rows: what the op-by-op
//    lowering leaves) -> `attention` whose every rank holds [0, Hq) and
//    [0, Hkv), on the program's W.
//  - shardlin.attention_grad (a backward function's, docs/training.md) ->
//    `attention_grad` with the same tables and `wrt` 0, 1, 2 for q, k, v.
//  - shardlin.rope -> `rope`.
//  - shardlin.local_slice -> `local_slice` (per-rank [b, e) of a dim), and
//    its adjoint shardlin.local_place -> `local_place`.
//
//===----------------------------------------------------------------------===//

#include "TranslateOps.h"

using namespace mlir;
using namespace mlir::shardlin;
using namespace mlir::shardlin::translation;
namespace rt = ::shardlin::rt;

namespace {

/// The program values of `operands` into `in`, and a new value for `op`'s
/// result as its result; then appends `in`.
LogicalResult finish(Operation &op, ValueRange operands, rt::Instr in,
                     InstrSink &sink) {
  for (Value v : operands) {
    FailureOr<int> id = sink.operand(&op, v);
    if (failed(id))
      return failure();
    in.operands.push_back(*id);
  }
  Value out = op.getResult(0);
  FailureOr<int> id = sink.define(op.getLoc(), out, out.getType());
  if (failed(id))
    return failure();
  in.result = *id;
  sink.append(op.getLoc(), std::move(in));
  return success();
}

/// The runtime's kernels run f16, bf16, f32 and f64.
LogicalResult checkElementType(Operation &op, Value v) {
  Type t = getElementTypeOrSelf(v.getType());
  if (t.isF16() || t.isBF16() || t.isF32() || t.isF64())
    return success();
  return op.emitError() << "the shardlin runtime runs " << op.getName()
                        << " on f16, bf16, f32 or f64, not " << v.getType();
}

/// The global form's tables: every one of the program's W ranks holds all
/// heads (its own rows' attention, as on one device).
template <typename OpT>
LogicalResult globalTables(OpT op, rt::Instr &in, InstrSink &sink) {
  const int64_t d = op.getHeadDim();
  const int64_t fq = cast<RankedTensorType>(op.getQ().getType()).getShape().back();
  const int64_t fkv = cast<RankedTensorType>(op.getK().getType()).getShape().back();
  // The op's verifier checked whole, static heads with Hkv dividing Hq.
  const int64_t hq = fq / d, hkv = fkv / d;
  const int64_t w = sink.worldSize();
  if (w <= 0)
    return op.emitError()
           << "the shardlin runtime runs a shardlin.attention without "
              "q_heads/kv_heads only in a program whose world size a chunk "
              "spec or collective before it gives (every rank then runs all "
              "heads on its rows); lower the block with --lower-sharded-linear "
              "or add the sharded values";
  for (int64_t r = 0; r < w; ++r) {
    in.qHeads.insert(in.qHeads.end(), {0, hq});
    in.kvHeads.insert(in.kvHeads.end(), {0, hkv});
  }
  in.group = {hq / hkv};
  return success();
}

/// attention and attention_grad: the instruction's attributes and tables,
/// from the op's.
template <typename OpT>
LogicalResult translateAttentionLike(OpT op, rt::Instr in, InstrSink &sink) {
  Operation &o = *op.getOperation();
  for (Value v : op->getOperands())
    if (failed(checkElementType(o, v)))
      return failure();
  in.headDim = {static_cast<int64_t>(op.getHeadDim())};
  in.scale = op.getScaleOrDefault();
  in.causal = op.getCausal();
  if (op.isRankLocal()) {
    ArrayRef<int64_t> qh = *op.getQHeads(), kvh = *op.getKvHeads();
    in.qHeads.assign(qh.begin(), qh.end());
    in.kvHeads.assign(kvh.begin(), kvh.end());
    // The verifier requires group with the tables.
    in.group = {static_cast<int64_t>(*op.getGroup())};
    if (failed(sink.useWorldSize(op.getLoc(),
                                 static_cast<int64_t>(qh.size() / 2))))
      return failure();
  } else if (failed(globalTables(op, in, sink))) {
    return failure();
  }
  return finish(o, op->getOperands(), std::move(in), sink);
}

} // namespace

LogicalResult translation::translateAttention(AttentionOp op, InstrSink &sink) {
  rt::Instr in;
  in.op = rt::OpCode::Attention;
  return translateAttentionLike(op, std::move(in), sink);
}

LogicalResult translation::translateAttentionGrad(AttentionGradOp op,
                                                  InstrSink &sink) {
  // Operands in the instruction's order: q, k, v, dO[, mask].
  rt::Instr in;
  in.op = rt::OpCode::AttentionGrad;
  in.wrt = {op.getWrtIndex()};
  return translateAttentionLike(op, std::move(in), sink);
}

LogicalResult translation::translateRope(RopeOp op, InstrSink &sink) {
  Operation &o = *op.getOperation();
  for (Value v : op->getOperands())
    if (failed(checkElementType(o, v)))
      return failure();
  rt::Instr in;
  in.op = rt::OpCode::Rope;
  in.headDim = {static_cast<int64_t>(op.getHeadDim())};
  in.inverse = op.getInverse();
  return finish(o, op->getOperands(), std::move(in), sink);
}

namespace {

/// local_slice and local_place: the dim and the per-rank ranges, on a
/// world of one rank per pair.
template <typename OpTy>
LogicalResult translateRankRanges(OpTy op, rt::OpCode code, InstrSink &sink) {
  Operation &o = *op.getOperation();
  if (failed(checkElementType(o, op.getSource())))
    return failure();
  rt::Instr in;
  in.op = code;
  in.sliceDim = {static_cast<int64_t>(op.getDim())};
  ArrayRef<int64_t> ranges = op.getRanges();
  in.ranges.assign(ranges.begin(), ranges.end());
  if (failed(sink.useWorldSize(op.getLoc(), op.getNumRanks())))
    return failure();
  return finish(o, op->getOperands(), std::move(in), sink);
}

} // namespace

LogicalResult translation::translateLocalSlice(LocalSliceOp op,
                                               InstrSink &sink) {
  return translateRankRanges(op, rt::OpCode::LocalSlice, sink);
}

LogicalResult translation::translateLocalPlace(LocalPlaceOp op,
                                               InstrSink &sink) {
  return translateRankRanges(op, rt::OpCode::LocalPlace, sink);
}
