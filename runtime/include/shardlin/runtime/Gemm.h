//===- Gemm.h - Matrix multiplication backends ------------------*- C++ -*-===//
#ifndef SHARDLIN_RUNTIME_GEMM_H
#define SHARDLIN_RUNTIME_GEMM_H

#include "shardlin/runtime/Buffer.h"
#include "shardlin/runtime/DType.h"
#include "shardlin/runtime/Status.h"

#include <cstdint>
#include <memory>

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

class GemmBackend {
public:
  virtual ~GemmBackend() = default;
  virtual const char *name() const = 0;
  virtual Device device() const { return Device{}; }
  virtual Status run(const GemmOp &op) = 0;
};

/// OpenBLAS-backed GEMM. One object per rank; it owns the f32 workspace used
/// for f16/bf16 and is not safe to share between threads.
std::unique_ptr<GemmBackend> createCpuGemm();

/// Sets the number of threads OpenBLAS uses (a process-wide setting).
void setBlasThreads(int n);
int getBlasThreads();

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_GEMM_H
