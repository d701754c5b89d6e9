//===- JitMpiTest.cpp - Compiled code under mpirun -------------------------===//
//
// mpiConfigs(W) (both sharding dims, uneven and empty chunks, a few
// placements, 1-D and 3-D inputs, bias or not, every dtype on a subset)
// compiled to native code as `shardlin-run --jit` compiles them, by every
// process (one compilation per process, as the tool does), and run by
// ctest under mpirun with W = 1..4: each process runs its own rank through
// rt::runRank with the compiled code's executor, its collectives on MPI,
// and checks its own output against the float64 reference.
//
//===----------------------------------------------------------------------===//

#include "E2ESupport.h"
#include "JitTesting.h"
#include "MpiSuite.h"

#include <cstdio>

namespace rt = ::shardlin::rt;
using namespace shardlin::e2e;

int main(int argc, char **argv) {
  std::vector<LinearConfig> configs;
  MpiSuite suite;
  suite.label = "mpi jit";
  suite.count = [&](int w) {
    configs = mpiConfigs(w);
    return configs.size();
  };
  suite.run = [&](size_t i, const rt::CommOptions &, rt::Communicator &comm) {
    const LinearConfig &config = configs[i];
    shardlin::testkit::JitProgram jit;
    rt::Status ran = shardlin::testkit::jitLinear(config, jit);
    std::vector<uint8_t> output;
    LinearData data;
    // Every process compiles the same text, so they all fail or all go on;
    // runRank's agreement keeps a failure on one rank from blocking the
    // others anyway.
    if (ran) {
      data = makeLinearData(config);
      ran = runRank(jit.program, config, data, comm, output, nullptr,
                    nullptr, jit.executors);
    }
    if (!ran) {
      std::fprintf(stderr, "FAIL %s rank %d: %s\n", config.name().c_str(),
                   comm.rank(), ran.message().c_str());
      return false;
    }
    std::string report;
    if (checkOutput(config, data, comm.rank(), output, report) != 0) {
      std::fprintf(stderr, "FAIL %s", report.c_str());
      return false;
    }
    return true;
  };
  return runMpiSuite(argc, argv, suite);
}
