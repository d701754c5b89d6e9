//===- PlanCache.cpp - Plans kept between runs, by shape ------------------===//

#include "shardlin/runtime/exec/PlanCache.h"
#include "shardlin/runtime/exec/Execute.h"

#include <algorithm>

namespace shardlin::rt {

PlanCache::PlanCache(size_t capacity) : capacity_(std::max<size_t>(1, capacity)) {}

PlanCache::Key PlanCache::keyOf(const SharedProgram &program, int rank,
                                int worldSize, const DynamicSizes &sizes,
                                const PlanOptions &options) {
  Key key;
  key.fuseGemmEpilogues = options.fuseGemmEpilogues;
  key.overlapChunks = options.overlapChunks;
  key.program = program.text();
  key.rank = rank;
  key.worldSize = worldSize;
  key.sizes = sizes;
  return key;
}

Status PlanCache::take(const SharedProgram &program, const Key &key,
                       Allocator &allocator, std::unique_ptr<Plan> &out,
                       bool &reused) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = std::find_if(entries_.begin(), entries_.end(),
                           [&](const Entry &e) { return e.key == key; });
    if (it != entries_.end()) {
      out = std::move(it->plan);
      entries_.erase(it);
      ++stats_.reuses;
      reused = true;
      return Status::ok();
    }
    ++stats_.builds;
  }
  reused = false;
  // Built outside the lock: other ranks build theirs at the same time.
  PlanOptions options;
  options.fuseGemmEpilogues = key.fuseGemmEpilogues;
  options.overlapChunks = key.overlapChunks;
  return Plan::build(program.shared(), key.rank, key.worldSize, allocator, out,
                     key.sizes, options);
}

void PlanCache::put(Key key, std::unique_ptr<Plan> plan) {
  if (!plan)
    return;
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.push_front(Entry{std::move(key), std::move(plan)});
  while (entries_.size() > capacity_)
    entries_.pop_back();
}

PlanCache::Stats PlanCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Stats s = stats_;
  s.size = entries_.size();
  return s;
}

} // namespace shardlin::rt
