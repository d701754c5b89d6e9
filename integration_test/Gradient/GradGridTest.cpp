//===- GradGridTest.cpp - Backward functions on a DP x TP grid, threads ---===//
//
// A data-parallel x tensor-parallel grid (docs/training.md, "Grids") of
// DP = 2 replicas on 2 * TP threads: one threads group of the whole world,
// split (Communicator::split) into each replica's tensor-parallel group and
// the groups of the ranks holding the same chunk; each replica runs the
// case's backward (GradTesting.h's runBackwardOnGrid, rt::runRank on its
// group) on its own random data, then every weight chunk's and bias's
// gradient is averaged across the replicas with an all-reduce. Every
// gradient of every rank of every replica is checked against the dense
// model's float64 gradients: the replica's own for its inputs, the average
// of the replicas' for the parameters (gridReference), within
// gradErrorBound. GradGridMpiTest.cpp runs the same under mpirun.
//
//===----------------------------------------------------------------------===//

#include "GradGTest.h"
#include "GradGridCases.h"

#include "shardlin/runtime/backends/Host.h"

#include <gtest/gtest.h>

#include <thread>

namespace rt = ::shardlin::rt;
using namespace shardlin::testkit;

namespace {

constexpr int kDataParallel = 2;

class GradGrid : public ::testing::TestWithParam<GradCase> {};

TEST_P(GradGrid, EveryGradientOfEveryReplicaMatchesTheDenseModel) {
  const GradCase &c = GetParam();
  BackwardPrograms programs;
  rt::Status s = compileBackward(c, programs);
  ASSERT_TRUE(s) << s.message();
  std::vector<GradData> data;
  for (int d = 0; d < kDataParallel; ++d)
    data.push_back(makeGradData(c, gridSeed(d)));
  const int tp = c.worldSize(), w = kDataParallel * tp;
  rt::setBlasThreads(1);
  std::vector<std::unique_ptr<rt::Communicator>> world =
      rt::createThreadsGroup(w);
  std::vector<rt::Status> status(w);
  std::vector<std::string> reports(w);
  std::vector<int64_t> failures(w, 0);
  std::vector<std::thread> threads;
  for (int g = 0; g < w; ++g)
    threads.emplace_back([&, g] {
      GridRank grid;
      status[g] = splitGrid(*world[g], tp, grid);
      std::vector<RankTensor> grads;
      if (status[g])
        status[g] = runBackwardOnGrid(c, data[grid.replica], programs, grid,
                                      grads);
      if (status[g])
        failures[g] = checkGradients(c, gridReference(c, data, grid.replica),
                                     grid.rank, grads, reports[g]);
    });
  for (std::thread &t : threads)
    t.join();
  for (int g = 0; g < w; ++g) {
    EXPECT_TRUE(status[g]) << "world rank " << g << ": "
                           << status[g].message();
    EXPECT_EQ(failures[g], 0) << "world rank " << g << ":\n" << reports[g];
  }
}

INSTANTIATE_TEST_SUITE_P(DataParallel2, GradGrid,
                         ::testing::ValuesIn(gridCases()), GradCaseName());

} // namespace
