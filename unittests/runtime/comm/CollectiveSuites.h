//===- CollectiveSuites.h - Collective suites of every backend --*- C++ -*-===//
//
// Every collective of the Communicator interface, run on every rank of a
// group that a MakeSuiteRanks builds, for every dtype and uneven or empty
// split patterns; checked element by element against the senders' data or
// the reference sums of CollectivesTestSupport.h, with the bytes outside
// every received block still poisoned and the stats counted. Written once
// (CollectiveSuites.cpp) and run on threads (CollectivesThreadsTest.cpp),
// MPI (CollectivesMpiTest.cpp), cuda-local and NCCL (GpuCollectivesTest.cpp):
// a rank's memory is reached through its RankMemory, host or device.
//
// A suite drives the ranks of the group that are in this process: all W of
// them, one thread each, where the ranks are threads (threads, cuda-local,
// NCCL without mpirun), or only this process's rank under MPI. Every
// process generates every rank's data from fixed seeds, so each rank checks
// its own output alone, whichever process holds the others.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_TEST_COLLECTIVESUITES_H
#define SHARDLIN_RUNTIME_TEST_COLLECTIVESUITES_H

#include "CollectivesTestSupport.h"

#include "shardlin/runtime/base/Buffer.h"
#include "shardlin/runtime/comm/Communicator.h"

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace shardlin::rt::testing {

/// Moves bytes into and out of the memory a rank's communicator works on.
class RankMemory {
public:
  virtual ~RankMemory() = default;
  /// A buffer the communicator can use, holding a copy of `host`.
  virtual Status toDevice(const Bytes &host, Buffer &out) = 0;
  /// Waits for the rank's pending work and copies all of `buf` back.
  virtual Status toHost(const Buffer &buf, Bytes &host) = 0;
};

/// Host memory, for the host backends.
std::unique_ptr<RankMemory> hostRankMemory();

/// One rank of a group under test.
struct SuiteRank {
  std::unique_ptr<RankMemory> memory;
  std::unique_ptr<Communicator> comm; // destroyed first
};
using SuiteRanks = std::vector<SuiteRank>;
/// Builds the ranks of a group of W that this process drives (all W where
/// the ranks are threads, in rank order; under MPI this process's one).
using MakeSuiteRanks = std::function<Status(int, SuiteRanks &)>;

/// The rank of ranks[index] in its group: its index, for groups held whole
/// by this process; a SuiteRank's is its communicator's.
template <class RankT> int rankOf(const RankT &, int index) { return index; }
inline int rankOf(const SuiteRank &rank, int) { return rank.comm->rank(); }

/// Runs body(rank, ranks[i], its failures) on one thread per element of
/// `ranks`, with rank = rankOf(ranks[i], i), and returns all failures, each
/// prefixed with its rank; for the suites' ranks and the GPU tests' alike.
/// A single element runs on the calling thread: an MPI process calls MPI
/// from its main thread only (MpiSession asks for MPI_THREAD_FUNNELED).
template <class RankT, class Body>
std::vector<std::string> onEveryRank(std::vector<RankT> &ranks,
                                     const Body &body) {
  const int n = int(ranks.size());
  std::vector<Failures> failures(n);
  if (n == 1) {
    body(rankOf(ranks[0], 0), ranks[0], failures[0]);
  } else {
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i)
      threads.emplace_back(
          [&, i] { body(rankOf(ranks[i], i), ranks[i], failures[i]); });
    for (auto &t : threads)
      t.join();
  }
  std::vector<std::string> all;
  for (int i = 0; i < n; ++i)
    for (auto &f : failures[i].list)
      all.push_back("rank " + std::to_string(rankOf(ranks[i], i)) + ": " + f);
  return all;
}

/// For backends that sum every dtype in rank order.
inline bool inRankOrder(DType) { return true; }

/// The first 20 lines, one per line.
std::string join(const std::vector<std::string> &lines);

/// 1, 2, ..., w.
std::vector<int> upTo(int w);

void runAllGatherV(const MakeSuiteRanks &make, const std::vector<int> &sizes);
void runAllGatherVInPlace(const MakeSuiteRanks &make, int w);
void runAllToAllV(const MakeSuiteRanks &make, const std::vector<int> &sizes);
/// `rankOrder(t)`: whether the backend sums in rank order for t (then the
/// bits are checked too: threads, cuda-local and NCCL sum reduce-scatter
/// segments in rank order, f16/bf16 in f32 rounded once); otherwise only the
/// bound (MPI picks its own order).
void runReduceScatterV(
    const MakeSuiteRanks &make, const std::vector<int> &sizes,
    const std::function<bool(DType)> &rankOrder = inRankOrder);
/// `rankOrder(t)`: whether the backend sums in rank order for t (then the
/// bits are checked too); otherwise the bound is checked and the ranks in
/// this process must still agree bit for bit.
void runAllReduce(const MakeSuiteRanks &make, const std::vector<int> &sizes,
                  const std::function<bool(DType)> &rankOrder);
void runBroadcast(const MakeSuiteRanks &make, const std::vector<int> &sizes);
void runBarrier(const MakeSuiteRanks &make, int w);
/// Communicator::split: a negative color refused; split by parity and into
/// one group in reverse order (keys), each new rank and size checked and an
/// all_reduce on each new group reaching its members only; the parent
/// still usable after.
void runSplit(const MakeSuiteRanks &make, int w);

} // namespace shardlin::rt::testing

#endif // SHARDLIN_RUNTIME_TEST_COLLECTIVESUITES_H
