//===- Compute.cpp - gemm, bias_add, convert, sum_rows --------------------===//
//
// The local ops: each reads and checks its views, hands BLAS or the device's
// local ops the views that are dense (a GEMM operand also when it is
// row-major with a leading stride, or its transpose), packs the others into
// the context's scratch buffers, and unpacks a strided output afterwards.
//
//===----------------------------------------------------------------------===//

#include "capi/Arguments.h"
#include "capi/Context.h"
#include "capi/Entries.h"
#include "capi/Errors.h"
#include "exec/GemmValidation.h"
#include "shardlin/runtime/exec/Gemm.h"
#include "shardlin/runtime/exec/LocalOps.h"

#include <algorithm>
#include <climits>
#include <optional>
#include <string>

namespace shardlin::rt::capi {

namespace {

/// How BLAS reads a 2-D view: row-major with a leading stride (`ld`), as
/// is; column-major (`transposed`: BLAS reads the transpose, row-major);
/// or packed into `slot` when it is neither.
struct Matrix {
  const char *p = nullptr;
  int64_t ld = 1;
  bool transposed = false;
};

/// If `v` (rows x cols) is row-major with a leading stride BLAS can take,
/// that stride.
std::optional<int64_t> rowMajorLd(int64_t rows, int64_t cols, int64_t s0,
                                  int64_t s1) {
  const int64_t minLd = std::max<int64_t>(1, cols);
  if (cols > 1 && s1 != 1)
    return std::nullopt;
  if (rows <= 1)
    return minLd;
  if (s0 < minLd || s0 > INT_MAX)
    return std::nullopt;
  return s0;
}

Status matrixOf(shardlin_context *ctx, const View &v, Slot slot, Matrix &m) {
  const int64_t rows = v.sizes[0], cols = v.sizes[1];
  if (auto ld = rowMajorLd(rows, cols, v.strides[0], v.strides[1])) {
    m = {v.data, *ld, false};
    return Status::ok();
  }
  if (auto ld = rowMajorLd(cols, rows, v.strides[1], v.strides[0])) {
    m = {v.data, *ld, true};
    return Status::ok();
  }
  const char *dense = nullptr;
  SHARDLIN_RETURN_IF_ERROR(denseInput(ctx, v, slot, dense));
  m = {dense, std::max<int64_t>(1, cols), false};
  return Status::ok();
}

} // namespace

Status gemm(shardlin_context *ctx, int dtypeValue,
            const shardlin_memref *lhsRef, const shardlin_memref *rhsRef,
            const shardlin_memref *biasRef, int outDtypeValue,
            const shardlin_memref *outRef, bool transLhs, bool transRhs) {
  DType t, outT;
  SHARDLIN_RETURN_IF_ERROR(toDType(dtypeValue, "dtype", t));
  SHARDLIN_RETURN_IF_ERROR(toDType(outDtypeValue, "out_dtype", outT));
  if (outT != t && outT != DType::F32)
    return invalid(std::string("out_dtype is ") + dtypeName(outT) + " with " +
                   dtypeName(t) +
                   " operands: it is dtype, or f32 for f16 and bf16 "
                   "operands without a bias");
  View lhs, rhs, bias, out;
  SHARDLIN_RETURN_IF_ERROR(readView(lhsRef, "lhs", t, 2, lhs));
  SHARDLIN_RETURN_IF_ERROR(readView(rhsRef, "rhs", t, 2, rhs));
  if (biasRef)
    SHARDLIN_RETURN_IF_ERROR(readView(biasRef, "bias", t, 1, bias));
  SHARDLIN_RETURN_IF_ERROR(readView(outRef, "out", outT, 2, out));
  const int64_t m = transLhs ? lhs.sizes[1] : lhs.sizes[0];
  const int64_t ka = transLhs ? lhs.sizes[0] : lhs.sizes[1];
  const int64_t kb = transRhs ? rhs.sizes[1] : rhs.sizes[0];
  const int64_t n = transRhs ? rhs.sizes[0] : rhs.sizes[1];
  if (ka != kb)
    return invalid("the contraction dims differ: op(lhs) is " + str(m) + " x " +
                   str(ka) + " (lhs " + lhs.shape() +
                   (transLhs ? ", transposed" : "") + ") but op(rhs) is " +
                   str(kb) + " x " + str(n) + " (rhs " + rhs.shape() +
                   (transRhs ? ", transposed" : "") + ")");
  if (out.sizes[0] != m || out.sizes[1] != n)
    return invalid("out is " + out.shape() + ", expected [" + str(m) + ", " +
                   str(n) + "] (op(lhs) rows x op(rhs) columns)");
  if (biasRef && bias.sizes[0] != n)
    return invalid("bias has " + str(bias.sizes[0]) + " elements, expected " +
                   str(n) + " (out's columns)");
  SHARDLIN_RETURN_IF_ERROR(checkOutput(out, {&lhs, &rhs, &bias}));

  GemmOp op;
  op.m = m;
  op.n = n;
  op.k = ka;
  op.dtype = t;
  op.f32Result = outT != t;
  Matrix a, b;
  SHARDLIN_RETURN_IF_ERROR(matrixOf(ctx, lhs, Slot::Lhs, a));
  SHARDLIN_RETURN_IF_ERROR(matrixOf(ctx, rhs, Slot::Rhs, b));
  op.a = a.p;
  op.lda = a.ld;
  op.transA = transLhs != a.transposed;
  op.b = b.p;
  op.ldb = b.ld;
  op.transB = transRhs != b.transposed;
  if (biasRef) {
    const char *p = nullptr;
    SHARDLIN_RETURN_IF_ERROR(denseInput(ctx, bias, Slot::Bias, p));
    // A bias of no elements (n == 0) is still a bias (validateGemmOp's
    // rules about biases apply), and is never read: any non-null address.
    op.bias = p ? p : static_cast<const void *>(&op);
  }
  char *c = nullptr;
  if (auto ld = rowMajorLd(m, n, out.strides[0], out.strides[1])) {
    c = out.data;
    op.ldc = *ld;
  } else {
    SHARDLIN_RETURN_IF_ERROR(denseOutput(ctx, out, Slot::OutDense, c));
    op.ldc = std::max<int64_t>(1, n);
  }
  op.c = c;
  SHARDLIN_RETURN_IF_ERROR(validateGemmOp(op, "OpenBLAS"));
  SHARDLIN_RETURN_IF_ERROR(ctx->device->gemm().run(op));
  if (c != out.data)
    copyDenseToView(c, out);
  return Status::ok();
}

Status biasAdd(shardlin_context *ctx, int dtypeValue,
               const shardlin_memref *inRef, const shardlin_memref *biasRef,
               const shardlin_memref *outRef) {
  DType t;
  SHARDLIN_RETURN_IF_ERROR(toDType(dtypeValue, "dtype", t));
  View in, bias, out;
  SHARDLIN_RETURN_IF_ERROR(readView(inRef, "in", t, -1, in));
  if (in.rank() == 0)
    return invalid("in has rank 0; bias_add needs rows x cols (rank >= 1, "
                   "the bias along the last dim)");
  SHARDLIN_RETURN_IF_ERROR(readView(biasRef, "bias", t, 1, bias));
  SHARDLIN_RETURN_IF_ERROR(readView(outRef, "out", t, in.rank(), out));
  SHARDLIN_RETURN_IF_ERROR(checkSameDims(in, out, -1, -1));
  const int64_t cols = in.sizes.back();
  if (bias.sizes[0] != cols)
    return invalid("bias has " + str(bias.sizes[0]) + " elements, expected " +
                   str(cols) + " (the last dim of in " + in.shape() + ")");
  SHARDLIN_RETURN_IF_ERROR(checkOneAddressPerElement(out));
  SHARDLIN_RETURN_IF_ERROR(checkDisjoint(out, in, true));
  SHARDLIN_RETURN_IF_ERROR(checkDisjoint(out, bias));
  const int64_t rows = cols == 0 ? 0 : in.elements / cols;
  const char *x = nullptr, *b = nullptr;
  char *y = nullptr;
  SHARDLIN_RETURN_IF_ERROR(denseInput(ctx, in, Slot::InDense, x));
  SHARDLIN_RETURN_IF_ERROR(denseInput(ctx, bias, Slot::Bias, b));
  SHARDLIN_RETURN_IF_ERROR(denseOutput(ctx, out, Slot::OutDense, y));
  SHARDLIN_RETURN_IF_ERROR(
      ctx->device->localOps().biasAdd(x, b, y, rows, cols, t));
  finishOutput(out, y);
  return Status::ok();
}

Status convert(shardlin_context *ctx, const shardlin_memref *inRef,
               int fromValue, const shardlin_memref *outRef, int toValue) {
  DType from, to;
  SHARDLIN_RETURN_IF_ERROR(toDType(fromValue, "from", from));
  SHARDLIN_RETURN_IF_ERROR(toDType(toValue, "to", to));
  if (!isConversion(from, to))
    return invalid(std::string("converts ") + dtypeName(from) + " to " +
                   dtypeName(to) +
                   "; convert is f32 to f16 or bf16, or "
                   "back");
  View in, out;
  SHARDLIN_RETURN_IF_ERROR(readView(inRef, "in", from, -1, in));
  SHARDLIN_RETURN_IF_ERROR(readView(outRef, "out", to, in.rank(), out));
  SHARDLIN_RETURN_IF_ERROR(checkSameDims(in, out, -1, -1));
  SHARDLIN_RETURN_IF_ERROR(checkOutput(out, {&in}));
  const char *x = nullptr;
  char *y = nullptr;
  SHARDLIN_RETURN_IF_ERROR(denseInput(ctx, in, Slot::InDense, x));
  SHARDLIN_RETURN_IF_ERROR(denseOutput(ctx, out, Slot::OutDense, y));
  SHARDLIN_RETURN_IF_ERROR(
      ctx->device->localOps().convert(x, from, y, to, in.elements));
  finishOutput(out, y);
  return Status::ok();
}

Status sumRows(shardlin_context *ctx, int dtypeValue,
               const shardlin_memref *inRef, int outDtypeValue,
               const shardlin_memref *outRef) {
  DType from, to;
  SHARDLIN_RETURN_IF_ERROR(toDType(dtypeValue, "dtype", from));
  SHARDLIN_RETURN_IF_ERROR(toDType(outDtypeValue, "out_dtype", to));
  if (!isSumRowsResult(from, to))
    return invalid(std::string("sums ") + dtypeName(from) + " into " +
                   dtypeName(to) +
                   "; out_dtype is dtype, or f32 for f16 and bf16");
  View in, out;
  SHARDLIN_RETURN_IF_ERROR(readView(inRef, "in", from, 2, in));
  SHARDLIN_RETURN_IF_ERROR(readView(outRef, "out", to, 1, out));
  if (out.sizes[0] != in.sizes[1])
    return invalid("out has " + str(out.sizes[0]) + " elements, expected " +
                   str(in.sizes[1]) + " (the columns of in " + in.shape() +
                   ")");
  SHARDLIN_RETURN_IF_ERROR(checkOutput(out, {&in}));
  const char *x = nullptr;
  char *y = nullptr;
  SHARDLIN_RETURN_IF_ERROR(denseInput(ctx, in, Slot::InDense, x));
  SHARDLIN_RETURN_IF_ERROR(denseOutput(ctx, out, Slot::OutDense, y));
  SHARDLIN_RETURN_IF_ERROR(ctx->device->localOps().sumRows(
      x, from, y, to, in.sizes[0], in.sizes[1]));
  finishOutput(out, y);
  return Status::ok();
}

} // namespace shardlin::rt::capi
