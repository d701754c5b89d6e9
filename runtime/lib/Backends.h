//===- Backends.h - The backends' runners (internal) ------------*- C++ -*-===//
//
// Internal to the runtime: what Backends.cpp's registry points at. The GPU
// runners live in cuda/CudaBackends.cpp, which is part of the runtime's GPU
// module (libshardlin-runtime-cuda.so, CUDA builds only): GpuModule.cpp
// loads it the first time a GPU backend or the device list is asked for,
// and the module hands its entry points to registerGpuModule when loaded.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_BACKENDS_H
#define SHARDLIN_RUNTIME_LIB_BACKENDS_H

#include "shardlin/runtime/Execute.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace shardlin::rt::detail {

/// Runs rank r of `comms` on thread r, each with the device `makeDevice`
/// creates; `agree`, if not empty, carries the agreements (one host
/// communicator per rank). Fills `ranks` by rank; returns the root cause.
/// With options.abandonLateRanks, once a rank has failed, ranks that are
/// still running min(timeout, 2 s) later are given up on (RunOptions).
Status runRanksOnThreads(
    const Program &program, const RunOptions &options,
    const RankCallbacks &callbacks,
    std::vector<std::unique_ptr<Communicator>> comms,
    std::vector<std::unique_ptr<Communicator>> agree,
    std::function<std::unique_ptr<RankDevice>()> makeDevice,
    std::vector<RankResult> &ranks);

/// The threads backend's launch rule: InvalidArgument if a launcher started
/// several processes (each would run all the ranks). `useMpi` is how the
/// caller selects the mpi backend instead ("--backend=mpi").
Status checkThreadsLaunch(const std::string &useMpi);

/// OpenBLAS threads for `ranksPerHost` ranks sharing this host's cores.
int autoBlasThreads(int ranksPerHost);

/// A backend's runner, as BackendInfo::run.
using BackendRunner = Status (*)(const Program &program,
                                 const RunOptions &options,
                                 const RankCallbacks &callbacks,
                                 std::vector<RankResult> &ranks);

/// Bumped whenever GpuModuleEntries or what its functions take changes: a
/// module from another build of the runtime is refused, not called.
constexpr int kGpuModuleAbi = 1;

/// What the GPU module provides. It is built from the same sources as the
/// runtime it is loaded into and calls back into that runtime (runRank,
/// the threads and MPI communicators), whose symbols the executable exports
/// (runtime/cuda.cmake).
struct GpuModuleEntries {
  int abi = 0;
  BackendRunner runCudaLocal = nullptr;
  BackendRunner runNccl = nullptr;
  /// describeCudaDevices (Cuda.h).
  std::string (*describeDevices)() = nullptr;
};

/// Called once by the module's static initializer, when it is loaded
/// (dlopen, or at start-up by a program that links it directly).
void registerGpuModule(const GpuModuleEntries &entries);

/// The module's entry points, loading it on the first call. Null if this
/// runtime is built without it, or if it cannot be loaded; `why` then says
/// which file was looked for where, and the loader's reason (dlerror).
const GpuModuleEntries *gpuModule(std::string &why);

/// Where the module would be loaded from, without loading it: its path,
/// or "" if it is not found (`why` then says where it was looked for).
std::string findGpuModule(std::string &why);

} // namespace shardlin::rt::detail

#endif // SHARDLIN_RUNTIME_LIB_BACKENDS_H
