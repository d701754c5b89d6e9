//===- Attention.cpp - attention, attention_grad, rope --------------------===//
//
// The C ABI's attention ops: each reads and checks its views against the
// rank's heads, packs the strided ones, and runs the kernel the plan
// executor runs for the same instruction (exec/Attention.h's runAttention,
// LocalOps::rope), so that compiled code and a plan compute the same. The
// head tables are checked by the program verifier's own checkHeadTables.
//
//===----------------------------------------------------------------------===//

#include "exec/Attention.h"
#include "capi/Arguments.h"
#include "capi/Context.h"
#include "capi/Entries.h"
#include "capi/Errors.h"
#include "shardlin/runtime/program/AttentionHeads.h"

#include <string>
#include <vector>

namespace shardlin::rt::capi {

namespace {

/// A view of [B, S, F] or [S, F].
Status readActivation(const shardlin_memref *ref, const char *name, DType t,
                      int64_t rank, View &v) {
  SHARDLIN_RETURN_IF_ERROR(readView(ref, name, t, rank, v));
  if (v.rank() != 2 && v.rank() != 3)
    return invalid(std::string(name) + " has rank " + str(v.rank()) +
                   "; expected [B, S, heads * head_dim] or "
                   "[S, heads * head_dim]");
  return Status::ok();
}

/// The rank's heads: its pair of the tables, or (both null) every head of
/// the views, checked as the program verifier checks an instruction's.
Status rankHeads(shardlin_context *ctx, const AttentionArgs &a, const View &q,
                 const View &k, AttentionHeads &heads) {
  if ((a.qHeads == nullptr) != (a.kvHeads == nullptr))
    return invalid("q_heads and kv_heads must both be given or both be NULL "
                   "(every head of the views)");
  const int64_t w = ctx->comm->worldSize();
  Program program;
  program.worldSize = static_cast<int>(w);
  Instr in;
  in.op = a.part == AttentionPart::Forward ? OpCode::Attention
                                           : OpCode::AttentionGrad;
  in.headDim = {a.headDim};
  in.group = {a.group};
  in.scale = a.scale;
  in.wrt = {a.wrt};
  if (a.qHeads) {
    in.qHeads.assign(a.qHeads, a.qHeads + 2 * w);
    in.kvHeads.assign(a.kvHeads, a.kvHeads + 2 * w);
  } else if (a.headDim > 0) {
    for (int64_t r = 0; r < w; ++r) {
      in.qHeads.insert(in.qHeads.end(), {0, q.sizes.back() / a.headDim});
      in.kvHeads.insert(in.kvHeads.end(), {0, k.sizes.back() / a.headDim});
    }
  }
  SHARDLIN_RETURN_IF_ERROR(checkHeadTables(program, in, "attention"));
  heads = attentionHeadsOf(in, ctx->comm->rank());
  return Status::ok();
}

/// `v` is [lead..., heads * D] with q's leading dims.
Status checkHeads(const View &v, const View &q, int64_t heads, int64_t d) {
  std::vector<int64_t> want = q.sizes;
  want.back() = heads * d;
  if (v.sizes != want) {
    View w;
    w.sizes = want;
    return invalid(v.name + " is " + v.shape() + ", expected " + w.shape() +
                   " (q's leading dims, " + str(heads) + " heads of " + str(d) +
                   ")");
  }
  return Status::ok();
}

} // namespace

Status attention(shardlin_context *ctx, const AttentionArgs &a) {
  DType t;
  SHARDLIN_RETURN_IF_ERROR(toDType(a.dtype, "dtype", t));
  const bool grad = a.part != AttentionPart::Forward;
  if (grad && (a.wrt < 0 || a.wrt > 2))
    return invalid("wrt is " + str(a.wrt) +
                   "; expected 0 (dq), 1 (dk) or 2 (dv)");
  View q, k, v, dO, mask, out;
  SHARDLIN_RETURN_IF_ERROR(readActivation(a.q, "q", t, -1, q));
  SHARDLIN_RETURN_IF_ERROR(readActivation(a.k, "k", t, q.rank(), k));
  SHARDLIN_RETURN_IF_ERROR(readActivation(a.v, "v", t, q.rank(), v));
  if (grad)
    SHARDLIN_RETURN_IF_ERROR(readActivation(a.dO, "dout", t, q.rank(), dO));
  if (a.mask)
    SHARDLIN_RETURN_IF_ERROR(readView(a.mask, "mask", t, 2, mask));
  SHARDLIN_RETURN_IF_ERROR(readActivation(a.out, "out", t, q.rank(), out));

  AttentionProblem p;
  SHARDLIN_RETURN_IF_ERROR(rankHeads(ctx, a, q, k, p.heads));
  const int64_t d = p.heads.headDim;
  const bool kvOut =
      a.part == AttentionPart::GradK || a.part == AttentionPart::GradV;
  SHARDLIN_RETURN_IF_ERROR(checkHeads(q, q, p.heads.q.size(), d));
  SHARDLIN_RETURN_IF_ERROR(checkHeads(k, q, p.heads.kv.size(), d));
  SHARDLIN_RETURN_IF_ERROR(checkHeads(v, q, p.heads.kv.size(), d));
  if (grad)
    SHARDLIN_RETURN_IF_ERROR(checkHeads(dO, q, p.heads.q.size(), d));
  SHARDLIN_RETURN_IF_ERROR(
      checkHeads(out, q, kvOut ? p.heads.kv.size() : p.heads.q.size(), d));
  p.seq = q.sizes[size_t(q.rank() - 2)];
  p.batch = q.rank() == 3 ? q.sizes[0] : 1;
  if (a.mask && (mask.sizes[0] != p.seq || mask.sizes[1] != p.seq))
    return invalid("mask is " + mask.shape() + ", expected [" + str(p.seq) +
                   ", " + str(p.seq) + "] (q's sequence length)");
  SHARDLIN_RETURN_IF_ERROR(checkOutput(out, {&q, &k, &v, &dO, &mask}));
  p.scale = a.scale;
  p.causal = a.causal;
  p.hasMask = a.mask != nullptr;
  p.dtype = t;
  p.part = a.part;

  const char *qd = nullptr, *kd = nullptr, *vd = nullptr, *dOd = nullptr,
             *md = nullptr;
  SHARDLIN_RETURN_IF_ERROR(denseInput(ctx, q, Slot::InDense, qd));
  SHARDLIN_RETURN_IF_ERROR(denseInput(ctx, k, Slot::Lhs, kd));
  SHARDLIN_RETURN_IF_ERROR(denseInput(ctx, v, Slot::Rhs, vd));
  if (grad)
    SHARDLIN_RETURN_IF_ERROR(denseInput(ctx, dO, Slot::Cotangent, dOd));
  if (a.mask)
    SHARDLIN_RETURN_IF_ERROR(denseInput(ctx, mask, Slot::Bias, md));
  AttentionTensors tensors;
  tensors.q = qd;
  tensors.k = kd;
  tensors.v = vd;
  tensors.dO = dOd;
  tensors.mask = md;
  char *o = nullptr;
  SHARDLIN_RETURN_IF_ERROR(denseOutput(ctx, out, Slot::OutDense, o));
  tensors.out = o;
  const int64_t bytes = attentionScratchBytes(p);
  if (bytes < 0)
    return invalid("the attention's scratch for q " + q.shape() +
                   " overflows int64 bytes");
  char *work = nullptr;
  SHARDLIN_RETURN_IF_ERROR(ctx->scratch.get(Slot::Work, bytes, work));
  tensors.scratch = work;
  SHARDLIN_RETURN_IF_ERROR(
      runAttention(ctx->device->gemm(), ctx->device->localOps(), p, tensors));
  finishOutput(out, o);
  return Status::ok();
}

Status rope(shardlin_context *ctx, int dtypeValue, const shardlin_memref *xRef,
            int tableDtypeValue, const shardlin_memref *cosRef,
            const shardlin_memref *sinRef, const shardlin_memref *outRef,
            int64_t headDim, bool inverse) {
  DType t, tableT;
  SHARDLIN_RETURN_IF_ERROR(toDType(dtypeValue, "dtype", t));
  SHARDLIN_RETURN_IF_ERROR(toDType(tableDtypeValue, "table_dtype", tableT));
  if (tableT != DType::F32 && tableT != t)
    return invalid(std::string("table_dtype is ") + dtypeName(tableT) +
                   "; the tables are f32 or x's " + dtypeName(t));
  View x, cos, sin, out;
  SHARDLIN_RETURN_IF_ERROR(readActivation(xRef, "x", t, -1, x));
  SHARDLIN_RETURN_IF_ERROR(readView(cosRef, "cos", tableT, 2, cos));
  SHARDLIN_RETURN_IF_ERROR(readView(sinRef, "sin", tableT, 2, sin));
  SHARDLIN_RETURN_IF_ERROR(readView(outRef, "out", t, x.rank(), out));
  SHARDLIN_RETURN_IF_ERROR(checkSameDims(x, out, -1, -1));
  if (headDim <= 0 || headDim % 2 != 0)
    return invalid("head_dim is " + str(headDim) +
                   "; it must be positive and even (pairs i, i + head_dim "
                   "/ 2)");
  const int64_t seq = x.sizes[size_t(x.rank() - 2)];
  if (x.sizes.back() % headDim != 0)
    return invalid("x " + x.shape() + " does not hold whole heads of " +
                   str(headDim));
  for (const View *table : {&cos, &sin})
    if (table->sizes[0] != seq || table->sizes[1] != headDim / 2)
      return invalid(table->name + " is " + table->shape() + ", expected [" +
                     str(seq) + ", " + str(headDim / 2) +
                     "] ([S, head_dim / 2] for x " + x.shape() + ")");
  SHARDLIN_RETURN_IF_ERROR(checkOneAddressPerElement(out));
  SHARDLIN_RETURN_IF_ERROR(checkDisjoint(out, x, true));
  SHARDLIN_RETURN_IF_ERROR(checkDisjoint(out, cos));
  SHARDLIN_RETURN_IF_ERROR(checkDisjoint(out, sin));
  const char *xd = nullptr, *cd = nullptr, *sd = nullptr;
  char *yd = nullptr;
  SHARDLIN_RETURN_IF_ERROR(denseInput(ctx, x, Slot::InDense, xd));
  SHARDLIN_RETURN_IF_ERROR(denseInput(ctx, cos, Slot::Lhs, cd));
  SHARDLIN_RETURN_IF_ERROR(denseInput(ctx, sin, Slot::Rhs, sd));
  SHARDLIN_RETURN_IF_ERROR(denseOutput(ctx, out, Slot::OutDense, yd));
  SHARDLIN_RETURN_IF_ERROR(ctx->device->localOps().rope(
      xd, cd, sd, tableT, yd, x.rank() == 3 ? x.sizes[0] : 1, seq,
      x.sizes.back() / headDim, headDim, inverse, t));
  finishOutput(out, yd);
  return Status::ok();
}

} // namespace shardlin::rt::capi
