//===- Registry.h - The backends, and running a program on one --*- C++ -*-===//
//
// A backend is how the ranks of a run are created and talk to each other:
// "threads" (all ranks as threads of this process, host memory), "mpi" (one
// process per rank), "cuda-local" (all ranks as threads sharing one GPU) and
// "nccl" (one GPU per rank). Each is registered once, in
// runtime/lib/backends/Registry.cpp, with its name, its help text, the kind
// of device its ranks run on, how it runs a program and how an embedder
// connects to it. runProgram, the tools, their help texts and the C ABI's
// context creation all find backends here; nothing else chooses a backend
// by its name.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_BACKENDS_REGISTRY_H
#define SHARDLIN_RUNTIME_BACKENDS_REGISTRY_H

#include "shardlin/runtime/base/Buffer.h"
#include "shardlin/runtime/base/Status.h"
#include "shardlin/runtime/comm/Communicator.h"
#include "shardlin/runtime/exec/Execute.h"

#include <memory>
#include <string>
#include <vector>

namespace shardlin::rt {

/// How a backend runs a program (BackendInfo::run): fills `ranks` with the
/// outcomes of the ranks this process ran, indexed by rank when all ranks
/// are here, and returns the root cause.
using BackendRun = Status(const SharedProgram &program,
                          const RunOptions &options,
                          const RankCallbacks &callbacks,
                          std::vector<RankResult> &ranks);

/// A registered backend.
struct BackendInfo {
  /// Its name ("threads", "mpi", ...), as RunOptions::backend spells it.
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
  /// Runs a program (runProgram calls it after the common checks).
  BackendRun *run;
  /// For embedders that drive ranks themselves (the C ABI's contexts): the
  /// communicators of the ranks this process holds, over host memory. An
  /// in-process backend makes `worldSize` of them (rank r at r); a backend
  /// with one process per rank makes this process's one, and `worldSize`
  /// must be 0 or the launcher's size. Sets the BLAS threads to
  /// `blasThreads` (0: leaves them; the C ABI passes the tools' policy,
  /// tooling/Process.h). Null
  /// for a backend that embedders cannot connect to (the GPU backends).
  Status (*connect)(int worldSize, const CommOptions &options, int blasThreads,
                    std::vector<std::unique_ptr<Communicator>> &comms);
};

/// Every backend shardlin knows, built or not, in a fixed order.
const std::vector<BackendInfo> &backendRegistry();

/// The backend called `name`, or null.
const BackendInfo *findBackend(const std::string &name);

/// The backend called `name` if it is built into this runtime: else
/// InvalidArgument (an unknown name) or Unavailable (not built), naming the
/// backends that are.
Status lookupBackend(const std::string &name, const BackendInfo *&out);

/// The backends compiled into this runtime, e.g. "threads, mpi" or
/// "threads, mpi, cuda-local, nccl".
std::string availableBackends();

/// Every backend name, for usage lines: "threads|mpi|cuda-local|nccl".
std::string backendNames();

/// Every backend with its summary, for help texts: "threads, mpi,
/// cuda-local (W ranks on one GPU) or nccl (one GPU per rank)".
std::string describeBackends();

/// The GEMM backends compiled in: "openblas" or "openblas, cublas".
std::string availableGemmBackends();

/// The GPUs this process can use, for version texts: "not built with CUDA",
/// "none (<why>)" or "N device(s): cuda:0 <name> (sm_XY, G GiB), ...".
std::string describeGpus();

/// Where the GPU module is, without loading it: "module <path> (not
/// loaded...)", "module missing (<why>)" or "not built with CUDA".
std::string describeGpuModule();

/// Runs `program` on `options.backend`: all W ranks when they are threads of
/// this process, else this process's rank. `ranks`, if given, receives each
/// rank's outcome. Returns the root cause of a failure.
Status runProgram(const Program &program, const RunOptions &options,
                  const RankCallbacks &callbacks,
                  std::vector<RankResult> *ranks = nullptr);

/// The same on a program copied and digested once (SharedProgram: its text
/// and fingerprint, which the plan cache keys on), for a caller that runs
/// one program many times: the overload above makes both on every call.
Status runProgram(const SharedProgram &program, const RunOptions &options,
                  const RankCallbacks &callbacks,
                  std::vector<RankResult> *ranks = nullptr);

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_BACKENDS_REGISTRY_H
