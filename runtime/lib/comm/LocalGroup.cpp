//===- LocalGroup.cpp - The rendezvous of in-process communicators --------===//

#include "comm/LocalGroup.h"

#include <algorithm>
#include <cmath>

namespace shardlin::rt::local {

void chunkOf(int64_t count, int worldSize, int r, int64_t &lo, int64_t &hi) {
  int64_t base = count / worldSize, rem = count % worldSize;
  lo = r * base + std::min<int64_t>(r, rem);
  hi = lo + base + (r < rem ? 1 : 0);
}

//===----------------------------------------------------------------------===//
// The consistency check
//===----------------------------------------------------------------------===//

std::string checkSlots(const std::vector<const Slot *> &slots) {
  const int w = static_cast<int>(slots.size());
  auto slot = [&](int r) -> const Slot & { return *slots[r]; };
  for (int r = 0; r < w; ++r)
    if (!slot(r).invalid.empty())
      return "invalid arguments on rank " + std::to_string(r) + ": " +
             slot(r).invalid;
  const Slot &first = slot(0);
  for (int r = 1; r < w; ++r) {
    const Slot &s = slot(r);
    if (s.kind != first.kind)
      return std::string("collective mismatch: rank 0 called ") +
             kindName(first.kind) + " but rank " + std::to_string(r) +
             " called " + kindName(s.kind);
  }
  if (first.kind == Kind::Barrier)
    return {};
  for (int r = 1; r < w; ++r) {
    const Slot &s = slot(r);
    if (s.dtype != first.dtype)
      return std::string("dtype mismatch: rank 0 passed ") +
             dtypeName(first.dtype) + " but rank " + std::to_string(r) +
             " passed " + dtypeName(s.dtype);
  }

  switch (first.kind) {
  case Kind::AllGatherV:
    for (int q = 0; q < w; ++q)
      for (int r = 0; r < w; ++r) {
        int64_t expected = (*slot(q).recvCounts)[r];
        if (expected != slot(r).count)
          return "size mismatch: rank " + std::to_string(r) + " sends " +
                 std::to_string(slot(r).count) + " elements but rank " +
                 std::to_string(q) + " expects recvCounts[" +
                 std::to_string(r) + "] = " + std::to_string(expected);
      }
    return {};
  case Kind::AllToAllV:
    for (int s = 0; s < w; ++s)
      for (int d = 0; d < w; ++d) {
        int64_t sent = (*slot(s).sendCounts)[d];
        int64_t expected = (*slot(d).recvCounts)[s];
        if (sent != expected)
          return "size mismatch: rank " + std::to_string(s) + " sends " +
                 std::to_string(sent) + " elements to rank " +
                 std::to_string(d) + " (sendCounts[" + std::to_string(d) +
                 "]) but rank " + std::to_string(d) + " expects recvCounts[" +
                 std::to_string(s) + "] = " + std::to_string(expected);
      }
    return {};
  case Kind::ReduceScatterV:
    // Only the counts must agree: displs describe each rank's own send
    // layout, so they may differ without harm.
    for (int r = 1; r < w; ++r)
      for (int d = 0; d < w; ++d) {
        int64_t mine = (*first.sendCounts)[d];
        int64_t theirs = (*slot(r).sendCounts)[d];
        if (mine != theirs)
          return "counts differ between ranks: rank 0 has counts[" +
                 std::to_string(d) + "] = " + std::to_string(mine) +
                 " but rank " + std::to_string(r) + " has counts[" +
                 std::to_string(d) + "] = " + std::to_string(theirs);
      }
    return {};
  case Kind::AllReduce:
  case Kind::Broadcast:
    for (int r = 1; r < w; ++r) {
      const Slot &s = slot(r);
      if (s.count != first.count)
        return "count mismatch: rank 0 passed count = " +
               std::to_string(first.count) + " but rank " + std::to_string(r) +
               " passed " + std::to_string(s.count);
      if (first.kind == Kind::Broadcast && s.root != first.root)
        return "root mismatch: rank 0 passed root = " +
               std::to_string(first.root) + " but rank " + std::to_string(r) +
               " passed " + std::to_string(s.root);
    }
    return {};
  case Kind::Barrier:
    return {};
  }
  return {};
}

//===----------------------------------------------------------------------===//
// The rendezvous
//===----------------------------------------------------------------------===//

Rendezvous::Rendezvous(int worldSize, double timeoutSeconds,
                       std::string timeoutText)
    : worldSize_(worldSize), hasDeadline_(!std::isinf(timeoutSeconds)),
      timeout_(timeoutSeconds), timeoutText_(std::move(timeoutText)),
      present_(worldSize, 0), deadlines_(worldSize),
      kinds_(worldSize, Kind::Barrier), errors_(worldSize) {}

Status
Rendezvous::waitForArrivalsLocked(std::unique_lock<std::mutex> &lock, int rank,
                                  std::chrono::steady_clock::time_point now,
                                  const std::string &where) {
  const uint64_t generation = generation_;
  if (enterLocked(rank))
    return Status::ok();

  auto done = [&] { return generation_ != generation || aborted_; };
  if (!hasDeadline_) {
    cv_.wait(lock, done);
  } else {
    deadlines_[rank] =
        now + std::chrono::duration_cast<std::chrono::nanoseconds>(
                  std::chrono::duration<double>(timeout_));
    if (!cv_.wait_until(lock, deadlines_[rank], done))
      timeOutLocked(rank, missingRanksLocked());
  }
  // A completed rendezvous wins over a later abort: this collective can go
  // on, and the abort shows up at the next one.
  if (generation_ != generation)
    return Status::ok();
  if (timedOutRank_ == rank)
    return Status::deadlineExceeded(where + ": timed out after " +
                                    timeoutText_ + " s waiting for " +
                                    timedOutMissing_);
  return Status::aborted(where + ": group aborted: " + abortReason_);
}

std::string Rendezvous::sync(int rank, std::string localError) {
  std::unique_lock<std::mutex> lock(mutex_);
  errors_[rank] = std::move(localError);
  const uint64_t generation = generation_;
  if (!enterLocked(rank))
    cv_.wait(lock, [&] { return generation_ != generation; });
  // Stable until the next rendezvous completes, which needs this rank.
  return syncResult_;
}

/// Counts `rank` in the current rendezvous; the last one in completes it,
/// agrees on the lowest rank's error, and wakes everybody. Returns true if
/// this call completed it.
bool Rendezvous::enterLocked(int rank) {
  present_[rank] = 1;
  if (++arrived_ < worldSize_)
    return false;
  syncResult_.clear();
  for (std::string &e : errors_) {
    if (syncResult_.empty() && !e.empty())
      syncResult_ = e;
    e.clear();
  }
  arrived_ = 0;
  std::fill(present_.begin(), present_.end(), 0);
  ++generation_;
  cv_.notify_all();
  return true;
}

/// A rank waiting in an arrival whose deadline is before `now`, or -1.
int Rendezvous::expiredWaiterLocked(
    std::chrono::steady_clock::time_point now) const {
  if (!hasDeadline_)
    return -1;
  int first = -1;
  for (int r = 0; r < worldSize_; ++r)
    if (present_[r] && deadlines_[r] < now &&
        (first < 0 || deadlines_[r] < deadlines_[first]))
      first = r;
  return first;
}

/// Aborts the group because `rank` timed out waiting for `missing`.
void Rendezvous::timeOutLocked(int rank, const std::string &missing) {
  timedOutRank_ = rank;
  timedOutMissing_ = missing;
  abortReason_ = "rank " + std::to_string(rank) + " timed out in " +
                 kindName(kinds_[rank]) + " after " + timeoutText_ +
                 " s waiting for " + missing;
  aborted_ = true;
  cv_.notify_all();
}

std::string Rendezvous::missingRanksLocked() const {
  std::string list;
  int n = 0;
  for (int r = 0; r < worldSize_; ++r) {
    if (present_[r])
      continue;
    list += (n++ ? ", " : "") + std::to_string(r);
  }
  return (n == 1 ? "rank " : "ranks ") + list;
}

} // namespace shardlin::rt::local
