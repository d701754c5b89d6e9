//===- KernelTypes.cuh - The kernels' element types (CUDA only) -*- C++ -*-===//
//
// Internal to the GPU module's .cu files (Kernels.cu, AttentionKernels.cu):
// the device type of each DType and the arithmetic type its kernels compute
// in (f32 for f16/bf16/f32, f64 for f64), written once.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_CUDA_KERNELTYPES_CUH
#define SHARDLIN_RUNTIME_LIB_CUDA_KERNELTYPES_CUH

#include "shardlin/runtime/base/DType.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

namespace shardlin::rt::cuda {

/// Storage type T, accumulator Acc, and the conversions between them.
/// Calls f(Tag<T>{}) with T the device type of `dtype` (__half,
/// __nv_bfloat16, float, double): the one dtype switch of the kernels.
template <typename T> struct Tag {
  using type = T;
};
template <typename F> cudaError_t withDeviceType(DType dtype, F &&f) {
  switch (dtype) {
  case DType::F16:
    return f(Tag<__half>{});
  case DType::BF16:
    return f(Tag<__nv_bfloat16>{});
  case DType::F32:
    return f(Tag<float>{});
  case DType::F64:
    return f(Tag<double>{});
  }
  return cudaErrorInvalidValue;
}

template <typename T> struct Arith;
template <> struct Arith<__half> {
  using Acc = float;
  static __device__ float load(__half v) { return __half2float(v); }
  static __device__ __half store(float v) { return __float2half_rn(v); }
};
template <> struct Arith<__nv_bfloat16> {
  using Acc = float;
  static __device__ float load(__nv_bfloat16 v) { return __bfloat162float(v); }
  static __device__ __nv_bfloat16 store(float v) {
    return __float2bfloat16_rn(v);
  }
};
template <> struct Arith<float> {
  using Acc = float;
  static __device__ float load(float v) { return v; }
  static __device__ float store(float v) { return v; }
};
template <> struct Arith<double> {
  using Acc = double;
  static __device__ double load(double v) { return v; }
  static __device__ double store(double v) { return v; }
};

} // namespace shardlin::rt::cuda

#endif // SHARDLIN_RUNTIME_LIB_CUDA_KERNELTYPES_CUH
