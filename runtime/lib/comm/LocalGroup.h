//===- LocalGroup.h - Rendezvous of in-process communicators ----*- C++ -*-===//
//
// Internal to the runtime. The threads and cuda-local backends both run W
// ranks as threads of one process; the W communicators of a group share one
// LocalGroup: a mutex, a condition variable and one slot per rank, where each
// rank publishes the arguments of the collective it is in. What the two
// backends share lives here:
//  - Slot, the checked call (CollectiveCall) every backend publishes (a
//    backend extends it with what only it needs, e.g. cuda-local's events);
//  - Rendezvous, the arrival (with timeout and abort) and the completion
//    rendezvous (with agreement on the lowest rank's error);
//  - checkSlots, the group-wide consistency check of the slots.
// One rank's own arguments are checked by Communicator (Communicator.cpp).
// The data movement (memcpy, or copies and kernels on a stream) stays in each
// backend. Host C++ only: no CUDA here.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_LOCALGROUP_H
#define SHARDLIN_RUNTIME_LIB_LOCALGROUP_H

#include "comm/CommChecks.h"
#include "shardlin/runtime/comm/Communicator.h"
#include "shardlin/runtime/base/Status.h"

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace shardlin::rt::local {

using Kind = CollectiveKind;

inline const char *kindName(Kind k) { return collectiveName(k); }

using detail::checkTimeoutSeconds;
using detail::formatSeconds;
using detail::offsetBytes;

/// What one rank passed to the collective it is in: the call as
/// Communicator checked it (its table pointers point at the caller's
/// arguments, which live until the call returns, and the call does not
/// return before the departure rendezvous, after which nobody reads them).
/// call.invalid non-empty: this rank's own arguments are invalid. The rank
/// still takes part in the rendezvous so that every rank fails, none hangs.
struct Slot : CollectiveCall {
  Slot() = default;
  explicit Slot(const CollectiveCall &call) : CollectiveCall(call) {}
  /// allReduce: this rank's reduced chunk, read by the others.
  const void *scratch = nullptr;
};

/// allReduce splits [0, count) into W near-equal chunks; rank r reduces
/// chunk r into [lo, hi). Any split is correct; a balanced one spreads the
/// work.
void chunkOf(int64_t count, int worldSize, int r, int64_t &lo, int64_t &hi);

/// hi - lo of chunkOf: the elements rank r reduces, which its scratch holds.
inline int64_t chunkSize(int64_t count, int worldSize, int r) {
  int64_t lo = 0, hi = 0;
  chunkOf(count, worldSize, r, lo, hi);
  return hi - lo;
}

//===----------------------------------------------------------------------===//
// The group
//===----------------------------------------------------------------------===//

/// The group-wide consistency check of all W slots, e.g. "collective
/// mismatch: rank 0 called allReduce but rank 1 called barrier"; "" if they
/// agree. A pure function of the slots, so every rank that runs it after the
/// arrival reaches the same verdict and all take the same path.
std::string checkSlots(const std::vector<const Slot *> &slots);

/// The rendezvous of a group, without the slots (see LocalGroup).
///
/// A rendezvous completes only if every rank arrives before the deadline of
/// every rank already waiting, each deadline counted from that rank's own
/// arrival. A rank that arrives after a waiting rank's deadline ends the
/// rendezvous as a timeout of that rank, even when the waiting thread has not
/// woken up yet to notice: whether a collective times out depends on when the
/// ranks arrived, not on when a thread happens to be scheduled. A timeout
/// aborts the group: from then on every arrival of every rank fails at once
/// ("group aborted earlier: <reason>"), so a missing rank never makes the
/// others hang.
class Rendezvous {
public:
  /// `timeoutSeconds` > 0, already validated by the backend; inf: no
  /// deadline. `timeoutText` is how messages print it.
  Rendezvous(int worldSize, double timeoutSeconds, std::string timeoutText);

  int worldSize() const { return worldSize_; }

  /// Waits for the other ranks of the group with `rank`'s arrival. `publish`
  /// runs under the group's lock, before `rank` counts as arrived (it stores
  /// the rank's slot); it does not run if the group is already aborted or
  /// the arrival is late. `kind` names the collective in the abort reason.
  /// `where` prefixes error messages.
  template <typename Publish>
  Status arrive(int rank, Kind kind, const std::string &where,
                Publish &&publish) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (aborted_)
      return Status::aborted(where +
                             ": group aborted earlier: " + abortReason_);
    const auto now = std::chrono::steady_clock::now();
    if (int late = expiredWaiterLocked(now); late >= 0) {
      timeOutLocked(late, missingRanksLocked());
      return Status::aborted(where + ": group aborted: " + abortReason_);
    }
    publish();
    kinds_[rank] = kind;
    return waitForArrivalsLocked(lock, rank, now, where);
  }

  /// A rendezvous between ranks that have all passed this collective's
  /// arrival. It has no timeout and ignores aborts, on purpose: every rank it
  /// waits for is inside this collective, running only copies (or enqueuing
  /// work and waiting for its own stream), so it cannot hang; and returning
  /// early would let a caller free buffers that another rank is still
  /// reading. (An abort needs a rank blocked in an arrival, which cannot
  /// happen before all ranks have passed this point.)
  ///
  /// Each rank passes its local error, "" if none; every rank gets the same
  /// answer: the lowest rank's error, or "" if all succeeded.
  std::string sync(int rank, std::string localError = {});

private:
  Status waitForArrivalsLocked(std::unique_lock<std::mutex> &lock, int rank,
                               std::chrono::steady_clock::time_point now,
                               const std::string &where);
  bool enterLocked(int rank);
  int expiredWaiterLocked(std::chrono::steady_clock::time_point now) const;
  void timeOutLocked(int rank, const std::string &missing);
  std::string missingRanksLocked() const;

  const int worldSize_;
  bool hasDeadline_ = true;
  double timeout_ = 0;
  const std::string timeoutText_;

  std::mutex mutex_;
  std::condition_variable cv_;
  uint64_t generation_ = 0;
  int arrived_ = 0;
  std::vector<char> present_;
  /// The deadline of each rank waiting in an arrival (valid where present_).
  std::vector<std::chrono::steady_clock::time_point> deadlines_;
  /// The collective each rank last arrived in (for the abort reason).
  std::vector<Kind> kinds_;
  bool aborted_ = false;
  std::string abortReason_;
  int timedOutRank_ = -1;
  std::string timedOutMissing_;
  /// sync: each rank's local error, and the agreed one.
  std::vector<std::string> errors_;
  std::string syncResult_;
};

/// State shared by the communicators of one group: the rendezvous and one
/// SlotT (a Slot, or a backend's extension of it) per rank.
template <typename SlotT> class LocalGroup : public Rendezvous {
public:
  LocalGroup(int worldSize, double timeoutSeconds, std::string timeoutText)
      : Rendezvous(worldSize, timeoutSeconds, std::move(timeoutText)),
        slots_(worldSize) {
    bases_.reserve(slots_.size());
    for (const SlotT &s : slots_)
      bases_.push_back(&s);
  }

  /// Valid to read between this rank's arrival and its departure.
  const SlotT &slot(int r) const { return slots_[r]; }

  /// Publishes `slot` as rank `rank`'s and waits, with the group timeout,
  /// until all ranks have arrived (see Rendezvous).
  Status arrive(int rank, SlotT slot, const std::string &where) {
    const Kind kind = slot.kind;
    return Rendezvous::arrive(rank, kind, where,
                              [&] { slots_[rank] = std::move(slot); });
  }

  /// checkSlots on this group's slots; valid where slot() is.
  std::string checkSlots() const { return local::checkSlots(bases_); }

private:
  std::vector<SlotT> slots_;
  /// slots_ as Slots (never resized, so the pointers stay valid).
  std::vector<const Slot *> bases_;
};

//===----------------------------------------------------------------------===//
// The all-reduce of an in-process group, written once
//===----------------------------------------------------------------------===//

/// The rank-order chunked all-reduce of a group whose ranks all hold their
/// arguments in `group` (a LocalGroup; each slot's `scratch` is its rank's
/// reduced chunk). `send` may equal `recv`, so no rank may write its recv
/// while a peer may still read sends. Hence two phases with a rendezvous
/// between them: rank r sums chunk r of every rank's send, in rank order,
/// into its scratch (`reduce(srcs, n)`, srcs in rank order, then
/// `published()`, e.g. an event the peers wait on); after the rendezvous,
/// `afterSync()` (e.g. the stream waits for those events) and rank r copies
/// every rank's reduced chunk into its recv (`copy(dst, src, n)`). Every
/// element is summed once, in rank order, so all ranks get the same bits.
/// The data movement is the backend's (memcpy on the host; kernels and
/// copies on a stream on a GPU); each hook returns "" or an error message.
/// Every rank makes the same one sync call, whatever fails: a failure
/// anywhere stops the second phase everywhere, so no rank copies a chunk
/// that was never reduced. Returns "" or the error.
template <typename Group, typename Reduce, typename Published,
          typename AfterSync, typename Copy>
std::string allReduceInRankOrder(Group &group, int rank, void *recv,
                                 int64_t count, size_t elemSize,
                                 Reduce &&reduce, Published &&published,
                                 AfterSync &&afterSync, Copy &&copy) {
  const int w = group.worldSize();
  int64_t lo = 0, hi = 0;
  chunkOf(count, w, rank, lo, hi);
  std::vector<const void *> srcs(w);
  for (int s = 0; s < w; ++s)
    srcs[s] = offsetBytes(group.slot(s).send, lo, elemSize);
  std::string err = reduce(srcs, hi - lo);
  if (err.empty())
    err = published();
  std::string reduced = group.sync(rank, err);
  if (!reduced.empty())
    return reduced;
  if (std::string e = afterSync(); !e.empty())
    return e;
  for (int s = 0; s < w; ++s) {
    int64_t slo = 0, shi = 0;
    chunkOf(count, w, s, slo, shi);
    if (std::string e = copy(offsetBytes(recv, slo, elemSize),
                             group.slot(s).scratch, shi - slo);
        !e.empty())
      return e;
  }
  return {};
}

} // namespace shardlin::rt::local

#endif // SHARDLIN_RUNTIME_LIB_LOCALGROUP_H
