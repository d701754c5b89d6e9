//===- ThreadLauncher.h - Ranks as threads of this process ------*- C++ -*-===//
//
// Internal to the runtime: how the backends whose ranks are threads of one
// process (threads, cuda-local, nccl without mpirun) run them.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_EXEC_THREADLAUNCHER_H
#define SHARDLIN_RUNTIME_LIB_EXEC_THREADLAUNCHER_H

#include "shardlin/runtime/exec/Execute.h"

#include <functional>
#include <memory>
#include <vector>

namespace shardlin::rt {

/// The ranks of one process's group, one thread each.
struct ThreadRanks {
  /// Rank r's communicator.
  std::vector<std::unique_ptr<Communicator>> comms;
  /// If not empty, carries the agreements (one host communicator per rank).
  std::vector<std::unique_ptr<Communicator>> agree;
  /// Creates a rank's device, on its thread.
  std::function<std::unique_ptr<RankDevice>()> makeDevice;
  /// Run the ranks on threads kept from earlier runs (started on first
  /// need, idle in between) instead of starting and joining W threads per
  /// run: a run's cost for a small program is mostly that (the Python call
  /// path, docs/performance.md). Only for host devices, whose rank threads
  /// hold no per-thread state between runs.
  bool reuseThreads = false;
};

/// Runs rank r of `group` on thread r (runWorldRank: on a grid, rank
/// r % W of replica r / W). Fills `ranks` by rank; returns the
/// root cause. With options.abandonLateRanks, once a rank has failed, ranks
/// that are still running min(timeout, 2 s) later are given up on
/// (RunOptions).
Status runRanksOnThreads(const SharedProgram &program,
                         const RunOptions &options,
                         const RankCallbacks &callbacks, ThreadRanks group,
                         std::vector<RankResult> &ranks);

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_LIB_EXEC_THREADLAUNCHER_H
