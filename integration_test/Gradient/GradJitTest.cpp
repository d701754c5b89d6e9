//===- GradJitTest.cpp - Backward functions compiled to native code -------===//
//
// The gradient suite (GradTesting.h, all 16 cases) through the native path
// of `shardlin-run --jit` (JitTesting.h's jitBackward: @main_backward and
// @main_forward_saving each compiled by --shardlin-lower-to-llvm and MLIR's
// ExecutionEngine, calling the runtime's C ABI: shardlin_sum_rows for the
// biases' gradients), run on W threads; every gradient of every rank against
// the dense model's float64 gradients within gradErrorBound: both dims and
// strategies, fused and unfused blocks with residuals, uneven, empty and
// permuted chunks, N-D and 1-D x, every dtype, recomputed and saved, and
// per-rank batch sizes (whose row counts the compiled code exchanges,
// shardlin.gather_bounds).
//
//===----------------------------------------------------------------------===//

#include "GradGTest.h"
#include "JitTesting.h"

#include <gtest/gtest.h>

namespace rt = ::shardlin::rt;
using namespace shardlin::testkit;

namespace {

std::vector<GradCase> jitCases() { return gradSuite(); }

class GradJit : public ::testing::TestWithParam<GradCase> {};

TEST_P(GradJit, EveryGradientOfEveryRankMatchesTheDenseModel) {
  const GradCase &c = GetParam();
  JitBackward jit;
  rt::Status s = jitBackward(c, jit);
  ASSERT_TRUE(s) << s.message();
  expectEveryGradientMatches(c, jit.run(), threadsOptions(c));
}

INSTANTIATE_TEST_SUITE_P(Suite, GradJit, ::testing::ValuesIn(jitCases()),
                         GradCaseName());

// The DP x TP grid's cases (GradGridCases.h) compiled to native code: each
// rank's executor runs on its replica's group, and the parameters'
// gradients are averaged across the replicas after it (GradGridTest.cpp's
// check).
class GradGridJit : public ::testing::TestWithParam<GradCase> {};

TEST_P(GradGridJit, EveryGradientOfEveryReplicaMatchesTheDenseModel) {
  const GradCase &c = GetParam();
  JitBackward jit;
  rt::Status s = jitBackward(c, jit);
  ASSERT_TRUE(s) << s.message();
  expectEveryGradientMatchesOnGrid(c, jit.run(), threadsOptions(c), 2);
}

INSTANTIATE_TEST_SUITE_P(DataParallel2, GradGridJit,
                         ::testing::ValuesIn(gridCases()), GradCaseName());

} // namespace
