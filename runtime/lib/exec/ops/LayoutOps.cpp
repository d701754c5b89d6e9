//===- LayoutOps.cpp - transpose, fill, local_place -----------------------===//
//
// Rank-local ops of upstream linalg that are not elementwise chains: a
// transpose (a strided copy, made of the device's row copies, so that it
// runs wherever LocalOps does) and a fill (an expression of constants and
// row vectors, evaluated by the device's elementwise kernel). And
// local_place, local_slice's adjoint: a zero fill and a strided copy of
// the operand into the rank's range.
//
//===----------------------------------------------------------------------===//

#include "exec/OpKernels.h"

namespace shardlin::rt {

namespace {

bool isIdentity(const std::vector<int64_t> &perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i))
      return false;
  return true;
}

Status resolveTranspose(OpResolveContext &ctx) {
  const std::vector<int64_t> &src = ctx.operandShape(0);
  const std::vector<int64_t> &perm = ctx.in.permutation;
  ctx.result.assign(perm.size(), 0);
  for (size_t i = 0; i < perm.size(); ++i)
    ctx.result[i] = src[static_cast<size_t>(perm[i])];
  // The identity moves nothing: a view.
  if (isIdentity(perm))
    ctx.viewOperand(0, 0);
  return Status::ok();
}

/// Result element (i0, ..., iR-1) is operand element (j) with
/// j[perm[k]] = i[k]. The copies go one contiguous run at a time: along the
/// last dim when the permutation keeps it (rows of the last dim, stepping
/// through result dim R-2), else single elements stepping through the
/// result's last dim, whose operand stride is that of operand dim
/// perm[R-1].
Status executeTranspose(OpExecuteContext &ctx) {
  const std::vector<int64_t> &perm = ctx.in.permutation;
  if (isIdentity(perm))
    return Status::ok();
  const std::vector<int64_t> &src = ctx.plan.shapes[ctx.in.operands[0]];
  const std::vector<int64_t> &out = ctx.plan.shapes[ctx.in.result];
  const size_t rank = out.size(), elt = ctx.eltSize();
  if (ctx.plan.numElements(ctx.in.result) == 0)
    return Status::ok();
  // Row-major strides, in elements: the operand's along the result's dims.
  std::vector<int64_t> srcStride(rank), outStride(rank);
  int64_t s = 1, o = 1;
  for (size_t d = rank; d-- > 0;) {
    srcStride[d] = s;
    s *= src[d];
    outStride[d] = o;
    o *= out[d];
  }
  std::vector<int64_t> along(rank);
  for (size_t i = 0; i < rank; ++i)
    along[i] = srcStride[static_cast<size_t>(perm[i])];
  const bool keepsLast = perm.back() == static_cast<int64_t>(rank - 1);
  // The dim each call steps through, and the contiguous bytes per step.
  const size_t step = keepsLast ? rank - 2 : rank - 1;
  const size_t rowBytes = keepsLast ? out.back() * elt : elt;
  std::vector<int64_t> index(rank, 0);
  const char *from = ctx.operand(0);
  char *to = ctx.result();
  while (true) {
    int64_t fromAt = 0, toAt = 0;
    for (size_t d = 0; d < rank; ++d) {
      fromAt += index[d] * along[d];
      toAt += index[d] * outStride[d];
    }
    SHARDLIN_RETURN_IF_ERROR(ctx.ops.copyRows(
        from + fromAt * elt, along[step] * elt, to + toAt * elt,
        outStride[step] * elt, out[step], rowBytes));
    // The next index over the dims other than `step` (and the kept last).
    size_t d = keepsLast ? rank - 2 : rank - 1;
    while (d-- > 0 && ++index[d] == out[d])
      index[d] = 0;
    if (d == static_cast<size_t>(-1))
      return Status::ok();
  }
}

Status resolveFill(OpResolveContext &ctx) {
  ctx.result = ctx.resultType();
  for (size_t d = 0; d < ctx.result.size(); ++d)
    if (ctx.result[d] == kDynamic)
      ctx.result[d] = ctx.operandShape(0)[d]; // verifyFill: it has one
  SHARDLIN_RETURN_IF_ERROR(ctx.checkSize(ctx.result));
  PlanStep &st = ctx.step;
  const size_t first = fillInputsBegin(ctx.plan.program.values[ctx.in.result]);
  st.exprOperands.assign(ctx.in.operands.size() - first,
                         ExprOperand{nullptr, true});
  st.cols = ctx.result.empty() ? 1 : ctx.result.back();
  st.rows = ctx.result.empty() ? 1 : product(ctx.result, 0, ctx.result.size() - 1);
  for (size_t k = first; k < ctx.in.operands.size(); ++k)
    if (ctx.operandShape(k)[0] != st.cols)
      return ctx.error("on rank " + std::to_string(ctx.rank) +
                       " row vector operand " + std::to_string(k) + " has " +
                       std::to_string(ctx.operandShape(k)[0]) +
                       " elements but the result " + formatShape(ctx.result) +
                       " has rows of " + std::to_string(st.cols));
  return Status::ok();
}

Status executeFill(OpExecuteContext &ctx) {
  PlanStep &st = ctx.step;
  const size_t first = ctx.in.operands.size() - st.exprOperands.size();
  for (size_t k = 0; k < st.exprOperands.size(); ++k)
    st.exprOperands[k].data = ctx.operand(first + k);
  return ctx.ops.elementwise(ctx.in.expr, st.exprOperands, ctx.result(),
                             st.rows, st.cols, ctx.dtype());
}

/// local_place: the result has the operand's shape but the instruction's
/// static size along the dim (Program::validate checked it is static);
/// the operand's size there must be this rank's e - b.
Status resolveLocalPlace(OpResolveContext &ctx) {
  const std::vector<int64_t> &src = ctx.operandShape(0);
  const size_t pairs = ctx.in.ranges.size() / 2;
  if (pairs != static_cast<size_t>(ctx.plan.worldSize))
    return ctx.error("its ranges have " + std::to_string(pairs) +
                     " pairs but the run has " +
                     std::to_string(ctx.plan.worldSize) + " ranks");
  const size_t dim = static_cast<size_t>(ctx.in.sliceDim[0]);
  const int64_t b = ctx.in.ranges[2 * size_t(ctx.rank)];
  const int64_t e = ctx.in.ranges[2 * size_t(ctx.rank) + 1];
  if (src[dim] != e - b)
    return ctx.error("rank " + std::to_string(ctx.rank) + "'s operand " +
                     formatShape(src) + " has " + std::to_string(src[dim]) +
                     " elements along dim " + std::to_string(dim) +
                     " but its range [" + std::to_string(b) + ", " +
                     std::to_string(e) + ") has " + std::to_string(e - b));
  ctx.result = src;
  ctx.result[dim] = ctx.resultType()[dim];
  SHARDLIN_RETURN_IF_ERROR(ctx.checkSize(ctx.result));
  ctx.step.chunkView = splitAround(ctx.result, static_cast<int64_t>(dim));
  ctx.step.chunkRange = Range{b, e - b};
  return Status::ok();
}

/// Zeros, then the operand's rows copied to [b, e) of the dim in each of
/// the `outer` rows of the dims before it: every element is a copy or a
/// zero (no arithmetic reads the operand).
Status executeLocalPlace(OpExecuteContext &ctx) {
  const DimSplit &v = ctx.step.chunkView;
  const Range &r = ctx.step.chunkRange;
  const int64_t total = v.outer * v.n * v.inner;
  if (total == 0)
    return Status::ok(); // Nothing to write (and maybe a null buffer).
  static const ExprProgram zero{{ExprNode{}}}; // One Const node, +0.
  SHARDLIN_RETURN_IF_ERROR(
      ctx.ops.elementwise(zero, {}, ctx.result(), 1, total, ctx.dtype()));
  if (r.size == 0)
    return Status::ok(); // This rank places nothing.
  const size_t elt = ctx.eltSize();
  const size_t rowBytes = static_cast<size_t>(r.size * v.inner) * elt;
  return ctx.ops.copyRows(ctx.operand(0), rowBytes,
                          ctx.result() + r.offset * v.inner * elt,
                          static_cast<size_t>(v.n * v.inner) * elt, v.outer,
                          rowBytes);
}

} // namespace

std::vector<OpKernel> layoutKernels() {
  return {{OpCode::Transpose, resolveTranspose, executeTranspose},
          {OpCode::Fill, resolveFill, executeFill},
          {OpCode::LocalPlace, resolveLocalPlace, executeLocalPlace}};
}

} // namespace shardlin::rt
