//===- AttentionKernels.cu - attention's softmax and RoPE (GPU) -----------===//
//
// The row kernels attention runs between its cuBLAS GEMMs (exec/
// Attention.cpp) and the rotary embedding, as LocalOps.h specifies them.
// A row of scores is one block of kThreads threads: a strided pass writes
// x = scale * s + mask and reduces the maximum, a second exponentiates and
// reduces the sum, a third divides. Rows longer than 2^31 are not a case
// (seq x seq scores are materialized per head).
//
//===----------------------------------------------------------------------===//

#include "backends/cuda/KernelTypes.cuh"
#include "backends/cuda/Kernels.h"

#include <algorithm>
#include <cmath>

namespace shardlin::rt::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxRowBlocks = 65535;

/// The block's reduction of v (Max or Sum), returned to every thread.
template <typename T, bool Max> __device__ T blockReduce(T v, T *shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      const T other = shared[threadIdx.x + half];
      shared[threadIdx.x] =
          Max ? (other > shared[threadIdx.x] ? other : shared[threadIdx.x])
              : shared[threadIdx.x] + other;
    }
    __syncthreads();
  }
  const T r = shared[0];
  __syncthreads();
  return r;
}

template <typename T>
__global__ void softmaxKernel(T *s, const T *mask, int64_t rows, int64_t cols,
                              T scale, bool causal) {
  __shared__ T shared[kThreads];
  const T negInf = -INFINITY;
  for (int64_t i = blockIdx.x; i < rows; i += gridDim.x) {
    T *row = s + i * cols;
    const T *m = mask ? mask + i * cols : nullptr;
    const int64_t live = causal ? (cols < i + 1 ? cols : i + 1) : cols;
    T most = negInf;
    for (int64_t j = threadIdx.x; j < live; j += blockDim.x) {
      const T x = scale * row[j] + (m ? m[j] : T(0));
      row[j] = x;
      most = x > most ? x : most;
    }
    most = blockReduce<T, true>(most, shared);
    T sum = 0;
    for (int64_t j = threadIdx.x; j < live; j += blockDim.x) {
      const T e = most == negInf ? T(0) : exp(row[j] - most);
      row[j] = e;
      sum += e;
    }
    sum = blockReduce<T, false>(sum, shared);
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
      row[j] = j < live && most != negInf ? row[j] / sum : T(0);
  }
}

template <typename T>
__global__ void softmaxGradKernel(const T *p, T *ds, int64_t rows,
                                  int64_t cols, T scale) {
  __shared__ T shared[kThreads];
  for (int64_t i = blockIdx.x; i < rows; i += gridDim.x) {
    const T *pr = p + i * cols;
    T *dr = ds + i * cols;
    T dot = 0;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
      dot += pr[j] * dr[j];
    dot = blockReduce<T, false>(dot, shared);
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
      dr[j] = scale * pr[j] * (dr[j] - dot);
  }
}

template <typename X, typename C>
__global__ void ropeKernel(const X *x, const C *cosT, const C *sinT, X *y,
                           int64_t pairs, int64_t seq, int64_t heads,
                           int64_t half, bool inverse) {
  using A = Arith<X>;
  using Acc = typename A::Acc;
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t n = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; n < pairs;
       n += step) {
    // n = ((b * seq + p) * heads + h) * half + i
    const int64_t i = n % half;
    const int64_t row = n / half / heads; // b * seq + p
    const int64_t p = row % seq;
    const int64_t at = (n / half) * 2 * half + i;
    const Acc c = Acc(Arith<C>::load(cosT[p * half + i]));
    Acc sn = Acc(Arith<C>::load(sinT[p * half + i]));
    sn = inverse ? -sn : sn;
    const Acc a = A::load(x[at]), b = A::load(x[at + half]);
    y[at] = A::store(a * c - b * sn);
    y[at + half] = A::store(b * c + a * sn);
  }
}

int rowBlocks(int64_t rows) {
  return static_cast<int>(std::min<int64_t>(rows, kMaxRowBlocks));
}

} // namespace

cudaError_t launchAttentionSoftmax(DType dtype, void *s, const void *mask,
                                   int64_t rows, int64_t cols, double scale,
                                   bool causal, cudaStream_t stream) {
  if (rows == 0 || cols == 0)
    return cudaSuccess;
  if (dtype == DType::F64) {
    softmaxKernel<double><<<rowBlocks(rows), kThreads, 0, stream>>>(
        static_cast<double *>(s), static_cast<const double *>(mask), rows,
        cols, scale, causal);
  } else if (dtype == DType::F32) {
    softmaxKernel<float><<<rowBlocks(rows), kThreads, 0, stream>>>(
        static_cast<float *>(s), static_cast<const float *>(mask), rows, cols,
        float(scale), causal);
  } else {
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launchAttentionSoftmaxGrad(DType dtype, const void *p, void *ds,
                                       int64_t rows, int64_t cols,
                                       double scale, cudaStream_t stream) {
  if (rows == 0 || cols == 0)
    return cudaSuccess;
  if (dtype == DType::F64) {
    softmaxGradKernel<double><<<rowBlocks(rows), kThreads, 0, stream>>>(
        static_cast<const double *>(p), static_cast<double *>(ds), rows, cols,
        scale);
  } else if (dtype == DType::F32) {
    softmaxGradKernel<float><<<rowBlocks(rows), kThreads, 0, stream>>>(
        static_cast<const float *>(p), static_cast<float *>(ds), rows, cols,
        float(scale));
  } else {
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launchRope(DType dtype, DType tableType, const void *x,
                       const void *cos, const void *sin, void *y,
                       int64_t batch, int64_t seq, int64_t heads,
                       int64_t headDim, bool inverse, cudaStream_t stream) {
  const int64_t half = headDim / 2;
  const int64_t pairs = batch * seq * heads * half;
  if (pairs == 0)
    return cudaSuccess;
  if (tableType != DType::F32 && tableType != dtype)
    return cudaErrorInvalidValue;
  return withDeviceType(dtype, [&](auto tag) {
    using X = typename decltype(tag)::type;
    const int blocks = static_cast<int>(
        std::min<int64_t>((pairs + kThreads - 1) / kThreads, 4224));
    if (tableType == DType::F32)
      ropeKernel<X, float><<<blocks, kThreads, 0, stream>>>(
          static_cast<const X *>(x), static_cast<const float *>(cos),
          static_cast<const float *>(sin), static_cast<X *>(y), pairs, seq,
          heads, half, inverse);
    else
      ropeKernel<X, X><<<blocks, kThreads, 0, stream>>>(
          static_cast<const X *>(x), static_cast<const X *>(cos),
          static_cast<const X *>(sin), static_cast<X *>(y), pairs, seq, heads,
          half, inverse);
    return cudaGetLastError();
  });
}

} // namespace shardlin::rt::cuda
