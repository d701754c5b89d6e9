//===- GradGTest.h - What the gradient GoogleTest suites share -*- C++ -*-===//
//
// The threads, cuda-local, native and finite-difference suites all run a
// case's backward on every rank of one group and name their instances
// after the case; GradMpiTest.cpp (a plain program, one rank a process)
// checks its own rank instead.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_INTEGRATION_TEST_GRADIENT_GRADGTEST_H
#define SHARDLIN_INTEGRATION_TEST_GRADIENT_GRADGTEST_H

#include "GradGridCases.h"
#include "GradTesting.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace shardlin::testkit {

/// INSTANTIATE_TEST_SUITE_P's name generator: the case's name.
struct GradCaseName {
  std::string operator()(const ::testing::TestParamInfo<GradCase> &info) const {
    return info.param.name();
  }
};

/// Options of a run on the threads backend: the case's world size, one
/// BLAS thread per rank.
inline rt::RunOptions threadsOptions(const GradCase &c) {
  rt::RunOptions options;
  options.worldSize = c.worldSize();
  options.blasThreads = 1;
  return options;
}

/// Runs `run` (the case's saving forward and backward) with `options` on
/// every rank with makeGradData(c), and expects every gradient of every
/// rank to match the dense model's float64 gradients within gradErrorBound
/// (checkAllRanks).
inline void expectEveryGradientMatches(const GradCase &c,
                                       const BackwardRun &run,
                                       const rt::RunOptions &options) {
  const GradData data = makeGradData(c);
  std::vector<std::vector<RankTensor>> results;
  rt::Status s = runBackward(c, data, run, options, results);
  ASSERT_TRUE(s) << s.message();
  ASSERT_EQ(results.size(), static_cast<size_t>(c.worldSize()));
  std::string report;
  EXPECT_EQ(checkAllRanks(c, data, results, report), 0) << report;
}

/// Runs `run` on a grid of `dataParallel` replicas (runBackwardOnGrid;
/// replica d on makeGradData(c, gridSeed(d))) with `options`, every rank
/// of every replica in this process, and expects every gradient to match
/// the dense model's float64 gradients (gridReference: the parameters'
/// averaged over the replicas) within gradErrorBound.
inline void expectEveryGradientMatchesOnGrid(const GradCase &c,
                                             const BackwardRun &run,
                                             rt::RunOptions options,
                                             int dataParallel) {
  std::vector<GradData> data;
  for (int d = 0; d < dataParallel; ++d)
    data.push_back(makeGradData(c, gridSeed(d)));
  options.worldSize = c.worldSize();
  std::vector<std::vector<std::vector<RankTensor>>> results;
  rt::Status s = runBackwardOnGrid(c, data, run, options, results);
  ASSERT_TRUE(s) << s.message();
  ASSERT_EQ(results.size(), static_cast<size_t>(dataParallel));
  for (int d = 0; d < dataParallel; ++d) {
    ASSERT_EQ(results[d].size(), static_cast<size_t>(c.worldSize()));
    const GradReference ref = gridReference(c, data, d);
    for (int r = 0; r < c.worldSize(); ++r) {
      std::string report;
      EXPECT_EQ(checkGradients(c, ref, r, results[d][r], report), 0)
          << "replica " << d << ", rank " << r << ":\n"
          << report;
    }
  }
}

} // namespace shardlin::testkit

#endif // SHARDLIN_INTEGRATION_TEST_GRADIENT_GRADGTEST_H
