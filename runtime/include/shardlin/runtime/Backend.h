//===- Backend.h - Backends and the devices their ranks run on --*- C++ -*-===//
//
// A backend is how the ranks of a run are created and talk to each other:
// "threads" (all ranks as threads of this process, host memory), "mpi" (one
// process per rank), "cuda-local" (all ranks as threads sharing one GPU) and
// "nccl" (one GPU per rank). Each is registered once, in Backends.cpp, with
// its name, its help text, the kind of device its ranks run on and how it
// runs a program; tools list and check backends through this registry, and
// execution (Execute.h) picks the backend's runner from it.
//
// A RankDevice is where one rank's plan runs: the allocator of its buffers,
// its GEMM and local ops, and the copies between host memory and its own.
// The host device's copies are plain memcpy, so running has one path for
// host and device memory.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_BACKEND_H
#define SHARDLIN_RUNTIME_BACKEND_H

#include "shardlin/runtime/Buffer.h"
#include "shardlin/runtime/Communicator.h"
#include "shardlin/runtime/Gemm.h"
#include "shardlin/runtime/LocalOps.h"
#include "shardlin/runtime/Status.h"

#include <memory>
#include <string>
#include <vector>

namespace shardlin::rt {

class Plan;
struct Program;
struct RunOptions;
struct RankCallbacks;
struct RankResult;

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
};

/// A rank on host memory: OpenBLAS GEMM, host local ops.
std::unique_ptr<RankDevice> createHostDevice();

/// A registered backend.
struct BackendInfo {
  /// The --backend spelling.
  const char *name;
  /// One line for help texts, e.g. "W ranks on one GPU".
  const char *summary;
  /// Where its ranks' buffers live.
  DeviceKind device;
  /// Compiled into this runtime (with the libraries it needs).
  bool built;
  /// If not built: why, as the end of a sentence ("it needs the CUDA toolkit
  /// at configure time").
  const char *missing;
  /// True if running it in this process's launch environment needs a live
  /// MpiSession.
  bool (*needsMpiSession)();
  /// Runs a program (Execute.h's runProgram calls it after the common
  /// checks). Fills `ranks` with the outcomes of the ranks this process ran,
  /// indexed by rank when all ranks are here. Returns the root cause.
  Status (*run)(const Program &program, const RunOptions &options,
                const RankCallbacks &callbacks, std::vector<RankResult> &ranks);
};

/// Every backend shardlin knows, built or not, in a fixed order.
const std::vector<BackendInfo> &backendRegistry();

/// The backend called `name`, or null.
const BackendInfo *findBackend(const std::string &name);

/// The backends compiled into this runtime, e.g. "threads, mpi" or
/// "threads, mpi, cuda-local, nccl".
std::string availableBackends();

/// Every backend name, for usage lines: "threads|mpi|cuda-local|nccl".
std::string backendNames();

/// Every backend with its summary, for --backend's help: "threads, mpi,
/// cuda-local (W ranks on one GPU) or nccl (one GPU per rank)".
std::string describeBackends();

/// The GEMM backends compiled in: "openblas" or "openblas, cublas".
std::string availableGemmBackends();

/// The GPUs this process can use, for --version: "not built with CUDA",
/// "none (<why>)" or "N device(s): cuda:0 <name> (sm_XY, G GiB), ...".
std::string describeGpus();

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_BACKEND_H
