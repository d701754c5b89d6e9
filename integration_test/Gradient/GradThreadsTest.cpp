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
//===----------------------------------------------------------------------===//

#include "GradGTest.h"

#include <gtest/gtest.h>

namespace rt = ::shardlin::rt;
using namespace shardlin::testkit;

namespace {

class GradThreads : public ::testing::TestWithParam<GradCase> {};

TEST_P(GradThreads, EveryGradientOfEveryRankMatchesTheDenseModel) {
  const GradCase &c = GetParam();
  BackwardPrograms programs;
  rt::Status s = compileBackward(c, programs);
  ASSERT_TRUE(s) << s.message();
  expectEveryGradientMatches(c, backwardRunOf(programs), threadsOptions(c));
}

INSTANTIATE_TEST_SUITE_P(Suite, GradThreads, ::testing::ValuesIn(gradSuite()),
                         GradCaseName());

} // namespace
