//===- CollectivesMpiTest.cpp - The MPI communicator backend --------------===//
//
// A GoogleTest program that ctest runs under mpirun with 1, 2, 3, 4 and 8
// ranks. First the collective suites that every backend runs
// (CollectiveSuites.h), for this process's rank only: every collective with
// even, uneven and empty splits, in every dtype, random non-zero data with
// fixed seeds, poisoned receive buffers, CommStats. Every process can
// regenerate every other rank's send data from its seed, so each rank
// checks its own output alone. Reductions are checked against the exact sum
// within sumTolerance, not bit for bit against the rank-order sum: MPI
// chooses the order in which it adds the ranks' contributions.
//
// Then what is MPI's own: the communicator's identity, the packed
// reduce-scatter layout (handed to MPI as it is), half sums rounded once,
// the argument errors with their messages, and a rank that stays away from
// a collective making the others time out, after which everything fails
// fast.
//
// Rank 0 prints GoogleTest's usual output; the other ranks print only their
// failures ("[rank R] file:line: ..."). At the end the results are combined
// over ranks, so every process exits non-zero if any rank failed.
//
//===----------------------------------------------------------------------===//

#include "CollectiveSuites.h"
#include "CollectivesTestSupport.h"

#include "shardlin/runtime/backends/Mpi.h"

// OMPI_SKIP_MPICXX / MPICH_SKIP_MPICXX come with MPI::MPI_C
// (runtime/CMakeLists.txt): the C API only.
#include <mpi.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

using namespace shardlin::rt;
using namespace shardlin::rt::testing;

namespace {

using Clock = std::chrono::steady_clock;

/// A collective that a failed rank left waiting fails after this long, well
/// inside ctest's timeout, instead of hanging the run.
constexpr double kSuiteTimeoutSeconds = 60;

int worldRank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int worldSize() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

/// The suites' group of W: this process's rank, on host memory.
Status mpiRanks(int w, SuiteRanks &ranks) {
  ranks.clear();
  CommOptions options;
  options.timeoutSeconds = kSuiteTimeoutSeconds;
  SuiteRank rank;
  rank.memory = hostRankMemory();
  SHARDLIN_RETURN_IF_ERROR(createMpiCommunicator(options, rank.comm));
  if (rank.comm->worldSize() != w)
    return Status::invalidArgument(
        "the suite asks for W = " + std::to_string(w) + ", but mpirun started " +
        std::to_string(rank.comm->worldSize()) + " processes");
  ranks.push_back(std::move(rank));
  return Status::ok();
}

bool neverRankOrder(DType) { return false; }

std::unique_ptr<Communicator> worldComm() {
  std::unique_ptr<Communicator> comm;
  CommOptions options;
  options.timeoutSeconds = kSuiteTimeoutSeconds;
  Status st = createMpiCommunicator(options, comm);
  EXPECT_TRUE(st.isOk()) << st.message();
  return comm;
}

//===----------------------------------------------------------------------===//
// The collective suites, on this process's rank
//===----------------------------------------------------------------------===//

TEST(CollectivesMpi, AllGatherV) { runAllGatherV(mpiRanks, {worldSize()}); }

TEST(CollectivesMpi, AllGatherVInPlace) {
  runAllGatherVInPlace(mpiRanks, worldSize());
}

TEST(CollectivesMpi, AllToAllV) { runAllToAllV(mpiRanks, {worldSize()}); }

TEST(CollectivesMpi, ReduceScatterV) {
  runReduceScatterV(mpiRanks, {worldSize()}, neverRankOrder);
}

TEST(CollectivesMpi, AllReduce) {
  runAllReduce(mpiRanks, {worldSize()}, neverRankOrder);
}

TEST(CollectivesMpi, Broadcast) { runBroadcast(mpiRanks, {worldSize()}); }

TEST(CollectivesMpi, Barrier) { runBarrier(mpiRanks, worldSize()); }

TEST(CollectivesMpi, Split) { runSplit(mpiRanks, worldSize()); }

//===----------------------------------------------------------------------===//
// MPI's own
//===----------------------------------------------------------------------===//

TEST(CollectivesMpi, Identity) {
  EXPECT_TRUE(mpiAvailable()) << "false in an MPI build";
  EXPECT_TRUE(launchedByMpi()) << "false although mpirun started this process";
  std::unique_ptr<Communicator> comm = worldComm();
  ASSERT_TRUE(comm);
  EXPECT_EQ(comm->rank(), worldRank());
  EXPECT_EQ(comm->worldSize(), worldSize());
  EXPECT_STREQ(comm->backendName(), "mpi");
  EXPECT_TRUE(comm->device().isHost());
}

TEST(CollectivesMpi, ReduceScatterVPacked) {
  // Segments packed in rank order: the backend may hand the send buffer to
  // MPI_Reduce_scatter as it is (the suite's layouts have gaps).
  std::unique_ptr<Communicator> c = worldComm();
  ASSERT_TRUE(c);
  const int w = c->worldSize(), r = c->rank();
  std::vector<int64_t> counts = chunkSizes(2 * w + 1, w), displs(w);
  for (int d = 1; d < w; ++d)
    displs[d] = displs[d - 1] + counts[d - 1];
  const int64_t total = displs[w - 1] + counts[w - 1];
  for (DType t : kAllDTypes) {
    const size_t es = dtypeSize(t);
    std::vector<Bytes> sends;
    std::vector<const unsigned char *> srcs;
    for (int s = 0; s < w; ++s) {
      std::mt19937_64 rng(seedOf(t, w, 99, s, 5));
      sends.emplace_back(total * es);
      fillRandomForSums(t, sends.back().data(), total, rng);
    }
    for (int s = 0; s < w; ++s)
      srcs.push_back(sends[s].data() + displs[r] * es);
    Bytes recv((counts[r] + 2) * es, kPoisonByte);
    const std::string what = "reduceScatterV " + caseName(t, w, 99) +
                             " (packed)";
    CommStats before = c->stats();
    Status st =
        c->reduceScatterV(sends[r].data(), counts, displs, recv.data(), t);
    Failures f;
    uint64_t bytes = 0;
    for (int d = 0; d < w; ++d)
      if (d != r)
        bytes += counts[d] * es;
    checkCall(st, before, c->stats(), bytes, what, f);
    if (st.isOk()) {
      std::string problem =
          checkSumWithinBound(t, srcs, recv.data(), counts[r]);
      if (!problem.empty())
        f.add(what + ": " + problem);
      checkPoisonOutside(recv, t, {counts[r]}, {0}, what, f);
    }
    EXPECT_TRUE(f.list.empty()) << join(f.list);
  }
}

TEST(CollectivesMpi, HalfSumsRoundOnce) {
  // Rank 0 holds 2048 (f16) / 256 (bf16), ranks 1 and 2 hold 1, the others
  // 2. Summed in f32 and rounded once the result is exact; rounding to
  // f16/bf16 after each addition loses both ones (2048 + 1 ties to 2048).
  std::unique_ptr<Communicator> c = worldComm();
  ASSERT_TRUE(c);
  const int w = c->worldSize(), r = c->rank();
  if (w < 3)
    GTEST_SKIP() << "needs 3 ranks, mpirun started " << w;
  for (DType t : {DType::F16, DType::BF16}) {
    float big = t == DType::F16 ? 2048.0f : 256.0f;
    float mine = r == 0 ? big : (r <= 2 ? 1.0f : 2.0f);
    float sum = big + 2.0f + 2.0f * (w - 3);
    auto encode = [&](float v) {
      return t == DType::F16 ? floatToHalf(v) : floatToBf16(v);
    };
    uint16_t in = encode(mine), out = 0, expected = encode(sum);
    Status st = c->allReduce(&in, &out, 1, t);
    EXPECT_TRUE(st.isOk()) << st.message();
    EXPECT_EQ(out, expected) << "allReduce " << dtypeName(t);
    std::vector<uint16_t> send(w, in);
    std::vector<int64_t> ones(w, 1), displs(w);
    for (int d = 0; d < w; ++d)
      displs[d] = d;
    out = 0;
    st = c->reduceScatterV(send.data(), ones, displs, &out, t);
    EXPECT_TRUE(st.isOk()) << st.message();
    EXPECT_EQ(out, expected) << "reduceScatterV " << dtypeName(t);
  }
}

TEST(CollectivesMpi, ArgumentErrors) {
  // Caught on the calling rank before anything is sent, so every rank can
  // make these calls without the others.
  std::unique_ptr<Communicator> c = worldComm();
  ASSERT_TRUE(c);
  const int w = c->worldSize();
  const std::string at = "mpi allGatherV (rank " + std::to_string(c->rank()) +
                         " of " + std::to_string(w) +
                         "): invalid arguments: ";
  std::vector<float> buf(4);
  Status st =
      c->allGatherV(buf.data(), 1, buf.data(), std::vector<int64_t>(w + 1, 1),
                    std::vector<int64_t>(w + 1, 0), DType::F32);
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument);
  EXPECT_EQ(st.message(), at + "recvCounts has " + std::to_string(w + 1) +
                              " entries, expected " + std::to_string(w));
  std::vector<int64_t> huge(w, 0);
  huge[0] = int64_t(1) << 31;
  st = c->allGatherV(buf.data(), 0, buf.data(), huge,
                     std::vector<int64_t>(w, 0), DType::F32);
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument);
  EXPECT_NE(st.message().find("recvCounts[0] = 2147483648 does not fit in an "
                              "MPI count (int)"),
            std::string::npos)
      << st.message();
  st = c->broadcast(buf.data(), 1, DType::F32, w);
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument);
  EXPECT_NE(st.message().find("root = " + std::to_string(w) + " is not a rank"),
            std::string::npos)
      << st.message();
}

TEST(CollectivesMpi, TimeoutThenFailFast) {
  // The last rank stays away from a barrier that the others enter with a
  // 0.5 s timeout: they must fail with "timed out" after about that long,
  // and their next collective must fail at once. Then the last rank joins
  // (with a long timeout), which completes the barrier MPI still holds for
  // the others, so that nothing is left pending at MPI_Finalize.
  const int rank = worldRank(), size = worldSize();
  if (size < 2)
    GTEST_SKIP() << "needs 2 ranks";
  const bool late = rank == size - 1;
  CommOptions options;
  options.timeoutSeconds = late ? 60.0 : 0.5;
  std::unique_ptr<Communicator> c;
  Status st = createMpiCommunicator(options, c);
  ASSERT_TRUE(st.isOk()) << st.message();
  if (!late) {
    auto start = Clock::now();
    st = c->barrier();
    double elapsed =
        std::chrono::duration<double>(Clock::now() - start).count();
    EXPECT_EQ(st.code(), StatusCode::DeadlineExceeded);
    EXPECT_NE(st.message().find("mpi barrier (rank " + std::to_string(rank) +
                                " of " + std::to_string(size) +
                                "): timed out after 0.5 s in MPI_Ibarrier"),
              std::string::npos)
        << st.message();
    // Generous margin: 8 processes may share 2 cores.
    EXPECT_GE(elapsed, 0.5);
    EXPECT_LT(elapsed, 5.0);
    auto again = Clock::now();
    st = c->barrier();
    EXPECT_EQ(st.code(), StatusCode::Aborted);
    EXPECT_NE(st.message().find("failed earlier"), std::string::npos)
        << st.message();
    EXPECT_LT(std::chrono::duration<double>(Clock::now() - again).count(),
              0.25);
  }
  // Everyone else has timed out (or will, before they get here).
  MPI_Barrier(MPI_COMM_WORLD);
  if (late) {
    st = c->barrier();
    EXPECT_TRUE(st.isOk()) << "late rank completes the barrier: "
                           << st.message();
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/// Prints every failed assertion with the rank in front, so that the
/// failures of ranks other than 0 (whose usual output is off) show.
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult &result) override {
    if (!result.failed())
      return;
    std::fprintf(stderr, "[rank %d] %s:%d: %s\n", rank_,
                 result.file_name() ? result.file_name() : "?",
                 result.line_number(), result.summary());
    std::fflush(stderr);
  }

private:
  int rank_;
};

} // namespace

int main(int argc, char **argv) {
  std::unique_ptr<MpiSession> session;
  Status st = MpiSession::create(&argc, &argv, session);
  if (!st.isOk()) {
    std::fprintf(stderr, "FAIL: %s\n", st.message().c_str());
    return 2;
  }
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::TestEventListeners &listeners =
      ::testing::UnitTest::GetInstance()->listeners();
  if (session->rank() != 0) {
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter(session->rank()));
  }
  const int local = RUN_ALL_TESTS() == 0 ? 0 : 1;

  int failed = 0;
  MPI_Allreduce(&local, &failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (session->rank() == 0)
    std::printf("mpi collectives: %s on %d ranks\n",
                failed == 0 ? "every test passed"
                            : (std::to_string(failed) + " rank(s) FAILED")
                                  .c_str(),
                session->worldSize());
  return failed == 0 ? 0 : 1;
}
