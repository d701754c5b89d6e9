//===- GradGridMpiTest.cpp - Backward functions on a DP x TP grid, MPI ----===//
//
// GradGridTest.cpp's check with one process per rank: ctest starts it under
// mpirun with 2 * TP processes; each process takes the grid cases
// (GradGridCases.h) whose TP group fits and runs them through
// rt::runProgram on the mpi backend with rt::RunOptions::replicas = 2
// (runBackwardOnGrid): the runtime splits MPI's world (MPI_Comm_split
// through Communicator::split) into each replica's group and the replicas
// of each chunk, runs the replica's backward on its own data and averages
// the parameters' gradients across the replicas. Each process checks its
// rank's gradients against the dense model's float64 gradients (every
// process regenerates every replica's data from the seeds). MpiSuite.h
// sums the failures.
//
//===----------------------------------------------------------------------===//

#include "GradGridCases.h"
#include "GradTesting.h"
#include "MpiSuite.h"

#include <cstdio>

namespace rt = ::shardlin::rt;
using namespace shardlin::testkit;

namespace {
constexpr int kDataParallel = 2;
} // namespace

int main(int argc, char **argv) {
  std::vector<GradCase> cases;
  shardlin::e2e::MpiSuite suite;
  suite.label = "mpi grad grid";
  suite.count = [&](int w) {
    cases.clear();
    for (const GradCase &c : gridCases())
      if (kDataParallel * c.worldSize() == w)
        cases.push_back(c);
    return cases.size();
  };
  suite.run = [&](size_t i, const rt::CommOptions &commOptions,
                  rt::Communicator &world) {
    const GradCase &c = cases[i];
    const int replica = world.rank() / c.worldSize(),
              rank = world.rank() % c.worldSize();
    BackwardPrograms programs;
    rt::Status s = compileBackward(c, programs);
    std::vector<GradData> data;
    for (int d = 0; d < kDataParallel; ++d)
      data.push_back(makeGradData(c, gridSeed(d)));
    std::vector<std::vector<std::vector<RankTensor>>> results;
    // Every process compiled the same text: all reach the run or none.
    if (s)
      s = runBackwardOnGrid(c, data, backwardRunOf(programs),
                            mpiRunOptions(c.worldSize(), commOptions),
                            results);
    if (!s) {
      std::fprintf(stderr, "FAIL %s world rank %d: %s\n", c.name().c_str(),
                   world.rank(), s.message().c_str());
      return false;
    }
    std::string report;
    if (checkGradients(c, gridReference(c, data, replica), rank,
                       results[size_t(replica)][size_t(rank)], report) != 0) {
      std::fprintf(stderr, "FAIL %s world rank %d (replica %d)\n%s",
                   c.name().c_str(), world.rank(), replica, report.c_str());
      return false;
    }
    return true;
  };
  return shardlin::e2e::runMpiSuite(argc, argv, suite);
}
