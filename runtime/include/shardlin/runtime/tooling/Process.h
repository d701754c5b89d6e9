//===- Process.h - What a tool's main does to its own process ---*- C++ -*-===//
//
// Process control belongs to the tools, not to the runtime's core: a
// backend or kernel never re-executes the process or changes its
// environment, and it applies the BLAS threads it is given
// (RunOptions::blasThreads > 0) without choosing any. The policies a tool
// applies on top of the core's queries live here: the kernels
// (suggestedBlasCoreType only answers) and the threads per rank (the file
// runner and the C ABI's contexts resolve a 0 with defaultBlasThreads).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_TOOLING_PROCESS_H
#define SHARDLIN_RUNTIME_TOOLING_PROCESS_H

#include "shardlin/runtime/exec/Execute.h"
#include "shardlin/runtime/program/Program.h"

#include <string>

namespace shardlin::rt {

/// For a tool's main(), first thing (before threads or MPI): when
/// suggestedBlasCoreType() (Host.h) is not empty, re-executes the program
/// (/proc/self/exe, the same arguments) with OPENBLAS_CORETYPE set to it,
/// since OpenBLAS reads it only when it is loaded. Returns when there is
/// nothing to do or the exec fails (the run then goes on as chosen).
void reexecForBlasKernels(char **argv);

/// The tools' BLAS threads per rank: this host's cores shared by the
/// `ranksPerHost` ranks that run on it (at least 1).
int blasThreadsPerRank(int ranksPerHost);

/// The ranks of a run on this host with `backend`: the launcher's ranks on
/// this node for a backend with one process per rank under it (mpi, and
/// nccl under mpirun: BackendInfo::needsMpiSession), else the
/// `inProcessRanks` this process runs as threads.
int ranksPerHost(const std::string &backend, int inProcessRanks);

/// RunOptions::blasThreads as the tools run `program` with `options`: as
/// given when it is > 0, else blasThreadsPerRank of the run's ranks on
/// this host (the world size, else the program's, times the replicas).
int defaultBlasThreads(const RunOptions &options, const Program &program);

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_TOOLING_PROCESS_H
