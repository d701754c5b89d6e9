//===- NcclCommunicator.h - One rank per GPU over NCCL ----------*- C++ -*-===//
//
// Private to the runtime. The NCCL communicator, defined in two files:
// NcclCommunicator.cpp runs the collectives (what each one enqueues, and the
// timeout and abort rules they share); NcclSetup.cpp creates communicators
// (from a unique id, over a bootstrap communicator, as a group of threads)
// and splits them.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_CUDA_NCCLCOMMUNICATOR_H
#define SHARDLIN_RUNTIME_LIB_CUDA_NCCLCOMMUNICATOR_H

#include "backends/cuda/CudaCheck.h"
#include "backends/cuda/NcclSupport.h"

#include "shardlin/runtime/backends/Cuda.h"

#include <nccl.h>

#include <memory>
#include <string>
#include <vector>

namespace shardlin::rt::nccl {

class NcclCommunicator final : public CudaCommunicator {
public:
  /// Owns `comm` (ncclCommDestroy at the end). `timeout` is the effective
  /// CommOptions::timeoutSeconds (inf: a blocking communicator).
  NcclCommunicator(ncclComm_t comm, int rank, int worldSize,
                   std::shared_ptr<ExecutionStream> stream, double timeout);
  ~NcclCommunicator() override;

  /// The event and the barrier's word; call once before any collective.
  Status init();

  int rank() const override { return rank_; }
  int worldSize() const override { return worldSize_; }
  const char *backendName() const override { return "nccl"; }

protected:
  SHARDLIN_COMMUNICATOR_OVERRIDES
  /// A rank's own block must agree with itself: NCCL would not notice.
  std::string checkBackendArguments(const CollectiveCall &call) const override;
  std::string checkBuffer(const char *name, const void *p, int64_t elements,
                          DType dtype) const override {
    // NCCL takes device-accessible memory, not pageable host memory.
    return cuda::checkDeviceBuffer(name, p, elements, dtype, device_, false);
  }

private:
  cudaStream_t s() const { return cuda::nativeStream(*stream_); }

  /// Runs one collective. `call.invalid` non-empty: the local arguments are
  /// wrong; nothing is sent (peers that did call will time out). `enqueue`
  /// issues the NCCL calls and kernels, given the deadline and the NCCL
  /// type of the call's dtype.
  template <typename Enqueue>
  Status run(const CollectiveCall &call, bool waitAlways, Enqueue enqueue);

  /// Ok unless the communicator was aborted (then Aborted, with the reason).
  Status usable(const std::string &at) const;
  /// Before the NCCL calls of a collective or a split: makes the device
  /// current (restored by `guard`), sets `deadline` from the timeout, and
  /// aborts the communicator if an earlier operation failed asynchronously.
  Status enter(const std::string &at, cuda::ScopedDevice &guard,
               double &deadline);
  /// Between two NCCL calls of one collective: a non-blocking communicator
  /// must finish the previous call before the next one starts.
  Status waitEnqueued(double deadline);
  /// Waits for everything enqueued so far on the stream.
  Status waitComplete(double deadline);
  /// Aborts the communicator for good; later calls report `reason`.
  void abort(const std::string &reason);

  /// ncclSend/ncclRecv of `ops` in one group (empty: nothing).
  Status exchange(const std::vector<P2p> &ops, ncclDataType_t type);
  Status localCopy(void *dst, const void *src, int64_t n, size_t es);
  /// The reduce-scatter step: sends `sends` (this rank's segments for the
  /// peers), receives every peer's segment for this rank (`count` elements
  /// each) into staging, and sums the W segments, this rank's own
  /// (`ownSegment`) in its rank position, into `dst` in rank order.
  Status reduceSegments(const std::vector<P2p> &sends, const void *ownSegment,
                        int64_t count, void *dst, DType dtype,
                        ncclDataType_t type, double deadline);

  // stream_ (CudaCommunicator) outlives the staging memory, which is freed
  // in stream order.
  ncclComm_t comm_;
  const int rank_, worldSize_, device_;
  const double timeout_;
  const bool blocking_;
  bool aborted_ = false;
  std::string abortReason_;
  cuda::Event done_;
  cuda::StreamScratch staging_;
  cuda::StreamScratch barrierWord_;
};

} // namespace shardlin::rt::nccl

#endif // SHARDLIN_RUNTIME_LIB_CUDA_NCCLCOMMUNICATOR_H
