//===- Backends.h - What the registry points at (internal) ------*- C++ -*-===//
//
// Internal to the runtime: each backend's runner and connector, which the
// registry (Registry.cpp) lists. The CPU backends' are in host/ and mpi/.
// The GPU backends' live in cuda/CudaBackends.cpp, which is part of the
// runtime's GPU module (libshardlin-runtime-cuda.so, CUDA builds only):
// GpuModule.cpp loads it the first time a GPU backend or the device list is
// asked for, and the module hands its entry points to registerGpuModule
// when loaded.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_BACKENDS_BACKENDS_H
#define SHARDLIN_RUNTIME_LIB_BACKENDS_BACKENDS_H

#include "shardlin/runtime/backends/Registry.h"

#include <memory>
#include <string>
#include <vector>

namespace shardlin::rt::detail {

/// A backend's runner, as BackendInfo::run.
using BackendRunner = BackendRun *;

/// threads (host/ThreadsBackend.cpp).
BackendRun runThreads;
Status connectThreads(int worldSize, const CommOptions &options,
                      int blasThreads,
                      std::vector<std::unique_ptr<Communicator>> &comms);

/// The launch rule of the backends whose ranks are all threads of this
/// process: InvalidArgument if a launcher started several processes (each
/// would run all the ranks). `backend` names the backend in the message.
Status checkThreadsLaunch(const char *backend);

/// mpi (mpi/MpiBackend.cpp).
BackendRun runMpi;
Status connectMpi(int worldSize, const CommOptions &options, int blasThreads,
                  std::vector<std::unique_ptr<Communicator>> &comms);

/// The GPU backends' runners (GpuModule.cpp): load the GPU module on the
/// first call and run its runner.
BackendRun runCudaLocalFromModule, runNcclFromModule;

/// Bumped whenever GpuModuleEntries or what its functions take changes: a
/// module from another build of the runtime is refused, not called.
constexpr int kGpuModuleAbi = 3;

/// What the GPU module provides. It is built from the same sources as the
/// runtime it is loaded into and calls back into that runtime (runRank,
/// the thread launcher, the threads and MPI communicators), whose symbols
/// the executable exports (runtime/cuda.cmake).
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

#endif // SHARDLIN_RUNTIME_LIB_BACKENDS_BACKENDS_H
