//===- CollectivesThreadsTest.cpp - The threads communicator backend ------===//
//
// Every collective on W = 1..8 thread ranks through the collective suites
// that every backend runs (CollectiveSuites.h), with even, uneven and empty
// splits (countPatterns / matrixPatterns), in f16, bf16, f32 and f64, on
// random non-zero data with fixed seeds. Each rank checks its own output:
//  - data movement bit for bit;
//  - reductions against the exact sum within sumTolerance (see
//    CollectivesTestSupport.h for the bound and why), and bit for bit against
//    the documented rank-order sum (so all ranks agree);
//  - receive buffers start poisoned (0xFF bytes, NaN in every dtype): every
//    element outside the written blocks must still be poison;
//  - CommStats.bytesSent and calls per the rules in Communicator.h.
// Then what is the threads backend's own: rounding of half sums, barrier
// ordering and buffer reuse on host threads, and errors: inconsistent arguments
// between ranks fail on every rank with a message naming the collective and the
// rank; a rank that never joins makes the others time out; after that,
// everything fails fast.
//
//===----------------------------------------------------------------------===//

#include "CollectiveSuites.h"
#include "CollectivesTestSupport.h"

#include "shardlin/runtime/backends/Mpi.h"
#include "shardlin/runtime/backends/Host.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <thread>

using namespace shardlin::rt;
using namespace shardlin::rt::testing;

namespace {

using Comms = std::vector<std::unique_ptr<Communicator>>;
using Clock = std::chrono::steady_clock;

/// onEveryRank over bare communicators: body(rank, comm, failures).
template <class Body>
std::vector<std::string> onEveryComm(Comms &comms, const Body &body) {
  return onEveryRank(comms, [&](int r, std::unique_ptr<Communicator> &comm,
                                Failures &f) { body(r, *comm, f); });
}

/// The threads backend's groups for the collective suites, on host memory.
Status threadsRanks(int w, SuiteRanks &ranks) {
  ranks.clear();
  for (auto &c : createThreadsGroup(w)) {
    SuiteRank rank;
    rank.memory = hostRankMemory();
    rank.comm = std::move(c);
    ranks.push_back(std::move(rank));
  }
  if (int(ranks.size()) != w)
    return Status::internal("createThreadsGroup(" + std::to_string(w) +
                            ") made " + std::to_string(ranks.size()) +
                            " ranks");
  return Status::ok();
}

TEST(CollectivesThreads, GroupBasics) {
  EXPECT_TRUE(createThreadsGroup(0).empty());
  Comms comms = createThreadsGroup(3);
  ASSERT_EQ(comms.size(), 3u);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(comms[r]->rank(), r);
    EXPECT_EQ(comms[r]->worldSize(), 3);
    EXPECT_STREQ(comms[r]->backendName(), "threads");
    EXPECT_TRUE(comms[r]->device().isHost());
  }
}

// The collective suites of CollectiveSuites.h, as every backend runs them.

TEST(CollectivesThreads, AllGatherV) { runAllGatherV(threadsRanks, upTo(8)); }

TEST(CollectivesThreads, AllGatherVInPlace) {
  for (int w : {1, 2, 4, 7})
    runAllGatherVInPlace(threadsRanks, w);
}

TEST(CollectivesThreads, AllToAllV) { runAllToAllV(threadsRanks, upTo(8)); }

TEST(CollectivesThreads, ReduceScatterV) {
  runReduceScatterV(threadsRanks, upTo(8));
}

TEST(CollectivesThreads, AllReduce) {
  runAllReduce(threadsRanks, upTo(8), [](DType) { return true; });
}

TEST(CollectivesThreads, HalfSumsRoundOnce) {
  // 2048 + 1 + 1 in f16 step by step stays 2048 (2049 ties to even), but
  // summed in f32 it is 2050, which f16 holds exactly. Likewise 256 + 1 + 1
  // in bf16. A backend that rounds after each addition fails this.
  struct Case {
    DType t;
    uint16_t big, one, expected;
  };
  for (Case k : {Case{DType::F16, 0x6800, 0x3C00, 0x6801},
                 Case{DType::BF16, 0x4380, 0x3F80, 0x4381}}) {
    Comms comms = createThreadsGroup(3);
    auto failures =
        onEveryComm(comms, [&](int r, Communicator &c, Failures &f) {
          uint16_t mine = r == 0 ? k.big : k.one;
          std::vector<uint16_t> send(3, mine);
          uint16_t got = 0;
          Status st =
              c.reduceScatterV(send.data(), {1, 1, 1}, {0, 1, 2}, &got, k.t);
          if (!st.isOk() || got != k.expected)
            f.add(std::string(dtypeName(k.t)) + " reduceScatterV gave 0x" +
                  std::to_string(got) + " " + st.message());
          uint16_t all = 0;
          st = c.allReduce(&mine, &all, 1, k.t);
          if (!st.isOk() || all != k.expected)
            f.add(std::string(dtypeName(k.t)) + " allReduce gave " +
                  std::to_string(all) + " " + st.message());
        });
    EXPECT_TRUE(failures.empty()) << join(failures);
  }
}

TEST(CollectivesThreads, Broadcast) { runBroadcast(threadsRanks, upTo(8)); }

TEST(CollectivesThreads, Split) {
  for (int w : upTo(5))
    runSplit(threadsRanks, w);
}

// A rank that never splits: the first rank to wait out the timeout fails
// with DeadlineExceeded naming the missing ranks, the other waiter with
// Aborted, and the late rank's split, when it comes, with Aborted at once.
TEST(CollectivesThreads, SplitWithoutEveryRankTimesOut) {
  CommOptions options;
  options.timeoutSeconds = 0.2;
  Comms comms = createThreadsGroup(3, options);
  std::vector<Status> status(2);
  std::vector<std::unique_ptr<Communicator>> out(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back(
        [&, r] { status[r] = comms[r]->split(0, r, out[r]); });
  for (std::thread &t : threads)
    t.join();
  int deadline = 0, aborted = 0;
  for (int r = 0; r < 2; ++r) {
    EXPECT_FALSE(out[r]) << "rank " << r;
    deadline += status[r].code() == StatusCode::DeadlineExceeded;
    aborted += status[r].code() == StatusCode::Aborted;
    if (status[r].code() == StatusCode::DeadlineExceeded)
      EXPECT_NE(status[r].message().find("waiting for 1 rank(s) to split"),
                std::string::npos)
          << status[r].message();
  }
  EXPECT_EQ(deadline, 1) << status[0].message() << " / "
                         << status[1].message();
  EXPECT_EQ(aborted, 1);
  std::unique_ptr<Communicator> late;
  const Clock::time_point start = Clock::now();
  Status st = comms[2]->split(0, 2, late);
  EXPECT_EQ(st.code(), StatusCode::Aborted) << st.message();
  EXPECT_NE(st.message().find("an earlier split failed"), std::string::npos)
      << st.message();
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 0.1);
  EXPECT_FALSE(late);
}

TEST(CollectivesThreads, Barrier) {
  for (int w = 1; w <= 8; ++w) {
    Comms comms = createThreadsGroup(w);
    std::atomic<int> before{0};
    auto failures = onEveryComm(comms, [&](int, Communicator &c, Failures &f) {
      for (int round = 1; round <= 3; ++round) {
        before.fetch_add(1);
        CommStats s0 = c.stats();
        Status st = c.barrier();
        checkCall(st, s0, c.stats(), 0, "barrier", f);
        // Nobody leaves round k before all have entered it.
        if (before.load() < round * w)
          f.add("left barrier round " + std::to_string(round) +
                " before every rank entered it");
        Status st2 = c.barrier(); // keeps round k+1 increments out of the check
        if (!st2.isOk())
          f.add(st2.message());
      }
    });
    EXPECT_TRUE(failures.empty()) << join(failures);
  }
}

TEST(CollectivesThreads, BackToBackCollectivesReuseBuffers) {
  // Each rank overwrites its send buffer as soon as a collective returns. A
  // rank that returned before the others finished reading would corrupt
  // their results. Eight ranks on (typically) fewer cores make the
  // interleavings vary.
  const int w = 8, rounds = 200, n = 64;
  Comms comms = createThreadsGroup(w);
  auto failures = onEveryComm(comms, [&](int r, Communicator &c, Failures &f) {
    std::vector<double> send(n), recv(n * w);
    std::vector<int64_t> counts(w, n), displs(w);
    for (int s = 0; s < w; ++s)
      displs[s] = s * n;
    for (int round = 0; round < rounds; ++round) {
      for (int k = 0; k < n; ++k)
        send[k] = round * 1e6 + r * 1e3 + k;
      Status st =
          c.allGatherV(send.data(), n, recv.data(), counts, displs, DType::F64);
      if (!st.isOk())
        return f.add(st.message());
      for (int s = 0; s < w; ++s)
        for (int k = 0; k < n; ++k)
          if (recv[s * n + k] != round * 1e6 + s * 1e3 + k)
            return f.add("round " + std::to_string(round) + ": element " +
                         std::to_string(k) + " from rank " + std::to_string(s) +
                         " is stale or torn");
      std::fill(send.begin(), send.end(), -1.0);
    }
  });
  EXPECT_TRUE(failures.empty()) << join(failures);
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

/// Runs `call` on every rank of a W group and expects it to fail on every
/// rank, quickly (not by timeout), with a message naming the collective, the
/// rank and containing `reason`. Then checks the group still works.
void expectErrorOnEveryRank(
    int w, const char *collective, const std::string &reason,
    const std::function<Status(int, Communicator &)> &call) {
  CommOptions options;
  options.timeoutSeconds = 5.0;
  Comms comms = createThreadsGroup(w, options);
  auto start = Clock::now();
  auto failures = onEveryComm(comms, [&](int r, Communicator &c, Failures &f) {
    CommStats before = c.stats();
    Status st = call(r, c);
    std::string at = std::string("threads ") + collective + " (rank " +
                     std::to_string(r) + " of " + std::to_string(w) + ")";
    if (st.isOk())
      return f.add(std::string(collective) + " succeeded, expected an error");
    const std::string &m = st.message();
    if (st.code() != StatusCode::InvalidArgument)
      f.add(std::string("code is ") + statusCodeName(st.code()) +
            ", expected invalid argument: " + m);
    if (m.find(at) == std::string::npos || m.find(reason) == std::string::npos)
      f.add("message \"" + m + "\" lacks \"" + at + "\" or \"" + reason + "\"");
    if (m.find("timed out") != std::string::npos)
      f.add("failed by timeout instead of by the argument check: " + m);
    if (c.stats().calls != before.calls ||
        c.stats().bytesSent != before.bytesSent)
      f.add("a failed collective changed the stats");
    // Every rank failed at the same step, so the group is still in step.
    std::vector<int> send = {r}, recv(w, -1);
    std::vector<int64_t> ones(w, 1), displs(w);
    for (int s = 0; s < w; ++s)
      displs[s] = s;
    Status again =
        c.allGatherV(send.data(), 1, recv.data(), ones, displs, DType::F32);
    if (!again.isOk())
      f.add("the next collective failed: " + again.message());
  });
  EXPECT_TRUE(failures.empty()) << collective << ": " << join(failures);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 4.0);
}

std::vector<int64_t> iota(int w, int64_t step) {
  std::vector<int64_t> v(w);
  for (int i = 0; i < w; ++i)
    v[i] = i * step;
  return v;
}

/// Arguments a collective refuses: every rank of a W group calls
/// call(rank, comm), and every rank must fail with `reason`
/// (expectErrorOnEveryRank).
struct ArgumentError {
  const char *name;
  int w;
  const char *collective;
  const char *reason;
  std::function<Status(int, Communicator &)> call;
};

const ArgumentError kArgumentErrors[] = {
    // Rank 2 sends 5 elements where everybody expects 4.
    {"AllGatherVSizeMismatch", 4, "allGatherV",
     "rank 2 sends 5 elements but rank 0 expects recvCounts[2] = 4",
     [](int r, Communicator &c) {
       std::vector<int64_t> counts = {2, 3, 4, 1};
       std::vector<float> send(8, 1.0f), recv(64);
       return c.allGatherV(send.data(), r == 2 ? 5 : counts[r], recv.data(),
                           counts, iota(4, 8), DType::F32);
     }},
    {"TableOfWrongSize", 3, "allGatherV",
     "invalid arguments on rank 1: recvCounts has 2 entries, expected 3",
     [](int r, Communicator &c) {
       std::vector<float> send(1), recv(3);
       std::vector<int64_t> counts(r == 1 ? 2 : 3, 1);
       return c.allGatherV(send.data(), 1, recv.data(), counts, iota(3, 1),
                           DType::F32);
     }},
    {"NegativeCount", 2, "allToAllV",
     "invalid arguments on rank 0: sendCounts[1] = -1",
     [](int r, Communicator &c) {
       std::vector<double> send(4), recv(4);
       std::vector<int64_t> sendCounts = {1, r == 0 ? -1 : 1};
       return c.allToAllV(send.data(), sendCounts, {0, 2}, recv.data(), {1, 1},
                          {0, 2}, DType::F64);
     }},
    {"NullBuffer", 2, "allReduce", "invalid arguments on rank 1: recv is null",
     [](int r, Communicator &c) {
       std::vector<double> send(4), recv(4);
       return c.allReduce(send.data(), r == 1 ? nullptr : recv.data(), 4,
                          DType::F64);
     }},
    {"AllToAllVSizeMismatch", 3, "allToAllV",
     "rank 0 sends 3 elements to rank 1 (sendCounts[1]) but rank 1 expects "
     "recvCounts[0] = 2",
     [](int r, Communicator &c) {
       std::vector<float> send(16), recv(16);
       std::vector<int64_t> sendCounts = {2, r == 0 ? 3 : 2, 2};
       return c.allToAllV(send.data(), sendCounts, iota(3, 4), recv.data(),
                          {2, 2, 2}, iota(3, 4), DType::F32);
     }},
    {"ReduceScatterCountsDiffer", 4, "reduceScatterV",
     "counts differ between ranks: rank 0 has counts[0] = 1 but rank 3 has "
     "counts[0] = 2",
     [](int r, Communicator &c) {
       std::vector<float> send(16), recv(4);
       std::vector<int64_t> counts = {r == 3 ? 2 : 1, 1, 1, 1};
       return c.reduceScatterV(send.data(), counts, iota(4, 4), recv.data(),
                               DType::F32);
     }},
    {"DTypeMismatch", 2, "allReduce",
     "dtype mismatch: rank 0 passed f32 but rank 1 passed f64",
     [](int r, Communicator &c) {
       std::vector<double> send(2), recv(2);
       return c.allReduce(send.data(), recv.data(), 1,
                          r == 0 ? DType::F32 : DType::F64);
     }},
    {"AllReduceCountMismatch", 3, "allReduce",
     "count mismatch: rank 0 passed count = 4 but rank 2 passed 3",
     [](int r, Communicator &c) {
       std::vector<float> send(4), recv(4);
       return c.allReduce(send.data(), recv.data(), r == 2 ? 3 : 4,
                          DType::F32);
     }},
    {"BroadcastRootsDiffer", 3, "broadcast",
     "root mismatch: rank 0 passed root = 0 but rank 1",
     [](int r, Communicator &c) {
       std::vector<float> buf(4);
       return c.broadcast(buf.data(), 4, DType::F32, r == 1 ? 2 : 0);
     }},
    {"BroadcastRootNotARank", 3, "broadcast", "root = 3 is not a rank of 0..2",
     [](int, Communicator &c) {
       std::vector<float> buf(4);
       return c.broadcast(buf.data(), 4, DType::F32, 3);
     }},
};

void PrintTo(const ArgumentError &e, std::ostream *os) { *os << e.name; }

class CollectivesThreadsArgumentErrors
    : public ::testing::TestWithParam<ArgumentError> {};

TEST_P(CollectivesThreadsArgumentErrors, FailOnEveryRank) {
  const ArgumentError &e = GetParam();
  expectErrorOnEveryRank(e.w, e.collective, e.reason, e.call);
}

INSTANTIATE_TEST_SUITE_P(
    CollectivesThreadsErrors, CollectivesThreadsArgumentErrors,
    ::testing::ValuesIn(kArgumentErrors),
    [](const ::testing::TestParamInfo<ArgumentError> &info) {
      return std::string(info.param.name);
    });

TEST(CollectivesThreadsErrors, DifferentCollectives) {
  // Rank 0 gathers while rank 1 exchanges: each names its own collective.
  CommOptions options;
  options.timeoutSeconds = 5.0;
  Comms comms = createThreadsGroup(2, options);
  auto failures = onEveryComm(comms, [&](int r, Communicator &c, Failures &f) {
    std::vector<float> send(2), recv(2);
    Status st = r == 0 ? c.allGatherV(send.data(), 1, recv.data(), {1, 1},
                                      {0, 1}, DType::F32)
                       : c.allToAllV(send.data(), {1, 1}, {0, 1}, recv.data(),
                                     {1, 1}, {0, 1}, DType::F32);
    std::string expected =
        std::string("threads ") + (r == 0 ? "allGatherV" : "allToAllV") +
        " (rank " + std::to_string(r) +
        " of 2): collective mismatch: rank 0 called allGatherV but rank 1 "
        "called allToAllV";
    if (st.isOk() || st.message() != expected)
      f.add("got \"" + st.message() + "\", expected \"" + expected + "\"");
  });
  EXPECT_TRUE(failures.empty()) << join(failures);
}

TEST(CollectivesThreadsErrors, InvalidTimeout) {
  CommOptions options;
  options.timeoutSeconds = -1;
  Comms comms = createThreadsGroup(2, options);
  Status st = comms[1]->barrier(); // fails without waiting for rank 0
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument) << st.message();
  EXPECT_NE(st.message().find("threads barrier (rank 1 of 2)"),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("timeoutSeconds = -1"), std::string::npos)
      << st.message();
}

/// Seconds since `start`.
double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

TEST(CollectivesThreadsErrors, MissingRankTimesOutAndAbortsTheGroup) {
  // Ranks 0-2 enter allToAllV; rank 3 stays away. They must fail after about
  // the timeout (not hang), and from then on the group fails fast: rank 3's
  // late call and the others' next calls alike.
  const double timeout = 0.5, margin = 2.0;
  CommOptions options;
  options.timeoutSeconds = timeout;
  const int w = 4;
  Comms comms = createThreadsGroup(w, options);
  std::vector<std::string> messages(w);
  std::vector<StatusCode> codes(w, StatusCode::Ok);
  std::vector<double> elapsed(w);
  std::vector<std::thread> threads;
  auto start = Clock::now();
  for (int r = 0; r < 3; ++r)
    threads.emplace_back([&, r] {
      std::vector<float> send(4), recv(4);
      std::vector<int64_t> ones(w, 1);
      Status st =
          comms[r]->allToAllV(send.data(), ones, iota(w, 1), recv.data(), ones,
                              iota(w, 1), DType::F32);
      elapsed[r] = since(start);
      codes[r] = st.code();
      messages[r] = st.isOk() ? "ok" : st.message();
    });
  for (auto &t : threads)
    t.join();
  bool namesMissingRank = false;
  for (int r = 0; r < 3; ++r) {
    // The rank whose deadline passed first times out; the others it wakes
    // stop because of it.
    const bool timedOut =
        messages[r].find("timed out after") != std::string::npos &&
        messages[r].find("group aborted") == std::string::npos;
    EXPECT_EQ(codes[r],
              timedOut ? StatusCode::DeadlineExceeded : StatusCode::Aborted)
        << messages[r];
    EXPECT_NE(messages[r].find("threads allToAllV (rank " + std::to_string(r) +
                               " of 4)"),
              std::string::npos)
        << messages[r];
    EXPECT_NE(messages[r].find("timed out"), std::string::npos) << messages[r];
    namesMissingRank |=
        messages[r].find("timed out after 0.5 s waiting for rank 3") !=
        std::string::npos;
    EXPECT_LT(elapsed[r], timeout + margin) << "rank " << r;
  }
  EXPECT_TRUE(namesMissingRank) << join(messages);
  EXPECT_GE(*std::max_element(elapsed.begin(), elapsed.begin() + 3),
            timeout * 0.9);

  // Fails fast, well inside the timeout, and says why.
  auto late = Clock::now();
  std::vector<float> send(4), recv(4);
  std::vector<int64_t> ones(w, 1);
  Status st = comms[3]->allToAllV(send.data(), ones, iota(w, 1), recv.data(),
                                  ones, iota(w, 1), DType::F32);
  EXPECT_LT(since(late), timeout / 2);
  ASSERT_FALSE(st.isOk());
  // Rank 3 did not time out itself: it stops because the others did.
  EXPECT_EQ(st.code(), StatusCode::Aborted) << st.message();
  EXPECT_NE(st.message().find("threads allToAllV (rank 3 of 4): group aborted "
                              "earlier: rank "),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("timed out"), std::string::npos) << st.message();
  for (int r = 0; r < 3; ++r) {
    late = Clock::now();
    Status b = comms[r]->barrier();
    EXPECT_LT(since(late), timeout / 2);
    EXPECT_FALSE(b.isOk());
    EXPECT_EQ(b.code(), StatusCode::Aborted) << b.message();
    EXPECT_NE(b.message().find("threads barrier (rank " + std::to_string(r) +
                               " of 4): group aborted earlier"),
              std::string::npos)
        << b.message();
  }
}

TEST(CollectivesThreadsErrors, TimeoutNamesAllMissingRanks) {
  // Eight ranks, two of which (1 and 3) never join the barrier.
  CommOptions options;
  options.timeoutSeconds = 0.5;
  Comms comms = createThreadsGroup(8, options);
  std::vector<std::string> messages(8);
  std::vector<std::thread> threads;
  auto start = Clock::now();
  for (int r : {0, 2, 4, 5, 6, 7})
    threads.emplace_back([&, r] {
      Status st = comms[r]->barrier();
      messages[r] = st.isOk() ? "ok" : st.message();
    });
  for (auto &t : threads)
    t.join();
  EXPECT_LT(since(start), 0.5 + 2.0);
  for (int r : {0, 2, 4, 5, 6, 7})
    EXPECT_NE(messages[r].find("waiting for ranks 1, 3"), std::string::npos)
        << "rank " << r << ": " << messages[r];
}

TEST(CollectivesThreadsErrors, ArrivalAfterADeadlineFailsWhateverTheScheduling) {
  // With a 1 ns timeout, the second rank always arrives after the first
  // rank's deadline, however fast it follows and whether or not the first
  // rank's thread has woken up yet: every round must fail on both ranks, the
  // first with its timeout, the second with the group's abort. (The outcome
  // used to depend on which thread got the mutex first after the deadline.)
  for (int round = 0; round < 200; ++round) {
    CommOptions options;
    options.timeoutSeconds = 1e-9;
    Comms comms = createThreadsGroup(2, options);
    std::vector<std::string> messages(2);
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    for (int r = 0; r < 2; ++r)
      threads.emplace_back([&, r] {
        ready.fetch_add(1);
        while (ready.load() < 2) {
        }
        double v = 1.0;
        Status st = comms[r]->allReduce(&v, &v, 1, DType::F64);
        messages[r] = st.isOk() ? "ok" : st.message();
      });
    for (auto &t : threads)
      t.join();
    int timedOut = 0, aborted = 0;
    for (const std::string &m : messages) {
      timedOut += m.find("timed out after 1e-09 s waiting for rank") !=
                  std::string::npos;
      // "group aborted: ..." or, if the first rank timed out before the
      // second arrived at all, "group aborted earlier: ...".
      aborted += m.find("group aborted") != std::string::npos;
    }
    ASSERT_EQ(timedOut, 1) << "round " << round << ": " << join(messages);
    ASSERT_EQ(aborted, 1) << "round " << round << ": " << join(messages);
  }
}

TEST(CollectivesMpiLaunch, LaunchedByMpiReadsLauncherVariables) {
  // launchedByMpi() lives beside the MPI backend (or its stand-in) but only
  // reads the environment, so it is tested here, in every build.
  const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK",
                        "MPI_LOCALNRANKS"};
  std::vector<std::pair<std::string, std::string>> saved;
  for (const char *v : vars)
    if (const char *value = std::getenv(v))
      saved.emplace_back(v, value);
  for (const char *v : vars)
    unsetenv(v);
  EXPECT_FALSE(launchedByMpi());
  for (const char *v : vars) {
    setenv(v, "4", 1);
    EXPECT_TRUE(launchedByMpi()) << v;
    setenv(v, "", 1); // set but empty: not a launcher's doing
    EXPECT_FALSE(launchedByMpi()) << v << " empty";
    unsetenv(v);
  }
  for (auto &[name, value] : saved)
    setenv(name.c_str(), value.c_str(), 1);
}

} // namespace
