//===- Gemm.h - Matrix multiplication backends ------------------*- C++ -*-===//
#ifndef SHARDLIN_RUNTIME_GEMM_H
#define SHARDLIN_RUNTIME_GEMM_H

#include "shardlin/runtime/Buffer.h"
#include "shardlin/runtime/DType.h"
#include "shardlin/runtime/LocalOps.h"
#include "shardlin/runtime/Status.h"

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

/// OpenBLAS-backed GEMM. One object per rank; it owns the f32 workspace used
/// for f16/bf16 and is not safe to share between threads.
std::unique_ptr<GemmBackend> createCpuGemm();

/// Sets the number of threads OpenBLAS uses (a process-wide setting).
void setBlasThreads(int n);
int getBlasThreads();

/// OpenBLAS's kernel set in use ("SkylakeX", "Haswell", "Prescott", ...).
std::string blasCoreName();

/// The OPENBLAS_CORETYPE this CPU should run with when OpenBLAS fell back to
/// an older kernel set than the CPU supports (OpenBLAS 0.3.21, Debian 12's,
/// falls back to Prescott's SSE3 kernels on a CPU model it does not know,
/// 3-4x slower here): "SkylakeX" for AVX-512 (F, BW, DQ, VL), "Haswell" for
/// AVX2 + FMA. Empty when the choice is fine, when OPENBLAS_CORETYPE is set
/// already, or when SHARDLIN_BLAS_CORETYPE=keep.
std::string suggestedBlasCoreType();

/// For a tool's main(), first thing (before threads or MPI): when
/// suggestedBlasCoreType() is not empty, re-executes the program
/// (/proc/self/exe, the same arguments) with OPENBLAS_CORETYPE set to it,
/// since OpenBLAS reads it only when it is loaded. Returns when there is
/// nothing to do or the exec fails (the run then goes on as chosen).
void reexecForBlasKernels(char **argv);

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_GEMM_H
