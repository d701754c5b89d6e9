//===- GradGridMpiTest.cpp - Backward functions on a DP x TP grid, MPI ----===//
//
// GradGridTest.cpp's check with one process per rank: ctest starts it under
// mpirun with 2 * TP processes; each process takes the grid cases
// (GradGridCases.h) whose TP group fits, splits MPI's world
// (MPI_Comm_split through Communicator::split) into its replica's group
// and the replicas of its chunk, runs its replica's backward on its own
// data, averages the parameters' gradients across the replicas with an
// all-reduce, and checks its rank's gradients against the dense model's
// float64 gradients (every process regenerates every replica's data from
// the seeds). MpiSuite.h sums the failures.
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
  suite.run = [&](size_t i, const rt::CommOptions &, rt::Communicator &world) {
    const GradCase &c = cases[i];
    BackwardPrograms programs;
    rt::Status s = compileBackward(c, programs);
    std::vector<GradData> data;
    for (int d = 0; d < kDataParallel; ++d)
      data.push_back(makeGradData(c, gridSeed(d)));
    GridRank grid;
    std::vector<RankTensor> grads;
    // Every process compiled the same text: all reach the splits or none.
    if (s)
      s = splitGrid(world, c.worldSize(), grid);
    if (s)
      s = runBackwardOnGrid(c, data[grid.replica], programs, grid, grads);
    if (!s) {
      std::fprintf(stderr, "FAIL %s world rank %d: %s\n", c.name().c_str(),
                   world.rank(), s.message().c_str());
      return false;
    }
    std::string report;
    if (checkGradients(c, gridReference(c, data, grid.replica), grid.rank,
                       grads, report) != 0) {
      std::fprintf(stderr, "FAIL %s world rank %d (replica %d)\n%s",
                   c.name().c_str(), world.rank(), grid.replica,
                   report.c_str());
      return false;
    }
    return true;
  };
  return shardlin::e2e::runMpiSuite(argc, argv, suite);
}
