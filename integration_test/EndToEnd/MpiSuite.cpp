//===- MpiSuite.cpp - The driver of the suites run under mpirun -----------===//

#include "MpiSuite.h"

#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/base/DType.h"
#include "shardlin/runtime/exec/Gemm.h"
#include "shardlin/runtime/backends/Mpi.h"

#include <cstdio>
#include <memory>

namespace shardlin::e2e {

namespace rt = ::shardlin::rt;

int runMpiSuite(int argc, char **argv, const MpiSuite &suite) {
  std::unique_ptr<rt::MpiSession> session;
  rt::Status started = rt::MpiSession::create(&argc, &argv, session);
  if (!started) {
    std::fprintf(stderr, "%s: %s\n", suite.label, started.message().c_str());
    return 1;
  }
  // A collective that a bug leaves waiting fails after this long instead of
  // running into ctest's timeout.
  rt::CommOptions options;
  options.timeoutSeconds = suite.timeoutSeconds;
  std::unique_ptr<rt::Communicator> comm;
  rt::Status created = rt::createMpiCommunicator(options, comm);
  if (!created) {
    std::fprintf(stderr, "%s: %s\n", suite.label, created.message().c_str());
    return 1;
  }
  const int rank = comm->rank();
  const int w = comm->worldSize();
  rt::setBlasThreads(1);

  const size_t count = suite.count(w);
  double failedConfigs = 0;
  for (size_t i = 0; i < count; ++i) {
    double failedHere = suite.run(i, options, *comm) ? 0.0 : 1.0;
    rt::Status summed =
        comm->allReduce(&failedHere, &failedHere, 1, rt::DType::F64);
    if (!summed) {
      std::fprintf(stderr, "%s: rank %d: %s\n", suite.label, rank,
                   summed.message().c_str());
      return 1;
    }
    if (failedHere > 0)
      failedConfigs += 1;
    std::fflush(stderr);
  }
  if (rank == 0) {
    if (failedConfigs == 0)
      std::printf("%s: %zu configurations passed on %d ranks\n", suite.label,
                  count, w);
    else
      std::printf("%s: %d of %zu configurations FAILED on %d ranks\n",
                  suite.label, static_cast<int>(failedConfigs), count, w);
    std::fflush(stdout);
  }
  return failedConfigs == 0 ? 0 : 1;
}

} // namespace shardlin::e2e
