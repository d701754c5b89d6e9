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

#include "shardlin/runtime/ThreadsCommunicator.h"

#include "../LocalGroup.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

namespace shardlin::rt {
namespace {

using local::Kind;
using local::kindName;
using local::Slot;

/// State shared by the communicators of one group: the rendezvous of
/// LocalGroup.h, plus the verdict on CommOptions::timeoutSeconds.
/// createThreadsGroup cannot return a Status, so an invalid timeout makes
/// every collective fail with the message instead.
class Group : public local::LocalGroup<Slot> {
public:
  Group(int worldSize, const CommOptions &options)
      : Group(worldSize, options.timeoutSeconds, checked(options)) {}

  const std::string &configError() const { return configError_; }

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
        configError_(std::move(c.error)) {}

  std::string configError_;
};

//===----------------------------------------------------------------------===//
// Argument checks on one rank
//===----------------------------------------------------------------------===//

std::string checkCount(const char *name, int64_t count, size_t elemSize) {
  if (count < 0)
    return std::string(name) + " = " + std::to_string(count) + " is negative";
  if (static_cast<uint64_t>(count) >
      static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / elemSize)
    return std::string(name) + " = " + std::to_string(count) +
           " elements overflows the byte count";
  return {};
}

/// Checks a counts/displs table pair of W entries: non-negative, and every
/// block's end (in bytes) representable. Sets `extent` to the largest block
/// end in elements.
std::string checkTables(const char *countsName,
                        const std::vector<int64_t> &counts,
                        const char *displsName,
                        const std::vector<int64_t> &displs, int worldSize,
                        size_t elemSize, int64_t &extent) {
  extent = 0;
  if (counts.size() != static_cast<size_t>(worldSize))
    return std::string(countsName) + " has " + std::to_string(counts.size()) +
           " entries, expected " + std::to_string(worldSize);
  if (displs.size() != static_cast<size_t>(worldSize))
    return std::string(displsName) + " has " + std::to_string(displs.size()) +
           " entries, expected " + std::to_string(worldSize);
  const int64_t maxElems =
      std::numeric_limits<int64_t>::max() / static_cast<int64_t>(elemSize);
  for (int i = 0; i < worldSize; ++i) {
    std::string at = "[" + std::to_string(i) + "] = ";
    if (counts[i] < 0)
      return countsName + at + std::to_string(counts[i]) + " is negative";
    if (displs[i] < 0)
      return displsName + at + std::to_string(displs[i]) + " is negative";
    if (counts[i] > maxElems || displs[i] > maxElems - counts[i])
      return std::string(displsName) + "[" + std::to_string(i) + "] + " +
             countsName + "[" + std::to_string(i) +
             "] overflows the byte offset";
    if (counts[i] > 0)
      extent = std::max(extent, displs[i] + counts[i]);
  }
  return {};
}

std::string checkPointer(const char *name, const void *p, int64_t needed) {
  if (p == nullptr && needed > 0)
    return std::string(name) + " is null but " + std::to_string(needed) +
           " elements are to be accessed";
  return {};
}

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

const void *offsetBytes(const void *p, int64_t elems, size_t elemSize) {
  return static_cast<const unsigned char *>(p) + elems * elemSize;
}
void *offsetBytes(void *p, int64_t elems, size_t elemSize) {
  return static_cast<unsigned char *>(p) + elems * elemSize;
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

/// allReduce splits [0, count) into W near-equal chunks; rank r reduces chunk
/// r. Any split is correct; a balanced one spreads the work.
void chunkOf(int64_t count, int worldSize, int r, int64_t &lo, int64_t &hi) {
  int64_t base = count / worldSize, rem = count % worldSize;
  lo = r * base + std::min<int64_t>(r, rem);
  hi = lo + base + (r < rem ? 1 : 0);
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

  Status allGatherV(const void *send, int64_t sendCount, void *recv,
                    const std::vector<int64_t> &recvCounts,
                    const std::vector<int64_t> &recvDispls,
                    DType dtype) override;
  Status allToAllV(const void *send, const std::vector<int64_t> &sendCounts,
                   const std::vector<int64_t> &sendDispls, void *recv,
                   const std::vector<int64_t> &recvCounts,
                   const std::vector<int64_t> &recvDispls,
                   DType dtype) override;
  Status reduceScatterV(const void *send, const std::vector<int64_t> &counts,
                        const std::vector<int64_t> &displs, void *recv,
                        DType dtype) override;
  Status allReduce(const void *send, void *recv, int64_t count,
                   DType dtype) override;
  Status broadcast(void *buffer, int64_t count, DType dtype, int root) override;
  Status barrier() override;

private:
  std::string where(Kind kind) const {
    return std::string("threads ") + kindName(kind) + " (rank " +
           std::to_string(rank_) + " of " + std::to_string(worldSize()) + ")";
  }

  /// Runs one collective: arrival, group-wide check, `pull` (this rank's
  /// share of the work), departure. `pull` runs only if every rank's
  /// arguments are consistent, and it must make the same number of
  /// group_->sync calls on every rank.
  template <typename Pull> Status run(Slot slot, uint64_t bytesSent, Pull pull);

  std::shared_ptr<Group> group_;
  int rank_;
};

template <typename Pull>
Status ThreadsCommunicator::run(Slot slot, uint64_t bytesSent, Pull pull) {
  const std::string at = where(slot.kind);
  if (!group_->configError().empty())
    return Status::error(at + ": " + group_->configError());
  SHARDLIN_RETURN_IF_ERROR(group_->arrive(rank_, std::move(slot), at));

  std::string problem = group_->checkSlots();
  if (problem.empty())
    pull();
  group_->sync(rank_);
  if (!problem.empty())
    return Status::error(at + ": " + problem);
  ++stats_.calls;
  stats_.bytesSent += bytesSent;
  return Status::ok();
}

Status ThreadsCommunicator::allGatherV(const void *send, int64_t sendCount,
                                       void *recv,
                                       const std::vector<int64_t> &recvCounts,
                                       const std::vector<int64_t> &recvDispls,
                                       DType dtype) {
  const int w = worldSize();
  const size_t es = dtypeSize(dtype);
  Slot slot;
  slot.kind = Kind::AllGatherV;
  slot.dtype = dtype;
  slot.send = send;
  slot.recv = recv;
  slot.count = sendCount;
  slot.recvCounts = &recvCounts;
  slot.recvDispls = &recvDispls;
  int64_t extent = 0;
  slot.invalid = checkCount("sendCount", sendCount, es);
  if (slot.invalid.empty())
    slot.invalid = checkTables("recvCounts", recvCounts, "recvDispls",
                               recvDispls, w, es, extent);
  if (slot.invalid.empty())
    slot.invalid = checkPointer("send", send, sendCount);
  if (slot.invalid.empty())
    slot.invalid = checkPointer("recv", recv, extent);

  uint64_t bytes = slot.invalid.empty()
                       ? static_cast<uint64_t>(sendCount) * (w - 1) * es
                       : 0;
  return run(std::move(slot), bytes, [&] {
    for (int s = 0; s < w; ++s)
      copyElements(offsetBytes(recv, recvDispls[s], es), group_->slot(s).send,
                   recvCounts[s], es);
  });
}

Status ThreadsCommunicator::allToAllV(const void *send,
                                      const std::vector<int64_t> &sendCounts,
                                      const std::vector<int64_t> &sendDispls,
                                      void *recv,
                                      const std::vector<int64_t> &recvCounts,
                                      const std::vector<int64_t> &recvDispls,
                                      DType dtype) {
  const int w = worldSize();
  const size_t es = dtypeSize(dtype);
  Slot slot;
  slot.kind = Kind::AllToAllV;
  slot.dtype = dtype;
  slot.send = send;
  slot.recv = recv;
  slot.sendCounts = &sendCounts;
  slot.sendDispls = &sendDispls;
  slot.recvCounts = &recvCounts;
  slot.recvDispls = &recvDispls;
  int64_t sendExtent = 0, recvExtent = 0;
  slot.invalid = checkTables("sendCounts", sendCounts, "sendDispls", sendDispls,
                             w, es, sendExtent);
  if (slot.invalid.empty())
    slot.invalid = checkTables("recvCounts", recvCounts, "recvDispls",
                               recvDispls, w, es, recvExtent);
  if (slot.invalid.empty())
    slot.invalid = checkPointer("send", send, sendExtent);
  if (slot.invalid.empty())
    slot.invalid = checkPointer("recv", recv, recvExtent);

  uint64_t bytes = 0;
  if (slot.invalid.empty())
    for (int d = 0; d < w; ++d)
      if (d != rank_)
        bytes += static_cast<uint64_t>(sendCounts[d]) * es;
  return run(std::move(slot), bytes, [&] {
    for (int s = 0; s < w; ++s) {
      const Slot &from = group_->slot(s);
      copyElements(offsetBytes(recv, recvDispls[s], es),
                   offsetBytes(from.send, (*from.sendDispls)[rank_], es),
                   recvCounts[s], es);
    }
  });
}

Status ThreadsCommunicator::reduceScatterV(const void *send,
                                           const std::vector<int64_t> &counts,
                                           const std::vector<int64_t> &displs,
                                           void *recv, DType dtype) {
  const int w = worldSize();
  const size_t es = dtypeSize(dtype);
  Slot slot;
  slot.kind = Kind::ReduceScatterV;
  slot.dtype = dtype;
  slot.send = send;
  slot.recv = recv;
  slot.sendCounts = &counts;
  slot.sendDispls = &displs;
  int64_t extent = 0;
  slot.invalid = checkTables("counts", counts, "displs", displs, w, es, extent);
  if (slot.invalid.empty())
    slot.invalid = checkPointer("send", send, extent);
  if (slot.invalid.empty())
    slot.invalid = checkPointer("recv", recv, counts[rank_]);

  uint64_t bytes = 0;
  if (slot.invalid.empty())
    for (int d = 0; d < w; ++d)
      if (d != rank_)
        bytes += static_cast<uint64_t>(counts[d]) * es;
  return run(std::move(slot), bytes, [&] {
    std::vector<const void *> srcs(w);
    for (int s = 0; s < w; ++s) {
      const Slot &from = group_->slot(s);
      srcs[s] = offsetBytes(from.send, (*from.sendDispls)[rank_], es);
    }
    sumInRankOrder(dtype, srcs, recv, counts[rank_]);
  });
}

Status ThreadsCommunicator::allReduce(const void *send, void *recv,
                                      int64_t count, DType dtype) {
  // send may equal recv, so no rank may write its recv while another may
  // still read sends. Hence three phases: rank r sums chunk r of all sends
  // into its own scratch; a rendezvous (all sends read); every rank copies
  // all the reduced chunks into its recv; departure (all scratch read).
  // Every element is summed once, in rank order, so all ranks get the same
  // bits.
  const int w = worldSize();
  const size_t es = dtypeSize(dtype);
  Slot slot;
  slot.kind = Kind::AllReduce;
  slot.dtype = dtype;
  slot.send = send;
  slot.recv = recv;
  slot.count = count;
  slot.invalid = checkCount("count", count, es);
  if (slot.invalid.empty())
    slot.invalid = checkPointer("send", send, count);
  if (slot.invalid.empty())
    slot.invalid = checkPointer("recv", recv, count);

  int64_t lo = 0, hi = 0;
  std::unique_ptr<unsigned char[]> scratch;
  if (slot.invalid.empty()) {
    chunkOf(count, w, rank_, lo, hi);
    size_t bytes = static_cast<size_t>(hi - lo) * es;
    if (bytes > 0) {
      scratch.reset(new (std::nothrow) unsigned char[bytes]);
      if (!scratch)
        slot.invalid =
            "cannot allocate " + std::to_string(bytes) + " bytes of scratch";
    }
    slot.scratch = scratch.get();
  }

  // 2 * count * (W - 1) / W elements, as Communicator.h defines it (integer
  // division in elements, then bytes).
  uint64_t bytes = slot.invalid.empty()
                       ? static_cast<uint64_t>(2 * count * (w - 1) / w) * es
                       : 0;
  return run(std::move(slot), bytes, [&] {
    std::vector<const void *> srcs(w);
    for (int s = 0; s < w; ++s)
      srcs[s] = offsetBytes(group_->slot(s).send, lo, es);
    sumInRankOrder(dtype, srcs, scratch.get(), hi - lo);
    group_->sync(rank_);
    for (int s = 0; s < w; ++s) {
      int64_t slo = 0, shi = 0;
      chunkOf(count, w, s, slo, shi);
      copyElements(offsetBytes(recv, slo, es), group_->slot(s).scratch,
                   shi - slo, es);
    }
  });
}

Status ThreadsCommunicator::broadcast(void *buffer, int64_t count, DType dtype,
                                      int root) {
  const int w = worldSize();
  const size_t es = dtypeSize(dtype);
  Slot slot;
  slot.kind = Kind::Broadcast;
  slot.dtype = dtype;
  slot.recv = buffer;
  slot.count = count;
  slot.root = root;
  if (root < 0 || root >= w)
    slot.invalid = "root = " + std::to_string(root) + " is not a rank of 0.." +
                   std::to_string(w - 1);
  if (slot.invalid.empty())
    slot.invalid = checkCount("count", count, es);
  if (slot.invalid.empty())
    slot.invalid = checkPointer("buffer", buffer, count);

  uint64_t bytes = slot.invalid.empty() && rank_ == root
                       ? static_cast<uint64_t>(count) * (w - 1) * es
                       : 0;
  return run(std::move(slot), bytes, [&] {
    if (rank_ != root)
      copyElements(buffer, group_->slot(root).recv, count, es);
  });
}

Status ThreadsCommunicator::barrier() {
  Slot slot;
  slot.kind = Kind::Barrier;
  return run(std::move(slot), 0, [] {});
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
