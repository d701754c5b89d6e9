//===- GemmValidation.cpp - Argument checks shared by GEMM backends -------===//

#include "exec/GemmValidation.h"

#include <climits>
#include <string>

namespace shardlin::rt {

namespace {

bool isValidDType(DType t) {
  return t == DType::F16 || t == DType::BF16 || t == DType::F32 ||
         t == DType::F64;
}

std::string str(int64_t v) { return std::to_string(v); }

/// Checks one operand stored as `rows` x `cols` with leading dimension `ld`.
Status checkOperand(const char *name, const char *ldName, const void *ptr,
                    int64_t rows, int64_t cols, int64_t ld, bool trans,
                    const char *rowsName, const char *colsName,
                    const char *blasLibrary) {
  // Without elements the pointer is never dereferenced and BLAS is not
  // called, so a null pointer is fine then, and with no rows the leading
  // dimension is never used (BLAS's ld >= max(1, cols) rule would only force
  // callers of a k == 0 product to invent one). A negative ld is always a
  // caller bug.
  const bool hasElements = rows > 0 && cols > 0;
  if (ld < 0)
    return Status::invalidArgument(std::string(ldName) + " (" + str(ld) +
                                   ") is negative");
  if (rows > 0 && ld < cols)
    return Status::invalidArgument(std::string(ldName) + " (" + str(ld) +
                                   ") is smaller than the row length of " +
                                   name + " stored " + rowsName + " x " +
                                   colsName + (trans ? " (transposed)" : "") +
                                   " (" + str(cols) + ")");
  if (ld > INT_MAX)
    return Status::invalidArgument(std::string(ldName) + " (" + str(ld) +
                                   ") exceeds the " + blasLibrary +
                                   " integer range (" + str(INT_MAX) + ")");
  if (hasElements && !ptr)
    return Status::invalidArgument(std::string(name) + " is null but has " +
                                   str(rows) + " x " + str(cols) + " elements");
  return Status::ok();
}

} // namespace

Status validateGemmOp(const GemmOp &op, const char *blasLibrary) {
  if (!isValidDType(op.dtype))
    return Status::invalidArgument("invalid dtype value " +
                                   str(static_cast<int>(op.dtype)));
  if (op.f32Result && op.dtype != DType::F16 && op.dtype != DType::BF16)
    return Status::invalidArgument(std::string("an f32 result needs f16 or "
                                               "bf16 operands, not ") +
                                   dtypeName(op.dtype));
  if (op.f32Result && op.bias)
    return Status::invalidArgument(
        "a bias with an f32 result is not supported (the bias of a K split "
        "is added after the reduction)");
  const struct {
    const char *name;
    int64_t value;
  } sizes[] = {{"m", op.m}, {"n", op.n}, {"k", op.k}};
  for (const auto &s : sizes) {
    if (s.value < 0)
      return Status::invalidArgument(std::string(s.name) + " is negative (" +
                                     str(s.value) + ")");
    // OpenBLAS here is built with 32-bit integers (blasint = int), and
    // cuBLAS's sizes are int.
    if (s.value > INT_MAX)
      return Status::invalidArgument(std::string(s.name) + " (" + str(s.value) +
                                     ") exceeds the " + blasLibrary +
                                     " integer range (" + str(INT_MAX) + ")");
  }
  // transA: A is stored k x m, else m x k; transB: B is n x k, else k x n.
  SHARDLIN_RETURN_IF_ERROR(
      op.transA ? checkOperand("a", "lda", op.a, op.k, op.m, op.lda, true, "k",
                               "m", blasLibrary)
                : checkOperand("a", "lda", op.a, op.m, op.k, op.lda, false, "m",
                               "k", blasLibrary));
  SHARDLIN_RETURN_IF_ERROR(
      op.transB ? checkOperand("b", "ldb", op.b, op.n, op.k, op.ldb, true, "n",
                               "k", blasLibrary)
                : checkOperand("b", "ldb", op.b, op.k, op.n, op.ldb, false, "k",
                               "n", blasLibrary));
  SHARDLIN_RETURN_IF_ERROR(checkOperand("c", "ldc", op.c, op.m, op.n, op.ldc,
                                        false, "m", "n", blasLibrary));
  return Status::ok();
}

} // namespace shardlin::rt
