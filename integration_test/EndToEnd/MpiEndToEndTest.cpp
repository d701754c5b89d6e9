//===- MpiEndToEndTest.cpp - shardlin.linear on the MPI backend -----------===//
//
// A plain program, run by ctest under mpirun with W = 1, 2, 3 and 4 ranks.
// It runs mpiConfigs(W) (both sharding dims, uneven and empty chunks, a few
// placements, 1-D and 3-D inputs, bias or not, every dtype on a subset): each
// process compiles the configuration itself, runs its own rank and checks
// its own output against the float64 reference (every rank can regenerate
// every tensor from the configuration's seed). MpiSuite.h sums the failures
// and prints the summary.
//
// Built twice: as shardlin-e2e-mpi-test (e2e.mpi.*) with plans, and with
// SHARDLIN_E2E_JIT as shardlin-e2e-jit-mpi-test (e2e.jit.mpi.*), each
// configuration compiled to native code as `shardlin-run --jit` compiles it
// (JitTesting.h), by every process, and run through rt::runRank with the
// compiled code's executor.
//
//===----------------------------------------------------------------------===//

#include "E2ESupport.h"
#include "MpiSuite.h"
#if SHARDLIN_E2E_JIT
#include "JitTesting.h"
#endif

#include <algorithm>
#include <cstdio>

namespace rt = ::shardlin::rt;
using namespace shardlin::e2e;

int main(int argc, char **argv) {
  std::vector<LinearConfig> configs;
  MpiSuite suite;
#if SHARDLIN_E2E_JIT
  suite.label = "mpi jit";
#else
  suite.label = "mpi e2e";
#endif
  suite.count = [&](int w) {
    configs = mpiConfigs(w);
    return configs.size();
  };
  suite.run = [&](size_t i, const rt::CommOptions &, rt::Communicator &comm) {
    const LinearConfig &config = configs[i];
#if SHARDLIN_E2E_JIT
    shardlin::testkit::JitProgram compiled;
    rt::Status ran = shardlin::testkit::jitLinear(config, compiled);
    const rt::Program &program = compiled.program;
    const rt::RankCallbacks::MakeExecutor &executors = compiled.executors;
#else
    rt::Program program;
    rt::Status ran = compileLinear(config, program);
    const rt::RankCallbacks::MakeExecutor executors;
#endif
    std::vector<uint8_t> output;
    LinearData data;
    // Every process compiles the same text, so they all fail or all go on;
    // runRank's agreement step keeps a failure on one rank from blocking the
    // others anyway.
    if (ran) {
      data = makeLinearData(config);
      ran = runRank(program, config, data, comm, output, nullptr, nullptr,
                    executors);
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
