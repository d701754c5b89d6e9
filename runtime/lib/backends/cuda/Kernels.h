//===- Kernels.h - Device kernels of the GPU backends -----------*- C++ -*-===//
//
// Host-side launchers for the few kernels the GPU backends need; callable
// from g++-compiled code (no CUDA syntax here). Each launcher enqueues on
// `stream` and returns the launch's cudaError_t (cudaGetLastError after the
// launch), which the caller turns into a Status naming the kernel.
//
// All pointers must be aligned to their element size (the callers check).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_CUDA_KERNELS_H
#define SHARDLIN_RUNTIME_LIB_CUDA_KERNELS_H

#include "shardlin/runtime/backends/Cuda.h"
#include "shardlin/runtime/base/DType.h"
#include "shardlin/runtime/base/Expr.h"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace shardlin::rt::cuda {

/// Source pointers of a sum, passed by value as the kernel's argument (so
/// nothing is copied to the device before the launch).
struct SumSources {
  const void *ptr[kMaxCudaLocalRanks] = {};
  int count = 0;
};

/// dst[i] = sum over k in 0..count-1 of src_k[i], for i < n, in the order
/// k = 0, 1, ...: f64 in f64, f32 in f32, f16/bf16 in f32 and rounded once
/// (round to nearest even). These are the threads backend's rules, so the
/// results agree bit for bit. One source is copied bit for bit. dst may be
/// one of the sources (element i is read by the thread that writes it),
/// but must not overlap one partially.
cudaError_t launchSumInOrder(DType dtype, const SumSources &sources, void *dst,
                             int64_t n, cudaStream_t stream);

/// The same with `count` sources at base + k * strideElements, k < count
/// (any count: NCCL groups are not limited like cuda-local's).
cudaError_t launchSumStrided(DType dtype, const void *base,
                             int64_t strideElements, int count, void *dst,
                             int64_t n, cudaStream_t stream);

/// Row-major C (m x n, leading dimension ldc): every row = bias (bit-exact
/// copy of its n elements) or, if bias is null, +0. Columns n..ldc-1 are
/// not written.
cudaError_t launchFillRows(DType dtype, void *c, int64_t ldc, const void *bias,
                           int64_t m, int64_t n, cudaStream_t stream);

/// Row-major y (rows x cols, dense) = x + bias broadcast over the rows: f64
/// in f64, f32 in f32, f16/bf16 widened to f32, added and rounded once (round
/// to nearest even), i.e. bit for bit what the host's LocalOps computes. y
/// may equal x (each element is read by the thread that writes it) but must
/// not overlap it otherwise, nor overlap bias.
cudaError_t launchBiasAdd(DType dtype, const void *x, const void *bias, void *y,
                          int64_t rows, int64_t cols, cudaStream_t stream);

/// Row-major C (rows x cols, leading dimension ldc; f16 or bf16) = acc +
/// bias broadcast over the rows, where acc (leading dimension ldAcc) is the
/// f32 accumulator of a GEMM: bias widened to f32, added in f32 and rounded
/// once to C's type. Columns cols..ldc-1 are not written. acc must not
/// overlap C or bias. cudaErrorInvalidValue for f32 and f64.
cudaError_t launchAccumulatorBias(DType dtype, const float *acc, int64_t ldAcc,
                                  const void *bias, void *c, int64_t ldc,
                                  int64_t rows, int64_t cols,
                                  cudaStream_t stream);

/// y[i] = x[i] from `from` to `to` (f32 to f16/bf16 rounding to nearest
/// even, or back exactly; isConversion in LocalOps.h).
cudaError_t launchConvert(DType from, const void *x, DType to, void *y,
                          int64_t n, cudaStream_t stream);

/// y[j] = the sum over i of x[i, j] for a rows x cols row-major x of type
/// `from`, into cols elements of y of type `to` (`from`, or f32 for
/// f16/bf16): LocalOps::sumRows' order exactly (each column from +0, rows
/// 0, 1, ... added one at a time in f32, f64 for f64, rounded once to
/// `to`), so the host's and the GPU's sums agree bit for bit. One thread per
/// column: the order leaves no parallelism within a column. x and y must
/// not overlap. cudaErrorInvalidValue for another pair of types.
cudaError_t launchSumRows(DType from, const void *x, DType to, void *y,
                          int64_t rows, int64_t cols, cudaStream_t stream);

/// LocalOps::reduceLast: y[i] = init[i] combined with row i of x in order
/// (ExprOp::Add, Maximum or MaxNum), in f32 (f64 for f64), rounded once;
/// the host's bits exactly. One thread per row. cudaErrorInvalidValue for
/// another combination.
cudaError_t launchReduceLast(DType dtype, int combine, const void *x,
                             const void *init, void *y, int64_t rows,
                             int64_t cols, cudaStream_t stream);

/// An expression program (Expr.h) and its operands in the form the
/// elementwise kernel takes by value (about 1.5 KB of kernel parameters, so
/// nothing is copied to the device before the launch): one entry per node,
/// one per operand.
struct DeviceExpr {
  uint8_t op[kMaxExprNodes];
  int8_t args[kMaxExprNodes][3];
  uint8_t input[kMaxExprNodes];
  uint8_t predicate[kMaxExprNodes];
  double value[kMaxExprNodes];
  int numNodes = 0;
  const void *operand[kMaxExprNodes];
  /// 1: a row vector of `cols` elements, read at the column; 2: a column
  /// of `rows` elements, read at the row.
  uint8_t rowVector[kMaxExprNodes];
  int numOperands = 0;
};

/// Row-major y (rows x cols, dense) = the expression's last node at every
/// element, with the host evaluator's semantics (LocalOps::elementwise):
/// f32 compute for f16/bf16/f32, f64 for f64, one rounding to nearest even
/// when stored; maximum/minimum NaN-propagating with -0 < +0, maxnum/minnum
/// returning the non-NaN operand, cmpf's ordered/unordered predicates. exp,
/// log, tanh and erf are CUDA's (within 2 ulp of the exact value in f32,
/// the host's are within 4e-7), so results agree with the host to those
/// bounds, not bit for bit. y may equal a full operand (each element's
/// operands are read by the thread that writes it), must not overlap any
/// operand otherwise. The expression must be valid (validateExpr).
cudaError_t launchElementwise(DType dtype, const DeviceExpr &expr, void *y,
                              int64_t rows, int64_t cols, cudaStream_t stream);

/// LocalOps::attentionSoftmax in place on a rows x cols block s (f32 or
/// f64, `dtype`), mask rows x cols or null: one block of threads per row
/// (its maximum, its sum, then one division per element: tree reductions,
/// so the host's results are matched to rounding, not bit for bit).
/// AttentionKernels.cu.
cudaError_t launchAttentionSoftmax(DType dtype, void *s, const void *mask,
                                   int64_t rows, int64_t cols, double scale,
                                   bool causal, cudaStream_t stream);

/// LocalOps::attentionSoftmaxGrad in place on ds: one block per row.
cudaError_t launchAttentionSoftmaxGrad(DType dtype, const void *p, void *ds,
                                       int64_t rows, int64_t cols,
                                       double scale, cudaStream_t stream);

/// LocalOps::rope: one thread per rotated pair, in f32 (f64 for f64).
cudaError_t launchRope(DType dtype, DType tableType, const void *x,
                       const void *cos, const void *sin, void *y,
                       int64_t batch, int64_t seq, int64_t heads,
                       int64_t headDim, bool inverse, cudaStream_t stream);

} // namespace shardlin::rt::cuda

#endif // SHARDLIN_RUNTIME_LIB_CUDA_KERNELS_H
