//===- MpiEndToEndTest.cpp - shardlin.linear on the MPI backend -----------===//
//
// A plain program, run by ctest under mpirun with W = 1, 2, 3 and 4 ranks.
// It runs mpiConfigs(W) (both sharding dims, uneven and empty chunks, a few
// placements, 1-D and 3-D inputs, bias or not, every dtype on a subset): each
// process compiles the configuration itself, runs its own rank and checks
// its own output against the float64 reference (every rank can regenerate
// every tensor from the configuration's seed). The failure counts are summed
// with allReduce; rank 0 prints the summary and every process exits non-zero
// if any rank failed.
//
//===----------------------------------------------------------------------===//

#include "E2ESupport.h"

#include "shardlin/runtime/MpiCommunicator.h"

#include <cstdio>
#include <memory>

namespace rt = ::shardlin::rt;
using namespace shardlin::e2e;

int main(int argc, char **argv) {
  std::unique_ptr<rt::MpiSession> session;
  rt::Status started = rt::MpiSession::create(&argc, &argv, session);
  if (!started) {
    std::fprintf(stderr, "mpi e2e: %s\n", started.message().c_str());
    return 1;
  }
  // A collective that a bug leaves waiting fails after this long instead of
  // running into ctest's timeout.
  rt::CommOptions options;
  options.timeoutSeconds = 60;
  std::unique_ptr<rt::Communicator> comm;
  rt::Status created = rt::createMpiCommunicator(options, comm);
  if (!created) {
    std::fprintf(stderr, "mpi e2e: %s\n", created.message().c_str());
    return 1;
  }
  const int rank = comm->rank();
  const int w = comm->worldSize();
  // Several processes share the cores: one BLAS thread each.
  rt::setBlasThreads(1);

  const std::vector<LinearConfig> configs = mpiConfigs(w);
  double failedConfigs = 0;
  for (const LinearConfig &config : configs) {
    bool ok = true;
    rt::Program program;
    rt::Status compiled = compileLinear(config, program);
    std::vector<uint8_t> output;
    LinearData data;
    // Every process compiles the same text, so they all fail or all go on;
    // runRank's agreement step keeps a failure on one rank from blocking the
    // others anyway.
    rt::Status ran = compiled;
    if (compiled) {
      data = makeLinearData(config);
      ran = runRank(program, config, data, *comm, output);
    }
    if (!ran) {
      std::fprintf(stderr, "FAIL %s rank %d: %s\n", config.name().c_str(), rank,
                   ran.message().c_str());
      ok = false;
    } else {
      std::string report;
      if (checkOutput(config, data, rank, output, report) != 0) {
        std::fprintf(stderr, "FAIL %s", report.c_str());
        ok = false;
      }
    }
    // Count each configuration once, however many ranks it failed on.
    double failedHere = ok ? 0.0 : 1.0;
    rt::Status summed =
        comm->allReduce(&failedHere, &failedHere, 1, rt::DType::F64);
    if (!summed) {
      std::fprintf(stderr, "mpi e2e: rank %d: %s\n", rank,
                   summed.message().c_str());
      return 1;
    }
    if (failedHere > 0)
      failedConfigs += 1;
    std::fflush(stderr);
  }

  if (rank == 0) {
    if (failedConfigs == 0)
      std::printf("mpi e2e: %zu configurations passed on %d ranks\n",
                  configs.size(), w);
    else
      std::printf("mpi e2e: %d of %zu configurations FAILED on %d ranks\n",
                  static_cast<int>(failedConfigs), configs.size(), w);
    std::fflush(stdout);
  }
  return failedConfigs == 0 ? 0 : 1;
}
