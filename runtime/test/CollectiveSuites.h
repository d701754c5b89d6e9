//===- CollectiveSuites.h - Collective suites of every backend --*- C++ -*-===//
//
// Every collective of the Communicator interface, run on every rank of a
// group that a MakeSuiteRanks builds, for every dtype and uneven or empty
// split patterns; checked element by element against the senders' data or
// the reference sums of CollectivesTestSupport.h, with the bytes outside
// every received block still poisoned and the stats counted. Written once
// (CollectiveSuites.cpp) and run on threads (CollectivesThreadsTest.cpp),
// cuda-local and NCCL (GpuCollectivesTest.cpp): a rank's memory is reached
// through its RankMemory, host or device.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_TEST_COLLECTIVESUITES_H
#define SHARDLIN_RUNTIME_TEST_COLLECTIVESUITES_H

#include "CollectivesTestSupport.h"

#include "shardlin/runtime/Buffer.h"
#include "shardlin/runtime/Communicator.h"

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
/// Builds a group of W ranks.
using MakeSuiteRanks = std::function<Status(int, SuiteRanks &)>;

/// Runs body(rank, ranks[rank], its failures) on one thread per rank and
/// returns all failures, each prefixed with its rank; for the suites' ranks
/// and the GPU tests' alike.
template <class RankT, class Body>
std::vector<std::string> onEveryRank(std::vector<RankT> &ranks,
                                     const Body &body) {
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

/// The first 20 lines, one per line.
std::string join(const std::vector<std::string> &lines);

/// 1, 2, ..., w.
std::vector<int> upTo(int w);

void runAllGatherV(const MakeSuiteRanks &make, const std::vector<int> &sizes);
void runAllGatherVInPlace(const MakeSuiteRanks &make, int w);
void runAllToAllV(const MakeSuiteRanks &make, const std::vector<int> &sizes);
/// Checked bit for bit: every backend sums reduce-scatter segments in rank
/// order (f16/bf16 in f32, rounded once).
void runReduceScatterV(const MakeSuiteRanks &make,
                       const std::vector<int> &sizes);
/// `rankOrder(t)`: whether the backend sums in rank order for t (then the
/// bits are checked too); otherwise the bound is checked and all ranks must
/// still agree bit for bit.
void runAllReduce(const MakeSuiteRanks &make, const std::vector<int> &sizes,
                  const std::function<bool(DType)> &rankOrder);
void runBroadcast(const MakeSuiteRanks &make, const std::vector<int> &sizes);
void runBarrier(const MakeSuiteRanks &make, int w);

} // namespace shardlin::rt::testing

#endif // SHARDLIN_RUNTIME_TEST_COLLECTIVESUITES_H
