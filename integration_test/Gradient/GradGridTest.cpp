//===- GradGridTest.cpp - Backward functions on a DP x TP grid, threads ---===//
//
// A data-parallel x tensor-parallel grid (docs/training.md, "Grids") of
// DP = 2 replicas on 2 * TP threads, through the runtime's grids
// (rt::RunOptions::replicas): each world rank splits the world into its
// replica's tensor-parallel group and the group of the ranks holding the
// same chunk; each replica runs the case's backward (GradTesting.h's
// runBackwardOnGrid) on its own random data, then every weight chunk's and
// bias's gradient is averaged across the replicas (rt::averageOverReplicas).
// Every gradient of every rank of every replica is checked against the
// dense model's float64 gradients: the replica's own for its inputs, the
// average of the replicas' for the parameters (gridReference), within
// gradErrorBound. The same runs compiled to native code (GradJitTest.cpp),
// under mpirun (GradGridMpiTest.cpp) and on cuda-local (GradGpuTest.cpp).
//
//===----------------------------------------------------------------------===//

#include "GradGTest.h"
#include "GradGridCases.h"

#include <gtest/gtest.h>

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
  expectEveryGradientMatchesOnGrid(c, backwardRunOf(programs),
                                   threadsOptions(c), kDataParallel);
}

INSTANTIATE_TEST_SUITE_P(DataParallel2, GradGrid,
                         ::testing::ValuesIn(gridCases()), GradCaseName());

// The grid's own checks, before any rank starts: a replica count the
// runtime refuses.
TEST(GradGridOptions, ReplicaCountIsChecked) {
  const GradCase c = gridCases().front();
  BackwardPrograms programs;
  rt::Status s = compileBackward(c, programs);
  ASSERT_TRUE(s) << s.message();
  for (int replicas : {0, -1, rt::kMaxWorldSize + 1}) {
    rt::RunOptions options = threadsOptions(c);
    options.replicas = replicas;
    std::vector<std::vector<RankTensor>> results;
    s = runWithTensors(
        programs.backward, options, [](int) { return std::vector<RankTensor>(); },
        results);
    EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument) << replicas;
    EXPECT_NE(s.message().find("replicas"), std::string::npos) << s.message();
  }
  // More ranks than a run may have: 4096 / 3 replicas of 3 ranks fit, one
  // more does not.
  rt::RunOptions options = threadsOptions(c);
  options.replicas = rt::kMaxWorldSize / c.worldSize() + 1;
  std::vector<std::vector<RankTensor>> results;
  s = runWithTensors(
      programs.backward, options, [](int) { return std::vector<RankTensor>(); },
      results);
  EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument);
  EXPECT_NE(s.message().find("has more than 4096 ranks"), std::string::npos)
      << s.message();
}

} // namespace
