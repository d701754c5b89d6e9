//===- LocalGroup.h - Rendezvous of in-process communicators ----*- C++ -*-===//
//
// Internal to the runtime. The threads and cuda-local backends both run W
// ranks as threads of one process; the W communicators of a group share one
// LocalGroup: a mutex, a condition variable and one slot per rank, where each
// rank publishes the arguments of the collective it is in. What the two
// backends share lives here:
//  - Kind, the collective a rank is in, and its name in messages;
//  - Slot, the arguments every backend publishes (a backend extends it with
//    what only it needs, e.g. cuda-local's events);
//  - Rendezvous, the arrival (with timeout and abort) and the completion
//    rendezvous (with agreement on the lowest rank's error);
//  - the checks of one rank's arguments (describe*), with the buffer check
//    left to the backend;
//  - checkSlots, the group-wide consistency check of the slots.
// The data movement (memcpy, or copies and kernels on a stream) stays in each
// backend. Host C++ only: no CUDA here.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_LOCALGROUP_H
#define SHARDLIN_RUNTIME_LIB_LOCALGROUP_H

#include "shardlin/runtime/DType.h"
#include "shardlin/runtime/Status.h"

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

enum class Kind : uint8_t {
  AllGatherV,
  AllToAllV,
  ReduceScatterV,
  AllReduce,
  Broadcast,
  Barrier
};

const char *kindName(Kind k);

/// "30", "0.5", "inf": a timeout as messages print it.
std::string formatSeconds(double s);

/// Checks CommOptions::timeoutSeconds: "" if it is > 0 (inf allowed, NaN
/// not), else the message. Sets `effective` to the timeout clamped to 1e9 s,
/// so that now() + timeout cannot overflow the clock (more than 30 years:
/// "never" for a collective), or inf. The threads backend reports the message
/// at every collective; cuda-local and nccl get it as a Status from
/// cuda::checkTimeout when the group is created.
std::string checkTimeoutSeconds(double timeoutSeconds, double &effective);

/// What one rank passed to the collective it is in. The table pointers point
/// at the caller's arguments, which live until the call returns, and the call
/// does not return before the departure rendezvous, after which nobody reads
/// them.
struct Slot {
  Kind kind = Kind::Barrier;
  DType dtype = DType::F32;
  const void *send = nullptr;
  void *recv = nullptr;
  /// allGatherV: sendCount; allReduce and broadcast: count.
  int64_t count = 0;
  int root = 0;
  /// allToAllV: all four; allGatherV: recv*; reduceScatterV: send* hold the
  /// counts and displs tables.
  const std::vector<int64_t> *sendCounts = nullptr;
  const std::vector<int64_t> *sendDispls = nullptr;
  const std::vector<int64_t> *recvCounts = nullptr;
  const std::vector<int64_t> *recvDispls = nullptr;
  /// allReduce: this rank's reduced chunk, read by the others.
  const void *scratch = nullptr;
  /// Non-empty when this rank's own arguments are invalid. The rank still
  /// takes part in the rendezvous so that every rank fails, none hangs.
  std::string invalid;
};

//===----------------------------------------------------------------------===//
// One rank's arguments
//===----------------------------------------------------------------------===//

/// "" if `count` elements of `elemSize` bytes are a valid count, else what is
/// wrong (negative, or a byte count that overflows).
std::string checkCount(const char *name, int64_t count, size_t elemSize);

/// Checks a counts/displs table pair of W entries: non-negative, and every
/// block's end (in bytes) representable. Sets `extent` to the largest block
/// end in elements.
std::string checkTables(const char *countsName,
                        const std::vector<int64_t> &counts,
                        const char *displsName,
                        const std::vector<int64_t> &displs, int worldSize,
                        size_t elemSize, int64_t &extent);

/// How a backend checks a buffer the collective reads or writes `elements`
/// elements of (host memory: not null; device memory: also reachable and
/// aligned): "" if fine, else what is wrong.
using CheckBuffer =
    std::function<std::string(const char *name, const void *p, int64_t)>;

/// Each of these fills the common fields of `slot` for one collective and
/// checks this rank's arguments: counts and tables first, then the buffers
/// with `checkBuffer`, in the order of the arguments; the first problem goes
/// to slot.invalid. They return the bytes this rank sends, as Communicator.h
/// counts them, or 0 if the arguments are invalid.
uint64_t describeAllGatherV(Slot &slot, int worldSize, const void *send,
                            int64_t sendCount, void *recv,
                            const std::vector<int64_t> &recvCounts,
                            const std::vector<int64_t> &recvDispls, DType dtype,
                            const CheckBuffer &checkBuffer);
uint64_t describeAllToAllV(Slot &slot, int worldSize, int rank,
                           const void *send,
                           const std::vector<int64_t> &sendCounts,
                           const std::vector<int64_t> &sendDispls, void *recv,
                           const std::vector<int64_t> &recvCounts,
                           const std::vector<int64_t> &recvDispls, DType dtype,
                           const CheckBuffer &checkBuffer);
uint64_t describeReduceScatterV(Slot &slot, int worldSize, int rank,
                                const void *send,
                                const std::vector<int64_t> &counts,
                                const std::vector<int64_t> &displs, void *recv,
                                DType dtype, const CheckBuffer &checkBuffer);
/// The backend then sets up slot.scratch (which may make it invalid).
uint64_t describeAllReduce(Slot &slot, int worldSize, const void *send,
                           void *recv, int64_t count, DType dtype,
                           const CheckBuffer &checkBuffer);
uint64_t describeBroadcast(Slot &slot, int worldSize, int rank, void *buffer,
                           int64_t count, DType dtype, int root,
                           const CheckBuffer &checkBuffer);

/// allReduce splits [0, count) into W near-equal chunks; rank r reduces
/// chunk r into [lo, hi). Any split is correct; a balanced one spreads the
/// work.
void chunkOf(int64_t count, int worldSize, int r, int64_t &lo, int64_t &hi);

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
      return Status::error(where + ": group aborted earlier: " + abortReason_);
    const auto now = std::chrono::steady_clock::now();
    if (int late = expiredWaiterLocked(now); late >= 0) {
      timeOutLocked(late, missingRanksLocked());
      return Status::error(where + ": group aborted: " + abortReason_);
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

} // namespace shardlin::rt::local

#endif // SHARDLIN_RUNTIME_LIB_LOCALGROUP_H
