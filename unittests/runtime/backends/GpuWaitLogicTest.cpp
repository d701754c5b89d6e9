//===- GpuWaitLogicTest.cpp - GPU tests that run on the CPU ---------------===//
//
// The CPU tests that run everywhere: the polling loop behind every timeout
// (waitWithDeadline, driven by a fake clock), the argument checks, and the
// behaviour of the factories when there is no device.
//
//===----------------------------------------------------------------------===//

#include "GpuTestSupport.h"

#include "shardlin/runtime/exec/LocalOps.h"
#include "shardlin/runtime/backends/Host.h"

#include <limits>

using namespace shardlin::rt;
using namespace shardlin::rt::testing;

//===----------------------------------------------------------------------===//
// CPU: waitWithDeadline, the decision logic of every timeout
//===----------------------------------------------------------------------===//

namespace {

/// A clock that only moves when the waiter sleeps, so the tests see exactly
/// when each probe happens relative to the deadline.
struct FakeClock {
  double t = 0;
  std::vector<double> sleeps;
  std::vector<double> probeTimes;
  double now() const { return t; }
  void sleep(double s) {
    sleeps.push_back(s);
    t += s;
  }
};

using cuda::BackoffPolicy;
using cuda::ProbeState;
using cuda::WaitResult;

template <typename Probe>
WaitResult fakeWait(FakeClock &clock, double timeout, Probe probe,
                    const BackoffPolicy &policy = BackoffPolicy()) {
  return cuda::waitWithDeadline(
      [&](std::string &error) {
        clock.probeTimes.push_back(clock.t);
        return probe(error);
      },
      timeout, [&] { return clock.now(); }, [&](double s) { clock.sleep(s); },
      policy);
}

/// A probe that finds the operation pending until the fake clock reaches
/// `t`, done from then on.
auto doneAt(const FakeClock &clock, double t) {
  return [&clock, t](std::string &) {
    return clock.t >= t ? ProbeState::Done : ProbeState::Pending;
  };
}

} // namespace

TEST(GpuWaitLogic, DoneAtOnceNeverSleeps) {
  FakeClock clock;
  WaitResult w =
      fakeWait(clock, 5.0, [](std::string &) { return ProbeState::Done; });
  EXPECT_EQ(w.kind, WaitResult::Done);
  EXPECT_EQ(w.probes, 1);
  EXPECT_TRUE(clock.sleeps.empty());
}

TEST(GpuWaitLogic, SpinsThenBacksOffUpToTheCap) {
  FakeClock clock;
  // spinProbes, minSleepSeconds, maxSleepSeconds.
  const BackoffPolicy policy{3, 1e-3, 8e-3};
  WaitResult w = fakeWait(clock, 100.0, doneAt(clock, 0.05), policy);
  ASSERT_EQ(w.kind, WaitResult::Done);
  // The first three probes come back to back, then sleeps double from the
  // minimum and stay at the cap.
  ASSERT_GE(clock.probeTimes.size(), 4u);
  EXPECT_EQ(clock.probeTimes[0], 0.0);
  EXPECT_EQ(clock.probeTimes[2], 0.0);
  EXPECT_EQ(clock.probeTimes[3], 1e-3);
  ASSERT_GE(clock.sleeps.size(), 6u);
  const double expected[] = {1e-3, 2e-3, 4e-3, 8e-3, 8e-3, 8e-3};
  for (size_t i = 0; i < 6; ++i)
    EXPECT_DOUBLE_EQ(clock.sleeps[i], expected[i]) << "sleep " << i;
  // Completion is noticed within one (capped) sleep.
  EXPECT_GE(w.waitedSeconds, 0.05);
  EXPECT_LE(w.waitedSeconds, 0.05 + 8e-3 + 1e-12);
}

TEST(GpuWaitLogic, TimesOutOnlyAfterAProbeAtTheDeadline) {
  FakeClock clock;
  const BackoffPolicy policy{0, 0.3, 0.7};
  WaitResult w = fakeWait(
      clock, 2.0, [](std::string &) { return ProbeState::Pending; }, policy);
  EXPECT_EQ(w.kind, WaitResult::TimedOut);
  // Sleeps are clamped to the deadline, so the clock ends exactly there and
  // the last probe was made at it (not before).
  EXPECT_DOUBLE_EQ(clock.t, 2.0);
  EXPECT_DOUBLE_EQ(clock.probeTimes.back(), 2.0);
  for (size_t i = 0; i + 1 < clock.probeTimes.size(); ++i)
    EXPECT_LT(clock.probeTimes[i], 2.0);
  for (double s : clock.sleeps)
    EXPECT_LE(s, 0.7);
  EXPECT_DOUBLE_EQ(w.waitedSeconds, 2.0);
}

TEST(GpuWaitLogic, CompletionWhileSleepingToTheDeadlineIsNotATimeout) {
  FakeClock clock;
  const BackoffPolicy policy{0, 0.3, 10};
  // Done exactly when the deadline is reached.
  WaitResult w = fakeWait(clock, 2.0, doneAt(clock, 2.0), policy);
  EXPECT_EQ(w.kind, WaitResult::Done);
}

TEST(GpuWaitLogic, FailureStopsAtOnceWithItsMessage) {
  FakeClock clock;
  int calls = 0;
  WaitResult w = fakeWait(clock, 10.0, [&](std::string &error) {
    if (++calls < 3)
      return ProbeState::Pending;
    error = "ncclRemoteError from rank 3";
    return ProbeState::Failed;
  });
  EXPECT_EQ(w.kind, WaitResult::Failed);
  EXPECT_EQ(w.error, "ncclRemoteError from rank 3");
  EXPECT_EQ(w.probes, 3);
}

TEST(GpuWaitLogic, ZeroOrPastDeadlineStillProbesOnce) {
  FakeClock clock;
  WaitResult w =
      fakeWait(clock, -1.0, [](std::string &) { return ProbeState::Done; });
  EXPECT_EQ(w.kind, WaitResult::Done);
  FakeClock clock2;
  w = fakeWait(clock2, 0.0, [](std::string &) { return ProbeState::Pending; });
  EXPECT_EQ(w.kind, WaitResult::TimedOut);
  EXPECT_EQ(w.probes, 1);
  EXPECT_TRUE(clock2.sleeps.empty());
}

TEST(GpuWaitLogic, InfiniteTimeoutNeverTimesOut) {
  FakeClock clock;
  const BackoffPolicy policy{0, 1, 1000};
  WaitResult w = fakeWait(clock, std::numeric_limits<double>::infinity(),
                          doneAt(clock, 1e6), policy);
  EXPECT_EQ(w.kind, WaitResult::Done);
  EXPECT_GE(clock.t, 1e6);
}

TEST(GpuWaitLogic, RealClockHonoursTheTimeout) {
  const auto start = Clock::now();
  WaitResult w =
      cuda::waitWithDeadline([](std::string &) { return ProbeState::Pending; },
                             0.05, cuda::steadySeconds, cuda::sleepSeconds);
  const double took = secondsSince(start);
  EXPECT_EQ(w.kind, WaitResult::TimedOut);
  EXPECT_GE(took, 0.05);
  EXPECT_LT(took, 1.0); // generous: a loaded CI machine
}

TEST(GpuWaitLogic, TimeoutOptionIsChecked) {
  double effective = 0;
  for (double bad : {0.0, -1.0, std::nan("")}) {
    Status st = cuda::checkTimeout(bad, effective);
    ASSERT_FALSE(st.isOk()) << bad;
    EXPECT_TRUE(contains(st.message(), "invalid CommOptions::timeoutSeconds"))
        << st.message();
  }
  ASSERT_TRUE(cuda::checkTimeout(2.5, effective).isOk());
  EXPECT_EQ(effective, 2.5);
  ASSERT_TRUE(cuda::checkTimeout(1e30, effective).isOk());
  EXPECT_EQ(effective, 1e9);
  ASSERT_TRUE(
      cuda::checkTimeout(std::numeric_limits<double>::infinity(), effective)
          .isOk());
  EXPECT_TRUE(std::isinf(effective));
}

TEST(GpuArgumentChecks, TablesAndCounts) {
  int64_t extent = -1;
  EXPECT_EQ(cuda::checkTables("counts", {1, 2}, "displs", {0, 1}, 2, 4, extent),
            "");
  EXPECT_EQ(extent, 3);
  EXPECT_TRUE(
      contains(cuda::checkTables("counts", {1}, "displs", {0, 1}, 2, 4, extent),
               "counts has 1 entries, expected 2"));
  EXPECT_TRUE(contains(
      cuda::checkTables("counts", {1, -2}, "displs", {0, 1}, 2, 4, extent),
      "counts[1] = -2 is negative"));
  EXPECT_TRUE(contains(
      cuda::checkTables("counts", {1, 2}, "displs",
                        {0, std::numeric_limits<int64_t>::max()}, 2, 4, extent),
      "overflows"));
  EXPECT_TRUE(contains(cuda::checkCount("count", -1, 2), "is negative"));
  EXPECT_EQ(cuda::checkDeviceBuffer("send", nullptr, 0, DType::F32, 0, false),
            "");
  EXPECT_TRUE(contains(
      cuda::checkDeviceBuffer("send", nullptr, 3, DType::F32, 0, false),
      "send is null but 3 elements"));
  alignas(8) unsigned char raw[16] = {};
  EXPECT_TRUE(contains(
      cuda::checkDeviceBuffer("recv", raw + 2, 1, DType::F32, 0, false),
      "not aligned to its 4-byte elements"));
}

TEST(GpuArgumentChecks, StreamOfANonCudaCommunicatorIsNull) {
  auto comms = createThreadsGroup(2);
  ASSERT_EQ(comms.size(), 2u);
  EXPECT_EQ(cudaStreamOf(*comms[0]), nullptr);
}

// On a machine without a GPU, every factory fails with a Status that says
// why, instead of crashing or pretending to work.
TEST(GpuNoDevice, FactoriesReportWhy) {
  std::string why;
  if (cudaDevicesAvailable(&why))
    GTEST_SKIP() << "a CUDA device is present; the GPU tests cover the "
                    "factories";
  EXPECT_FALSE(why.empty());
  int count = -1;
  Status st = cudaDeviceCount(count);
  EXPECT_TRUE(!st.isOk() || count == 0);
  if (!st.isOk()) {
    EXPECT_TRUE(contains(st.message(), "cudaGetDeviceCount failed"))
        << st.message();
  }

  std::shared_ptr<ExecutionStream> stream;
  st = ExecutionStream::create(0, stream);
  EXPECT_FALSE(st.isOk());
  EXPECT_EQ(stream, nullptr);

  std::unique_ptr<Allocator> alloc;
  EXPECT_FALSE(createCudaAllocator(0, alloc).isOk());
  EXPECT_EQ(alloc, nullptr);

  std::vector<std::unique_ptr<Communicator>> comms;
  st = createCudaLocalGroup(2, 0, CommOptions(), comms);
  EXPECT_FALSE(st.isOk());
  EXPECT_TRUE(comms.empty());
  EXPECT_TRUE(contains(st.message(), "createCudaLocalGroup")) << st.message();

  std::unique_ptr<GemmBackend> gemm;
  st = createCublasGemm(nullptr, GemmOptions(), gemm);
  EXPECT_FALSE(st.isOk());
  EXPECT_EQ(gemm, nullptr);

  std::unique_ptr<LocalOps> ops;
  st = createCudaLocalOps(nullptr, ops);
  EXPECT_TRUE(contains(st.message(), "createCudaLocalOps: null stream"))
      << st.message();
  EXPECT_EQ(ops, nullptr);

  // What --version prints, and what the lit suite reads to skip GPU tests.
  EXPECT_EQ(describeCudaDevices().rfind("none (", 0), 0u)
      << describeCudaDevices();
}
