//===- LocalSplit.h - Splitting a group of in-process ranks -----*- C++ -*-===//
//
// Internal to the runtime. Communicator::split for the backends whose ranks
// are threads of one process (threads, cuda-local), written once: the
// communicators of a group share one LocalSplit, where each rank leaves its
// color and key; the last to arrive computes the new groups (MPI_Comm_split's
// rule, splitGroups) and makes each group's communicators with the backend's
// factory; every rank then takes its own. A rank that waits longer than the
// group's timeout fails, and so does every later split of the group: a
// missing rank never makes the others hang.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_COMM_LOCALSPLIT_H
#define SHARDLIN_RUNTIME_LIB_COMM_LOCALSPLIT_H

#include "shardlin/runtime/comm/Communicator.h"

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace shardlin::rt::local {

/// The groups of a split: the ranks that passed the same color, each group
/// in the order of (key, rank), the groups in the order of their colors.
std::vector<std::vector<int>> splitGroups(const std::vector<int> &colors,
                                          const std::vector<int> &keys);

class LocalSplit {
public:
  /// Makes the communicators of one new group: comms[i] is the new rank i,
  /// which was rank members[i] of the group being split.
  using MakeGroup = std::function<Status(
      const std::vector<int> &members,
      std::vector<std::unique_ptr<Communicator>> &comms)>;

  /// `timeoutSeconds` > 0 (inf: none), as the group's collectives; `where`
  /// prefixes messages ("threads split").
  LocalSplit(int worldSize, double timeoutSeconds, std::string where);

  /// Rank `rank`'s part of a split (Communicator::doSplit). `make` is
  /// called by one rank, the last to arrive, for every new group.
  Status split(int rank, int color, int key, const MakeGroup &make,
               std::unique_ptr<Communicator> &out);

private:
  const int worldSize_;
  const double timeout_;
  const std::string where_;
  std::mutex mutex_;
  std::condition_variable cv_;
  uint64_t round_ = 0;
  int arrived_ = 0;
  std::vector<int> colors_, keys_;
  std::vector<std::unique_ptr<Communicator>> made_;
  Status result_;
  std::string broken_;
};

} // namespace shardlin::rt::local

#endif // SHARDLIN_RUNTIME_LIB_COMM_LOCALSPLIT_H
