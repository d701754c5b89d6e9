//===- CudaCheck.h - Errors, handles and waits of the GPU backends -*- C++ -*-//
//
// Internal to the runtime's GPU backends:
//  - every cudaError_t / cublasStatus_t / ncclResult_t becomes a Status that
//    names the call, the device and the reason (the *_RETURN_IF_ERROR
//    macros), so no CUDA call's result is ever dropped;
//  - RAII owners for the device selection, events, device memory and cuBLAS
//    handles (ExecutionStream, the stream owner, is public in Cuda.h);
//  - waitWithDeadline, the polling loop behind every timeout, written as a
//    pure function of a probe and a clock so that a test can drive it
//    without a GPU;
//  - the argument checks the two GPU communicators share.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_CUDA_CUDACHECK_H
#define SHARDLIN_RUNTIME_LIB_CUDA_CUDACHECK_H

#include "comm/CommChecks.h"

#include "shardlin/runtime/backends/Cuda.h"
#include "shardlin/runtime/base/DType.h"
#include "shardlin/runtime/base/Status.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#if defined(SHARDLIN_HAVE_NCCL)
#include <nccl.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace shardlin::rt::cuda {

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

/// "cudaMemcpyAsync failed on cuda:0: cudaErrorInvalidValue (invalid
/// argument)". `call` may be a whole stringized call expression; only the
/// function name is kept. device < 0: no device to name.
Status cudaFailure(cudaError_t error, const char *call, int device);
Status cublasFailure(cublasStatus_t status, const char *call, int device);
#if defined(SHARDLIN_HAVE_NCCL)
/// Adds ncclGetLastError's text, which says more than the result code.
Status ncclFailure(ncclResult_t result, const char *call, int device,
                   ncclComm_t comm);
#endif

} // namespace shardlin::rt::cuda

#define SHARDLIN_CUDA_RETURN_IF_ERROR(device, expr)                            \
  do {                                                                         \
    cudaError_t shardlinCudaError_ = (expr);                                   \
    if (shardlinCudaError_ != cudaSuccess)                                     \
      return ::shardlin::rt::cuda::cudaFailure(shardlinCudaError_, #expr,      \
                                               (device));                      \
  } while (false)

#define SHARDLIN_CUBLAS_RETURN_IF_ERROR(device, expr)                          \
  do {                                                                         \
    cublasStatus_t shardlinCublasStatus_ = (expr);                             \
    if (shardlinCublasStatus_ != CUBLAS_STATUS_SUCCESS)                        \
      return ::shardlin::rt::cuda::cublasFailure(shardlinCublasStatus_, #expr, \
                                                 (device));                    \
  } while (false)

#if defined(SHARDLIN_HAVE_NCCL)
/// ncclInProgress is not an error: a non-blocking communicator returns it
/// while the call completes in the background (the caller then polls).
#define SHARDLIN_NCCL_RETURN_IF_ERROR(device, comm, expr)                      \
  do {                                                                         \
    ncclResult_t shardlinNcclResult_ = (expr);                                 \
    if (shardlinNcclResult_ != ncclSuccess &&                                  \
        shardlinNcclResult_ != ncclInProgress)                                 \
      return ::shardlin::rt::cuda::ncclFailure(shardlinNcclResult_, #expr,     \
                                               (device), (comm));              \
  } while (false)
#endif

namespace shardlin::rt::cuda {

inline cudaStream_t nativeStream(const ExecutionStream &s) {
  return static_cast<cudaStream_t>(s.nativeHandle());
}

//===----------------------------------------------------------------------===//
// RAII
//===----------------------------------------------------------------------===//

/// Makes `device` current for the calling thread and restores the previous
/// device on destruction. Every entry point that touches the GPU uses one:
/// the current device is per thread, and the caller's choice (e.g. a
/// framework's) must survive a call into the runtime.
class ScopedDevice {
public:
  ScopedDevice() = default;
  ~ScopedDevice();
  ScopedDevice(const ScopedDevice &) = delete;
  ScopedDevice &operator=(const ScopedDevice &) = delete;
  Status enter(int device);

private:
  int previous_ = -1;
};

/// A CUDA event (timing disabled). With blockingSync the host thread that
/// waits for it sleeps instead of spinning, which matters when several rank
/// threads wait on a few cores.
class Event {
public:
  Event() = default;
  ~Event() { reset(); }
  Event(const Event &) = delete;
  Event &operator=(const Event &) = delete;
  /// The event belongs to the current device.
  Status create(int device, bool blockingSync);
  cudaEvent_t get() const { return event_; }
  void reset();

private:
  cudaEvent_t event_ = nullptr;
};

/// One cudaMalloc allocation, released with cudaFree (which waits for the
/// device, so pending kernels that use it are safe).
class DeviceMemory {
public:
  DeviceMemory() = default;
  ~DeviceMemory() { reset(); }
  DeviceMemory(const DeviceMemory &) = delete;
  DeviceMemory &operator=(const DeviceMemory &) = delete;
  Status allocate(int device, size_t bytes);
  void *get() const { return ptr_; }
  size_t bytes() const { return bytes_; }
  void reset();

private:
  void *ptr_ = nullptr;
  size_t bytes_ = 0;
  int device_ = 0;
};

/// Grow-only scratch memory in stream order (cudaMallocAsync/cudaFreeAsync
/// on the owner's stream): growing never synchronizes the device, and the
/// old block is freed only after the work queued before it on that stream.
/// Replays of a plan reach their steady size at once and allocate nothing.
class StreamScratch {
public:
  StreamScratch() = default;
  ~StreamScratch() { reset(); }
  StreamScratch(const StreamScratch &) = delete;
  StreamScratch &operator=(const StreamScratch &) = delete;
  Status reserve(size_t bytes, int device, cudaStream_t stream);
  void *get() const { return ptr_; }
  void reset();

private:
  void *ptr_ = nullptr;
  size_t bytes_ = 0;
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
};

class CublasHandle {
public:
  CublasHandle() = default;
  ~CublasHandle();
  CublasHandle(const CublasHandle &) = delete;
  CublasHandle &operator=(const CublasHandle &) = delete;
  Status create(int device);
  cublasHandle_t get() const { return handle_; }

private:
  cublasHandle_t handle_ = nullptr;
};

class CublasLtHandle {
public:
  CublasLtHandle() = default;
  ~CublasLtHandle();
  CublasLtHandle(const CublasLtHandle &) = delete;
  CublasLtHandle &operator=(const CublasLtHandle &) = delete;
  Status create(int device);
  cublasLtHandle_t get() const { return handle_; }

private:
  cublasLtHandle_t handle_ = nullptr;
};

//===----------------------------------------------------------------------===//
// Waiting with a deadline
//===----------------------------------------------------------------------===//

/// What one look at an asynchronous operation found.
enum class ProbeState { Pending, Done, Failed };

struct WaitResult {
  enum Kind { Done, Failed, TimedOut };
  Kind kind = Done;
  /// Failed: the probe's message.
  std::string error;
  double waitedSeconds = 0;
  int probes = 0;
};

/// How often to look: the first spinProbes probes back to back (a typical
/// collective finishes within microseconds of being enqueued, and a sleep
/// would cost more than the wait), then sleeps that double from minSleep up
/// to maxSleep, so a long wait costs little CPU.
struct BackoffPolicy {
  int spinProbes = 200;
  double minSleepSeconds = 2e-6;
  double maxSleepSeconds = 1e-3;
};

/// Calls probe(errorOut) until it reports Done or Failed, or the deadline
/// `timeoutSeconds` after the first call has passed (an infinite timeout
/// never passes). now() returns seconds on a monotonic clock; sleep(s)
/// pauses for about s seconds. The outcome is TimedOut only after a probe
/// made at or after the deadline still found the operation pending, so work
/// that completes while the waiter sleeps is never reported as timed out,
/// and no sleep extends past the deadline.
template <typename ProbeFn, typename NowFn, typename SleepFn>
WaitResult waitWithDeadline(ProbeFn &&probe, double timeoutSeconds, NowFn &&now,
                            SleepFn &&sleep,
                            const BackoffPolicy &policy = BackoffPolicy()) {
  const double start = now();
  const bool bounded = std::isfinite(timeoutSeconds);
  const double deadline = start + timeoutSeconds;
  double pause = policy.minSleepSeconds;
  WaitResult result;
  for (;;) {
    std::string error;
    const ProbeState state = probe(error);
    ++result.probes;
    const double t = now();
    result.waitedSeconds = t - start;
    if (state == ProbeState::Done)
      return result;
    if (state == ProbeState::Failed) {
      result.kind = WaitResult::Failed;
      result.error = std::move(error);
      return result;
    }
    if (bounded && t >= deadline) {
      result.kind = WaitResult::TimedOut;
      return result;
    }
    if (result.probes < policy.spinProbes)
      continue;
    double s = pause;
    if (bounded)
      s = std::min(s, deadline - t);
    sleep(s);
    pause = std::min(pause * 2, policy.maxSleepSeconds);
  }
}

/// A finished wait as a Status: ok, the probe's error (Internal), or
/// DeadlineExceeded with the message `timedOut`.
inline Status waitStatus(const WaitResult &w, const std::string &timedOut) {
  switch (w.kind) {
  case WaitResult::Done:
    return Status::ok();
  case WaitResult::Failed:
    return Status::internal(w.error);
  case WaitResult::TimedOut:
    return Status::deadlineExceeded(timedOut);
  }
  return Status::internal("unknown wait result");
}

/// The real clock and sleep for waitWithDeadline.
double steadySeconds();
void sleepSeconds(double seconds);

/// Checks CommOptions::timeoutSeconds: > 0 (inf allowed, NaN not). Sets
/// `effective` to the timeout clamped to 1e9 s (so deadlines never overflow
/// a clock; 30 years is "never" for a collective) or inf.
Status checkTimeout(double timeoutSeconds, double &effective);
using detail::formatSeconds;

//===----------------------------------------------------------------------===//
// Argument checks of the GPU code (checkCount and checkTables are the ones
// Communicator makes for every backend, from CommChecks.h, so errors read
// the same whatever the backend)
//===----------------------------------------------------------------------===//

using detail::checkCount;
using detail::checkTables;
/// A buffer of `elements` elements of `dtype` that the collective reads or
/// writes: not null, aligned to the element size (device code faults on
/// misaligned loads, which would poison the whole context), and memory the
/// device can reach: device memory of `device`, managed or registered host
/// memory, or (if `pageableOk`, on systems where the device reads pageable
/// memory) any host memory. Nothing is checked for an empty buffer.
std::string checkDeviceBuffer(const char *name, const void *ptr,
                              int64_t elements, DType dtype, int device,
                              bool pageableOk);
/// Whether `device` can access pageable host memory (HMM/ATS systems).
Status pageableMemoryAccess(int device, bool &result);

using detail::offsetBytes;

} // namespace shardlin::rt::cuda

#endif // SHARDLIN_RUNTIME_LIB_CUDA_CUDACHECK_H
