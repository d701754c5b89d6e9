//===- GradMpiTest.cpp - Backward functions on the MPI backend ------------===//
//
// A plain program, run by ctest under mpirun with W = 1..4 ranks: each
// process compiles every case of the gradient suite (GradTesting.h) whose
// world size is W, runs @main_forward_saving (if any) and @main_backward
// for its own rank through rt::runProgram on the mpi backend, and checks
// its rank's gradients against the dense model's float64 gradients (every
// process regenerates every tensor from the case's seed). MpiSuite.h sums
// the failures.
//
//===----------------------------------------------------------------------===//

#include "GradTesting.h"
#include "MpiSuite.h"

#include <cstdio>

namespace rt = ::shardlin::rt;
using namespace shardlin::testkit;

int main(int argc, char **argv) {
  std::vector<GradCase> cases;
  shardlin::e2e::MpiSuite suite;
  suite.label = "mpi grad";
  suite.count = [&](int w) {
    cases.clear();
    for (const GradCase &c : gradSuite())
      if (c.worldSize() == w)
        cases.push_back(c);
    return cases.size();
  };
  suite.run = [&](size_t i, const rt::CommOptions &commOptions,
                  rt::Communicator &comm) {
    const GradCase &c = cases[i];
    const int rank = comm.rank();
    BackwardPrograms programs;
    rt::Status s = compileBackward(c, programs);
    const GradData data = makeGradData(c);
    std::vector<std::vector<RankTensor>> results;
    if (s)
      s = runBackward(c, data, backwardRunOf(programs),
                      mpiRunOptions(c.worldSize(), commOptions), results);
    if (!s) {
      std::fprintf(stderr, "FAIL %s rank %d: %s\n", c.name().c_str(), rank,
                   s.message().c_str());
      return false;
    }
    std::string report;
    if (checkGradients(c, gradReference(c, data), rank, results[rank],
                       report) != 0) {
      std::fprintf(stderr, "FAIL %s", report.c_str());
      return false;
    }
    return true;
  };
  return shardlin::e2e::runMpiSuite(argc, argv, suite);
}
