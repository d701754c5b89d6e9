//===- GradThreadsTest.cpp - Backward functions on the threads backend ----===//
//
// Every case of the gradient suite (testing/compiler/GradTesting.h): @main
// through --shardlin-generate-backward and the lowering, @main_forward_saving
// (when the backward takes saved values) and @main_backward run through
// rt::runProgram on W threads, and every gradient of every rank against the
// dense model's float64 gradients (random inputs and dy, never zero) within
// gradErrorBound: a rank's own input gradient, its chunk of each weight's
// gradient summed over every rank's rows, every bias's full sum.
//
// Cases whose backward needs shardlin.all_reduce (a gather-weight layer's
// bias) skip, naming the op, until this runtime has it (issue 26's other
// runtime branch); they run as soon as it does.
//
//===----------------------------------------------------------------------===//

#include "GradTesting.h"

#include <gtest/gtest.h>

namespace rt = ::shardlin::rt;
using namespace shardlin::testkit;

namespace {

class GradThreads : public ::testing::TestWithParam<GradCase> {};

TEST_P(GradThreads, EveryGradientOfEveryRankMatchesTheDenseModel) {
  const GradCase &c = GetParam();
  BackwardPrograms programs;
  rt::Status s = compileBackward(c, programs);
  if (!s && !runtimeHasOp("all_reduce") &&
      s.message().find("cannot execute 'shardlin.all_reduce'") !=
          std::string::npos)
    GTEST_SKIP() << "needs the runtime's shardlin.all_reduce";
  ASSERT_TRUE(s) << s.message();
  const GradData data = makeGradData(c);
  rt::RunOptions options;
  options.worldSize = c.worldSize();
  options.blasThreads = 1;
  std::vector<std::vector<RankTensor>> results;
  s = runBackward(c, data, backwardRunOf(programs), options, results);
  ASSERT_TRUE(s) << s.message();
  ASSERT_EQ(results.size(), static_cast<size_t>(c.worldSize()));
  std::string report;
  EXPECT_EQ(checkAllRanks(c, data, results, report), 0) << report;
}

INSTANTIATE_TEST_SUITE_P(
    Suite, GradThreads, ::testing::ValuesIn(gradSuite()),
    [](const ::testing::TestParamInfo<GradCase> &info) {
      return info.param.name();
    });

} // namespace
