//===- Runner.h - Run a program on every rank with .npy files ---*- C++ -*-===//
//
// What shardlin-run (and the runtime-only runner) do after they have a
// Program: bind .npy files to the entry arguments of every rank, run, and
// write each rank's results. Path conventions:
//   - "{rank}" in a path is replaced by the rank number;
//   - an argument path without "{rank}" is read by every rank;
//   - for a sharded argument the file holds the GLOBAL tensor and each rank
//     takes its own chunk;
//   - an output path without "{rank}" is written by rank 0 only.
// Before running, the ranks agree (one all_reduce) that all of them loaded
// their inputs, so a bad file on one rank fails every rank at once instead of
// leaving the others waiting in a collective.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_RUNNER_H
#define SHARDLIN_RUNTIME_RUNNER_H

#include "shardlin/runtime/ChunkLayout.h"
#include "shardlin/runtime/Communicator.h"
#include "shardlin/runtime/Program.h"
#include "shardlin/runtime/Status.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace shardlin::rt {

struct RunConfig {
  /// "threads", "mpi", "cuda-local" (W ranks as threads sharing one GPU) or
  /// "nccl" (one GPU per rank: one process per rank under mpirun, else one
  /// process driving W GPUs from W threads).
  std::string backend = "threads";
  /// Number of ranks; for mpi (and nccl under mpirun) it must match the MPI
  /// world (0: take it from MPI, or from the program otherwise).
  int worldSize = 0;
  /// The GPU, for the GPU backends; -1 picks one. cuda-local: the device all
  /// ranks share (default 0). nccl under mpirun: this process's device
  /// (default: its node-local rank modulo the visible devices). nccl without
  /// mpirun: the first of the W consecutive devices of the ranks (default 0).
  /// Must stay -1 for the CPU backends.
  int device = -1;
  std::vector<std::string> argPaths;
  std::vector<std::string> outPaths;
  CommOptions comm;
  /// OpenBLAS threads per rank; 0 picks cores / ranks-per-process-host.
  int blasThreads = 0;
  /// A test seam: if set, each rank's communicator of the threads and mpi
  /// backends is passed through it before the run (unittests/Fault wraps it
  /// in one that injects faults).
  std::function<std::unique_ptr<Communicator>(std::unique_ptr<Communicator>)>
      wrapCommunicator;
};

/// Copies rank `rank`'s chunk of a global row-major tensor (split by `spec`)
/// into `out`: what a sharded entry argument is bound to.
void extractLocalChunk(const void *global,
                       const std::vector<int64_t> &globalShape, DType dtype,
                       const ChunkSpec &spec, int rank,
                       std::vector<uint8_t> &out);

/// Replaces every "{rank}" in `path`.
std::string substituteRank(const std::string &path, int rank);

/// Runs `program` as described above. For "mpi" an MpiSession must be alive.
/// On failure the status is the root cause (the failing rank's own error),
/// not the "another rank failed" of the others.
Status runProgramWithFiles(const Program &program, const RunConfig &config);

/// Checks a requested world size (`--world-size`; 0: none requested) against
/// the one the program was compiled for (0: any).
Status checkWorldSize(const Program &program, int requested);

/// The backends compiled into this runtime, e.g. "threads, mpi" or
/// "threads, mpi, cuda-local, nccl".
std::string availableBackends();

/// True for every backend name runProgramWithFiles knows, whether or not it
/// is compiled in (it then says what is missing).
bool isBackendName(const std::string &name);

/// True if running `backend` needs a live MpiSession: "mpi", and "nccl" in a
/// process started by mpirun (NCCL is then bootstrapped through MPI).
bool backendNeedsMpiSession(const std::string &backend);

/// The GEMM backends compiled in: "openblas" or "openblas, cublas".
std::string availableGemmBackends();

/// The GPUs this process can use, for --version: "not built with CUDA",
/// "none (<why>)" or "N device(s): cuda:0 <name> (sm_XY, G GiB), ...".
std::string describeGpus();

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_RUNNER_H
