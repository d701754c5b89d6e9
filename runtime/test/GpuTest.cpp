//===- GpuTest.cpp - The GPU backends: cuBLAS, cuda-local, NCCL -----------===//
//
// Two kinds of tests:
//  - GPU tests (everything that touches a device) begin with
//    REQUIRE_CUDA_DEVICE(), which skips them (GTEST_SKIP, with the reason
//    CUDA gave) on a machine without a usable GPU. They never pass without
//    running.
//  - CPU tests that run everywhere: the polling loop behind every timeout
//    (waitWithDeadline, driven by a fake clock), the argument checks, and
//    the behaviour of the factories when there is no device.
//
// Bounds are those of GemmTest.cpp (GEMM) and CollectivesTestSupport.h
// (collectives); every buffer starts poisoned (0xFF bytes, NaN in every
// dtype), so unwritten or overwritten elements show.
//
// What only a GPU can show: that the kernels compute what they should, that
// the cross-stream events order cuda-local's copies after the producers'
// GEMMs, that cuBLASLt's epilogue adds the bias along the right dimension,
// and that NCCL's abort makes a rank waiting for a missing peer return.
// The CPU tests show the decision logic around them.
//
//===----------------------------------------------------------------------===//

#include "CollectivesTestSupport.h"
#include "CudaCheck.h"

#include "shardlin/runtime/Cuda.h"
#include "shardlin/runtime/LocalOps.h"
#include "shardlin/runtime/Plan.h"
#include "shardlin/runtime/Program.h"
#include "shardlin/runtime/Runner.h"
#include "shardlin/runtime/ThreadsCommunicator.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace shardlin::rt;
using namespace shardlin::rt::testing;

#define REQUIRE_CUDA_DEVICE()                                                  \
  do {                                                                         \
    std::string shardlinWhy_;                                                  \
    if (!cudaDevicesAvailable(&shardlinWhy_))                                  \
      GTEST_SKIP() << "no usable CUDA device: " << shardlinWhy_;               \
  } while (false)

#define REQUIRE_NCCL()                                                         \
  do {                                                                         \
    if (!ncclAvailable())                                                      \
      GTEST_SKIP() << "this runtime was built without NCCL";                   \
  } while (false)

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

bool contains(const std::string &s, const std::string &needle) {
  return s.find(needle) != std::string::npos;
}

} // namespace

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
  BackoffPolicy policy;
  policy.spinProbes = 3;
  policy.minSleepSeconds = 1e-3;
  policy.maxSleepSeconds = 8e-3;
  WaitResult w = fakeWait(
      clock, 100.0,
      [&](std::string &) {
        return clock.t >= 0.05 ? ProbeState::Done : ProbeState::Pending;
      },
      policy);
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
  BackoffPolicy policy;
  policy.spinProbes = 0;
  policy.minSleepSeconds = 0.3;
  policy.maxSleepSeconds = 0.7;
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
  BackoffPolicy policy;
  policy.spinProbes = 0;
  policy.minSleepSeconds = 0.3;
  policy.maxSleepSeconds = 10;
  // Done exactly when the deadline is reached.
  WaitResult w = fakeWait(
      clock, 2.0,
      [&](std::string &) {
        return clock.t >= 2.0 ? ProbeState::Done : ProbeState::Pending;
      },
      policy);
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
  BackoffPolicy policy;
  policy.spinProbes = 0;
  policy.minSleepSeconds = 1;
  policy.maxSleepSeconds = 1000;
  WaitResult w = fakeWait(
      clock, std::numeric_limits<double>::infinity(),
      [&](std::string &) {
        return clock.t >= 1e6 ? ProbeState::Done : ProbeState::Pending;
      },
      policy);
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

//===----------------------------------------------------------------------===//
// GPU helpers
//===----------------------------------------------------------------------===//

namespace {

/// One rank's stream, device memory and communicator.
struct Rank {
  std::shared_ptr<ExecutionStream> stream;
  std::unique_ptr<Allocator> alloc;
  std::unique_ptr<Communicator> comm;
};
using Ranks = std::vector<Rank>;
using MakeRanks = std::function<Status(int, Ranks &)>;

Status makeCudaLocalRanks(int w, const CommOptions &options, Ranks &ranks) {
  ranks.clear();
  std::vector<std::unique_ptr<Communicator>> comms;
  SHARDLIN_RETURN_IF_ERROR(createCudaLocalGroup(w, 0, options, comms));
  for (auto &c : comms) {
    Rank r;
    r.stream = cudaStreamOf(*c);
    if (!r.stream)
      return Status::error("cuda-local communicator without a stream");
    SHARDLIN_RETURN_IF_ERROR(createCudaAllocator(0, r.alloc));
    r.comm = std::move(c);
    ranks.push_back(std::move(r));
  }
  return Status::ok();
}

Status makeNcclRanks(int w, const CommOptions &options, Ranks &ranks) {
  ranks.clear();
  std::vector<std::shared_ptr<ExecutionStream>> streams(w);
  for (int r = 0; r < w; ++r)
    SHARDLIN_RETURN_IF_ERROR(ExecutionStream::create(r, streams[r]));
  std::vector<std::unique_ptr<Communicator>> comms;
  SHARDLIN_RETURN_IF_ERROR(createNcclThreadsGroup(streams, options, comms));
  for (int r = 0; r < w; ++r) {
    Rank rank;
    rank.stream = streams[r];
    SHARDLIN_RETURN_IF_ERROR(createCudaAllocator(r, rank.alloc));
    rank.comm = std::move(comms[r]);
    ranks.push_back(std::move(rank));
  }
  return Status::ok();
}

int deviceCount() {
  int n = 0;
  return cudaDeviceCount(n).isOk() ? n : 0;
}

/// A device copy of host bytes (no memory for no bytes).
Status toDevice(Rank &rank, const Bytes &host, Buffer &out) {
  SHARDLIN_RETURN_IF_ERROR(Buffer::allocate(*rank.alloc, host.size(), out));
  return copyToDevice(*rank.stream, out.data(), host.data(), host.size());
}

Status toHost(Rank &rank, const Buffer &dev, Bytes &host) {
  host.assign(dev.bytes(), 0);
  return copyToHost(*rank.stream, host.data(), dev.data(), dev.bytes());
}

class Failures {
public:
  void add(const std::string &what) {
    if (list.size() < 8)
      list.push_back(what);
    else if (list.size() == 8)
      list.push_back("(further failures omitted)");
  }
  std::vector<std::string> list;
};

std::vector<std::string>
onEveryRank(Ranks &ranks,
            const std::function<void(int, Rank &, Failures &)> &body) {
  const int w = int(ranks.size());
  std::vector<Failures> failures(w);
  std::vector<std::thread> threads;
  for (int r = 0; r < w; ++r)
    threads.emplace_back([&, r] { body(r, ranks[r], failures[r]); });
  for (auto &t : threads)
    t.join();
  std::vector<std::string> all;
  for (int r = 0; r < w; ++r)
    for (auto &f : failures[r].list)
      all.push_back("rank " + std::to_string(r) + ": " + f);
  return all;
}

std::string join(const std::vector<std::string> &lines) {
  std::string s;
  for (size_t i = 0; i < lines.size() && i < 20; ++i)
    s += lines[i] + "\n";
  return s;
}

std::string caseName(DType t, int w, size_t pattern) {
  return std::string(dtypeName(t)) + " W=" + std::to_string(w) + " pattern " +
         std::to_string(pattern);
}

uint64_t seedOf(DType t, int w, size_t pattern, int rank, uint64_t salt) {
  return (static_cast<uint64_t>(t) + 1) * 1000003ULL + w * 10007ULL +
         pattern * 101ULL + rank + salt * 7919ULL;
}

void checkCall(const Status &st, const CommStats &before,
               const CommStats &after, uint64_t bytes, const std::string &what,
               Failures &f) {
  if (!st.isOk()) {
    f.add(what + ": " + st.message());
    return;
  }
  if (after.calls != before.calls + 1)
    f.add(what + ": stats.calls went from " + std::to_string(before.calls) +
          " to " + std::to_string(after.calls));
  if (after.bytesSent - before.bytesSent != bytes)
    f.add(what + ": bytesSent grew by " +
          std::to_string(after.bytesSent - before.bytesSent) + ", expected " +
          std::to_string(bytes));
}

void checkPoisonOutside(const Bytes &buf, DType t,
                        const std::vector<int64_t> &counts,
                        const std::vector<int64_t> &displs,
                        const std::string &what, Failures &f) {
  const size_t es = dtypeSize(t);
  std::vector<char> written(buf.size() / es, 0);
  for (size_t i = 0; i < counts.size(); ++i)
    for (int64_t k = 0; k < counts[i]; ++k)
      written[displs[i] + k] = 1;
  for (size_t e = 0; e < written.size(); ++e)
    if (!written[e] && !isPoison(buf.data() + e * es, es)) {
      f.add(what + ": element " + std::to_string(e) +
            " outside every received block was overwritten");
      return;
    }
}

/// Only the bound of CollectivesTestSupport.h, for sums whose order the
/// backend does not fix (NCCL's own all-reduce).
std::string checkSumWithinBound(DType t,
                                const std::vector<const unsigned char *> &srcs,
                                const unsigned char *got, int64_t n) {
  const size_t es = dtypeSize(t);
  for (int64_t i = 0; i < n; ++i) {
    long double exact = 0, sumAbs = 0;
    for (const unsigned char *s : srcs) {
      long double v = decode(t, s + i * es);
      exact += v;
      sumAbs += v < 0 ? -v : v;
    }
    const double value = decode(t, got + i * es);
    const double tol =
        sumTolerance(t, int(srcs.size()), double(sumAbs), double(exact));
    if (!(std::fabs(static_cast<long double>(value) - exact) <= tol))
      return "element " + std::to_string(i) + " = " + std::to_string(value) +
             ", exact " + std::to_string(double(exact)) + ", bound " +
             std::to_string(tol);
  }
  return {};
}

//===----------------------------------------------------------------------===//
// The collective suites, shared by cuda-local and NCCL
//===----------------------------------------------------------------------===//

void runAllGatherV(const MakeRanks &make, const std::vector<int> &sizes) {
  for (int w : sizes) {
    Ranks ranks;
    Status made = make(w, ranks);
    ASSERT_TRUE(made.isOk()) << made.message();
    for (DType t : kAllDTypes) {
      const size_t es = dtypeSize(t);
      auto patterns = countPatterns(w, 11 * w);
      // Add the packed, equal-count case (NCCL's ncclAllGather path).
      patterns.push_back(std::vector<int64_t>(w, 5));
      std::vector<std::vector<Bytes>> sends(patterns.size());
      for (size_t p = 0; p < patterns.size(); ++p)
        for (int r = 0; r < w; ++r) {
          std::mt19937_64 rng(seedOf(t, w, p, r, 1));
          sends[p].emplace_back(patterns[p][r] * es);
          fillRandomAnyMagnitude(t, sends[p][r].data(), patterns[p][r], rng);
        }
      auto failures = onEveryRank(ranks, [&](int r, Rank &rank, Failures &f) {
        for (size_t p = 0; p < patterns.size(); ++p) {
          const std::string what = "allGatherV " + caseName(t, w, p);
          const auto &counts = patterns[p];
          Layout layout;
          if (p + 1 == patterns.size()) { // packed in rank order, no gaps
            for (int s = 0; s < w; ++s)
              layout.displs.push_back(int64_t(s) * counts[0]);
            layout.extent = int64_t(w) * counts[0];
          } else {
            std::mt19937_64 rng(seedOf(t, w, p, r, 2));
            layout = makeLayout(counts, rng);
          }
          Buffer send, recv;
          Status st = toDevice(rank, sends[p][r], send);
          if (st.isOk())
            st = toDevice(rank, Bytes(layout.extent * es, kPoisonByte), recv);
          if (!st.isOk())
            return f.add(what + ": " + st.message());
          CommStats before = rank.comm->stats();
          st = rank.comm->allGatherV(send.data(), counts[r], recv.data(),
                                     counts, layout.displs, t);
          checkCall(st, before, rank.comm->stats(), counts[r] * (w - 1) * es,
                    what, f);
          Bytes got;
          st = toHost(rank, recv, got);
          if (!st.isOk())
            return f.add(what + ": " + st.message());
          for (int s = 0; s < w; ++s)
            if (!sameBytes(got.data() + layout.displs[s] * es,
                           sends[p][s].data(), counts[s] * es))
              f.add(what + ": block from rank " + std::to_string(s) +
                    " differs from what it sent");
          checkPoisonOutside(got, t, counts, layout.displs, what, f);
        }
      });
      EXPECT_TRUE(failures.empty()) << join(failures);
    }
  }
}

void runAllGatherVInPlace(const MakeRanks &make, int w) {
  // Each rank's send block is its own block of recv, packed in rank order
  // (NCCL's in-place ncclAllGather) and with gaps (the p2p path).
  for (bool packed : {true, false}) {
    std::vector<int64_t> counts(w), displs(w);
    int64_t at = 0;
    for (int r = 0; r < w; ++r) {
      counts[r] = packed ? 3 : (r % 3);
      at += packed ? 0 : 1;
      displs[r] = at;
      at += counts[r];
    }
    Ranks ranks;
    Status made = make(w, ranks);
    ASSERT_TRUE(made.isOk()) << made.message();
    auto failures = onEveryRank(ranks, [&](int r, Rank &rank, Failures &f) {
      std::vector<float> host(at, -1.0f);
      for (int64_t k = 0; k < counts[r]; ++k)
        host[displs[r] + k] = 10.0f * r + k + 1;
      Bytes bytes(host.size() * 4);
      copyBytes(bytes.data(), host.data(), bytes.size());
      Buffer recv;
      Status st = toDevice(rank, bytes, recv);
      if (st.isOk())
        st = rank.comm->allGatherV(cuda::offsetBytes(recv.data(), displs[r], 4),
                                   counts[r], recv.data(), counts, displs,
                                   DType::F32);
      if (st.isOk())
        st = toHost(rank, recv, bytes);
      if (!st.isOk())
        return f.add(st.message());
      copyBytes(host.data(), bytes.data(), bytes.size());
      for (int s = 0; s < w; ++s)
        for (int64_t k = 0; k < counts[s]; ++k)
          if (host[displs[s] + k] != 10.0f * s + k + 1)
            f.add(std::string(packed ? "packed" : "gaps") + ": element " +
                  std::to_string(displs[s] + k) + " is wrong");
    });
    EXPECT_TRUE(failures.empty()) << join(failures);
  }
}

void runAllToAllV(const MakeRanks &make, const std::vector<int> &sizes) {
  for (int w : sizes) {
    Ranks ranks;
    Status made = make(w, ranks);
    ASSERT_TRUE(made.isOk()) << made.message();
    for (DType t : kAllDTypes) {
      const size_t es = dtypeSize(t);
      auto patterns = matrixPatterns(w, 13 * w);
      std::vector<std::vector<Layout>> sendLayouts(patterns.size());
      std::vector<std::vector<Bytes>> sends(patterns.size());
      for (size_t p = 0; p < patterns.size(); ++p)
        for (int s = 0; s < w; ++s) {
          std::mt19937_64 rng(seedOf(t, w, p, s, 3));
          Layout layout = makeLayout(patterns[p][s], rng);
          Bytes data(layout.extent * es, kPoisonByte);
          for (int d = 0; d < w; ++d)
            fillRandomAnyMagnitude(t, data.data() + layout.displs[d] * es,
                                   patterns[p][s][d], rng);
          sendLayouts[p].push_back(layout);
          sends[p].push_back(std::move(data));
        }
      auto failures = onEveryRank(ranks, [&](int r, Rank &rank, Failures &f) {
        for (size_t p = 0; p < patterns.size(); ++p) {
          const std::string what = "allToAllV " + caseName(t, w, p);
          const auto &m = patterns[p];
          std::vector<int64_t> recvCounts(w);
          uint64_t bytes = 0;
          for (int s = 0; s < w; ++s) {
            recvCounts[s] = m[s][r];
            if (s != r)
              bytes += m[r][s] * es;
          }
          std::mt19937_64 rng(seedOf(t, w, p, r, 4));
          Layout recvLayout = makeLayout(recvCounts, rng);
          Buffer send, recv;
          Status st = toDevice(rank, sends[p][r], send);
          if (st.isOk())
            st = toDevice(rank, Bytes(recvLayout.extent * es, kPoisonByte),
                          recv);
          if (!st.isOk())
            return f.add(what + ": " + st.message());
          CommStats before = rank.comm->stats();
          st = rank.comm->allToAllV(send.data(), m[r], sendLayouts[p][r].displs,
                                    recv.data(), recvCounts, recvLayout.displs,
                                    t);
          checkCall(st, before, rank.comm->stats(), bytes, what, f);
          Bytes got;
          st = toHost(rank, recv, got);
          if (!st.isOk())
            return f.add(what + ": " + st.message());
          for (int s = 0; s < w; ++s)
            if (!sameBytes(got.data() + recvLayout.displs[s] * es,
                           sends[p][s].data() +
                               sendLayouts[p][s].displs[r] * es,
                           recvCounts[s] * es))
              f.add(what + ": block from rank " + std::to_string(s) +
                    " differs from what it sent");
          checkPoisonOutside(got, t, recvCounts, recvLayout.displs, what, f);
        }
      });
      EXPECT_TRUE(failures.empty()) << join(failures);
    }
  }
}

/// Both backends sum reduce-scatter segments in rank order (f16/bf16 in
/// f32, rounded once), so the result is checked bit for bit as well.
void runReduceScatterV(const MakeRanks &make, const std::vector<int> &sizes) {
  for (int w : sizes) {
    Ranks ranks;
    Status made = make(w, ranks);
    ASSERT_TRUE(made.isOk()) << made.message();
    for (DType t : kAllDTypes) {
      const size_t es = dtypeSize(t);
      auto patterns = countPatterns(w, 17 * w);
      std::vector<std::vector<Layout>> layouts(patterns.size());
      std::vector<std::vector<Bytes>> sends(patterns.size());
      for (size_t p = 0; p < patterns.size(); ++p)
        for (int s = 0; s < w; ++s) {
          std::mt19937_64 rng(seedOf(t, w, p, s, 5));
          Layout layout = makeLayout(patterns[p], rng);
          Bytes data(layout.extent * es, kPoisonByte);
          for (int d = 0; d < w; ++d)
            fillRandomForSums(t, data.data() + layout.displs[d] * es,
                              patterns[p][d], rng);
          layouts[p].push_back(layout);
          sends[p].push_back(std::move(data));
        }
      auto failures = onEveryRank(ranks, [&](int r, Rank &rank, Failures &f) {
        for (size_t p = 0; p < patterns.size(); ++p) {
          const std::string what = "reduceScatterV " + caseName(t, w, p);
          const auto &counts = patterns[p];
          uint64_t bytes = 0;
          for (int d = 0; d < w; ++d)
            if (d != r)
              bytes += counts[d] * es;
          Buffer send, recv;
          Status st = toDevice(rank, sends[p][r], send);
          if (st.isOk())
            st = toDevice(rank, Bytes((counts[r] + 2) * es, kPoisonByte), recv);
          if (!st.isOk())
            return f.add(what + ": " + st.message());
          CommStats before = rank.comm->stats();
          st = rank.comm->reduceScatterV(send.data(), counts,
                                         layouts[p][r].displs, recv.data(), t);
          checkCall(st, before, rank.comm->stats(), bytes, what, f);
          Bytes got;
          st = toHost(rank, recv, got);
          if (!st.isOk())
            return f.add(what + ": " + st.message());
          std::vector<const unsigned char *> srcs;
          for (int s = 0; s < w; ++s)
            srcs.push_back(sends[p][s].data() + layouts[p][s].displs[r] * es);
          std::string problem = checkSum(t, srcs, got.data(), counts[r]);
          if (!problem.empty())
            f.add(what + ": " + problem);
          checkPoisonOutside(got, t, {counts[r]}, {0}, what, f);
        }
      });
      EXPECT_TRUE(failures.empty()) << join(failures);
    }
  }
}

/// `rankOrder(t)`: whether the backend sums in rank order for t (then the
/// bits are checked too); otherwise the bound is checked and all ranks must
/// still agree bit for bit.
void runAllReduce(const MakeRanks &make, const std::vector<int> &sizes,
                  const std::function<bool(DType)> &rankOrder) {
  const std::vector<int64_t> counts = {0, 1, 5, 37, 1031, 70001};
  for (int w : sizes) {
    Ranks ranks;
    Status made = make(w, ranks);
    ASSERT_TRUE(made.isOk()) << made.message();
    for (DType t : kAllDTypes) {
      const size_t es = dtypeSize(t);
      std::vector<std::vector<Bytes>> sends(counts.size());
      for (size_t p = 0; p < counts.size(); ++p)
        for (int s = 0; s < w; ++s) {
          std::mt19937_64 rng(seedOf(t, w, p, s, 6));
          sends[p].emplace_back(counts[p] * es);
          fillRandomForSums(t, sends[p][s].data(), counts[p], rng);
        }
      std::vector<std::vector<Bytes>> results(
          w, std::vector<Bytes>(counts.size()));
      auto failures = onEveryRank(ranks, [&](int r, Rank &rank, Failures &f) {
        for (size_t p = 0; p < counts.size(); ++p)
          for (bool inPlace : {false, true}) {
            const int64_t n = counts[p];
            const std::string what =
                "allReduce " + caseName(t, w, p) + (inPlace ? " in place" : "");
            Bytes initial((n + 2) * es, kPoisonByte);
            if (inPlace)
              copyBytes(initial.data(), sends[p][r].data(), n * es);
            Buffer send, recv;
            Status st = toDevice(rank, initial, recv);
            if (st.isOk() && !inPlace)
              st = toDevice(rank, sends[p][r], send);
            if (!st.isOk())
              return f.add(what + ": " + st.message());
            CommStats before = rank.comm->stats();
            st = rank.comm->allReduce(inPlace ? recv.data() : send.data(),
                                      recv.data(), n, t);
            checkCall(st, before, rank.comm->stats(), 2 * n * (w - 1) / w * es,
                      what, f);
            Bytes got;
            st = toHost(rank, recv, got);
            if (!st.isOk())
              return f.add(what + ": " + st.message());
            std::vector<const unsigned char *> srcs;
            for (int s = 0; s < w; ++s)
              srcs.push_back(sends[p][s].data());
            std::string problem =
                rankOrder(t) ? checkSum(t, srcs, got.data(), n)
                             : checkSumWithinBound(t, srcs, got.data(), n);
            if (!problem.empty())
              f.add(what + ": " + problem);
            checkPoisonOutside(got, t, {n}, {0}, what, f);
            if (inPlace)
              results[r][p] = got;
          }
      });
      EXPECT_TRUE(failures.empty()) << join(failures);
      for (size_t p = 0; p < counts.size(); ++p)
        for (int r = 1; r < w; ++r)
          EXPECT_EQ(results[r][p], results[0][p])
              << "allReduce " << caseName(t, w, p) << ": rank " << r
              << " got other bits than rank 0";
    }
  }
}

void runBroadcast(const MakeRanks &make, const std::vector<int> &sizes) {
  for (int w : sizes) {
    Ranks ranks;
    Status made = make(w, ranks);
    ASSERT_TRUE(made.isOk()) << made.message();
    for (DType t : kAllDTypes) {
      const size_t es = dtypeSize(t);
      for (int root = 0; root < w; ++root)
        for (int64_t n : {int64_t(0), int64_t(1), int64_t(301)}) {
          Bytes payload(n * es);
          std::mt19937_64 rng(seedOf(t, w, size_t(n), root, 7));
          fillRandomAnyMagnitude(t, payload.data(), n, rng);
          auto failures =
              onEveryRank(ranks, [&](int r, Rank &rank, Failures &f) {
                const std::string what = "broadcast " + caseName(t, w, 0) +
                                         " root " + std::to_string(root) +
                                         " n " + std::to_string(n);
                Bytes initial((n + 2) * es, kPoisonByte);
                if (r == root)
                  copyBytes(initial.data(), payload.data(), n * es);
                Buffer buf;
                Status st = toDevice(rank, initial, buf);
                if (!st.isOk())
                  return f.add(what + ": " + st.message());
                CommStats before = rank.comm->stats();
                st = rank.comm->broadcast(buf.data(), n, t, root);
                checkCall(st, before, rank.comm->stats(),
                          r == root ? n * (w - 1) * es : 0, what, f);
                Bytes got;
                st = toHost(rank, buf, got);
                if (!st.isOk())
                  return f.add(what + ": " + st.message());
                if (!sameBytes(got.data(), payload.data(), n * es))
                  f.add(what + ": payload differs from the root's");
                checkPoisonOutside(got, t, {n}, {0}, what, f);
              });
          EXPECT_TRUE(failures.empty()) << join(failures);
        }
    }
  }
}

void runBarrier(const MakeRanks &make, int w) {
  Ranks ranks;
  Status made = make(w, ranks);
  ASSERT_TRUE(made.isOk()) << made.message();
  auto failures = onEveryRank(ranks, [&](int, Rank &rank, Failures &f) {
    for (int i = 0; i < 3; ++i) {
      CommStats before = rank.comm->stats();
      Status st = rank.comm->barrier();
      checkCall(st, before, rank.comm->stats(), 0, "barrier", f);
    }
  });
  EXPECT_TRUE(failures.empty()) << join(failures);
}

std::vector<int> upTo(int w) {
  std::vector<int> sizes;
  for (int i = 1; i <= w; ++i)
    sizes.push_back(i);
  return sizes;
}

} // namespace

//===----------------------------------------------------------------------===//
// GPU: streams, memory
//===----------------------------------------------------------------------===//

TEST(GpuMemory, StreamAllocatorAndCopies) {
  REQUIRE_CUDA_DEVICE();
  std::shared_ptr<ExecutionStream> stream;
  Status st = ExecutionStream::create(0, stream);
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(stream->device(), 0);
  EXPECT_NE(stream->nativeHandle(), nullptr);

  std::unique_ptr<Allocator> alloc;
  st = createCudaAllocator(0, alloc);
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(alloc->device(), (Device{DeviceKind::Cuda, 0}));

  Buffer buf;
  st = Buffer::allocate(*alloc, 1000, buf);
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(deviceName(buf.device()), "cuda:0");
  std::vector<unsigned char> in(1000), out(1000, 0);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = static_cast<unsigned char>(i * 7 + 3);
  ASSERT_TRUE(copyToDevice(*stream, buf.data(), in.data(), 1000).isOk());
  ASSERT_TRUE(copyToHost(*stream, out.data(), buf.data(), 1000).isOk());
  EXPECT_EQ(in, out);
  EXPECT_TRUE(stream->synchronize().isOk());

  // No device has 2^62 bytes: the failure names the call and the size.
  void *p = reinterpret_cast<void *>(uintptr_t(1));
  st = alloc->allocate(size_t(1) << 62, &p);
  ASSERT_FALSE(st.isOk());
  EXPECT_TRUE(contains(st.message(), "cudaMalloc")) << st.message();
  EXPECT_TRUE(contains(st.message(), "4611686018427387904 bytes"))
      << st.message();
  EXPECT_EQ(p, nullptr);

  const int n = deviceCount();
  std::shared_ptr<ExecutionStream> none;
  st = ExecutionStream::create(n, none);
  ASSERT_FALSE(st.isOk());
  EXPECT_TRUE(contains(st.message(), "does not exist")) << st.message();
}

//===----------------------------------------------------------------------===//
// GPU: local ops (copyRows, biasAdd), checked against the host's LocalOps
//===----------------------------------------------------------------------===//

namespace {

/// A stream, device memory and the CUDA local ops on cuda:0.
class CudaLocalOpsTest : public ::testing::Test {
protected:
  void SetUp() override {
    REQUIRE_CUDA_DEVICE();
    Status st = ExecutionStream::create(0, stream_);
    ASSERT_TRUE(st.isOk()) << st.message();
    st = createCudaAllocator(0, alloc_);
    ASSERT_TRUE(st.isOk()) << st.message();
    st = createCudaLocalOps(stream_, ops_);
    ASSERT_TRUE(st.isOk()) << st.message();
  }

  Status upload(const Bytes &host, Buffer &out) {
    SHARDLIN_RETURN_IF_ERROR(Buffer::allocate(*alloc_, host.size(), out));
    return copyToDevice(*stream_, out.data(), host.data(), host.size());
  }
  Status download(const Buffer &dev, Bytes &host) {
    host.assign(dev.bytes(), 0);
    return copyToHost(*stream_, host.data(), dev.data(), dev.bytes());
  }

  std::shared_ptr<ExecutionStream> stream_;
  std::unique_ptr<Allocator> alloc_;
  std::unique_ptr<LocalOps> ops_;
};

Bytes randomBytes(std::mt19937_64 &rng, size_t n) {
  Bytes b(n);
  for (auto &c : b)
    c = static_cast<unsigned char>(rng());
  return b;
}

} // namespace

TEST_F(CudaLocalOpsTest, Device) {
  EXPECT_EQ(ops_->device(), (Device{DeviceKind::Cuda, 0}));
}

// Every layout a plan makes (packing and unpacking strided pieces, a
// contiguous block, one row) and the edge cases: the device copy must equal
// the host's on the whole destination, untouched bytes included.
TEST_F(CudaLocalOpsTest, CopyRowsMatchesHost) {
  struct Case {
    int64_t rows;
    size_t rowBytes, srcStride, dstStride;
  };
  const Case cases[] = {
      {5, 20, 76, 20},   // pack: 5 rows of a 19-wide f32 matrix, 5 columns
      {5, 20, 20, 76},   // unpack
      {7, 12, 40, 28},   // strided on both sides
      {20, 44, 44, 44},  // contiguous rows: one linear copy
      {1, 300, 0, 0},    // one row: the strides do not matter
      {0, 16, 16, 16},   // nothing to copy
      {3, 0, 8, 8},      // empty rows
      {1031, 6, 10, 14}, // many short rows
      {3, 4096, 8192, 4096},
  };
  auto hostOps = createHostLocalOps();
  std::mt19937_64 rng(11);
  for (const Case &c : cases) {
    SCOPED_TRACE("rows=" + std::to_string(c.rows) +
                 " rowBytes=" + std::to_string(c.rowBytes) + " strides " +
                 std::to_string(c.srcStride) + " -> " +
                 std::to_string(c.dstStride));
    const size_t srcBytes =
        c.rows == 0 ? 1 : size_t(c.rows - 1) * c.srcStride + c.rowBytes + 8;
    const size_t dstBytes =
        c.rows == 0 ? 1 : size_t(c.rows - 1) * c.dstStride + c.rowBytes + 8;
    Bytes src = randomBytes(rng, srcBytes);
    Bytes want(dstBytes, kPoisonByte);
    ASSERT_TRUE(hostOps
                    ->copyRows(src.data(), c.srcStride, want.data(),
                               c.dstStride, c.rows, c.rowBytes)
                    .isOk());
    Buffer dsrc, ddst;
    ASSERT_TRUE(upload(src, dsrc).isOk());
    ASSERT_TRUE(upload(Bytes(dstBytes, kPoisonByte), ddst).isOk());
    Status st = ops_->copyRows(dsrc.data(), c.srcStride, ddst.data(),
                               c.dstStride, c.rows, c.rowBytes);
    ASSERT_TRUE(st.isOk()) << st.message();
    Bytes got;
    ASSERT_TRUE(download(ddst, got).isOk());
    EXPECT_EQ(got, want);
  }
}

// biasAdd rounds like the host (f16/bf16 in f32, once), so the results are
// the same bits; in place and out of place, rows of any length.
TEST_F(CudaLocalOpsTest, BiasAddMatchesHostBitForBit) {
  auto hostOps = createHostLocalOps();
  const std::pair<int64_t, int64_t> shapes[] = {
      {1, 1}, {7, 13}, {5, 11}, {300, 1031}, {70000, 3}, {2, 70001}};
  for (DType t : kAllDTypes)
    for (auto [rows, cols] : shapes)
      for (bool inPlace : {false, true}) {
        SCOPED_TRACE(std::string(dtypeName(t)) + " " + std::to_string(rows) +
                     " x " + std::to_string(cols) +
                     (inPlace ? " in place" : ""));
        const size_t es = dtypeSize(t);
        std::mt19937_64 rng(rows * 31 + cols);
        Bytes x(size_t(rows * cols) * es), bias(size_t(cols) * es);
        fillRandomForSums(t, x.data(), rows * cols, rng);
        fillRandomForSums(t, bias.data(), cols, rng);
        Bytes want(x.size(), kPoisonByte);
        ASSERT_TRUE(
            hostOps->biasAdd(x.data(), bias.data(), want.data(), rows, cols, t)
                .isOk());
        Buffer dx, dbias, dy;
        ASSERT_TRUE(upload(x, dx).isOk());
        ASSERT_TRUE(upload(bias, dbias).isOk());
        // Two poisoned elements past the end show a write beyond it.
        ASSERT_TRUE(upload(Bytes(x.size() + 2 * es, kPoisonByte), dy).isOk());
        void *y = inPlace ? dx.data() : dy.data();
        Status st = ops_->biasAdd(dx.data(), dbias.data(), y, rows, cols, t);
        ASSERT_TRUE(st.isOk()) << st.message();
        Bytes got;
        ASSERT_TRUE(download(inPlace ? dx : dy, got).isOk());
        ASSERT_GE(got.size(), want.size());
        EXPECT_TRUE(sameBytes(got.data(), want.data(), want.size()));
        if (!inPlace) {
          EXPECT_TRUE(isPoison(got.data() + want.size(), 2 * es));
        }
        if (HasFailure())
          return;
      }
}

// Both ops only enqueue: a copy of a bias add's output, then a bias add on
// the copy, with no synchronization in between, see each other's results.
TEST_F(CudaLocalOpsTest, OrderedOnTheStreamWithoutWaiting) {
  const int64_t rows = 512, cols = 4096;
  std::vector<float> x(size_t(rows * cols), 1.0f), bias(size_t(cols), 2.0f);
  Bytes xb(x.size() * 4), bb(bias.size() * 4);
  copyBytes(xb.data(), x.data(), xb.size());
  copyBytes(bb.data(), bias.data(), bb.size());
  Buffer dx, dbias, dy;
  ASSERT_TRUE(upload(xb, dx).isOk());
  ASSERT_TRUE(upload(bb, dbias).isOk());
  ASSERT_TRUE(upload(Bytes(xb.size(), 0), dy).isOk());
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(ops_->biasAdd(dx.data(), dbias.data(), dx.data(), rows, cols,
                              DType::F32)
                    .isOk());
    ASSERT_TRUE(ops_->copyRows(dx.data(), size_t(cols) * 4, dy.data(),
                               size_t(cols) * 4, rows, size_t(cols) * 4)
                    .isOk());
    ASSERT_TRUE(ops_->copyRows(dy.data(), size_t(cols) * 4, dx.data(),
                               size_t(cols) * 4, rows, size_t(cols) * 4)
                    .isOk());
  }
  Bytes got;
  ASSERT_TRUE(download(dx, got).isOk());
  std::vector<float> y(x.size());
  copyBytes(y.data(), got.data(), got.size());
  for (size_t i = 0; i < y.size(); ++i)
    if (y[i] != 9.0f) {
      ADD_FAILURE() << "element " << i << " = " << y[i] << ", expected 9";
      break;
    }
}

TEST_F(CudaLocalOpsTest, RejectsBadArguments) {
  Buffer d;
  ASSERT_TRUE(upload(Bytes(64, 0), d).isOk());
  auto expectError = [](const Status &st, const std::string &needle) {
    ASSERT_FALSE(st.isOk()) << "expected an error mentioning " << needle;
    EXPECT_TRUE(contains(st.message(), needle)) << st.message();
  };
  char *p = static_cast<char *>(d.data());
  expectError(ops_->copyRows(p, 8, p + 32, 8, -1, 8), "negative row count");
  expectError(ops_->copyRows(nullptr, 8, p, 8, 2, 8), "src is null");
  expectError(ops_->copyRows(p, 4, p + 32, 8, 2, 8),
              "a stride is smaller than the row length");
  expectError(ops_->biasAdd(p, p, p, -1, 2, DType::F32), "negative size");
  expectError(ops_->biasAdd(p, p, p, 1, 2, static_cast<DType>(9)),
              "invalid dtype");
  expectError(ops_->biasAdd(p + 2, p, p + 2, 1, 2, DType::F32),
              "x is not aligned");
  expectError(ops_->biasAdd(p, p, nullptr, 1, 2, DType::F32), "y is null");
  bool pageable = false;
  ASSERT_TRUE(cuda::pageableMemoryAccess(0, pageable).isOk());
  std::vector<float> host(2, 0.0f);
  if (!pageable)
    expectError(ops_->biasAdd(p, host.data(), p, 1, 2, DType::F32),
                "bias is host memory");
  // Still usable, and nothing needs waiting for afterwards.
  EXPECT_TRUE(ops_->biasAdd(p, p + 16, p + 32, 2, 2, DType::F32).isOk());
  EXPECT_TRUE(stream_->synchronize().isOk());
}

//===----------------------------------------------------------------------===//
// GPU: plans on device memory (runtime only, no compiler: the programs are
// the text form `shardlin-run --emit-program --strategy=activations` wrote
// for test/shardlin-run/Inputs/{row,col}-uneven-bias.mlir)
//===----------------------------------------------------------------------===//

namespace {

/// Row-wise, W = 4, weight 11 x 19 split along K, placements [2, 3, 0, 1]:
/// a staged all_to_all (packing strided pieces), the GEMM, a reduce_scatter
/// and an in-place bias_add. @T@ is the element type.
const char *const kRowProgram = R"(shardlin-program v1
name main
world_size 4
values 8
value 0 @T@ 2 5 19
value 1 @T@ 2 11 ?
value 2 @T@ 1 11
value 3 @T@ 2 11 ?
value 4 @T@ 2 20 ?
value 5 @T@ 2 20 11
value 6 @T@ 2 5 11
value 7 @T@ 2 5 11
arg 0 plain
arg 1 sharded 2 11 19 spec 1 4 2 3 0 1
arg 2 plain
instr local_shard result 3 operands 1 1
instr all_to_all result 4 operands 1 0 chunk 1 4 2 3 0 1 concat 0 4 0 1 2 3
instr gemm result 5 operands 2 4 3 trans 0 1
instr reduce_scatter result 6 operands 1 5 chunk 0 4 0 1 2 3
instr bias_add result 7 operands 2 6 2
results 1 7
end
)";

/// Col-wise, W = 4, weight split along N, placements [3, 0, 2, 1]: an
/// all_gather, a local_chunk of the bias, the GEMM with the bias fused and an
/// all_to_all whose received pieces are unpacked (strided).
const char *const kColProgram = R"(shardlin-program v1
name main
world_size 4
values 8
value 0 @T@ 2 5 19
value 1 @T@ 2 ? 19
value 2 @T@ 1 11
value 3 @T@ 2 ? 19
value 4 @T@ 2 20 19
value 5 @T@ 1 ?
value 6 @T@ 2 20 ?
value 7 @T@ 2 5 11
arg 0 plain
arg 1 sharded 2 11 19 spec 0 4 3 0 2 1
arg 2 plain
instr local_shard result 3 operands 1 1
instr all_gather result 4 operands 1 0 chunk 0 4 0 1 2 3
instr local_chunk result 5 operands 1 2 chunk 0 4 3 0 2 1
instr gemm result 6 operands 3 4 3 5 trans 0 1
instr all_to_all result 7 operands 1 6 chunk 0 4 0 1 2 3 concat 1 4 3 0 2 1
results 1 7
end
)";

std::string programText(const char *text, DType t) {
  std::string s = text;
  for (size_t at = s.find("@T@"); at != std::string::npos;
       at = s.find("@T@", at))
    s.replace(at, 3, dtypeName(t));
  return s;
}

/// Values in +-[0.25, 1], rounded to t: `bytes` and the exact `values`.
void randomOperand(DType t, size_t n, std::mt19937_64 &rng, Bytes &bytes,
                   std::vector<double> &values) {
  std::uniform_real_distribution<double> mag(0.25, 1.0);
  values.resize(n);
  for (double &v : values)
    v = (rng() & 1 ? -1 : 1) * mag(rng);
  bytes.assign(n * dtypeSize(t), 0);
  convertFromF64(t, values.data(), bytes.data(), n);
  convertToF64(t, bytes.data(), values.data(), n);
}

/// The end-to-end suite's bound (unittests/EndToEnd/E2ESupport.cpp).
double planBound(DType t, int w) {
  switch (t) {
  case DType::F64:
    return 1e-12;
  case DType::F32:
    return 1e-5;
  case DType::F16:
    return (w + 2) * std::ldexp(1.0, -11);
  case DType::BF16:
    return (w + 2) * std::ldexp(1.0, -8);
  }
  return 0;
}

} // namespace

// The Plan does nothing on the host with device memory: built on the CUDA
// allocator and run with cuBLAS, the CUDA local ops and cuda-local on device
// pointers, every rank's output matches the float64 reference. Replayed
// with new inputs (compile once, run many).
TEST(GpuPlan, RowAndColProgramsOnCudaLocal) {
  REQUIRE_CUDA_DEVICE();
  const int w = 4;
  const int64_t rows = 5, n = 11, k = 19;
  for (const char *text : {kRowProgram, kColProgram})
    for (DType t : kAllDTypes) {
      const bool row = text == kRowProgram;
      SCOPED_TRACE(std::string(row ? "row" : "col") + " " + dtypeName(t));
      Program program;
      Status st = parseProgram(programText(text, t), program);
      ASSERT_TRUE(st.isOk()) << st.message();
      Ranks ranks;
      st = makeCudaLocalRanks(
          w,
          [] {
            CommOptions o;
            o.timeoutSeconds = 60;
            return o;
          }(),
          ranks);
      ASSERT_TRUE(st.isOk()) << st.message();
      const size_t es = dtypeSize(t);
      auto failures = onEveryRank(ranks, [&](int r, Rank &rank, Failures &f) {
        std::unique_ptr<Plan> plan;
        std::unique_ptr<GemmBackend> gemm;
        std::unique_ptr<LocalOps> ops;
        Status s = Plan::build(program, r, w, *rank.alloc, plan);
        if (s.isOk())
          s = createCublasGemm(rank.stream, GemmOptions(), gemm);
        if (s.isOk())
          s = createCudaLocalOps(rank.stream, ops);
        if (!s.isOk())
          return f.add(s.message());
        for (uint64_t replay = 0; replay < 2; ++replay) {
          // The same weight and bias on every rank (seeded by replay only),
          // a distinct x per rank.
          std::mt19937_64 shared(1000 + replay), own(2000 + 10 * replay + r);
          Bytes wb, bb, xb, chunk;
          std::vector<double> wv, bv, xv;
          randomOperand(t, size_t(n * k), shared, wb, wv);
          randomOperand(t, size_t(n), shared, bb, bv);
          randomOperand(t, size_t(rows * k), own, xb, xv);
          std::vector<uint8_t> chunkBytes;
          extractLocalChunk(wb.data(), {n, k}, t, program.args[1].sharding, r,
                            chunkBytes);
          chunk.assign(chunkBytes.begin(), chunkBytes.end());
          Buffer dx, dw, db, dy;
          s = toDevice(rank, xb, dx);
          if (s.isOk())
            s = toDevice(rank, chunk, dw);
          if (s.isOk())
            s = toDevice(rank, bb, db);
          if (s.isOk())
            s = toDevice(rank, Bytes(size_t(rows * n) * es, kPoisonByte), dy);
          if (s.isOk())
            s = plan->run(*rank.comm, *gemm, *ops,
                          {dx.data(), dw.data(), db.data()}, {dy.data()});
          Bytes got;
          if (s.isOk())
            s = toHost(rank, dy, got);
          if (!s.isOk())
            return f.add("replay " + std::to_string(replay) + ": " +
                         s.message());
          std::vector<double> y(size_t(rows * n));
          convertToF64(t, got.data(), y.data(), y.size());
          const double bound = planBound(t, w);
          for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < n; ++j) {
              double ref = bv[j], scale = std::fabs(bv[j]);
              for (int64_t p = 0; p < k; ++p) {
                ref += xv[i * k + p] * wv[j * k + p];
                scale += std::fabs(xv[i * k + p] * wv[j * k + p]);
              }
              const double err = std::fabs(y[i * n + j] - ref) / scale;
              if (!(err <= bound)) {
                f.add("replay " + std::to_string(replay) + ": y[" +
                      std::to_string(i) + "][" + std::to_string(j) +
                      "] = " + std::to_string(y[i * n + j]) + ", reference " +
                      std::to_string(ref));
                return;
              }
            }
        }
      });
      EXPECT_TRUE(failures.empty()) << join(failures);
    }
}

// A plan on device memory refuses host local ops (and the reverse): one
// device for the communicator, the GEMM and the local ops.
TEST(GpuPlan, MixedDevicesAreRefused) {
  REQUIRE_CUDA_DEVICE();
  Program program;
  ASSERT_TRUE(
      parseProgram(programText(kRowProgram, DType::F32), program).isOk());
  Ranks ranks;
  ASSERT_TRUE(makeCudaLocalRanks(4, CommOptions(), ranks).isOk());
  std::unique_ptr<Plan> plan;
  ASSERT_TRUE(Plan::build(program, 0, 4, *ranks[0].alloc, plan).isOk());
  std::unique_ptr<GemmBackend> gemm;
  ASSERT_TRUE(createCublasGemm(ranks[0].stream, GemmOptions(), gemm).isOk());
  Status st =
      plan->run(*ranks[0].comm, *gemm, {nullptr, nullptr, nullptr}, {nullptr});
  EXPECT_TRUE(contains(st.message(), "must be on one device")) << st.message();
  EXPECT_TRUE(contains(st.message(), "local ops (host)")) << st.message();
}

//===----------------------------------------------------------------------===//
// GPU: cuBLAS GEMM (bounds: GemmTest.cpp)
//===----------------------------------------------------------------------===//

namespace {

struct Matrix {
  int64_t rows = 0, cols = 0, ld = 0;
  DType dtype = DType::F32;
  Bytes bytes;
  std::vector<double> values;
  double at(int64_t i, int64_t j) const { return values[size_t(i * cols + j)]; }
};

Matrix randomMatrix(std::mt19937 &rng, DType t, int64_t rows, int64_t cols,
                    int64_t ld) {
  Matrix m;
  m.rows = rows;
  m.cols = cols;
  m.ld = ld;
  m.dtype = t;
  const size_t es = dtypeSize(t);
  m.bytes.assign(size_t(rows * ld) * es, 0xFF); // padding = NaN
  m.values.resize(size_t(rows * cols));
  std::uniform_real_distribution<double> mag(0.25, 1.0);
  std::bernoulli_distribution neg(0.5);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      double v = neg(rng) ? -mag(rng) : mag(rng);
      unsigned char *dst = m.bytes.data() + size_t(i * ld + j) * es;
      convertFromF64(t, &v, dst, 1);
      convertToF64(t, dst, &m.values[size_t(i * cols + j)], 1);
    }
  return m;
}

struct Shape {
  int64_t m, n, k;
};

struct GemmCase {
  bool transA = false, transB = false, bias = false;
  int64_t padA = 0, padB = 0, padC = 0;
};

std::string describe(DType t, Shape s, const GemmCase &o) {
  return std::string(dtypeName(t)) + " m=" + std::to_string(s.m) +
         " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k) +
         (o.transA ? " transA" : "") + (o.transB ? " transB" : "") +
         (o.bias ? " bias" : "") + " pads=" + std::to_string(o.padA) + "," +
         std::to_string(o.padB) + "," + std::to_string(o.padC);
}

/// A device, a stream and a cuBLAS backend for the GEMM tests.
class CublasGemm : public ::testing::Test {
protected:
  void SetUp() override {
    REQUIRE_CUDA_DEVICE();
    Status st = ExecutionStream::create(0, stream_);
    ASSERT_TRUE(st.isOk()) << st.message();
    st = createCudaAllocator(0, alloc_);
    ASSERT_TRUE(st.isOk()) << st.message();
  }

  std::unique_ptr<GemmBackend> makeGemm(const GemmOptions &options) {
    std::unique_ptr<GemmBackend> gemm;
    Status st = createCublasGemm(stream_, options, gemm);
    EXPECT_TRUE(st.isOk()) << st.message();
    return gemm;
  }

  Status upload(const Bytes &host, Buffer &out) {
    SHARDLIN_RETURN_IF_ERROR(Buffer::allocate(*alloc_, host.size(), out));
    return copyToDevice(*stream_, out.data(), host.data(), host.size());
  }

  /// Runs one GEMM and checks every element of C against the f64
  /// reference, and that C's padding was not written. `relBound`
  /// overrides the f32 bound (TF32).
  void check(GemmBackend &gemm, std::mt19937 &rng, DType t, Shape s,
             const GemmCase &o, double f32Bound = 1e-5) {
    SCOPED_TRACE(describe(t, s, o));
    const int64_t aRows = o.transA ? s.k : s.m, aCols = o.transA ? s.m : s.k;
    const int64_t bRows = o.transB ? s.n : s.k, bCols = o.transB ? s.k : s.n;
    Matrix a = randomMatrix(rng, t, aRows, aCols, aCols + o.padA);
    Matrix b = randomMatrix(rng, t, bRows, bCols, bCols + o.padB);
    Matrix bias = randomMatrix(rng, t, 1, s.n, s.n);
    const size_t es = dtypeSize(t);
    const int64_t ldc = s.n + o.padC;
    Bytes c(size_t(s.m * ldc) * es, 0xFF);

    Buffer da, db, dbias, dc;
    ASSERT_TRUE(upload(a.bytes, da).isOk());
    ASSERT_TRUE(upload(b.bytes, db).isOk());
    ASSERT_TRUE(upload(bias.bytes, dbias).isOk());
    ASSERT_TRUE(upload(c, dc).isOk());

    GemmOp op;
    op.m = s.m;
    op.n = s.n;
    op.k = s.k;
    op.transA = o.transA;
    op.transB = o.transB;
    op.dtype = t;
    op.a = da.data();
    op.lda = a.ld;
    op.b = db.data();
    op.ldb = b.ld;
    op.bias = o.bias ? dbias.data() : nullptr;
    op.c = dc.data();
    op.ldc = ldc;
    Status st = gemm.run(op);
    ASSERT_TRUE(st.isOk()) << st.message();
    st = copyToHost(*stream_, c.data(), dc.data(), c.size());
    ASSERT_TRUE(st.isOk()) << st.message();

    double unit = 0, minSubnormalHalf = 0;
    if (t == DType::F16) {
      unit = std::ldexp(1.0, -11);
      minSubnormalHalf = std::ldexp(1.0, -25);
    } else if (t == DType::BF16) {
      unit = std::ldexp(1.0, -8);
      minSubnormalHalf = std::ldexp(1.0, -134);
    }
    const double accumulation = double(s.k + 2) * std::ldexp(1.0, -24);
    int failures = 0;
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < ldc; ++j) {
        const unsigned char *elem = c.data() + size_t(i * ldc + j) * es;
        if (j >= s.n) {
          if (!isPoison(elem, es)) {
            ADD_FAILURE() << "padding C[" << i << "][" << j << "] was written";
            return;
          }
          continue;
        }
        double ref = o.bias ? bias.at(0, j) : 0.0;
        double cond = std::fabs(ref);
        for (int64_t p = 0; p < s.k; ++p) {
          const double av = o.transA ? a.at(p, i) : a.at(i, p);
          const double bv = o.transB ? b.at(j, p) : b.at(p, j);
          ref += av * bv;
          cond += std::fabs(av * bv);
        }
        double got = 0;
        convertToF64(t, elem, &got, 1);
        double bound = 0;
        switch (t) {
        case DType::F64:
          bound = 1e-12 * cond;
          break;
        case DType::F32:
          bound = f32Bound * cond;
          break;
        case DType::F16:
        case DType::BF16: {
          const double e = accumulation * cond;
          bound = e + unit * (std::fabs(ref) + e) + minSubnormalHalf;
          break;
        }
        }
        if (s.k == 0)
          bound = 0; // C = bias or zero exactly
        if (!(std::fabs(got - ref) <= bound) && ++failures <= 5)
          ADD_FAILURE() << "C[" << i << "][" << j << "] = " << got
                        << ", reference " << ref << ", |error| "
                        << std::fabs(got - ref) << " > bound " << bound;
      }
  }

  std::shared_ptr<ExecutionStream> stream_;
  std::unique_ptr<Allocator> alloc_;
};

const DType kGemmTypes[] = {DType::F64, DType::F32, DType::F16, DType::BF16};

} // namespace

TEST_F(CublasGemm, NameAndDevice) {
  auto gemm = makeGemm(GemmOptions());
  ASSERT_NE(gemm, nullptr);
  EXPECT_STREQ(gemm->name(), "cublas");
  EXPECT_EQ(gemm->device(), (Device{DeviceKind::Cuda, 0}));
}

// Every dtype x transposes x bias, through the fused epilogue and through
// the fill-and-accumulate path.
TEST_F(CublasGemm, AllTransposesAndBias) {
  const Shape shapes[] = {{7, 13, 5}, {1, 9, 11},   {6, 1, 4},
                          {5, 3, 1},  {33, 17, 67}, {64, 128, 256}};
  for (bool fuse : {true, false}) {
    GemmOptions options;
    options.fuseBiasEpilogue = fuse;
    auto gemm = makeGemm(options);
    ASSERT_NE(gemm, nullptr);
    std::mt19937 rng(fuse ? 42 : 43);
    for (DType t : kGemmTypes)
      for (Shape s : shapes)
        for (int flags = 0; flags < 8; ++flags) {
          GemmCase o;
          o.transA = flags & 1;
          o.transB = flags & 2;
          o.bias = flags & 4;
          check(*gemm, rng, t, s, o);
          if (HasFailure())
            return;
        }
  }
}

TEST_F(CublasGemm, PaddedLeadingDimensions) {
  auto gemm = makeGemm(GemmOptions());
  std::mt19937 rng(7);
  for (DType t : kGemmTypes)
    for (int flags = 0; flags < 8; ++flags) {
      GemmCase o;
      o.transA = flags & 1;
      o.transB = flags & 2;
      o.bias = flags & 4;
      o.padA = 3;
      o.padB = 5;
      o.padC = 2;
      check(*gemm, rng, t, {7, 13, 5}, o);
      check(*gemm, rng, t, {1, 8, 19}, o);
      if (HasFailure())
        return;
    }
}

// Sizes where cuBLAS picks real tensor-core kernels and split-K, including
// the long-k case of a row-wise shard.
TEST_F(CublasGemm, LargerShapes) {
  auto gemm = makeGemm(GemmOptions());
  std::mt19937 rng(9);
  for (DType t : kGemmTypes)
    for (bool bias : {false, true}) {
      GemmCase o;
      o.transB = true; // y = x A^T, the linear layer's form
      o.bias = bias;
      check(*gemm, rng, t, {128, 96, 1024}, o);
      check(*gemm, rng, t, {2, 64, 4096}, o);
      if (HasFailure())
        return;
    }
}

TEST_F(CublasGemm, Tf32OnlyWhenAllowed) {
  // TF32 rounds each input to 11 significant bits: products err by up to
  // about 2^-10 relative, so the bound is 2^-9 S instead of 1e-5 S.
  GemmOptions options;
  options.allowTf32 = true;
  auto gemm = makeGemm(options);
  std::mt19937 rng(13);
  GemmCase o;
  o.transB = true;
  o.bias = true;
  check(*gemm, rng, DType::F32, {64, 64, 512}, o, std::ldexp(1.0, -9));
}

TEST_F(CublasGemm, EmptyReduction) {
  auto gemm = makeGemm(GemmOptions());
  std::mt19937 rng(3);
  for (DType t : kGemmTypes)
    for (bool bias : {false, true}) {
      GemmCase o;
      o.bias = bias;
      o.padC = 1;
      check(*gemm, rng, t, {4, 6, 0}, o);
      o.transA = o.transB = true;
      check(*gemm, rng, t, {3, 2, 0}, o);
    }
}

TEST_F(CublasGemm, EmptyOutput) {
  auto gemm = makeGemm(GemmOptions());
  std::mt19937 rng(5);
  for (DType t : kGemmTypes) {
    GemmCase o;
    o.bias = true;
    check(*gemm, rng, t, {0, 5, 3}, o);
    check(*gemm, rng, t, {0, 0, 0}, o);
    o.padC = 2;
    check(*gemm, rng, t, {4, 0, 3}, o);
  }
  GemmOp op; // m = 0, a and c null: nothing to do
  op.n = 4;
  op.k = 2;
  op.lda = 2;
  op.ldb = 4;
  op.ldc = 4;
  Status st = gemm->run(op);
  EXPECT_TRUE(st.isOk()) << st.message();
}

// Replaying an op reuses the cached cuBLASLt plan and gives the same bits.
TEST_F(CublasGemm, ReplayIsDeterministic) {
  auto gemm = makeGemm(GemmOptions());
  std::mt19937 rng(17);
  const Shape s{33, 40, 300};
  Matrix a = randomMatrix(rng, DType::BF16, s.m, s.k, s.k);
  Matrix b = randomMatrix(rng, DType::BF16, s.n, s.k, s.k);
  Matrix bias = randomMatrix(rng, DType::BF16, 1, s.n, s.n);
  Buffer da, db, dbias, dc;
  ASSERT_TRUE(upload(a.bytes, da).isOk());
  ASSERT_TRUE(upload(b.bytes, db).isOk());
  ASSERT_TRUE(upload(bias.bytes, dbias).isOk());
  ASSERT_TRUE(upload(Bytes(size_t(s.m * s.n) * 2, 0xFF), dc).isOk());
  GemmOp op;
  op.m = s.m;
  op.n = s.n;
  op.k = s.k;
  op.transB = true;
  op.dtype = DType::BF16;
  op.a = da.data();
  op.lda = s.k;
  op.b = db.data();
  op.ldb = s.k;
  op.bias = dbias.data();
  op.c = dc.data();
  op.ldc = s.n;
  Bytes first;
  for (int i = 0; i < 3; ++i) {
    Status st = gemm->run(op);
    ASSERT_TRUE(st.isOk()) << st.message();
    Bytes got(dc.bytes());
    ASSERT_TRUE(copyToHost(*stream_, got.data(), dc.data(), got.size()).isOk());
    if (i == 0)
      first = got;
    else
      EXPECT_EQ(got, first) << "replay " << i;
  }
}

TEST_F(CublasGemm, RejectsInvalidOps) {
  auto gemm = makeGemm(GemmOptions());
  Buffer da, db, dc;
  ASSERT_TRUE(upload(Bytes(2 * 4 * 4, 0), da).isOk());
  ASSERT_TRUE(upload(Bytes(4 * 3 * 4, 0), db).isOk());
  ASSERT_TRUE(upload(Bytes(2 * 3 * 4, 0), dc).isOk());
  auto valid = [&] {
    GemmOp op;
    op.m = 2;
    op.n = 3;
    op.k = 4;
    op.a = da.data();
    op.lda = 4;
    op.b = db.data();
    op.ldb = 3;
    op.c = dc.data();
    op.ldc = 3;
    return op;
  };
  auto expectError = [&](const GemmOp &op, const std::string &needle) {
    Status st = gemm->run(op);
    ASSERT_FALSE(st.isOk())
        << "expected an error mentioning '" << needle << "'";
    EXPECT_TRUE(contains(st.message(), needle)) << st.message();
    EXPECT_TRUE(contains(st.message(), "cublas gemm")) << st.message();
  };
  {
    Status st = gemm->run(valid());
    ASSERT_TRUE(st.isOk()) << st.message();
  }
  GemmOp op = valid();
  op.m = -1;
  expectError(op, "m is negative (-1)");
  op = valid();
  op.k = int64_t(1) << 32;
  expectError(op, "exceeds the cuBLAS integer range");
  op = valid();
  op.a = nullptr;
  expectError(op, "a is null");
  op = valid();
  op.c = nullptr;
  expectError(op, "c is null");
  op = valid();
  op.lda = 3;
  expectError(op, "lda (3)");
  op = valid();
  op.ldc = 2;
  expectError(op, "ldc (2)");
  op = valid();
  op.dtype = static_cast<DType>(9);
  expectError(op, "invalid dtype");
  // Memory the device cannot read is refused before any kernel runs (a
  // fault would poison the context for every later call).
  std::vector<float> host(12, 0.0f);
  op = valid();
  op.b = host.data();
  bool pageable = false;
  ASSERT_TRUE(cuda::pageableMemoryAccess(0, pageable).isOk());
  if (!pageable)
    expectError(op, "b is host memory");
  op = valid();
  op.c = static_cast<unsigned char *>(dc.data()) + 2;
  expectError(op, "c is not aligned");
  // The backend still works after all of that.
  Status st = gemm->run(valid());
  EXPECT_TRUE(st.isOk()) << st.message();
  EXPECT_TRUE(stream_->synchronize().isOk());
}

//===----------------------------------------------------------------------===//
// GPU: cuda-local
//===----------------------------------------------------------------------===//

namespace {

MakeRanks cudaLocal(double timeout = 60) {
  return [timeout](int w, Ranks &ranks) {
    CommOptions options;
    options.timeoutSeconds = timeout;
    return makeCudaLocalRanks(w, options, ranks);
  };
}

} // namespace

TEST(CudaLocal, GroupBasics) {
  REQUIRE_CUDA_DEVICE();
  Ranks ranks;
  Status st = makeCudaLocalRanks(3, CommOptions(), ranks);
  ASSERT_TRUE(st.isOk()) << st.message();
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(ranks[r].comm->rank(), r);
    EXPECT_EQ(ranks[r].comm->worldSize(), 3);
    EXPECT_STREQ(ranks[r].comm->backendName(), "cuda-local");
    EXPECT_EQ(ranks[r].comm->device(), (Device{DeviceKind::Cuda, 0}));
    for (int q = 0; q < r; ++q)
      EXPECT_NE(ranks[q].stream->nativeHandle(),
                ranks[r].stream->nativeHandle());
  }
  std::vector<std::unique_ptr<Communicator>> comms;
  EXPECT_FALSE(createCudaLocalGroup(0, 0, CommOptions(), comms).isOk());
  st = createCudaLocalGroup(kMaxCudaLocalRanks + 1, 0, CommOptions(), comms);
  EXPECT_TRUE(contains(st.message(), "exceeds the cuda-local limit"))
      << st.message();
  CommOptions bad;
  bad.timeoutSeconds = 0;
  st = createCudaLocalGroup(2, 0, bad, comms);
  EXPECT_TRUE(contains(st.message(), "invalid CommOptions::timeoutSeconds"))
      << st.message();
  std::shared_ptr<ExecutionStream> s;
  ASSERT_TRUE(ExecutionStream::create(0, s).isOk());
  st = createCudaLocalGroup({s, s}, CommOptions(), comms);
  EXPECT_TRUE(contains(st.message(), "share a stream")) << st.message();
}

TEST(CudaLocal, AllGatherV) {
  REQUIRE_CUDA_DEVICE();
  runAllGatherV(cudaLocal(), upTo(8));
}

TEST(CudaLocal, AllGatherVInPlace) {
  REQUIRE_CUDA_DEVICE();
  runAllGatherVInPlace(cudaLocal(), 4);
}

TEST(CudaLocal, AllToAllV) {
  REQUIRE_CUDA_DEVICE();
  runAllToAllV(cudaLocal(), upTo(8));
}

TEST(CudaLocal, ReduceScatterV) {
  REQUIRE_CUDA_DEVICE();
  runReduceScatterV(cudaLocal(), upTo(8));
}

TEST(CudaLocal, AllReduce) {
  REQUIRE_CUDA_DEVICE();
  runAllReduce(cudaLocal(), upTo(8), [](DType) { return true; });
}

TEST(CudaLocal, Broadcast) {
  REQUIRE_CUDA_DEVICE();
  runBroadcast(cudaLocal(), {1, 2, 3, 5});
}

TEST(CudaLocal, Barrier) {
  REQUIRE_CUDA_DEVICE();
  for (int w : {1, 4, 8})
    runBarrier(cudaLocal(), w);
}

// The ready events: rank s's GEMM is still running on its stream when rank
// r's copy of its output is enqueued on another stream; the gathered data
// must be the GEMM's result, not the poison that was there before.
TEST(CudaLocal, CollectiveWaitsForPeersPendingGemm) {
  REQUIRE_CUDA_DEVICE();
  // Eight back-to-back 2-GFLOP f32 GEMMs per rank (no TF32): milliseconds
  // of work still queued when the collective is called.
  const int w = 3, repeats = 8;
  const int64_t m = 512, n = 512, k = 4096;
  Ranks ranks;
  Status made = makeCudaLocalRanks(w, CommOptions(), ranks);
  ASSERT_TRUE(made.isOk()) << made.message();
  std::vector<Bytes> produced(w);
  std::vector<Bytes> gathered(w);
  auto failures = onEveryRank(ranks, [&](int r, Rank &rank, Failures &f) {
    std::mt19937 rng(100 + r);
    Matrix a = randomMatrix(rng, DType::F32, m, k, k);
    Matrix b = randomMatrix(rng, DType::F32, n, k, k);
    Buffer da, db, dc, dall;
    std::unique_ptr<GemmBackend> gemm;
    Status st = createCublasGemm(rank.stream, GemmOptions(), gemm);
    if (st.isOk())
      st = toDevice(rank, a.bytes, da);
    if (st.isOk())
      st = toDevice(rank, b.bytes, db);
    if (st.isOk())
      st = toDevice(rank, Bytes(size_t(m * n) * 4, kPoisonByte), dc);
    if (st.isOk())
      st = toDevice(rank, Bytes(size_t(w * m * n) * 4, kPoisonByte), dall);
    if (!st.isOk())
      return f.add(st.message());
    GemmOp op;
    op.m = m;
    op.n = n;
    op.k = k;
    op.transB = true;
    op.a = da.data();
    op.lda = k;
    op.b = db.data();
    op.ldb = k;
    op.c = dc.data();
    op.ldc = n;
    for (int i = 0; i < repeats && st.isOk(); ++i)
      st = gemm->run(op); // enqueued, still running...
    std::vector<int64_t> counts(w, m * n), displs(w);
    for (int s = 0; s < w; ++s)
      displs[s] = s * m * n;
    if (st.isOk()) // ...when the peers' copies are enqueued
      st = rank.comm->allGatherV(dc.data(), m * n, dall.data(), counts, displs,
                                 DType::F32);
    if (st.isOk())
      st = toHost(rank, dc, produced[r]);
    if (st.isOk())
      st = toHost(rank, dall, gathered[r]);
    if (!st.isOk())
      f.add(st.message());
  });
  ASSERT_TRUE(failures.empty()) << join(failures);
  const size_t block = size_t(m * n) * 4;
  for (int r = 0; r < w; ++r)
    for (int s = 0; s < w; ++s)
      EXPECT_TRUE(
          sameBytes(gathered[r].data() + s * block, produced[s].data(), block))
          << "rank " << r << " gathered stale data from rank " << s;
}

TEST(CudaLocalErrors, SizeMismatchFailsEveryRank) {
  REQUIRE_CUDA_DEVICE();
  Ranks ranks;
  ASSERT_TRUE(makeCudaLocalRanks(3, CommOptions(), ranks).isOk());
  auto failures = onEveryRank(ranks, [&](int r, Rank &rank, Failures &f) {
    Buffer send, recv;
    Status st = toDevice(rank, Bytes(8 * 4, 0), send);
    if (st.isOk())
      st = toDevice(rank, Bytes(32 * 4, 0), recv);
    if (!st.isOk())
      return f.add(st.message());
    std::vector<int64_t> counts = {2, 2, 2}, displs = {0, 2, 4};
    if (r == 1)
      counts[2] = 3; // rank 1 expects more from rank 2 than it sends
    st = rank.comm->allGatherV(send.data(), 2, recv.data(), counts, displs,
                               DType::F32);
    if (st.isOk() || !contains(st.message(), "size mismatch") ||
        !contains(st.message(), "cuda-local allGatherV"))
      f.add("expected a size mismatch, got: " + st.message());
    // The group is still usable afterwards.
    st = rank.comm->barrier();
    if (!st.isOk())
      f.add("barrier after the mismatch: " + st.message());
  });
  EXPECT_TRUE(failures.empty()) << join(failures);
}

TEST(CudaLocalErrors, HostPointerOnOneRankFailsEveryRank) {
  REQUIRE_CUDA_DEVICE();
  bool pageable = false;
  ASSERT_TRUE(cuda::pageableMemoryAccess(0, pageable).isOk());
  if (pageable)
    GTEST_SKIP() << "cuda:0 reads pageable host memory, so a host pointer "
                    "is valid here";
  Ranks ranks;
  ASSERT_TRUE(makeCudaLocalRanks(3, CommOptions(), ranks).isOk());
  std::vector<float> hostBuffer(4, 1.0f);
  auto failures = onEveryRank(ranks, [&](int r, Rank &rank, Failures &f) {
    Buffer buf;
    Status st = toDevice(rank, Bytes(4 * 4, 0), buf);
    if (!st.isOk())
      return f.add(st.message());
    void *p = r == 2 ? static_cast<void *>(hostBuffer.data()) : buf.data();
    st = rank.comm->allReduce(p, p, 4, DType::F32);
    if (st.isOk() || !contains(st.message(), "invalid arguments on rank 2") ||
        !contains(st.message(), "host memory"))
      f.add("expected rank 2's host pointer to be reported, got: " +
            st.message());
  });
  EXPECT_TRUE(failures.empty()) << join(failures);
}

TEST(CudaLocalErrors, MissingRankTimesOutAndAbortsTheGroup) {
  REQUIRE_CUDA_DEVICE();
  const double timeout = 1.0;
  Ranks ranks;
  ASSERT_TRUE(makeCudaLocalRanks(
                  3,
                  [&] {
                    CommOptions o;
                    o.timeoutSeconds = timeout;
                    return o;
                  }(),
                  ranks)
                  .isOk());
  Ranks joining;
  joining.push_back(std::move(ranks[0]));
  joining.push_back(std::move(ranks[1]));
  // Rank 2 never calls.
  auto failures = onEveryRank(joining, [&](int r, Rank &rank, Failures &f) {
    Buffer buf;
    Status st = toDevice(rank, Bytes(16, 0), buf);
    if (!st.isOk())
      return f.add(st.message());
    const auto start = Clock::now();
    st = rank.comm->allReduce(buf.data(), buf.data(), 4, DType::F32);
    const double took = secondsSince(start);
    if (st.isOk())
      return f.add("allReduce without rank 2 succeeded");
    // Whichever rank's wait expires first reports the timeout; the other
    // may be woken by its abort first.
    if (!contains(st.message(), "timed out") &&
        !contains(st.message(), "aborted"))
      f.add("unexpected error: " + st.message());
    if (!contains(st.message(), "rank 2"))
      f.add("the missing rank is not named: " + st.message());
    if (took > timeout + 5.0)
      f.add("took " + std::to_string(took) + " s");
    if (r == 0 && took < timeout * 0.5 && contains(st.message(), "timed out"))
      f.add("timed out early, after " + std::to_string(took) + " s");
    // Everything fails fast from now on.
    const auto again = Clock::now();
    st = rank.comm->barrier();
    if (st.isOk() || !contains(st.message(), "aborted"))
      f.add("barrier after the timeout: " + st.message());
    if (secondsSince(again) > 0.5)
      f.add("the failure after the abort was not immediate");
  });
  EXPECT_TRUE(failures.empty()) << join(failures);
}

//===----------------------------------------------------------------------===//
// GPU: NCCL (one GPU per rank, as many ranks as GPUs)
//===----------------------------------------------------------------------===//

namespace {

MakeRanks nccl(double timeout) {
  return [timeout](int w, Ranks &ranks) {
    CommOptions options;
    options.timeoutSeconds = timeout;
    return makeNcclRanks(w, options, ranks);
  };
}

/// ncclAllReduce's order is NCCL's; f16/bf16 go through the rank-order
/// reduce-scatter.
bool ncclAllReduceInRankOrder(DType t) {
  return t == DType::F16 || t == DType::BF16;
}

} // namespace

TEST(Nccl, GroupBasics) {
  REQUIRE_CUDA_DEVICE();
  REQUIRE_NCCL();
  const int w = deviceCount();
  Ranks ranks;
  Status st = makeNcclRanks(w, CommOptions(), ranks);
  ASSERT_TRUE(st.isOk()) << st.message();
  for (int r = 0; r < w; ++r) {
    EXPECT_EQ(ranks[r].comm->rank(), r);
    EXPECT_EQ(ranks[r].comm->worldSize(), w);
    EXPECT_STREQ(ranks[r].comm->backendName(), "nccl");
    EXPECT_EQ(ranks[r].comm->device(), (Device{DeviceKind::Cuda, r}));
    EXPECT_EQ(cudaStreamOf(*ranks[r].comm), ranks[r].stream);
  }
  // Two ranks on one device is refused (use cuda-local for that).
  std::shared_ptr<ExecutionStream> a, b;
  ASSERT_TRUE(ExecutionStream::create(0, a).isOk());
  ASSERT_TRUE(ExecutionStream::create(0, b).isOk());
  std::vector<std::unique_ptr<Communicator>> comms;
  st = createNcclThreadsGroup({a, b}, CommOptions(), comms);
  EXPECT_TRUE(contains(st.message(), "both on cuda:0")) << st.message();
}

TEST(Nccl, Collectives) {
  REQUIRE_CUDA_DEVICE();
  REQUIRE_NCCL();
  const auto sizes = upTo(deviceCount());
  const MakeRanks make = nccl(60);
  runAllGatherV(make, sizes);
  runAllGatherVInPlace(make, sizes.back());
  runAllToAllV(make, sizes);
  runReduceScatterV(make, sizes);
  runAllReduce(make, sizes, ncclAllReduceInRankOrder);
  runBroadcast(make, sizes);
  runBarrier(make, sizes.back());
}

// Infinite timeout: a blocking communicator whose collectives return once
// enqueued; results are read after the stream (copyToHost) catches up.
TEST(Nccl, AsynchronousCollectives) {
  REQUIRE_CUDA_DEVICE();
  REQUIRE_NCCL();
  const auto sizes = upTo(deviceCount());
  const MakeRanks make = nccl(std::numeric_limits<double>::infinity());
  runAllGatherV(make, sizes);
  runReduceScatterV(make, sizes);
  runAllReduce(make, sizes, ncclAllReduceInRankOrder);
  runBarrier(make, sizes.back());
}

// One process per GPU, bootstrapped through a host communicator (here the
// threads backend standing in for MPI).
TEST(Nccl, BootstrapThroughAHostCommunicator) {
  REQUIRE_CUDA_DEVICE();
  REQUIRE_NCCL();
  const int w = deviceCount();
  auto hosts = createThreadsGroup(w);
  std::vector<std::string> errors(w);
  std::vector<float> sums(w, -1.0f);
  std::vector<std::thread> threads;
  for (int r = 0; r < w; ++r)
    threads.emplace_back([&, r] {
      std::shared_ptr<ExecutionStream> stream;
      std::unique_ptr<Communicator> comm;
      std::unique_ptr<Allocator> alloc;
      CommOptions options;
      options.timeoutSeconds = 60;
      Status st = ExecutionStream::create(r, stream);
      if (st.isOk())
        st = createNcclCommunicator(*hosts[r], stream, options, comm);
      if (st.isOk())
        st = createCudaAllocator(r, alloc);
      Buffer buf;
      float value = float(r + 1);
      if (st.isOk())
        st = Buffer::allocate(*alloc, 4, buf);
      if (st.isOk())
        st = copyToDevice(*stream, buf.data(), &value, 4);
      if (st.isOk())
        st = comm->allReduce(buf.data(), buf.data(), 1, DType::F32);
      if (st.isOk())
        st = copyToHost(*stream, &sums[r], buf.data(), 4);
      if (!st.isOk())
        errors[r] = st.message();
    });
  for (auto &t : threads)
    t.join();
  for (int r = 0; r < w; ++r) {
    EXPECT_EQ(errors[r], "") << "rank " << r;
    EXPECT_EQ(sums[r], float(w * (w + 1) / 2)) << "rank " << r;
  }
}

// Argument errors are found before anything is sent: the call fails, the
// communicator stays usable.
TEST(Nccl, InvalidArgumentsFailLocally) {
  REQUIRE_CUDA_DEVICE();
  REQUIRE_NCCL();
  Ranks ranks;
  CommOptions options;
  options.timeoutSeconds = 60;
  ASSERT_TRUE(makeNcclRanks(1, options, ranks).isOk());
  Rank &rank = ranks[0];
  Buffer buf;
  ASSERT_TRUE(toDevice(rank, Bytes(64, 0), buf).isOk());
  Status st =
      rank.comm->allGatherV(buf.data(), 2, nullptr, {2}, {0}, DType::F32);
  EXPECT_TRUE(contains(st.message(), "invalid arguments")) << st.message();
  EXPECT_TRUE(contains(st.message(), "recv is null")) << st.message();
  st = rank.comm->allGatherV(buf.data(), 2, buf.data(), {3}, {0}, DType::F32);
  EXPECT_TRUE(contains(st.message(), "differs from sendCount")) << st.message();
  st = rank.comm->broadcast(buf.data(), 1, DType::F32, 1);
  EXPECT_TRUE(contains(st.message(), "root = 1")) << st.message();
  st = rank.comm->allReduce(buf.data(), buf.data(), 2, static_cast<DType>(9));
  EXPECT_TRUE(contains(st.message(), "invalid dtype")) << st.message();
  st = rank.comm->allReduce(buf.data(), buf.data(), 4, DType::F32);
  EXPECT_TRUE(st.isOk()) << st.message();
}

// A peer that never joins: initialization times out and aborts instead of
// hanging. Needs only one GPU (the missing rank never touches one).
TEST(Nccl, InitTimesOutWhenAPeerNeverJoins) {
  REQUIRE_CUDA_DEVICE();
  REQUIRE_NCCL();
  NcclUniqueId id;
  Status st = createNcclUniqueId(id);
  ASSERT_TRUE(st.isOk()) << st.message();
  std::shared_ptr<ExecutionStream> stream;
  ASSERT_TRUE(ExecutionStream::create(0, stream).isOk());
  CommOptions options;
  options.timeoutSeconds = 3;
  std::unique_ptr<Communicator> comm;
  const auto start = Clock::now();
  st = createNcclCommunicator(id, 0, 2, stream, options, comm);
  const double took = secondsSince(start);
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(comm, nullptr);
  EXPECT_TRUE(contains(st.message(), "timed out after 3 s")) << st.message();
  EXPECT_TRUE(contains(st.message(), "nccl init (rank 0 of 2")) << st.message();
  EXPECT_GE(took, 3.0 * 0.9);
  EXPECT_LT(took, 3.0 + 30.0);
}

// A peer that does not take part in a collective: the waiting rank aborts
// its communicator within the timeout and then fails fast.
TEST(Nccl, MissingPeerTimesOutAndAborts) {
  REQUIRE_CUDA_DEVICE();
  REQUIRE_NCCL();
  const int n = deviceCount();
  if (n < 2)
    GTEST_SKIP() << "needs 2 GPUs (one per NCCL rank), found " << n;
  const double timeout = 3;
  Ranks ranks;
  ASSERT_TRUE(makeNcclRanks(
                  2,
                  [&] {
                    CommOptions o;
                    o.timeoutSeconds = timeout;
                    return o;
                  }(),
                  ranks)
                  .isOk());
  Rank &rank = ranks[0];
  Buffer buf;
  ASSERT_TRUE(toDevice(rank, Bytes(4096, 0), buf).isOk());
  const auto start = Clock::now();
  Status st = rank.comm->allReduce(buf.data(), buf.data(), 1024, DType::F32);
  const double took = secondsSince(start);
  ASSERT_FALSE(st.isOk());
  EXPECT_TRUE(contains(st.message(), "nccl allReduce (rank 0 of 2"))
      << st.message();
  EXPECT_TRUE(contains(st.message(), "timed out after 3 s")) << st.message();
  EXPECT_TRUE(contains(st.message(), "aborted")) << st.message();
  EXPECT_GE(took, timeout * 0.9);
  EXPECT_LT(took, timeout + 30.0);
  // The abort released the kernel: the stream drains.
  EXPECT_TRUE(rank.stream->synchronize().isOk());
  const auto again = Clock::now();
  st = rank.comm->barrier();
  EXPECT_TRUE(contains(st.message(), "aborted earlier")) << st.message();
  EXPECT_LT(secondsSince(again), 0.5);
}
