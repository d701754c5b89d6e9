//===- ProcessTest.cpp - The tools' BLAS thread policy, not the core's ----===//
//
// Issue 38: the backends apply the BLAS threads they are given and choose
// none; the default, cores / ranks per host, is the tools' policy
// (tooling/Process.h), which the file runner and the C ABI's contexts
// apply.
//
//===----------------------------------------------------------------------===//

#include "shardlin-c/Runtime.h"
#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/tooling/Process.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

using namespace shardlin::rt;

namespace {

int cores() {
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

/// Restores OpenBLAS's threads (a process-wide setting) after a test.
class BlasThreads : public ::testing::Test {
protected:
  void TearDown() override { setBlasThreads(before_); }
  const int before_ = getBlasThreads();
};

} // namespace

TEST_F(BlasThreads, PolicyIsCoresPerRankOnThisHost) {
  EXPECT_EQ(blasThreadsPerRank(1), cores());
  EXPECT_EQ(blasThreadsPerRank(cores() * 4), 1) << "never below 1";
  EXPECT_EQ(blasThreadsPerRank(0), cores()) << "no ranks counts as one";
  // Ranks that are threads of this process share its host.
  EXPECT_EQ(ranksPerHost("threads", 3), 3);
  Program program;
  program.worldSize = 2;
  RunOptions options;
  EXPECT_EQ(defaultBlasThreads(options, program), blasThreadsPerRank(2));
  options.worldSize = 4;
  options.replicas = 2;
  EXPECT_EQ(defaultBlasThreads(options, program), blasThreadsPerRank(8));
  options.blasThreads = 3;
  EXPECT_EQ(defaultBlasThreads(options, program), 3) << "a choice is kept";
}

// A backend given 0 leaves OpenBLAS as it is; given N, it sets N.
TEST_F(BlasThreads, BackendAppliesOnlyWhatItIsGiven) {
  const BackendInfo *threads = findBackend("threads");
  ASSERT_NE(threads, nullptr);
  setBlasThreads(1);
  std::vector<std::unique_ptr<Communicator>> comms;
  ASSERT_TRUE(threads->connect(2, CommOptions(), 0, comms));
  EXPECT_EQ(getBlasThreads(), 1);
  comms.clear();
  ASSERT_TRUE(threads->connect(2, CommOptions(), 2, comms));
  EXPECT_EQ(getBlasThreads(), 2);
}

// The C ABI's documented default (blas_threads 0: cores / ranks per host)
// is the tools' policy, applied by the C ABI, not by the backend.
TEST_F(BlasThreads, ContextsApplyThePolicy) {
  setBlasThreads(cores() + 1);
  shardlin_options options = shardlin_default_options();
  shardlin_context *contexts[2] = {nullptr, nullptr};
  ASSERT_EQ(shardlin_threads_group_create(2, &options, contexts), SHARDLIN_OK)
      << shardlin_last_error_message();
  EXPECT_EQ(getBlasThreads(), blasThreadsPerRank(2));
  for (shardlin_context *c : contexts)
    shardlin_context_destroy(c);
}
