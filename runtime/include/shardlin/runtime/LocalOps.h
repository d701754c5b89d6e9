//===- LocalOps.h - Data movement and elementwise ops on a device -*- C++ -*-===//
//
// The few local operations a Plan performs besides collectives and GEMMs:
// strided row copies (packing and unpacking the non-contiguous pieces of a
// collective, local_chunk along an inner dim, copying results out) and the
// bias addition. Each device provides them, so a Plan never touches device
// memory from the host. Calls are ordered with the device's other work (for
// CUDA: enqueued on the rank's stream) and do not synchronize.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LOCALOPS_H
#define SHARDLIN_RUNTIME_LOCALOPS_H

#include "shardlin/runtime/Buffer.h"
#include "shardlin/runtime/DType.h"
#include "shardlin/runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <memory>

namespace shardlin::rt {

class LocalOps {
public:
  virtual ~LocalOps() = default;
  virtual Device device() const = 0;

  /// Copies `rows` rows of `rowBytes` bytes each: row i from
  /// src + i * srcStride to dst + i * dstStride. Regions must not overlap.
  virtual Status copyRows(const void *src, size_t srcStride, void *dst,
                          size_t dstStride, int64_t rows,
                          size_t rowBytes) = 0;

  /// y[i, j] = x[i, j] + bias[j] for a rows x cols row-major matrix; y may
  /// equal x. f16/bf16 are added in f32 and rounded once.
  virtual Status biasAdd(const void *x, const void *bias, void *y,
                         int64_t rows, int64_t cols, DType dtype) = 0;
};

/// Local operations on host memory.
std::unique_ptr<LocalOps> createHostLocalOps();

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_LOCALOPS_H
