//===- Device.h - What one rank runs on ---------------------------*- C++ -*-===//
//
// A RankDevice is where one rank's plan runs: the allocator of its buffers,
// its GEMM and local ops, and the copies between host memory and its own.
// The host device's copies are plain memcpy, so running has one path for
// host and device memory. The backends (backends/) provide the devices:
// backends/Host.h's createHostDevice, and the GPU module's.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_EXEC_DEVICE_H
#define SHARDLIN_RUNTIME_EXEC_DEVICE_H

#include "shardlin/runtime/base/Buffer.h"
#include "shardlin/runtime/base/Status.h"
#include "shardlin/runtime/comm/Communicator.h"
#include "shardlin/runtime/exec/CommLane.h"
#include "shardlin/runtime/exec/Gemm.h"
#include "shardlin/runtime/exec/LocalOps.h"

#include <cstddef>
#include <memory>

namespace shardlin::rt {

/// The memory, GEMM and local ops of one rank.
class RankDevice {
public:
  virtual ~RankDevice() = default;
  virtual DeviceKind kind() const = 0;
  /// Creates the device-side objects for `comm`'s rank (a GPU rank uses its
  /// communicator's stream, so that copies, kernels, GEMMs and collectives
  /// are ordered on it). Called once, before any other method.
  virtual Status prepare(const Communicator &comm) = 0;
  virtual Allocator &allocator() = 0;
  virtual GemmBackend &gemm() = 0;
  virtual LocalOps &localOps() = 0;
  /// Copies `bytes` from host memory into this device's memory.
  virtual Status copyFromHost(void *deviceDst, const void *hostSrc,
                              size_t bytes) = 0;
  /// Copies `bytes` from this device's memory into host memory; waits for
  /// the rank's earlier work, so an asynchronous failure shows here.
  virtual Status copyToHost(void *hostDst, const void *deviceSrc,
                            size_t bytes) = 0;
  /// The lane on which a pipelined block's collectives run beside this
  /// rank's compute (CommLane.h). This default, for devices whose work is
  /// done when its call returns (the host): a threaded lane where `comm`
  /// may be called from another thread (Communicator::
  /// callableFromAnyThread), else an inline one. A GPU rank's lane orders
  /// its compute stream and a stream for the collectives.
  virtual Status createCommLane(Communicator &comm,
                                std::unique_ptr<CommLane> &out);
};

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_EXEC_DEVICE_H
