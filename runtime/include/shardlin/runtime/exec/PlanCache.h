//===- PlanCache.h - Plans kept between runs, by shape ----------*- C++ -*-===//
//
// A program with dynamic batch dims needs a plan per set of sizes (every
// rank's: a collective that stacks per-rank rows depends on all of them).
// A server runs the same program over and over with a few distinct batch
// sizes; PlanCache keeps the plans it built so that a run whose sizes were
// seen before reuses its plan instead of resolving and allocating again.
//
// A plan is keyed by the program (its text form), the rank, the world size
// and every rank's dynamic sizes. A run takes its plan out of the cache and
// gives it back when it is done, so two runs at once never share one plan
// (the second builds its own). The least recently used plans beyond the
// capacity are dropped. Plans hold memory of the allocator they were built
// on, which must outlive the cache: runRank uses a cache only for ranks on
// host memory.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_PLANCACHE_H
#define SHARDLIN_RUNTIME_PLANCACHE_H

#include "shardlin/runtime/exec/Plan.h"

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace shardlin::rt {

class SharedProgram;

class PlanCache {
public:
  /// What identifies a plan.
  struct Key {
    /// The program's text form, locations included (SharedProgram::text),
    /// shared with the run that computed it.
    std::shared_ptr<const std::string> program;
    int rank = 0;
    int worldSize = 0;
    DynamicSizes sizes;
    /// PlanOptions' fields.
    bool fuseGemmEpilogues = true;
    int overlapChunks = -1;
    bool operator==(const Key &o) const {
      return rank == o.rank && worldSize == o.worldSize && sizes == o.sizes &&
             fuseGemmEpilogues == o.fuseGemmEpilogues &&
             overlapChunks == o.overlapChunks &&
             (program == o.program ||
              (program && o.program && *program == *o.program));
    }
  };

  struct Stats {
    /// Plans built because none was cached, and plans reused.
    uint64_t builds = 0, reuses = 0;
    /// Plans held now.
    size_t size = 0;
  };

  /// Keeps at most `capacity` (>= 1) plans (one per rank of this process
  /// and set of sizes).
  explicit PlanCache(size_t capacity = 64);

  /// The key of `program` on `rank` of `worldSize` with `sizes`.
  static Key keyOf(const SharedProgram &program, int rank, int worldSize,
                   const DynamicSizes &sizes,
                   const PlanOptions &options = PlanOptions());

  /// A plan for `key`: a cached one (`reused` true), or one built with
  /// Plan::build on `allocator`. The caller owns it until it calls put.
  Status take(const SharedProgram &program, const Key &key,
              Allocator &allocator, std::unique_ptr<Plan> &out, bool &reused);
  /// Gives a plan taken for `key` back for later runs.
  void put(Key key, std::unique_ptr<Plan> plan);

  Stats stats() const;

private:
  struct Entry {
    Key key;
    std::unique_ptr<Plan> plan;
  };
  size_t capacity_;
  mutable std::mutex mutex_;
  std::list<Entry> entries_; // most recently used first
  Stats stats_;
};

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_PLANCACHE_H
