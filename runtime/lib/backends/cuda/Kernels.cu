//===- Kernels.cu - Reduction, fill, bias and elementwise kernels (GPU) ---===//
//
// Memory-bound elementwise kernels: a grid-stride loop over int64 indices
// (sizes beyond 2^31 elements stay correct) with enough blocks to fill an
// H100/H200 several times over. Summation order and rounding follow the
// threads backend exactly (see Kernels.h), which is why the accumulator is
// a plain `acc += x` in a fixed order: no FMA can form from it, and nvcc
// keeps IEEE round-to-nearest-even with subnormals unless --use_fast_math,
// which this build does not use.
//
//===----------------------------------------------------------------------===//

#include "backends/cuda/Kernels.h"
#include "backends/cuda/KernelTypes.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstring>

namespace shardlin::rt::cuda {
namespace {

constexpr int kThreads = 256;
/// 132 SMs x 8 resident 256-thread blocks x 4: more blocks than that only
/// add scheduling overhead to a grid-stride loop.
constexpr int64_t kMaxBlocks = 4224;

int blocksFor(int64_t n) {
  return static_cast<int>(
      std::min<int64_t>((n + kThreads - 1) / kThreads, kMaxBlocks));
}

/// Source k of a sum given as a pointer table.
struct TableSources {
  SumSources table;
  __device__ const void *at(int k) const { return table.ptr[k]; }
  __device__ int count() const { return table.count; }
};

/// Source k of a sum given as equally spaced blocks of one buffer.
struct StridedSources {
  const void *base;
  int64_t strideBytes;
  int n;
  __device__ const void *at(int k) const {
    return static_cast<const unsigned char *>(base) + k * strideBytes;
  }
  __device__ int count() const { return n; }
};

// No __restrict__: dst may be one of the sources.
template <typename T, typename Sources>
__global__ void sumKernel(Sources sources, T *dst, int64_t n) {
  using A = Arith<T>;
  const int count = sources.count();
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += step) {
    typename A::Acc acc = A::load(static_cast<const T *>(sources.at(0))[i]);
    for (int k = 1; k < count; ++k)
      acc += A::load(static_cast<const T *>(sources.at(k))[i]);
    dst[i] = A::store(acc);
  }
}

template <typename Sources>
cudaError_t launchSum(DType dtype, const Sources &sources, void *dst, int64_t n,
                      cudaStream_t stream) {
  const int blocks = blocksFor(n);
  cudaError_t err = withDeviceType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    sumKernel<T><<<blocks, kThreads, 0, stream>>>(sources,
                                                   static_cast<T *>(dst), n);
    return cudaSuccess;
  });
  if (err != cudaSuccess)
    return err;
  return cudaGetLastError();
}

/// Fills on the raw bits (U has the element's size), so the bias is copied
/// exactly, -0 and NaN payloads included, and zero is the all-zero pattern.
template <typename U>
__global__ void fillRowsKernel(U *c, int64_t ldc, const U *bias, int64_t m,
                               int64_t n) {
  const int64_t total = m * n;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t idx = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
       idx < total; idx += step) {
    const int64_t i = idx / n, j = idx % n;
    c[i * ldc + j] = bias ? bias[j] : U(0);
  }
}

template <typename U>
cudaError_t launchFill(void *c, int64_t ldc, const void *bias, int64_t m,
                       int64_t n, cudaStream_t stream) {
  fillRowsKernel<U><<<blocksFor(m * n), kThreads, 0, stream>>>(
      static_cast<U *>(c), ldc, static_cast<const U *>(bias), m, n);
  return cudaGetLastError();
}

/// One row per blockIdx.y step and the columns across x: the bias index is
/// the column itself, so no 64-bit division per element (which would make
/// this memory-bound kernel compute-bound). x is T, or the f32 accumulator
/// of an f16/bf16 GEMM (X = float); the sum is in T's compute type and
/// rounded once to T.
template <typename X, typename T>
__global__ void biasAddKernel(const X *x, int64_t ldx, const T *bias, T *y,
                              int64_t ldy, int64_t rows, int64_t cols) {
  using A = Arith<T>;
  const int64_t colStep = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.y; i < rows; i += gridDim.y)
    for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < cols;
         j += colStep)
      y[i * ldy + j] =
          A::store(typename A::Acc(Arith<X>::load(x[i * ldx + j])) +
                   A::load(bias[j]));
}

template <typename X, typename T>
cudaError_t launchBias(const void *x, int64_t ldx, const void *bias, void *y,
                       int64_t ldy, int64_t rows, int64_t cols,
                       cudaStream_t stream) {
  // Enough column blocks to cover a row, then as many rows side by side as
  // keep the grid within kMaxBlocks (gridDim.y is limited to 65535).
  const int gx = blocksFor(cols);
  const int64_t gy = std::min<int64_t>(
      std::min<int64_t>(rows, std::max<int64_t>(1, kMaxBlocks / gx)), 65535);
  biasAddKernel<X, T><<<dim3(gx, unsigned(gy)), kThreads, 0, stream>>>(
      static_cast<const X *>(x), ldx, static_cast<const T *>(bias),
      static_cast<T *>(y), ldy, rows, cols);
  return cudaGetLastError();
}

//===----------------------------------------------------------------------===//
// elementwise: the expression evaluated per element, one value per node in
// the thread's registers (local memory for the larger expressions).
//===----------------------------------------------------------------------===//

__device__ float mathExp(float x) { return expf(x); }
__device__ float mathLog(float x) { return logf(x); }
__device__ float mathTanh(float x) { return tanhf(x); }
__device__ float mathErf(float x) { return erff(x); }
__device__ float mathSqrt(float x) { return sqrtf(x); }
__device__ double mathExp(double x) { return exp(x); }
__device__ double mathLog(double x) { return log(x); }
__device__ double mathTanh(double x) { return tanh(x); }
__device__ double mathErf(double x) { return erf(x); }
__device__ double mathSqrt(double x) { return sqrt(x); }

/// arith.maximumf / minimumf: NaN if either is NaN, -0 < +0.
template <typename C> __device__ C exprMaximum(C a, C b) {
  if (isnan(a) || isnan(b))
    return a + b;
  if (a == b)
    return signbit(a) ? b : a;
  return a > b ? a : b;
}
template <typename C> __device__ C exprMinimum(C a, C b) {
  if (isnan(a) || isnan(b))
    return a + b;
  if (a == b)
    return signbit(a) ? a : b;
  return a < b ? a : b;
}

template <typename C> __device__ bool exprCompare(int predicate, C a, C b) {
  const bool unordered = isnan(a) || isnan(b);
  switch (static_cast<CmpPredicate>(predicate)) {
  case CmpPredicate::False:
    return false;
  case CmpPredicate::OEQ:
    return a == b;
  case CmpPredicate::OGT:
    return a > b;
  case CmpPredicate::OGE:
    return a >= b;
  case CmpPredicate::OLT:
    return a < b;
  case CmpPredicate::OLE:
    return a <= b;
  case CmpPredicate::ONE:
    return a < b || a > b;
  case CmpPredicate::ORD:
    return !unordered;
  case CmpPredicate::UEQ:
    return unordered || a == b;
  case CmpPredicate::UGT:
    return unordered || a > b;
  case CmpPredicate::UGE:
    return unordered || a >= b;
  case CmpPredicate::ULT:
    return unordered || a < b;
  case CmpPredicate::ULE:
    return unordered || a <= b;
  case CmpPredicate::UNE:
    return a != b;
  case CmpPredicate::UNO:
    return unordered;
  case CmpPredicate::True:
    return true;
  }
  return false;
}

template <typename T>
__device__ typename Arith<T>::Acc evalExpr(const DeviceExpr &e, int64_t i,
                                           int64_t j, int64_t cols) {
  using A = Arith<T>;
  using C = typename A::Acc;
  C v[kMaxExprNodes];
  for (int n = 0; n < e.numNodes; ++n) {
    const C a = e.args[n][0] >= 0 ? v[e.args[n][0]] : C(0);
    const C b = e.args[n][1] >= 0 ? v[e.args[n][1]] : C(0);
    C r = 0;
    switch (static_cast<ExprOp>(e.op[n])) {
    case ExprOp::Input: {
      const int k = e.input[n];
      const T *src = static_cast<const T *>(e.operand[k]);
      r = A::load(e.rowVector[k] == 1   ? src[j]
                  : e.rowVector[k] == 2 ? src[i]
                                        : src[i * cols + j]);
      break;
    }
    case ExprOp::Const:
      r = static_cast<C>(e.value[n]);
      break;
    case ExprOp::Neg:
      r = -a;
      break;
    case ExprOp::Abs:
      r = fabs(a);
      break;
    case ExprOp::Exp:
      r = mathExp(a);
      break;
    case ExprOp::Log:
      r = mathLog(a);
      break;
    case ExprOp::Sqrt:
      r = mathSqrt(a);
      break;
    case ExprOp::Rsqrt:
      r = C(1) / mathSqrt(a); // IEEE division and sqrt, not rsqrt's 2 ulp
      break;
    case ExprOp::Tanh:
      r = mathTanh(a);
      break;
    case ExprOp::Erf:
      r = mathErf(a);
      break;
    case ExprOp::Add:
      r = a + b;
      break;
    case ExprOp::Sub:
      r = a - b;
      break;
    case ExprOp::Mul:
      r = a * b;
      break;
    case ExprOp::Div:
      r = a / b;
      break;
    case ExprOp::Maximum:
      r = exprMaximum(a, b);
      break;
    case ExprOp::Minimum:
      r = exprMinimum(a, b);
      break;
    case ExprOp::MaxNum:
      r = isnan(a) ? b : (isnan(b) ? a : exprMaximum(a, b));
      break;
    case ExprOp::MinNum:
      r = isnan(a) ? b : (isnan(b) ? a : exprMinimum(a, b));
      break;
    case ExprOp::Cmp:
      r = exprCompare(e.predicate[n], a, b) ? C(1) : C(0);
      break;
    case ExprOp::Select:
      r = a != C(0) ? b : v[e.args[n][2]];
      break;
    }
    v[n] = r;
  }
  return v[e.numNodes - 1];
}

/// Rows across blockIdx.y and columns across x, as biasAddKernel: a row
/// vector's index is the column, with no division per element. No
/// __restrict__: y may be a full operand.
template <typename T>
__global__ void elementwiseKernel(DeviceExpr e, T *y, int64_t rows,
                                  int64_t cols) {
  using A = Arith<T>;
  const int64_t colStep = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.y; i < rows; i += gridDim.y)
    for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < cols;
         j += colStep)
      y[i * cols + j] = A::store(evalExpr<T>(e, i, j, cols));
}

template <typename T>
cudaError_t launchExpr(const DeviceExpr &e, void *y, int64_t rows,
                       int64_t cols, cudaStream_t stream) {
  const int gx = blocksFor(cols);
  const int64_t gy = std::min<int64_t>(
      std::min<int64_t>(rows, std::max<int64_t>(1, kMaxBlocks / gx)), 65535);
  elementwiseKernel<T><<<dim3(gx, unsigned(gy)), kThreads, 0, stream>>>(
      e, static_cast<T *>(y), rows, cols);
  return cudaGetLastError();
}

//===----------------------------------------------------------------------===//
// convert: f32 <-> f16/bf16, element by element.
//===----------------------------------------------------------------------===//

template <typename S, typename D>
__global__ void convertKernel(const S *x, D *y, int64_t n) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += step)
    y[i] = Arith<D>::store(Arith<S>::load(x[i]));
}

template <typename S, typename D>
cudaError_t launchConvertAs(const void *x, void *y, int64_t n,
                            cudaStream_t stream) {
  convertKernel<S, D><<<blocksFor(n), kThreads, 0, stream>>>(
      static_cast<const S *>(x), static_cast<D *>(y), n);
  return cudaGetLastError();
}

//===----------------------------------------------------------------------===//
// sum_rows: column sums, each column by one thread, rows in order.
//===----------------------------------------------------------------------===//

// Consecutive threads read consecutive columns of a row: every row is read
// coalesced. The accumulator is X's compute type; adding with `+=` in a
// fixed order keeps the host's rounding (no contraction can form).
template <typename X, typename Y>
__global__ void sumRowsKernel(const X *__restrict__ x, Y *__restrict__ y,
                              int64_t rows, int64_t cols) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < cols;
       j += step) {
    typename Arith<X>::Acc acc = 0;
    for (int64_t i = 0; i < rows; ++i)
      acc += Arith<X>::load(x[i * cols + j]);
    y[j] = Arith<Y>::store(acc);
  }
}

template <typename X, typename Y>
cudaError_t launchSumRowsAs(const void *x, void *y, int64_t rows, int64_t cols,
                            cudaStream_t stream) {
  sumRowsKernel<X, Y><<<blocksFor(cols), kThreads, 0, stream>>>(
      static_cast<const X *>(x), static_cast<Y *>(y), rows, cols);
  return cudaGetLastError();
}

//===----------------------------------------------------------------------===//
// reduce_last: each row by one thread, its elements in order.
//===----------------------------------------------------------------------===//

template <typename C>
__device__ C combineReduce(int op, C x, C acc) {
  if (op == int(ExprOp::Add))
    return x + acc;
  const bool xNan = isnan(x), accNan = isnan(acc);
  if (xNan || accNan) {
    if (op == int(ExprOp::Maximum))
      return xNan ? x : acc;
    return xNan ? acc : x;
  }
  if (x == acc)
    return signbit(x) ? acc : x;
  return x > acc ? x : acc;
}

template <typename T>
__global__ void reduceLastKernel(int op, const T *__restrict__ x,
                                 const T *init, T *y, int64_t rows,
                                 int64_t cols) {
  using A = Arith<T>;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < rows;
       i += step) {
    typename A::Acc acc = A::load(init[i]);
    for (int64_t j = 0; j < cols; ++j)
      acc = combineReduce(op, A::load(x[i * cols + j]), acc);
    y[i] = A::store(acc);
  }
}

} // namespace

cudaError_t launchReduceLast(DType dtype, int combine, const void *x,
                             const void *init, void *y, int64_t rows,
                             int64_t cols, cudaStream_t stream) {
  if (rows == 0)
    return cudaSuccess;
  if (combine != int(ExprOp::Add) && combine != int(ExprOp::Maximum) &&
      combine != int(ExprOp::MaxNum))
    return cudaErrorInvalidValue;
  return withDeviceType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    reduceLastKernel<T><<<blocksFor(rows), kThreads, 0, stream>>>(
        combine, static_cast<const T *>(x), static_cast<const T *>(init),
        static_cast<T *>(y), rows, cols);
    return cudaGetLastError();
  });
}

cudaError_t launchSumRows(DType from, const void *x, DType to, void *y,
                          int64_t rows, int64_t cols, cudaStream_t stream) {
  if (cols == 0)
    return cudaSuccess;
  if (to == DType::F32 && from == DType::F16)
    return launchSumRowsAs<__half, float>(x, y, rows, cols, stream);
  if (to == DType::F32 && from == DType::BF16)
    return launchSumRowsAs<__nv_bfloat16, float>(x, y, rows, cols, stream);
  if (to != from)
    return cudaErrorInvalidValue;
  return withDeviceType(from, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return launchSumRowsAs<T, T>(x, y, rows, cols, stream);
  });
}

cudaError_t launchConvert(DType from, const void *x, DType to, void *y,
                          int64_t n, cudaStream_t stream) {
  if (n == 0)
    return cudaSuccess;
  if (from == DType::F32 && to == DType::F16)
    return launchConvertAs<float, __half>(x, y, n, stream);
  if (from == DType::F32 && to == DType::BF16)
    return launchConvertAs<float, __nv_bfloat16>(x, y, n, stream);
  if (from == DType::F16 && to == DType::F32)
    return launchConvertAs<__half, float>(x, y, n, stream);
  if (from == DType::BF16 && to == DType::F32)
    return launchConvertAs<__nv_bfloat16, float>(x, y, n, stream);
  return cudaErrorInvalidValue;
}

cudaError_t launchElementwise(DType dtype, const DeviceExpr &expr, void *y,
                              int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows == 0 || cols == 0)
    return cudaSuccess;
  if (expr.numNodes < 1 || expr.numNodes > int(kMaxExprNodes))
    return cudaErrorInvalidValue;
  // Without row vectors the tensor is one long row: every block busy even
  // when rows are short.
  bool anyRowVector = false;
  for (int k = 0; k < expr.numOperands; ++k)
    anyRowVector = anyRowVector || expr.rowVector[k] != 0;
  if (!anyRowVector) {
    cols *= rows;
    rows = 1;
  }
  return withDeviceType(dtype, [&](auto tag) {
    return launchExpr<typename decltype(tag)::type>(expr, y, rows, cols,
                                                    stream);
  });
}

cudaError_t launchSumInOrder(DType dtype, const SumSources &sources, void *dst,
                             int64_t n, cudaStream_t stream) {
  if (n == 0)
    return cudaSuccess;
  if (sources.count < 1 || sources.count > kMaxCudaLocalRanks)
    return cudaErrorInvalidValue;
  // One source: the value itself, bit for bit (a round trip through f32
  // would not keep every NaN payload).
  if (sources.count == 1) {
    if (dst == sources.ptr[0])
      return cudaSuccess;
    return cudaMemcpyAsync(dst, sources.ptr[0], size_t(n) * dtypeSize(dtype),
                           cudaMemcpyDefault, stream);
  }
  TableSources s{sources};
  return launchSum(dtype, s, dst, n, stream);
}

cudaError_t launchSumStrided(DType dtype, const void *base,
                             int64_t strideElements, int count, void *dst,
                             int64_t n, cudaStream_t stream) {
  if (n == 0)
    return cudaSuccess;
  if (count < 1)
    return cudaErrorInvalidValue;
  if (count == 1) {
    if (dst == base)
      return cudaSuccess;
    return cudaMemcpyAsync(dst, base, size_t(n) * dtypeSize(dtype),
                           cudaMemcpyDefault, stream);
  }
  StridedSources s{base, strideElements * int64_t(dtypeSize(dtype)), count};
  return launchSum(dtype, s, dst, n, stream);
}

cudaError_t launchFillRows(DType dtype, void *c, int64_t ldc, const void *bias,
                           int64_t m, int64_t n, cudaStream_t stream) {
  if (m == 0 || n == 0)
    return cudaSuccess;
  switch (dtypeSize(dtype)) {
  case 2:
    return launchFill<uint16_t>(c, ldc, bias, m, n, stream);
  case 4:
    return launchFill<uint32_t>(c, ldc, bias, m, n, stream);
  case 8:
    return launchFill<uint64_t>(c, ldc, bias, m, n, stream);
  default:
    return cudaErrorInvalidValue;
  }
}

cudaError_t launchBiasAdd(DType dtype, const void *x, const void *bias, void *y,
                          int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows == 0 || cols == 0)
    return cudaSuccess;
  return withDeviceType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return launchBias<T, T>(x, cols, bias, y, cols, rows, cols, stream);
  });
}

cudaError_t launchAccumulatorBias(DType dtype, const float *acc, int64_t ldAcc,
                                  const void *bias, void *c, int64_t ldc,
                                  int64_t rows, int64_t cols,
                                  cudaStream_t stream) {
  if (rows == 0 || cols == 0)
    return cudaSuccess;
  switch (dtype) {
  case DType::F16:
    return launchBias<float, __half>(acc, ldAcc, bias, c, ldc, rows, cols,
                                     stream);
  case DType::BF16:
    return launchBias<float, __nv_bfloat16>(acc, ldAcc, bias, c, ldc, rows,
                                            cols, stream);
  case DType::F32:
  case DType::F64:
    break;
  }
  return cudaErrorInvalidValue;
}

} // namespace shardlin::rt::cuda
