//===- GradJitTest.cpp - Backward functions compiled to native code -------===//
//
// A sample of the gradient suite (GradTesting.h) through the native path of
// `shardlin-run --jit` (JitTesting.h's jitBackward: @main_backward and
// @main_forward_saving each compiled by --shardlin-lower-to-llvm and MLIR's
// ExecutionEngine, calling the runtime's C ABI: shardlin_sum_rows for the
// biases' gradients), run on W threads; every gradient of every rank against
// the dense model's float64 gradients within gradErrorBound. The sample: a
// col-wise layer recomputed, a row-wise one saved (its saved value has a `?`
// dim) with an empty chunk, a 1-D col-wise one in f16, a fused MLP with a
// residual and a SwiGLU in bf16, saved. Per-rank batch sizes through the
// JIT: test/shardlin-run/backward-dynamic-jit.mlir.
//
//===----------------------------------------------------------------------===//

#include "GradGTest.h"
#include "JitTesting.h"

#include <gtest/gtest.h>

namespace rt = ::shardlin::rt;
using namespace shardlin::testkit;

namespace {

std::vector<GradCase> jitCases() {
  const std::vector<GradCase> all = gradSuite();
  std::vector<GradCase> some;
  for (size_t i : {0, 1, 2, 7, 9})
    some.push_back(all[i]);
  return some;
}

class GradJit : public ::testing::TestWithParam<GradCase> {};

TEST_P(GradJit, EveryGradientOfEveryRankMatchesTheDenseModel) {
  const GradCase &c = GetParam();
  JitBackward jit;
  rt::Status s = jitBackward(c, jit);
  ASSERT_TRUE(s) << s.message();
  expectEveryGradientMatches(c, jit.run(), threadsOptions(c));
}

INSTANTIATE_TEST_SUITE_P(Sample, GradJit, ::testing::ValuesIn(jitCases()),
                         GradCaseName());

} // namespace
