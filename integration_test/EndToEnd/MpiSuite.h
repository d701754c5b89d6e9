//===- MpiSuite.h - The driver of the suites run under mpirun ---*- C++ -*-===//
//
// The MPI end-to-end suites are plain programs that ctest starts under
// mpirun with W = 1..4 processes. Every process runs each configuration for
// its own rank and checks its own output against the float64 reference; the
// failures are summed over ranks so that each configuration counts once,
// however many ranks it failed on. Rank 0 prints the summary and every
// process exits non-zero if any rank failed.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_INTEGRATION_TEST_ENDTOEND_MPISUITE_H
#define SHARDLIN_INTEGRATION_TEST_ENDTOEND_MPISUITE_H

#include "shardlin/runtime/comm/Communicator.h"

#include <cstddef>
#include <functional>

namespace shardlin::e2e {

/// What a suite gives the driver. The driver starts MPI, creates a
/// communicator (collective timeout `timeoutSeconds`) and sets one BLAS
/// thread per process (several processes share the cores).
struct MpiSuite {
  /// Prefix of every line printed ("mpi e2e", "mpi blocks").
  const char *label = "mpi";
  double timeoutSeconds = 60;
  /// The number of configurations for world size W.
  std::function<size_t(int worldSize)> count;
  /// Runs configuration `index` for this process's rank (comm.rank()) and
  /// checks it; returns false after printing why to stderr. Every process
  /// makes the same calls, so collectives inside stay matched.
  std::function<bool(size_t index, const rt::CommOptions &options,
                     rt::Communicator &comm)>
      run;
};

/// Runs `suite` and returns the process's exit code.
int runMpiSuite(int argc, char **argv, const MpiSuite &suite);

} // namespace shardlin::e2e

#endif // SHARDLIN_INTEGRATION_TEST_ENDTOEND_MPISUITE_H
