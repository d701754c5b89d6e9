//===- GradGpuTest.cpp - Backward functions on the cuda-local backend -----===//
//
// The gradient suite (GradTesting.h) on cuda-local: W ranks as threads
// sharing cuda:0, the saving forward and the backward run through
// rt::runProgram (the rank's buffers in device memory, cuBLAS GEMMs, the
// CUDA sum_rows and elementwise kernels), every gradient of every rank
// against the dense model's float64 gradients within the threads suite's
// bound. Compiled everywhere CUDA is; without a usable GPU each case skips
// with the reason (ctest names start with "gpu.").
//
//===----------------------------------------------------------------------===//

#include "GradGTest.h"

#include "shardlin/runtime/backends/Cuda.h"

#include <gtest/gtest.h>

#include <functional>

namespace rt = ::shardlin::rt;
using namespace shardlin::testkit;

namespace {

/// Compiles the case's backward and runs `check` with cuda-local options
/// (60 s timeout); skips without a usable GPU.
void onCudaLocal(const GradCase &c,
                 const std::function<void(const BackwardPrograms &,
                                          rt::RunOptions)> &check) {
  std::string why;
  if (!rt::cudaDevicesAvailable(&why))
    GTEST_SKIP() << "no usable CUDA device: " << why;
  BackwardPrograms programs;
  rt::Status s = compileBackward(c, programs);
  ASSERT_TRUE(s) << s.message();
  rt::RunOptions options;
  options.backend = "cuda-local";
  options.comm.timeoutSeconds = 60;
  check(programs, options);
}

class GradCudaLocal : public ::testing::TestWithParam<GradCase> {};

TEST_P(GradCudaLocal, EveryGradientOfEveryRankMatchesTheDenseModel) {
  const GradCase &c = GetParam();
  onCudaLocal(c, [&](const BackwardPrograms &programs, rt::RunOptions options) {
    options.worldSize = c.worldSize();
    expectEveryGradientMatches(c, backwardRunOf(programs), options);
  });
}

INSTANTIATE_TEST_SUITE_P(Suite, GradCudaLocal, ::testing::ValuesIn(gradSuite()),
                         GradCaseName());

// The DP x TP grid (GradGridCases.h, DP = 2) on cuda-local: 2 * TP ranks on
// cuda:0, the world split into cuda-local groups, the parameters'
// gradients averaged across the replicas in device memory
// (rt::averageOverReplicas), checked as GradGridTest.cpp checks threads.
class GradGridCudaLocal : public ::testing::TestWithParam<GradCase> {};

TEST_P(GradGridCudaLocal, EveryGradientOfEveryReplicaMatchesTheDenseModel) {
  const GradCase &c = GetParam();
  onCudaLocal(c, [&](const BackwardPrograms &programs, rt::RunOptions options) {
    expectEveryGradientMatchesOnGrid(c, backwardRunOf(programs), options, 2);
  });
}

INSTANTIATE_TEST_SUITE_P(DataParallel2, GradGridCudaLocal,
                         ::testing::ValuesIn(gridCases()), GradCaseName());

} // namespace
