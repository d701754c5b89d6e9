//===- ThreadsCommunicator.cpp - Ranks as threads of one process ----------===//
//
// The W communicators of a group share one Group (local::LocalGroup, shared
// with the cuda-local backend): a mutex, a condition variable and one Slot
// per rank. A collective is a short sequence of
// rendezvous on that state:
//   1. arrival: each rank publishes its arguments (buffer pointers and count
//      tables) in its slot and waits, with the group's timeout, until all W
//      ranks have arrived;
//   2. every rank checks all W slots for consistency. The check is a pure
//      function of the slots, so every rank reaches the same verdict and all
//      take the same path (an error on one rank is an error on all of them);
//   3. each rank pulls what it needs straight from the other ranks' buffers;
//   4. departure: no rank returns, and so lets its caller reuse or free its
//      buffers, before every rank has finished reading them.
// allReduce adds one rendezvous between 3 and 4 (see allReduce below).
//
// A rank whose arrival times out marks the whole group aborted and wakes the
// others; from then on every collective of every rank of the group fails at
// once with the reason, so a missing rank never makes the others hang. A rank
// that arrives after a waiting rank's deadline ends the rendezvous the same
// way, so the outcome depends on the arrival times alone.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/backends/Host.h"

#include "comm/LocalGroup.h"
#include "comm/LocalSplit.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

namespace shardlin::rt {
namespace {

using local::chunkSize;
using local::offsetBytes;
using local::Slot;

/// State shared by the communicators of one group: the rendezvous of
/// LocalGroup.h, plus the verdict on CommOptions::timeoutSeconds.
/// createThreadsGroup cannot return a Status, so an invalid timeout makes
/// every collective fail with the message instead.
class Group : public local::LocalGroup<Slot> {
public:
  Group(int worldSize, const CommOptions &options)
      : Group(worldSize, options.timeoutSeconds, checked(options)) {
    options_ = options;
  }

  const std::string &configError() const { return configError_; }
  const CommOptions &options() const { return options_; }
  /// Communicator::split: its new groups are groups of this backend.
  local::LocalSplit &splitter() { return split_; }

private:
  struct Checked {
    double effective = 0;
    std::string error;
  };
  static Checked checked(const CommOptions &options) {
    Checked c;
    c.error = local::checkTimeoutSeconds(options.timeoutSeconds, c.effective);
    return c;
  }
  // Messages print the timeout as given, not as clamped.
  Group(int worldSize, double given, Checked c)
      : LocalGroup(worldSize, c.effective, local::formatSeconds(given)),
        configError_(std::move(c.error)),
        split_(worldSize, c.effective, "threads split") {}

  std::string configError_;
  CommOptions options_;
  local::LocalSplit split_;
};

//===----------------------------------------------------------------------===//
// Copies and sums
//===----------------------------------------------------------------------===//

void copyElements(void *dst, const void *src, int64_t n, size_t elemSize) {
  // An in-place caller passes a send block that is its own receive block.
  // Copying it onto itself would be a write to memory other ranks are
  // reading at that moment (a data race, even with equal bytes): skip it.
  if (n == 0 || dst == src)
    return;
  // memmove: a caller's blocks may still overlap partially.
  std::memmove(dst, src, static_cast<size_t>(n) * elemSize);
}

/// dst[i] = sum over k of srcs[k][i], k in rank order, for i < n: f64 in
/// f64, f32 in f32, f16/bf16 in f32 rounded once. Works in blocks on the
/// stack (cache friendly, and dst may alias one of the sources element for
/// element). Sources are copied with memcpy because callers' buffers need not
/// be aligned for the element type.
template <typename Acc>
void sumBlocks(DType dtype, const std::vector<const void *> &srcs, void *dst,
               int64_t n) {
  constexpr int64_t kBlock = 512;
  const size_t elemSize = dtypeSize(dtype);
  const bool native = elemSize == sizeof(Acc);
  Acc acc[kBlock];
  Acc tmp[kBlock];
  for (int64_t lo = 0; lo < n; lo += kBlock) {
    size_t len = static_cast<size_t>(std::min(kBlock, n - lo));
    for (size_t k = 0; k < srcs.size(); ++k) {
      const void *src = offsetBytes(srcs[k], lo, elemSize);
      Acc *into = k == 0 ? acc : tmp;
      if (native)
        std::memcpy(into, src, len * sizeof(Acc));
      else if constexpr (std::is_same_v<Acc, float>)
        convertToF32(dtype, src, into, len);
      if (k == 0)
        continue;
      for (size_t i = 0; i < len; ++i)
        acc[i] += tmp[i];
    }
    void *out = offsetBytes(dst, lo, elemSize);
    if (native)
      std::memcpy(out, acc, len * sizeof(Acc));
    else if constexpr (std::is_same_v<Acc, float>)
      convertFromF32(dtype, acc, out, len);
  }
}

void sumInRankOrder(DType dtype, const std::vector<const void *> &srcs,
                    void *dst, int64_t n) {
  if (n == 0)
    return;
  // One source: the sum is the value itself, bit for bit (keeps -0 and NaN
  // payloads that a round trip through f32 might not).
  if (srcs.size() == 1) {
    copyElements(dst, srcs[0], n, dtypeSize(dtype));
    return;
  }
  if (dtype == DType::F64)
    sumBlocks<double>(dtype, srcs, dst, n);
  else
    sumBlocks<float>(dtype, srcs, dst, n);
}

//===----------------------------------------------------------------------===//
// The communicator
//===----------------------------------------------------------------------===//

class ThreadsCommunicator final : public Communicator {
public:
  ThreadsCommunicator(std::shared_ptr<Group> group, int rank)
      : group_(std::move(group)), rank_(rank) {}

  int rank() const override { return rank_; }
  int worldSize() const override { return group_->worldSize(); }
  const char *backendName() const override { return "threads"; }

protected:
  SHARDLIN_COMMUNICATOR_OVERRIDES

private:
  /// Runs one collective: arrival, group-wide check, `pull` (this rank's
  /// share of the work), departure. `pull` runs only if every rank's
  /// arguments are consistent, and it must make the same number of
  /// group_->sync calls on every rank.
  template <typename Pull> Status run(Slot slot, Pull pull);

  std::shared_ptr<Group> group_;
  int rank_;
};

template <typename Pull> Status ThreadsCommunicator::run(Slot slot, Pull pull) {
  const std::string at = slot.where;
  if (!group_->configError().empty())
    return Status::invalidArgument(at + ": " + group_->configError());
  SHARDLIN_RETURN_IF_ERROR(group_->arrive(rank_, std::move(slot), at));

  std::string problem = group_->checkSlots();
  if (problem.empty())
    pull();
  group_->sync(rank_);
  if (!problem.empty())
    return Status::invalidArgument(at + ": " + problem);
  return Status::ok();
}

Status ThreadsCommunicator::doAllGatherV(const CollectiveCall &call) {
  return run(Slot(call), [&] {
    const int w = worldSize();
    const size_t es = dtypeSize(call.dtype);
    const std::vector<int64_t> &recvCounts = *call.recvCounts;
    const std::vector<int64_t> &recvDispls = *call.recvDispls;
    for (int s = 0; s < w; ++s)
      copyElements(offsetBytes(call.recv, recvDispls[s], es),
                   group_->slot(s).send, recvCounts[s], es);
  });
}

Status ThreadsCommunicator::doAllToAllV(const CollectiveCall &call) {
  return run(Slot(call), [&] {
    const int w = worldSize();
    const size_t es = dtypeSize(call.dtype);
    const std::vector<int64_t> &recvCounts = *call.recvCounts;
    const std::vector<int64_t> &recvDispls = *call.recvDispls;
    for (int s = 0; s < w; ++s) {
      const Slot &from = group_->slot(s);
      copyElements(offsetBytes(call.recv, recvDispls[s], es),
                   offsetBytes(from.send, (*from.sendDispls)[rank_], es),
                   recvCounts[s], es);
    }
  });
}

Status ThreadsCommunicator::doReduceScatterV(const CollectiveCall &call) {
  return run(Slot(call), [&] {
    const int w = worldSize();
    const size_t es = dtypeSize(call.dtype);
    std::vector<const void *> srcs(w);
    for (int s = 0; s < w; ++s) {
      const Slot &from = group_->slot(s);
      srcs[s] = offsetBytes(from.send, (*from.sendDispls)[rank_], es);
    }
    sumInRankOrder(call.dtype, srcs, call.recv, (*call.sendCounts)[rank_]);
  });
}

Status ThreadsCommunicator::doAllReduce(const CollectiveCall &call) {
  // local::allReduceInRankOrder, on host memory: the departure rendezvous
  // of run() keeps every rank's scratch alive until all have copied it.
  const size_t es = dtypeSize(call.dtype);
  const int64_t count = call.count;
  Slot slot(call);
  std::unique_ptr<unsigned char[]> scratch;
  if (slot.invalid.empty()) {
    const size_t scratchBytes =
        static_cast<size_t>(chunkSize(count, worldSize(), rank_)) * es;
    if (scratchBytes > 0) {
      scratch.reset(new (std::nothrow) unsigned char[scratchBytes]);
      if (!scratch)
        slot.invalid = "cannot allocate " + std::to_string(scratchBytes) +
                       " bytes of scratch";
    }
    slot.scratch = scratch.get();
  }

  return run(std::move(slot), [&] {
    local::allReduceInRankOrder(
        *group_, rank_, call.recv, count, es,
        [&](const std::vector<const void *> &srcs, int64_t n) {
          sumInRankOrder(call.dtype, srcs, scratch.get(), n);
          return std::string();
        },
        [] { return std::string(); }, [] { return std::string(); },
        [&](void *dst, const void *src, int64_t n) {
          copyElements(dst, src, n, es);
          return std::string();
        });
  });
}

Status ThreadsCommunicator::doBroadcast(const CollectiveCall &call) {
  return run(Slot(call), [&] {
    if (rank_ != call.root)
      copyElements(call.recv, group_->slot(call.root).recv, call.count,
                   dtypeSize(call.dtype));
  });
}

Status ThreadsCommunicator::doBarrier(const CollectiveCall &call) {
  return run(Slot(call), [] {});
}

Status ThreadsCommunicator::doSplit(int color, int key,
                                    std::unique_ptr<Communicator> &out) {
  if (!group_->configError().empty())
    return Status::invalidArgument("threads split: " + group_->configError());
  const CommOptions options = group_->options();
  return group_->splitter().split(
      rank_, color, key,
      [&](const std::vector<int> &members,
          std::vector<std::unique_ptr<Communicator>> &comms) {
        comms = createThreadsGroup(static_cast<int>(members.size()), options);
        return Status::ok();
      },
      out);
}

} // namespace

std::vector<std::unique_ptr<Communicator>>
createThreadsGroup(int worldSize, const CommOptions &options) {
  std::vector<std::unique_ptr<Communicator>> comms;
  // The interface cannot return a Status here; an empty group is the
  // documented answer to worldSize < 1.
  if (worldSize < 1)
    return comms;
  auto group = std::make_shared<Group>(worldSize, options);
  comms.reserve(worldSize);
  for (int r = 0; r < worldSize; ++r)
    comms.push_back(std::make_unique<ThreadsCommunicator>(group, r));
  return comms;
}

} // namespace shardlin::rt
