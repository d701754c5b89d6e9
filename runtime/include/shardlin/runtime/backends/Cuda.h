//===- Cuda.h - GPU backends of the shardlin runtime ------------*- C++ -*-===//
//
// The GPU half of the runtime: device memory, streams, the cuBLAS GEMM and
// two GPU communicators (NCCL, and "cuda-local" for several ranks sharing one
// GPU). Available when the runtime is built with CUDA (SHARDLIN_HAVE_CUDA,
// defined for every target that links the runtime). Plain C++: no CUDA
// header is needed to include it, so g++-compiled code can drive the GPU.
//
// The stream model. Each rank does all of its GPU work on ONE stream, an
// ExecutionStream shared by the rank's communicator and GEMM backend, so the
// order of a plan's calls is the order on the device and no operation needs
// to synchronize with the one before it:
//  - GEMMs only enqueue work; they return before it runs.
//  - A collective's data has arrived when the call returns (with a finite
//    CommOptions::timeoutSeconds): the host waits for the collective, and
//    only for it, because that is the only way to notice a peer that never
//    takes part and to fail with a timeout instead of hanging. Its inputs
//    may still be in flight when it is called (the collective is ordered
//    after them on the stream). With an infinite timeout the NCCL backend
//    returns as soon as the collective is enqueued.
//  - Local copies and the bias addition (createCudaLocalOps) only enqueue.
//  - Host code that reads results synchronizes the stream (copyToHost does).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_CUDA_H
#define SHARDLIN_RUNTIME_CUDA_H

#if !defined(SHARDLIN_HAVE_CUDA)
#error                                                                         \
    "shardlin/runtime/backends/Cuda.h needs a runtime built with CUDA (SHARDLIN_HAVE_CUDA)"
#endif

#include "shardlin/runtime/base/Buffer.h"
#include "shardlin/runtime/comm/Communicator.h"
#include "shardlin/runtime/exec/CommLane.h"
#include "shardlin/runtime/exec/Gemm.h"
#include "shardlin/runtime/exec/LocalOps.h"
#include "shardlin/runtime/base/Status.h"

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace shardlin::rt {

//===----------------------------------------------------------------------===//
// Devices, streams, memory
//===----------------------------------------------------------------------===//

/// True if at least one CUDA device can be used. Otherwise `why` (if given)
/// says why not, e.g. "cudaGetDeviceCount failed: cudaErrorInsufficientDriver
/// (CUDA driver version is insufficient for CUDA runtime version)".
bool cudaDevicesAvailable(std::string *why = nullptr);

/// The number of usable CUDA devices; a failure of the query is an error.
Status cudaDeviceCount(int &count);

/// One line about the devices, for tools' --version: "none (<why>)", or
/// "2 devices: cuda:0 NVIDIA H200 (sm_90, 139 GiB), cuda:1 ...".
std::string describeCudaDevices();

/// A CUDA stream on one device, owned (created non-blocking, destroyed with
/// the object). Shared between the communicator and GEMM backend of a rank.
class ExecutionStream {
public:
  static Status create(int device, std::shared_ptr<ExecutionStream> &out);
  ~ExecutionStream();
  ExecutionStream(const ExecutionStream &) = delete;
  ExecutionStream &operator=(const ExecutionStream &) = delete;

  int device() const { return device_; }
  /// The cudaStream_t, for code that enqueues its own work.
  void *nativeHandle() const { return stream_; }
  /// Waits until all work enqueued so far has completed.
  Status synchronize() const;

private:
  ExecutionStream(int device, void *stream)
      : device_(device), stream_(stream) {}
  int device_;
  void *stream_;
};

/// Device memory (cudaMalloc / cudaFree) on `device`. Buffers from it report
/// Device{Cuda, device}. cudaFree waits for the device's pending work, so a
/// buffer may be released while kernels that use it are still queued.
Status createCudaAllocator(int device, std::unique_ptr<Allocator> &out);

/// Copies between host and device memory in order with `stream`'s work and
/// returns once the copy is complete (the stream is synchronized), so the
/// host side can be reused or read at once.
Status copyToDevice(const ExecutionStream &stream, void *deviceDst,
                    const void *hostSrc, size_t bytes);
Status copyToHost(const ExecutionStream &stream, void *hostDst,
                  const void *deviceSrc, size_t bytes);

//===----------------------------------------------------------------------===//
// Local operations
//===----------------------------------------------------------------------===//

/// The LocalOps (LocalOps.h) of a GPU rank on `stream`'s device: strided
/// copies with cudaMemcpy2DAsync and the bias addition as a kernel, both
/// enqueued on `stream` without waiting (the object keeps the stream alive).
/// biasAdd refuses memory the device cannot read before launching anything.
/// Not safe to share between threads.
Status createCudaLocalOps(std::shared_ptr<ExecutionStream> stream,
                          std::unique_ptr<LocalOps> &out);

//===----------------------------------------------------------------------===//
// GEMM
//===----------------------------------------------------------------------===//

struct GemmOptions {
  /// f32 may use TF32 tensor cores (10-bit mantissa products). Off by
  /// default: results then match the f32 bound of the CPU backend.
  bool allowTf32 = false;
  /// For an f32 or f64 C: add the bias in cuBLASLt's epilogue where
  /// cuBLASLt supports it; otherwise (or when false) C is pre-filled with the
  /// bias by a kernel and the GEMM accumulates onto it. false exists to test
  /// and compare the two paths. An f16/bf16 C with a bias takes neither: the
  /// product goes to an f32 accumulator and a kernel adds the bias and
  /// rounds once (docs/gpu-results.md says why).
  bool fuseBiasEpilogue = true;
  /// In runWithEpilogue, use cuBLASLt's bias and GELU(tanh) epilogues
  /// for an elementwise epilogue that is exactly one of them (written over
  /// C); otherwise (or when false) the GEMM is followed by the elementwise
  /// kernel. false exists to test and compare the two paths.
  bool fuseActivationEpilogue = true;
  /// Device workspace for cuBLAS/cuBLASLt, allocated once per backend.
  size_t workspaceBytes = size_t(32) << 20;
};

/// The cuBLAS backend (name "cublas") on `stream`'s device. Every run()
/// enqueues on `stream` and returns without waiting; the backend keeps the
/// stream alive. Not safe to share between threads. Inputs are validated
/// like the CPU backend's; pointers must be device memory of that device
/// (or host memory the device can access).
Status createCublasGemm(std::shared_ptr<ExecutionStream> stream,
                        const GemmOptions &options,
                        std::unique_ptr<GemmBackend> &out);

//===----------------------------------------------------------------------===//
// Communicators
//===----------------------------------------------------------------------===//

/// The communicators of this header. Buffers passed to them are device
/// pointers on device(), the device of their stream.
class CudaCommunicator : public Communicator {
public:
  /// The stream every collective of this rank is enqueued on; create the
  /// rank's GEMM backend on it.
  const std::shared_ptr<ExecutionStream> &stream() const { return stream_; }
  Device device() const override;
  /// Enqueues the collectives on `stream` (same device) from now on, or on
  /// the rank's stream again with the one it had: a pipelined block's lane
  /// moves them to a second stream for its duration (createCudaLaneOrdering).
  /// Not while a collective runs.
  void setCollectiveStream(std::shared_ptr<ExecutionStream> stream) {
    stream_ = std::move(stream);
  }

protected:
  explicit CudaCommunicator(std::shared_ptr<ExecutionStream> stream);

  /// In the base, so destroyed after what a backend enqueues on it (its
  /// events and staging memory, freed in stream order).
  std::shared_ptr<ExecutionStream> stream_;
};

/// The stream of a CudaCommunicator, or null for other communicators.
std::shared_ptr<ExecutionStream> cudaStreamOf(const Communicator &comm);

/// The ordering of a GPU rank's pipelined blocks (exec/CommLane.h): its
/// collectives on a second stream of `comm`'s device, created once, while
/// its GEMMs and kernels stay on `compute` (comm's stream, which it gets
/// back after each pipeline); events order the two both ways.
Status createCudaLaneOrdering(CudaCommunicator &comm,
                              std::shared_ptr<ExecutionStream> compute,
                              std::unique_ptr<LaneOrdering> &out);

/// The largest group createCudaLocalGroup accepts: reductions read every
/// rank's buffer in one kernel whose argument holds one pointer per rank.
constexpr int kMaxCudaLocalRanks = 64;

/// W ranks that share one GPU, as threads of one process ("cuda-local"): the
/// same rendezvous and timeout rules as the threads backend, with copies and
/// reduction kernels on the ranks' streams. Element r of `out` is rank r's,
/// used by one thread at a time. The first form creates one stream per rank
/// on `device`; the second takes them (all on one device, pairwise distinct).
Status createCudaLocalGroup(int worldSize, int device,
                            const CommOptions &options,
                            std::vector<std::unique_ptr<Communicator>> &out);
Status createCudaLocalGroup(
    const std::vector<std::shared_ptr<ExecutionStream>> &streams,
    const CommOptions &options,
    std::vector<std::unique_ptr<Communicator>> &out);

/// True if this build has the NCCL backend (SHARDLIN_HAVE_NCCL).
bool ncclAvailable();

/// An ncclUniqueId as bytes: made once (by one rank) and handed to all
/// ranks of a communicator by any host-side means.
struct NcclUniqueId {
  unsigned char bytes[128] = {};
};
Status createNcclUniqueId(NcclUniqueId &id);

/// One rank of an NCCL communicator ("nccl") of `worldSize` ranks, on
/// `stream`'s device; every rank calls this with the same id. With a finite
/// timeout the communicator is non-blocking: initialization and each
/// collective fail after options.timeoutSeconds (the communicator is then
/// aborted and every later call fails at once) instead of hanging.
Status createNcclCommunicator(const NcclUniqueId &id, int rank, int worldSize,
                              std::shared_ptr<ExecutionStream> stream,
                              const CommOptions &options,
                              std::unique_ptr<Communicator> &out);

/// One process per GPU: rank and size come from `bootstrap`, a host-memory
/// communicator over the same processes (e.g. createMpiCommunicator's), which
/// broadcasts rank 0's unique id. Collective over `bootstrap`.
Status createNcclCommunicator(Communicator &bootstrap,
                              std::shared_ptr<ExecutionStream> stream,
                              const CommOptions &options,
                              std::unique_ptr<Communicator> &out);

/// One process driving several GPUs: rank r runs on streams[r] (pairwise
/// distinct devices). Initializes all ranks from the calling thread; each
/// communicator is then used by its own thread.
Status createNcclThreadsGroup(
    const std::vector<std::shared_ptr<ExecutionStream>> &streams,
    const CommOptions &options,
    std::vector<std::unique_ptr<Communicator>> &out);

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_CUDA_H
