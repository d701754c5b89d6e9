//===- LocalSplit.cpp - Splitting a group of in-process ranks -------------===//

#include "comm/LocalSplit.h"

#include "comm/CommChecks.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <tuple>

namespace shardlin::rt::local {

std::vector<std::vector<int>> splitGroups(const std::vector<int> &colors,
                                          const std::vector<int> &keys) {
  std::map<int, std::vector<std::tuple<int, int>>> byColor;
  for (size_t r = 0; r < colors.size(); ++r)
    byColor[colors[r]].emplace_back(keys[r], static_cast<int>(r));
  std::vector<std::vector<int>> groups;
  for (auto &[color, members] : byColor) {
    std::sort(members.begin(), members.end());
    groups.emplace_back();
    for (const auto &[key, rank] : members)
      groups.back().push_back(rank);
  }
  return groups;
}

LocalSplit::LocalSplit(int worldSize, double timeoutSeconds, std::string where)
    : worldSize_(worldSize), timeout_(timeoutSeconds), where_(std::move(where)),
      colors_(worldSize), keys_(worldSize), made_(worldSize) {}

Status LocalSplit::split(int rank, int color, int key, const MakeGroup &make,
                         std::unique_ptr<Communicator> &out) {
  out.reset();
  const std::string at = where_ + " (rank " + std::to_string(rank) + " of " +
                         std::to_string(worldSize_) + ")";
  std::unique_lock<std::mutex> lock(mutex_);
  if (!broken_.empty())
    return Status::aborted(at + ": an earlier split failed: " + broken_);
  colors_[rank] = color;
  keys_[rank] = key;
  const uint64_t round = round_;
  if (++arrived_ == worldSize_) {
    // The last rank in makes every group while the others wait.
    result_ = Status::ok();
    for (const std::vector<int> &members : splitGroups(colors_, keys_)) {
      std::vector<std::unique_ptr<Communicator>> comms;
      Status made = make(members, comms);
      if (made && comms.size() != members.size())
        made = Status::internal("the backend made " +
                                std::to_string(comms.size()) +
                                " communicators for a group of " +
                                std::to_string(members.size()));
      if (!made) {
        result_ = made.withContext(at);
        break;
      }
      for (size_t i = 0; i < members.size(); ++i)
        made_[members[i]] = std::move(comms[i]);
    }
    arrived_ = 0;
    ++round_;
    cv_.notify_all();
  } else {
    auto done = [&] { return round_ != round || !broken_.empty(); };
    if (std::isinf(timeout_)) {
      cv_.wait(lock, done);
    } else if (!cv_.wait_for(lock, std::chrono::duration<double>(timeout_),
                             done)) {
      broken_ = "timed out after " + detail::formatSeconds(timeout_) +
                " waiting for " + std::to_string(worldSize_ - arrived_) +
                " rank(s) to split";
      cv_.notify_all();
      return Status::deadlineExceeded(at + ": " + broken_);
    }
    if (round_ == round)
      return Status::aborted(at + ": the split failed: " + broken_);
  }
  out = std::move(made_[rank]);
  if (!result_)
    out.reset();
  return result_;
}

} // namespace shardlin::rt::local
