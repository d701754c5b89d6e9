//===- GpuCollectivesTest.cpp - cuda-local and NCCL collectives -----------===//
//
// The collective suites of CollectiveSuites.h on cuda-local and NCCL,
// and their errors and timeouts.
//
// What only a GPU can show: that the kernels compute what they should, that
// the cross-stream events order cuda-local's copies after the producers'
// GEMMs, and that NCCL's abort makes a rank waiting for a missing peer
// return. The CPU tests (GpuWaitLogicTest.cpp) show the decision logic
// around them.
//
//===----------------------------------------------------------------------===//

#include "GpuTestSupport.h"

#include "shardlin/runtime/backends/Host.h"

#include <limits>
#include <random>

using namespace shardlin::rt;
using namespace shardlin::rt::testing;

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
  runAllGatherV(suiteRanks(cudaLocal()), upTo(8));
}

TEST(CudaLocal, AllGatherVInPlace) {
  REQUIRE_CUDA_DEVICE();
  runAllGatherVInPlace(suiteRanks(cudaLocal()), 4);
}

TEST(CudaLocal, AllToAllV) {
  REQUIRE_CUDA_DEVICE();
  runAllToAllV(suiteRanks(cudaLocal()), upTo(8));
}

TEST(CudaLocal, ReduceScatterV) {
  REQUIRE_CUDA_DEVICE();
  runReduceScatterV(suiteRanks(cudaLocal()), upTo(8));
}

TEST(CudaLocal, AllReduce) {
  REQUIRE_CUDA_DEVICE();
  runAllReduce(suiteRanks(cudaLocal()), upTo(8), [](DType) { return true; });
}

TEST(CudaLocal, Broadcast) {
  REQUIRE_CUDA_DEVICE();
  runBroadcast(suiteRanks(cudaLocal()), {1, 2, 3, 5});
}

TEST(CudaLocal, Barrier) {
  REQUIRE_CUDA_DEVICE();
  for (int w : {1, 4, 8})
    runBarrier(suiteRanks(cudaLocal()), w);
}

TEST(CudaLocal, Split) {
  REQUIRE_CUDA_DEVICE();
  for (int w : {1, 3, 4})
    runSplit(suiteRanks(cudaLocal()), w);
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
  ASSERT_TRUE(cudaLocal(timeout)(3, ranks).isOk());
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
  const MakeSuiteRanks make = suiteRanks(nccl(60));
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
  const MakeSuiteRanks make =
      suiteRanks(nccl(std::numeric_limits<double>::infinity()));
  runAllGatherV(make, sizes);
  runReduceScatterV(make, sizes);
  runAllReduce(make, sizes, ncclAllReduceInRankOrder);
  runBarrier(make, sizes.back());
}

// ncclCommSplit: the suite's parity and reversed splits, each new group's
// all-reduce, then the parent's barrier, for W up to the GPUs present; with
// a finite timeout (non-blocking communicators, polled) and an infinite one
// (blocking: ncclCommSplit waits for every rank).
TEST(Nccl, Split) {
  REQUIRE_CUDA_DEVICE();
  REQUIRE_NCCL();
  for (int w : upTo(deviceCount())) {
    runSplit(suiteRanks(nccl(60)), w);
    runSplit(suiteRanks(nccl(std::numeric_limits<double>::infinity())), w);
  }
}

namespace {

/// Two NCCL ranks, one per GPU, with a 3 s timeout, for the tests in which
/// rank 1 never takes part; skips without two GPUs.
class NcclTwoRanks : public ::testing::Test {
protected:
  static constexpr double kTimeout = 3;

  void SetUp() override {
    REQUIRE_CUDA_DEVICE();
    REQUIRE_NCCL();
    const int n = deviceCount();
    if (n < 2)
      GTEST_SKIP() << "needs 2 GPUs (one per NCCL rank), found " << n;
    CommOptions options;
    options.timeoutSeconds = kTimeout;
    ASSERT_TRUE(makeNcclRanks(2, options, ranks).isOk());
  }

  Ranks ranks;
};

} // namespace

// A peer that never splits: the waiting rank's split times out, aborts the
// communicator being split (its peers may be waiting in it) and names the
// group it was joining; later calls fail fast.
TEST_F(NcclTwoRanks, SplitTimesOutWhenAPeerNeverSplits) {
  std::unique_ptr<Communicator> sub;
  const auto start = Clock::now();
  Status st = ranks[0].comm->split(1, 0, sub);
  const double took = secondsSince(start);
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(sub, nullptr);
  EXPECT_EQ(st.code(), StatusCode::DeadlineExceeded) << st.message();
  EXPECT_TRUE(contains(st.message(), "nccl split (rank 0 of 2, color 1"))
      << st.message();
  EXPECT_TRUE(contains(st.message(), "timed out after 3 s")) << st.message();
  EXPECT_TRUE(contains(st.message(), "aborted")) << st.message();
  EXPECT_GE(took, kTimeout * 0.9);
  EXPECT_LT(took, kTimeout + 30.0);
  const auto again = Clock::now();
  st = ranks[0].comm->split(1, 0, sub);
  EXPECT_EQ(st.code(), StatusCode::Aborted) << st.message();
  EXPECT_TRUE(contains(st.message(), "aborted earlier")) << st.message();
  st = ranks[0].comm->barrier();
  EXPECT_TRUE(contains(st.message(), "aborted earlier")) << st.message();
  EXPECT_LT(secondsSince(again), 0.5);
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
TEST_F(NcclTwoRanks, MissingPeerTimesOutAndAborts) {
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
  EXPECT_GE(took, kTimeout * 0.9);
  EXPECT_LT(took, kTimeout + 30.0);
  // The abort released the kernel: the stream drains.
  EXPECT_TRUE(rank.stream->synchronize().isOk());
  const auto again = Clock::now();
  st = rank.comm->barrier();
  EXPECT_TRUE(contains(st.message(), "aborted earlier")) << st.message();
  EXPECT_LT(secondsSince(again), 0.5);
}
