//===- CollectivesMpiTest.cpp - The MPI communicator backend --------------===//
//
// A plain program, run by ctest under mpirun with 1, 2, 3, 4 and 8 ranks.
// The same checks as CollectivesThreadsTest.cpp, on fewer cases: every
// collective with even, uneven and empty splits, in every dtype, random
// non-zero data with fixed seeds, poisoned receive buffers, CommStats; then a
// rank that stays away from a collective makes the others time out.
//
// Every rank can regenerate every other rank's send data from its seed, so
// each rank checks its own output alone. Failures are printed as they happen
// ("FAIL rank R: check: detail"); at the end the failure counts are summed
// over ranks and the program exits non-zero if any rank failed.
//
// Reductions are checked against the exact sum within sumTolerance, as in the
// threads test, but not bit for bit against the rank-order sum: MPI chooses
// the order in which it adds the ranks' contributions.
//
//===----------------------------------------------------------------------===//

#include "CollectivesTestSupport.h"

#include "shardlin/runtime/MpiCommunicator.h"

// The C API only: without these, Open MPI's and MPICH's mpi.h pull in the
// deprecated C++ bindings, which need an extra library (libmpi_cxx).
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <thread>

using namespace shardlin::rt;
using namespace shardlin::rt::testing;

namespace {

using Clock = std::chrono::steady_clock;

class Checker {
public:
  explicit Checker(int rank) : rank_(rank) {}

  /// Records one check; prints it if it failed.
  void expect(bool ok, const std::string &check, const std::string &detail) {
    ++checks_;
    if (ok)
      return;
    ++failures_;
    std::fprintf(stderr, "FAIL rank %d: %s: %s\n", rank_, check.c_str(),
                 detail.c_str());
    std::fflush(stderr);
  }
  void expectOk(const Status &st, const std::string &check) {
    expect(st.isOk(), check, st.message());
  }
  void checkStats(const CommStats &before, const CommStats &after,
                  uint64_t bytes, const std::string &check) {
    expect(after.calls == before.calls + 1 &&
               after.bytesSent - before.bytesSent == bytes,
           check + " stats",
           "calls " + std::to_string(before.calls) + " -> " +
               std::to_string(after.calls) + ", bytesSent grew by " +
               std::to_string(after.bytesSent - before.bytesSent) +
               ", expected " + std::to_string(bytes));
  }
  void checkPoisonOutside(const Bytes &buf, DType t,
                          const std::vector<int64_t> &counts,
                          const std::vector<int64_t> &displs,
                          const std::string &check) {
    const size_t es = dtypeSize(t);
    std::vector<char> written(buf.size() / es, 0);
    for (size_t i = 0; i < counts.size(); ++i)
      for (int64_t k = 0; k < counts[i]; ++k)
        written[displs[i] + k] = 1;
    size_t bad = written.size();
    for (size_t e = 0; e < written.size() && bad == written.size(); ++e)
      if (!written[e] && !isPoison(buf.data() + e * es, es))
        bad = e;
    expect(bad == written.size(), check + " poison",
           "element " + std::to_string(bad) +
               " outside every received block was overwritten");
  }

  long checks() const { return checks_; }
  long failures() const { return failures_; }

private:
  int rank_;
  long checks_ = 0;
  long failures_ = 0;
};

uint64_t seedOf(DType t, int w, size_t pattern, int rank, uint64_t salt) {
  return (static_cast<uint64_t>(t) + 1) * 1000003ULL + w * 10007ULL +
         pattern * 101ULL + rank + salt * 7919ULL;
}

std::string caseName(const char *op, DType t, size_t pattern) {
  return std::string(op) + " " + dtypeName(t) + " pattern " +
         std::to_string(pattern);
}

void testAllGatherV(Communicator &c, DType t, Checker &k) {
  const int w = c.worldSize(), r = c.rank();
  const size_t es = dtypeSize(t);
  auto patterns = countPatterns(w, 11 * w);
  for (size_t p = 0; p < patterns.size(); ++p) {
    const auto &counts = patterns[p];
    std::string name = caseName("allGatherV", t, p);
    auto sendOf = [&](int s) {
      std::mt19937_64 rng(seedOf(t, w, p, s, 1));
      Bytes data(counts[s] * es);
      fillRandomAnyMagnitude(t, data.data(), counts[s], rng);
      return data;
    };
    Bytes send = sendOf(r);
    std::mt19937_64 rng(seedOf(t, w, p, r, 2));
    Layout layout = makeLayout(counts, rng);
    Bytes recv(layout.extent * es, kPoisonByte);
    CommStats before = c.stats();
    Status st = c.allGatherV(send.data(), counts[r], recv.data(), counts,
                             layout.displs, t);
    k.expectOk(st, name);
    if (!st.isOk())
      continue;
    k.checkStats(before, c.stats(), counts[r] * (w - 1) * es, name);
    for (int s = 0; s < w; ++s) {
      Bytes expected = sendOf(s);
      k.expect(counts[s] == 0 ||
                   std::memcmp(recv.data() + layout.displs[s] * es,
                               expected.data(), counts[s] * es) == 0,
               name, "block from rank " + std::to_string(s) + " differs");
    }
    k.checkPoisonOutside(recv, t, counts, layout.displs, name);
  }
}

void testAllGatherVInPlace(Communicator &c, Checker &k) {
  // Each rank's send block is its own block of recv.
  const int w = c.worldSize(), r = c.rank();
  std::vector<int64_t> counts = chunkSizes(2 * w + 1, w), displs(w);
  for (int d = 1; d < w; ++d)
    displs[d] = displs[d - 1] + counts[d - 1] + 1; // one element gaps
  std::vector<double> recv(displs[w - 1] + counts[w - 1] + 1, -1.0);
  for (int64_t i = 0; i < counts[r]; ++i)
    recv[displs[r] + i] = 100.0 * r + i + 1;
  Status st = c.allGatherV(recv.data() + displs[r], counts[r], recv.data(),
                           counts, displs, DType::F64);
  k.expectOk(st, "allGatherV in place");
  int64_t bad = -1;
  for (int s = 0; s < w; ++s)
    for (int64_t i = 0; i < counts[s]; ++i)
      if (recv[displs[s] + i] != 100.0 * s + i + 1)
        bad = displs[s] + i;
  k.expect(bad < 0, "allGatherV in place",
           "element " + std::to_string(bad) + " is wrong");
}

void testAllToAllV(Communicator &c, DType t, Checker &k) {
  const int w = c.worldSize(), r = c.rank();
  const size_t es = dtypeSize(t);
  auto patterns = matrixPatterns(w, 13 * w);
  for (size_t p = 0; p < patterns.size(); ++p) {
    const auto &m = patterns[p];
    std::string name = caseName("allToAllV", t, p);
    // Rank s's send buffer and layout, regenerated by whoever needs them.
    auto sendOf = [&](int s, Layout &layout) {
      std::mt19937_64 rng(seedOf(t, w, p, s, 3));
      layout = makeLayout(m[s], rng);
      Bytes data(layout.extent * es, kPoisonByte);
      for (int d = 0; d < w; ++d)
        fillRandomAnyMagnitude(t, data.data() + layout.displs[d] * es, m[s][d],
                               rng);
      return data;
    };
    Layout sendLayout;
    Bytes send = sendOf(r, sendLayout);
    std::vector<int64_t> recvCounts(w);
    uint64_t bytes = 0;
    for (int s = 0; s < w; ++s) {
      recvCounts[s] = m[s][r];
      if (s != r)
        bytes += m[r][s] * es;
    }
    std::mt19937_64 rng(seedOf(t, w, p, r, 4));
    Layout recvLayout = makeLayout(recvCounts, rng);
    Bytes recv(recvLayout.extent * es, kPoisonByte);
    CommStats before = c.stats();
    Status st = c.allToAllV(send.data(), m[r], sendLayout.displs, recv.data(),
                            recvCounts, recvLayout.displs, t);
    k.expectOk(st, name);
    if (!st.isOk())
      continue;
    k.checkStats(before, c.stats(), bytes, name);
    for (int s = 0; s < w; ++s) {
      Layout theirs;
      Bytes expected = sendOf(s, theirs);
      k.expect(recvCounts[s] == 0 ||
                   std::memcmp(recv.data() + recvLayout.displs[s] * es,
                               expected.data() + theirs.displs[r] * es,
                               recvCounts[s] * es) == 0,
               name, "block from rank " + std::to_string(s) + " differs");
    }
    k.checkPoisonOutside(recv, t, recvCounts, recvLayout.displs, name);
  }
}

/// Checks `got` against the exact sum within sumTolerance.
void checkSumWithinBound(DType t, const std::vector<Bytes> &sources,
                         const std::vector<int64_t> &offsets,
                         const unsigned char *got, int64_t n,
                         const std::string &name, Checker &k) {
  const size_t es = dtypeSize(t);
  int64_t bad = -1;
  std::string detail;
  for (int64_t i = 0; i < n && bad < 0; ++i) {
    long double exact = 0, sumAbs = 0;
    for (size_t s = 0; s < sources.size(); ++s) {
      long double v = decode(t, sources[s].data() + (offsets[s] + i) * es);
      exact += v; // exact: see checkSum in CollectivesTestSupport.h
      sumAbs += v < 0 ? -v : v;
    }
    double value = decode(t, got + i * es);
    double tol =
        sumTolerance(t, static_cast<int>(sources.size()),
                     static_cast<double>(sumAbs), static_cast<double>(exact));
    if (!(std::fabs(static_cast<long double>(value) - exact) <= tol)) {
      bad = i;
      detail = "element " + std::to_string(i) + " = " + std::to_string(value) +
               ", exact " + std::to_string(static_cast<double>(exact)) +
               ", bound " + std::to_string(tol);
    }
  }
  k.expect(bad < 0, name, detail);
}

void testReduceScatterV(Communicator &c, DType t, Checker &k) {
  const int w = c.worldSize(), r = c.rank();
  const size_t es = dtypeSize(t);
  auto patterns = countPatterns(w, 17 * w);
  for (size_t p = 0; p < patterns.size(); ++p) {
    const auto &counts = patterns[p];
    std::string name = caseName("reduceScatterV", t, p);
    // Every rank lays its segments out its own way, so most layouts are not
    // the packed one and the backend has to pack.
    std::vector<Bytes> sends;
    std::vector<int64_t> offsets;
    std::vector<int64_t> myDispls;
    for (int s = 0; s < w; ++s) {
      std::mt19937_64 rng(seedOf(t, w, p, s, 5));
      Layout layout = makeLayout(counts, rng);
      Bytes data(layout.extent * es, kPoisonByte);
      for (int d = 0; d < w; ++d)
        fillRandomForSums(t, data.data() + layout.displs[d] * es, counts[d],
                          rng);
      sends.push_back(std::move(data));
      offsets.push_back(layout.displs[r]);
      if (s == r)
        myDispls = layout.displs;
    }
    uint64_t bytes = 0;
    for (int d = 0; d < w; ++d)
      if (d != r)
        bytes += counts[d] * es;
    Bytes recv((counts[r] + 2) * es, kPoisonByte);
    CommStats before = c.stats();
    Status st =
        c.reduceScatterV(sends[r].data(), counts, myDispls, recv.data(), t);
    k.expectOk(st, name);
    if (!st.isOk())
      continue;
    k.checkStats(before, c.stats(), bytes, name);
    checkSumWithinBound(t, sends, offsets, recv.data(), counts[r], name, k);
    k.checkPoisonOutside(recv, t, {counts[r]}, {0}, name);
  }

  // Packed layout: the backend may hand the send buffer to MPI as it is.
  std::vector<int64_t> counts = chunkSizes(2 * w + 1, w), displs(w);
  for (int d = 1; d < w; ++d)
    displs[d] = displs[d - 1] + counts[d - 1];
  int64_t total = displs[w - 1] + counts[w - 1];
  std::vector<Bytes> sends;
  std::vector<int64_t> offsets(w, displs[r]);
  for (int s = 0; s < w; ++s) {
    std::mt19937_64 rng(seedOf(t, w, 99, s, 5));
    sends.emplace_back(total * es);
    fillRandomForSums(t, sends.back().data(), total, rng);
  }
  Bytes recv((counts[r] + 2) * es, kPoisonByte);
  std::string name = caseName("reduceScatterV", t, 99) + " (packed)";
  Status st = c.reduceScatterV(sends[r].data(), counts, displs, recv.data(), t);
  k.expectOk(st, name);
  if (st.isOk()) {
    checkSumWithinBound(t, sends, offsets, recv.data(), counts[r], name, k);
    k.checkPoisonOutside(recv, t, {counts[r]}, {0}, name);
  }
}

void testAllReduce(Communicator &c, DType t, Checker &k) {
  const int w = c.worldSize(), r = c.rank();
  const size_t es = dtypeSize(t);
  const std::vector<int64_t> sizes = {0, 1, 5, 1031};
  for (size_t p = 0; p < sizes.size(); ++p)
    for (bool inPlace : {false, true}) {
      int64_t n = sizes[p];
      std::string name =
          caseName("allReduce", t, p) + (inPlace ? " in place" : "");
      std::vector<Bytes> sends;
      for (int s = 0; s < w; ++s) {
        std::mt19937_64 rng(seedOf(t, w, p, s, 6));
        sends.emplace_back(n * es);
        fillRandomForSums(t, sends.back().data(), n, rng);
      }
      Bytes recv((n + 2) * es, kPoisonByte);
      const void *send = sends[r].data();
      if (inPlace) {
        copyBytes(recv.data(), sends[r].data(), n * es);
        send = recv.data();
      }
      CommStats before = c.stats();
      Status st = c.allReduce(send, recv.data(), n, t);
      k.expectOk(st, name);
      if (!st.isOk())
        continue;
      k.checkStats(before, c.stats(), 2 * n * (w - 1) / w * es, name);
      checkSumWithinBound(t, sends, std::vector<int64_t>(w, 0), recv.data(), n,
                          name, k);
      k.checkPoisonOutside(recv, t, {n}, {0}, name);
    }
}

void testHalfSumsRoundOnce(Communicator &c, Checker &k) {
  // Rank 0 holds 2048 (f16) / 256 (bf16), ranks 1 and 2 hold 1, the others
  // 2. Summed in f32 and rounded once the result is exact; rounding to
  // f16/bf16 after each addition loses both ones (2048 + 1 ties to 2048).
  const int w = c.worldSize(), r = c.rank();
  if (w < 3)
    return;
  for (DType t : {DType::F16, DType::BF16}) {
    float big = t == DType::F16 ? 2048.0f : 256.0f;
    float mine = r == 0 ? big : (r <= 2 ? 1.0f : 2.0f);
    float sum = big + 2.0f + 2.0f * (w - 3);
    auto encode = [&](float v) {
      return t == DType::F16 ? floatToHalf(v) : floatToBf16(v);
    };
    uint16_t in = encode(mine), out = 0, expected = encode(sum);
    std::string name =
        std::string("allReduce ") + dtypeName(t) + " rounds once";
    Status st = c.allReduce(&in, &out, 1, t);
    k.expect(st.isOk() && out == expected, name,
             "got bits " + std::to_string(out) + ", expected " +
                 std::to_string(expected) + " " + st.message());
    std::vector<uint16_t> send(w, in);
    std::vector<int64_t> ones(w, 1), displs(w);
    for (int d = 0; d < w; ++d)
      displs[d] = d;
    name = std::string("reduceScatterV ") + dtypeName(t) + " rounds once";
    st = c.reduceScatterV(send.data(), ones, displs, &out, t);
    k.expect(st.isOk() && out == expected, name,
             "got bits " + std::to_string(out) + ", expected " +
                 std::to_string(expected) + " " + st.message());
  }
}

void testBroadcast(Communicator &c, DType t, Checker &k) {
  const int w = c.worldSize(), r = c.rank();
  const size_t es = dtypeSize(t);
  const std::vector<int64_t> sizes = {0, 1, 700};
  for (size_t p = 0; p < sizes.size(); ++p)
    for (int root = 0; root < w; ++root) {
      int64_t n = sizes[p];
      std::string name =
          caseName("broadcast", t, p) + " root " + std::to_string(root);
      std::mt19937_64 rng(seedOf(t, w, p, root, 7));
      Bytes data(n * es);
      fillRandomAnyMagnitude(t, data.data(), n, rng);
      Bytes buf((n + 2) * es, kPoisonByte);
      if (r == root)
        copyBytes(buf.data(), data.data(), n * es);
      CommStats before = c.stats();
      Status st = c.broadcast(buf.data(), n, t, root);
      k.expectOk(st, name);
      if (!st.isOk())
        continue;
      k.checkStats(before, c.stats(), r == root ? n * (w - 1) * es : 0, name);
      k.expect(sameBytes(buf.data(), data.data(), n * es), name,
               "buffer differs from the root's");
      k.checkPoisonOutside(buf, t, {n}, {0}, name);
    }
}

void testArgumentErrors(Communicator &c, Checker &k) {
  // Caught on the calling rank before anything is sent, so every rank can
  // make these calls without the others.
  const int w = c.worldSize();
  std::string at = "mpi allGatherV (rank " + std::to_string(c.rank()) + " of " +
                   std::to_string(w) + "): invalid arguments: ";
  std::vector<float> buf(4);
  Status st =
      c.allGatherV(buf.data(), 1, buf.data(), std::vector<int64_t>(w + 1, 1),
                   std::vector<int64_t>(w + 1, 0), DType::F32);
  k.expect(!st.isOk() && st.code() == StatusCode::InvalidArgument &&
               st.message() == at + "recvCounts has " + std::to_string(w + 1) +
                                   " entries, expected " + std::to_string(w),
           "allGatherV with a table of W+1 entries", st.message());
  std::vector<int64_t> huge(w, 0);
  huge[0] = int64_t(1) << 31;
  st = c.allGatherV(buf.data(), 0, buf.data(), huge, std::vector<int64_t>(w, 0),
                    DType::F32);
  k.expect(!st.isOk() && st.code() == StatusCode::InvalidArgument &&
               st.message().find("recvCounts[0] = 2147483648 does not fit in "
                                 "an MPI count (int)") != std::string::npos,
           "allGatherV with a count over INT_MAX", st.message());
  st = c.broadcast(buf.data(), 1, DType::F32, w);
  k.expect(!st.isOk() && st.code() == StatusCode::InvalidArgument &&
               st.message().find("root = " + std::to_string(w) +
                                 " is not a rank") != std::string::npos,
           "broadcast to a root out of range", st.message());
}

void testTimeout(Checker &k) {
  // The last rank stays away from a barrier that the others enter with a
  // 0.5 s timeout: they must fail with "timed out" after about that long,
  // and their next collective must fail at once. Then the last rank joins
  // (with a long timeout), which completes the barrier MPI still holds for
  // the others, so that nothing is left pending at MPI_Finalize.
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2)
    return;
  const bool late = rank == size - 1;
  CommOptions options;
  options.timeoutSeconds = late ? 60.0 : 0.5;
  std::unique_ptr<Communicator> c;
  Status st = createMpiCommunicator(options, c);
  k.expectOk(st, "createMpiCommunicator for the timeout test");
  if (!st.isOk())
    return;
  if (!late) {
    auto start = Clock::now();
    st = c->barrier();
    double elapsed =
        std::chrono::duration<double>(Clock::now() - start).count();
    // Generous margin: 8 processes may share 2 cores.
    k.expect(!st.isOk() && st.code() == StatusCode::DeadlineExceeded &&
                 st.message().find("mpi barrier (rank " + std::to_string(rank) +
                                   " of " + std::to_string(size) +
                                   "): timed out after 0.5 s in "
                                   "MPI_Ibarrier") != std::string::npos,
             "barrier without the last rank times out", st.message());
    k.expect(elapsed >= 0.5 && elapsed < 5.0, "timeout duration",
             std::to_string(elapsed) + " s");
    auto again = Clock::now();
    st = c->barrier();
    k.expect(!st.isOk() && st.code() == StatusCode::Aborted &&
                 st.message().find("failed earlier") != std::string::npos &&
                 std::chrono::duration<double>(Clock::now() - again).count() <
                     0.25,
             "collective after a timeout fails fast", st.message());
  }
  // Everyone else has timed out (or will, before they get here).
  MPI_Barrier(MPI_COMM_WORLD);
  if (late)
    k.expectOk(c->barrier(), "late rank completes the barrier");
  MPI_Barrier(MPI_COMM_WORLD);
}

} // namespace

int main(int argc, char **argv) {
  std::unique_ptr<MpiSession> session;
  Status st = MpiSession::create(&argc, &argv, session);
  if (!st.isOk()) {
    std::fprintf(stderr, "FAIL: %s\n", st.message().c_str());
    return 2;
  }
  Checker k(session->rank());
  k.expect(mpiAvailable(), "mpiAvailable", "false in an MPI build");
  k.expect(launchedByMpi(), "launchedByMpi",
           "false although mpirun started this process");
  {
    std::unique_ptr<Communicator> comm;
    st = createMpiCommunicator(CommOptions(), comm);
    k.expectOk(st, "createMpiCommunicator");
    if (comm) {
      k.expect(comm->rank() == session->rank() &&
                   comm->worldSize() == session->worldSize() &&
                   std::string(comm->backendName()) == "mpi",
               "communicator identity", "rank/worldSize/backendName");
      for (DType t : kAllDTypes) {
        testAllGatherV(*comm, t, k);
        testAllToAllV(*comm, t, k);
        testReduceScatterV(*comm, t, k);
        testAllReduce(*comm, t, k);
        testBroadcast(*comm, t, k);
      }
      testAllGatherVInPlace(*comm, k);
      testHalfSumsRoundOnce(*comm, k);
      testArgumentErrors(*comm, k);
      CommStats before = comm->stats();
      k.expectOk(comm->barrier(), "barrier");
      k.checkStats(before, comm->stats(), 0, "barrier");
    }
  }
  testTimeout(k);

  long local[2] = {k.checks(), k.failures()}, total[2] = {0, 0};
  MPI_Allreduce(local, total, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (session->rank() == 0) {
    if (total[1] == 0)
      std::printf("mpi collectives: %ld checks passed on %d ranks\n", total[0],
                  session->worldSize());
    else
      std::printf("mpi collectives: %ld of %ld checks FAILED on %d ranks\n",
                  total[1], total[0], session->worldSize());
  }
  return total[1] == 0 ? 0 : 1;
}
