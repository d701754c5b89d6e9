//===- Gemm.h - Matrix multiplication backends ------------------*- C++ -*-===//
#ifndef SHARDLIN_RUNTIME_GEMM_H
#define SHARDLIN_RUNTIME_GEMM_H

#include "shardlin/runtime/base/Buffer.h"
#include "shardlin/runtime/base/DType.h"
#include "shardlin/runtime/exec/LocalOps.h"
#include "shardlin/runtime/base/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace shardlin::rt {

/// Row-major C[m x n] = op(A)[m x k] * op(B)[k x n] (+ bias[n] on every row).
/// transA: A is stored k x m (lda >= m), else m x k (lda >= k).
/// transB: B is stored n x k (ldb >= k), else k x n (ldb >= n).
/// A, B and bias have element type `dtype`, and so has C unless
/// `f32Result`; all live on the backend's device. f16/bf16 are computed with
/// f32 accumulation and C is rounded once, or, with `f32Result` (f16/bf16
/// only, without a bias), C is f32 and holds the f32 accumulation unrounded:
/// the partial products of a K split, summed over ranks before one rounding.
/// Any of m, n, k may be 0 (k == 0 gives C = bias or zeros).
struct GemmOp {
  int64_t m = 0, n = 0, k = 0;
  bool transA = false, transB = false;
  DType dtype = DType::F32;
  const void *a = nullptr;
  int64_t lda = 0;
  const void *b = nullptr;
  int64_t ldb = 0;
  const void *bias = nullptr;
  void *c = nullptr;
  int64_t ldc = 0; // in C's elements
  bool f32Result = false;

  /// C's element type.
  DType cDtype() const { return f32Result ? DType::F32 : dtype; }
};

/// An elementwise expression (Expr.h) over a GEMM's result, run as the
/// GEMM's epilogue: y = the expression at every element of the op.m x op.n
/// result, its operands as LocalOps::elementwise takes them (full operands
/// dense m x n, row vectors of n elements, all of C's type), one or more of
/// the full operands being C itself (op.c). C must be dense (op.ldc ==
/// op.n). y may be C or another full operand (in place) but must not overlap
/// A, B or the bias. Unless y is C, C holds the GEMM's result afterwards.
struct GemmEpilogue {
  const ExprProgram *expr = nullptr;
  const std::vector<ExprOperand> *operands = nullptr;
  void *y = nullptr;
};

class GemmBackend {
public:
  virtual ~GemmBackend() = default;
  virtual const char *name() const = 0;
  virtual Device device() const { return Device{}; }
  virtual Status run(const GemmOp &op) = 0;
  /// run(op) and then the epilogue, with the results of run(op) followed by
  /// ops.elementwise(*expr, *operands, y, m, n, op.cDtype()) within the
  /// elementwise op's bounds. That is what this default does, in two passes
  /// over C. The OpenBLAS backend applies the epilogue to each block of
  /// rows of C right after computing it, while the block is in cache; the
  /// cuBLAS backend uses cuBLASLt's bias and GELU epilogues where the
  /// expression is one of them. The arguments are checked
  /// (checkGemmEpilogue) before anything is computed.
  virtual Status runWithEpilogue(const GemmOp &op,
                                 const GemmEpilogue &epilogue, LocalOps &ops);
};

/// The checks of runWithEpilogue beyond the GemmOp's: an expression and its
/// operands, a dense C, and the elementwise op's own argument checks
/// (checkElementwiseArguments) for y over the m x n result. InvalidArgument.
Status checkGemmEpilogue(const GemmOp &op, const GemmEpilogue &epilogue);

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_GEMM_H
