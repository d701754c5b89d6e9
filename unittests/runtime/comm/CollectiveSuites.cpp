//===- CollectiveSuites.cpp - Collective suites of every backend ----------===//
//
// See CollectiveSuites.h. Compiled into every test executable that runs the
// suites.
//
//===----------------------------------------------------------------------===//

#include "CollectiveSuites.h"

#include "shardlin/runtime/base/ChunkLayout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <thread>

namespace shardlin::rt::testing {

namespace {

class HostRankMemory final : public RankMemory {
public:
  Status toDevice(const Bytes &host, Buffer &out) override {
    SHARDLIN_RETURN_IF_ERROR(
        Buffer::allocate(hostAllocator(), host.size(), out));
    copyBytes(out.data(), host.data(), host.size());
    return Status::ok();
  }
  Status toHost(const Buffer &buf, Bytes &host) override {
    host.assign(buf.bytes(), 0);
    copyBytes(host.data(), buf.data(), buf.bytes());
    return Status::ok();
  }
};

/// make(w, ranks), checked: the suites index every rank's data by rank.
Status makeGroup(const MakeSuiteRanks &make, int w, SuiteRanks &ranks) {
  SHARDLIN_RETURN_IF_ERROR(make(w, ranks));
  if (ranks.empty())
    return Status::internal("the group of " + std::to_string(w) +
                            " has no rank in this process");
  std::vector<bool> seen(w, false);
  for (const SuiteRank &rank : ranks) {
    const int r = rank.comm ? rank.comm->rank() : -1;
    if (!rank.comm || !rank.memory || rank.comm->worldSize() != w || r < 0 ||
        r >= w || seen[r])
      return Status::internal(
          "the group of " + std::to_string(w) +
          " holds a rank without a communicator or memory, of another world "
          "size, or twice");
    seen[r] = true;
  }
  return Status::ok();
}

Status toDevice(SuiteRank &rank, const Bytes &host, Buffer &out) {
  return rank.memory->toDevice(host, out);
}

Status toHost(SuiteRank &rank, const Buffer &buf, Bytes &host) {
  return rank.memory->toHost(buf, host);
}

/// The group of each size in `sizes` made once, and body(w, its ranks, t)
/// run for every dtype t.
void forEachGroupAndType(
    const MakeSuiteRanks &make, const std::vector<int> &sizes,
    const std::function<void(int w, SuiteRanks &ranks, DType t)> &body) {
  for (int w : sizes) {
    SuiteRanks ranks;
    Status made = makeGroup(make, w, ranks);
    ASSERT_TRUE(made.isOk()) << made.message();
    for (DType t : kAllDTypes)
      body(w, ranks, t);
  }
}

using RankBody = std::function<void(int r, SuiteRank &rank, Failures &f)>;

/// The group of w made and body run on every rank of it (onEveryRank), no
/// rank failing.
void expectOnEveryRank(const MakeSuiteRanks &make, int w,
                       const RankBody &body) {
  SuiteRanks ranks;
  Status made = makeGroup(make, w, ranks);
  ASSERT_TRUE(made.isOk()) << made.message();
  auto failures = onEveryRank(ranks, body);
  EXPECT_TRUE(failures.empty()) << join(failures);
}

/// A send buffer of a V collective: counts[d] elements for each d, at
/// makeLayout's random displacements, written by `fill`; poison between.
struct SendBlocks {
  Layout layout;
  Bytes data;
};
SendBlocks makeSendBlocks(DType t, const std::vector<int64_t> &counts,
                          std::mt19937_64 &rng,
                          void (*fill)(DType, unsigned char *, int64_t,
                                       std::mt19937_64 &)) {
  const size_t es = dtypeSize(t);
  SendBlocks blocks{makeLayout(counts, rng), {}};
  blocks.data.assign(blocks.layout.extent * es, kPoisonByte);
  for (size_t d = 0; d < counts.size(); ++d)
    fill(t, blocks.data.data() + blocks.layout.displs[d] * es, counts[d], rng);
  return blocks;
}

/// One collective call on `rank`, as every suite makes it: `send` (if any)
/// and the receive buffer's initial bytes `recv` copied to the device,
/// call(send's device pointer or null, recv's) checked with checkCall
/// against `bytes` sent, and the receive buffer copied back into `got`.
/// False, with a failure, where a copy failed.
bool callOnDevice(SuiteRank &rank, const Bytes *send, const Bytes &recv,
                  uint64_t bytes, const std::string &what, Failures &f,
                  const std::function<Status(void *send, void *recv)> &call,
                  Bytes &got) {
  Buffer sendBuf, recvBuf;
  Status st = send ? toDevice(rank, *send, sendBuf) : Status::ok();
  if (st.isOk())
    st = toDevice(rank, recv, recvBuf);
  if (!st.isOk()) {
    f.add(what + ": " + st.message());
    return false;
  }
  CommStats before = rank.comm->stats();
  st = call(send ? sendBuf.data() : nullptr, recvBuf.data());
  checkCall(st, before, rank.comm->stats(), bytes, what, f);
  st = toHost(rank, recvBuf, got);
  if (!st.isOk()) {
    f.add(what + ": " + st.message());
    return false;
  }
  return true;
}

/// A reduction's n elements at the start of `got` against the sum of
/// `srcs`: bit for bit in rank order where `rankOrder`, otherwise within
/// the bound; what follows them still poison.
void checkReduced(DType t, const std::vector<const unsigned char *> &srcs,
                  const Bytes &got, int64_t n, bool rankOrder,
                  const std::string &what, Failures &f) {
  std::string problem = rankOrder ? checkSum(t, srcs, got.data(), n)
                                  : checkSumWithinBound(t, srcs, got.data(), n);
  if (!problem.empty())
    f.add(what + ": " + problem);
  checkPoisonOutside(got, t, {n}, {0}, what, f);
}

} // namespace

std::unique_ptr<RankMemory> hostRankMemory() {
  return std::make_unique<HostRankMemory>();
}

std::string join(const std::vector<std::string> &lines) {
  std::string s;
  for (size_t i = 0; i < lines.size() && i < 20; ++i)
    s += lines[i] + "\n";
  return s;
}

std::vector<int> upTo(int w) {
  std::vector<int> sizes;
  for (int i = 1; i <= w; ++i)
    sizes.push_back(i);
  return sizes;
}

//===----------------------------------------------------------------------===//
// The collective suites
//===----------------------------------------------------------------------===//

void runAllGatherV(const MakeSuiteRanks &make, const std::vector<int> &sizes) {
  forEachGroupAndType(make, sizes, [&](int w, SuiteRanks &ranks, DType t) {
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
    auto failures =
        onEveryRank(ranks, [&](int r, SuiteRank &rank, Failures &f) {
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
            Bytes got;
            if (!callOnDevice(
                    rank, &sends[p][r], Bytes(layout.extent * es, kPoisonByte),
                    counts[r] * (w - 1) * es, what, f,
                    [&](void *send, void *recv) {
                      return rank.comm->allGatherV(send, counts[r], recv,
                                                   counts, layout.displs, t);
                    },
                    got))
              return;
            for (int s = 0; s < w; ++s)
              if (!sameBytes(got.data() + layout.displs[s] * es,
                             sends[p][s].data(), counts[s] * es))
                f.add(what + ": block from rank " + std::to_string(s) +
                      " differs from what it sent");
            checkPoisonOutside(got, t, counts, layout.displs, what, f);
          }
        });
    EXPECT_TRUE(failures.empty()) << join(failures);
  });
}

void runAllGatherVInPlace(const MakeSuiteRanks &make, int w) {
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
    expectOnEveryRank(make, w, [&](int r, SuiteRank &rank, Failures &f) {
      std::vector<float> host(at, -1.0f);
      for (int64_t k = 0; k < counts[r]; ++k)
        host[displs[r] + k] = 10.0f * r + k + 1;
      Bytes bytes(host.size() * 4);
      copyBytes(bytes.data(), host.data(), bytes.size());
      Buffer recv;
      Status st = toDevice(rank, bytes, recv);
      if (st.isOk())
        st = rank.comm->allGatherV(
            static_cast<unsigned char *>(recv.data()) + displs[r] * 4,
            counts[r], recv.data(), counts, displs, DType::F32);
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
  }
}

void runAllToAllV(const MakeSuiteRanks &make, const std::vector<int> &sizes) {
  forEachGroupAndType(make, sizes, [&](int w, SuiteRanks &ranks, DType t) {
    const size_t es = dtypeSize(t);
    auto patterns = matrixPatterns(w, 13 * w);
    std::vector<std::vector<SendBlocks>> sends(patterns.size());
    for (size_t p = 0; p < patterns.size(); ++p)
      for (int s = 0; s < w; ++s) {
        std::mt19937_64 rng(seedOf(t, w, p, s, 3));
        sends[p].push_back(
            makeSendBlocks(t, patterns[p][s], rng, fillRandomAnyMagnitude));
      }
    auto failures =
        onEveryRank(ranks, [&](int r, SuiteRank &rank, Failures &f) {
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
            Bytes got;
            if (!callOnDevice(
                    rank, &sends[p][r].data,
                    Bytes(recvLayout.extent * es, kPoisonByte), bytes, what, f,
                    [&](void *send, void *recv) {
                      return rank.comm->allToAllV(
                          send, m[r], sends[p][r].layout.displs, recv,
                          recvCounts, recvLayout.displs, t);
                    },
                    got))
              return;
            for (int s = 0; s < w; ++s)
              if (!sameBytes(got.data() + recvLayout.displs[s] * es,
                             sends[p][s].data.data() +
                                 sends[p][s].layout.displs[r] * es,
                             recvCounts[s] * es))
                f.add(what + ": block from rank " + std::to_string(s) +
                      " differs from what it sent");
            checkPoisonOutside(got, t, recvCounts, recvLayout.displs, what, f);
          }
        });
    EXPECT_TRUE(failures.empty()) << join(failures);
  });
}

void runReduceScatterV(const MakeSuiteRanks &make,
                       const std::vector<int> &sizes,
                       const std::function<bool(DType)> &rankOrder) {
  forEachGroupAndType(make, sizes, [&](int w, SuiteRanks &ranks, DType t) {
    const size_t es = dtypeSize(t);
    auto patterns = countPatterns(w, 17 * w);
    std::vector<std::vector<SendBlocks>> sends(patterns.size());
    for (size_t p = 0; p < patterns.size(); ++p)
      for (int s = 0; s < w; ++s) {
        std::mt19937_64 rng(seedOf(t, w, p, s, 5));
        sends[p].push_back(
            makeSendBlocks(t, patterns[p], rng, fillRandomForSums));
      }
    auto failures =
        onEveryRank(ranks, [&](int r, SuiteRank &rank, Failures &f) {
          for (size_t p = 0; p < patterns.size(); ++p) {
            const std::string what = "reduceScatterV " + caseName(t, w, p);
            const auto &counts = patterns[p];
            uint64_t bytes = 0;
            for (int d = 0; d < w; ++d)
              if (d != r)
                bytes += counts[d] * es;
            Bytes got;
            if (!callOnDevice(
                    rank, &sends[p][r].data,
                    Bytes((counts[r] + 2) * es, kPoisonByte), bytes, what, f,
                    [&](void *send, void *recv) {
                      return rank.comm->reduceScatterV(
                          send, counts, sends[p][r].layout.displs, recv, t);
                    },
                    got))
              return;
            std::vector<const unsigned char *> srcs;
            for (int s = 0; s < w; ++s)
              srcs.push_back(sends[p][s].data.data() +
                             sends[p][s].layout.displs[r] * es);
            checkReduced(t, srcs, got, counts[r], rankOrder(t), what, f);
          }
        });
    EXPECT_TRUE(failures.empty()) << join(failures);
  });
}

void runAllReduce(const MakeSuiteRanks &make, const std::vector<int> &sizes,
                  const std::function<bool(DType)> &rankOrder) {
  const std::vector<int64_t> counts = {0, 1, 5, 37, 1031, 70001};
  forEachGroupAndType(make, sizes, [&](int w, SuiteRanks &ranks, DType t) {
    const size_t es = dtypeSize(t);
    std::vector<std::vector<Bytes>> sends(counts.size());
    for (size_t p = 0; p < counts.size(); ++p)
      for (int s = 0; s < w; ++s) {
        std::mt19937_64 rng(seedOf(t, w, p, s, 6));
        sends[p].emplace_back(counts[p] * es);
        fillRandomForSums(t, sends[p][s].data(), counts[p], rng);
      }
    std::vector<std::vector<Bytes>> results(w,
                                            std::vector<Bytes>(counts.size()));
    auto failures =
        onEveryRank(ranks, [&](int r, SuiteRank &rank, Failures &f) {
          for (size_t p = 0; p < counts.size(); ++p)
            for (bool inPlace : {false, true}) {
              const int64_t n = counts[p];
              const std::string what = "allReduce " + caseName(t, w, p) +
                                       (inPlace ? " in place" : "");
              Bytes initial((n + 2) * es, kPoisonByte);
              if (inPlace)
                copyBytes(initial.data(), sends[p][r].data(), n * es);
              const int64_t mine = chunkRange(n, w, r).size;
              Bytes got;
              if (!callOnDevice(
                      rank, inPlace ? nullptr : &sends[p][r], initial,
                      (n - mine + (w - 1) * mine) * es, what, f,
                      [&](void *send, void *recv) {
                        return rank.comm->allReduce(inPlace ? recv : send, recv,
                                                    n, t);
                      },
                      got))
                return;
              std::vector<const unsigned char *> srcs;
              for (int s = 0; s < w; ++s)
                srcs.push_back(sends[p][s].data());
              checkReduced(t, srcs, got, n, rankOrder(t), what, f);
              if (inPlace)
                results[r][p] = got;
            }
        });
    EXPECT_TRUE(failures.empty()) << join(failures);
    // The ranks in this process against the first of them (under MPI
    // there is one).
    const int first = rankOf(ranks.front(), 0);
    for (size_t p = 0; p < counts.size(); ++p)
      for (size_t i = 1; i < ranks.size(); ++i) {
        const int r = rankOf(ranks[i], int(i));
        EXPECT_EQ(results[r][p], results[first][p])
            << "allReduce " << caseName(t, w, p) << ": rank " << r
            << " got other bits than rank " << first;
      }
  });
}

void runBroadcast(const MakeSuiteRanks &make, const std::vector<int> &sizes) {
  forEachGroupAndType(make, sizes, [&](int w, SuiteRanks &ranks, DType t) {
    const size_t es = dtypeSize(t);
    for (int root = 0; root < w; ++root)
      for (int64_t n : {int64_t(0), int64_t(1), int64_t(301)}) {
        Bytes payload(n * es);
        std::mt19937_64 rng(seedOf(t, w, size_t(n), root, 7));
        fillRandomAnyMagnitude(t, payload.data(), n, rng);
        auto failures =
            onEveryRank(ranks, [&](int r, SuiteRank &rank, Failures &f) {
              const std::string what = "broadcast " + caseName(t, w, 0) +
                                       " root " + std::to_string(root) + " n " +
                                       std::to_string(n);
              Bytes initial((n + 2) * es, kPoisonByte);
              if (r == root)
                copyBytes(initial.data(), payload.data(), n * es);
              Bytes got;
              if (!callOnDevice(
                      rank, nullptr, initial, r == root ? n * (w - 1) * es : 0,
                      what, f,
                      [&](void *, void *buf) {
                        return rank.comm->broadcast(buf, n, t, root);
                      },
                      got))
                return;
              if (!sameBytes(got.data(), payload.data(), n * es))
                f.add(what + ": payload differs from the root's");
              checkPoisonOutside(got, t, {n}, {0}, what, f);
            });
        EXPECT_TRUE(failures.empty()) << join(failures);
      }
  });
}

void runBarrier(const MakeSuiteRanks &make, int w) {
  expectOnEveryRank(make, w, [&](int, SuiteRank &rank, Failures &f) {
    for (int i = 0; i < 3; ++i) {
      CommStats before = rank.comm->stats();
      Status st = rank.comm->barrier();
      checkCall(st, before, rank.comm->stats(), 0, "barrier", f);
    }
  });
}

void runSplit(const MakeSuiteRanks &make, int w) {
  expectOnEveryRank(make, w, [&](int r, SuiteRank &rank, Failures &f) {
    // A negative color is refused before any rank waits for the others.
    std::unique_ptr<Communicator> none;
    Status bad = rank.comm->split(-1, 0, none);
    if (bad.code() != StatusCode::InvalidArgument || none)
      return f.add("split with color -1: " + bad.message());
    // Two splits: by parity in rank order, then one group of all in reverse
    // order (key -r); the groups by color, the ranks by (key, rank).
    for (int reverse = 0; reverse < 2; ++reverse) {
      const int color = reverse ? 0 : r % 2, key = reverse ? -r : 0;
      std::vector<int> members; // world ranks, in the new group's order
      for (int s = 0; s < w; ++s)
        if ((reverse ? 0 : s % 2) == color)
          members.push_back(s);
      if (reverse)
        std::reverse(members.begin(), members.end());
      const std::string what =
          std::string(reverse ? "reversed" : "parity") + " split";
      std::unique_ptr<Communicator> sub;
      Status st = rank.comm->split(color, key, sub);
      if (!st)
        return f.add(what + ": " + st.message());
      const int want =
          int(std::find(members.begin(), members.end(), r) - members.begin());
      if (!sub || sub->worldSize() != int(members.size()) ||
          sub->rank() != want)
        return f.add(what + ": rank " +
                     std::to_string(sub ? sub->rank() : -1) + " of " +
                     std::to_string(sub ? sub->worldSize() : 0) +
                     ", expected " + std::to_string(want) + " of " +
                     std::to_string(members.size()));
      // The new group's collectives reach its members only: the sum of
      // (world rank + 1) over them, exact in f64.
      double mine = r + 1, expected = 0;
      for (int m : members)
        expected += m + 1;
      Bytes host(sizeof(double));
      std::memcpy(host.data(), &mine, sizeof(double));
      Buffer buf;
      st = rank.memory->toDevice(host, buf);
      if (st)
        st = sub->allReduce(buf.data(), buf.data(), 1, DType::F64);
      if (st)
        st = rank.memory->toHost(buf, host);
      if (!st)
        return f.add(what + ": all_reduce on the new group: " + st.message());
      double got = 0;
      std::memcpy(&got, host.data(), sizeof(double));
      if (got != expected)
        f.add(what + ": the new group's all_reduce gave " +
              std::to_string(got) + ", expected " + std::to_string(expected));
    }
    // The parent still works after its children are gone.
    CommStats before = rank.comm->stats();
    checkCall(rank.comm->barrier(), before, rank.comm->stats(), 0,
              "barrier after the splits", f);
  });
}
} // namespace shardlin::rt::testing
