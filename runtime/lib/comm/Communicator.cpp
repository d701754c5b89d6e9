//===- Communicator.cpp - What every communicator checks and counts -------===//
//
// The public collectives of Communicator: the checks of one rank's
// arguments, in the order of the arguments (dtype, counts and tables, root,
// the backend's own checks, then the buffers), the traffic each call counts
// (Communicator.h), and the call of the backend's hook. Backends only move
// data, and check what only the group can see.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/comm/Communicator.h"

#include "shardlin/runtime/base/ChunkLayout.h"

#include "comm/CommChecks.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <sstream>

namespace shardlin::rt {

const char *collectiveName(CollectiveKind k) {
  switch (k) {
#define SHARDLIN_COLLECTIVE_CASE(kind, name)                                   \
  case CollectiveKind::kind:                                                   \
    return name;
    SHARDLIN_FOR_EACH_COLLECTIVE(SHARDLIN_COLLECTIVE_CASE)
#undef SHARDLIN_COLLECTIVE_CASE
  }
  return "unknown collective";
}

namespace detail {

std::string formatSeconds(double s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

std::string checkTimeoutSeconds(double t, double &effective) {
  if (std::isnan(t) || t <= 0)
    return "invalid CommOptions::timeoutSeconds = " + formatSeconds(t) +
           " (must be > 0)";
  effective = std::isinf(t) ? t : std::min(t, 1e9);
  return {};
}

std::string checkCount(const char *name, int64_t count, size_t elemSize) {
  if (count < 0)
    return std::string(name) + " = " + std::to_string(count) + " is negative";
  if (static_cast<uint64_t>(count) >
      static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / elemSize)
    return std::string(name) + " = " + std::to_string(count) +
           " elements overflows the byte count";
  return {};
}

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

} // namespace detail

namespace {

using detail::checkCount;
using detail::checkTables;

bool validDType(DType t) {
  return t == DType::F16 || t == DType::BF16 || t == DType::F32 ||
         t == DType::F64;
}

/// Sum of counts[d] over d != rank, in bytes (valid tables).
uint64_t othersBytes(const std::vector<int64_t> &counts, int rank, size_t es) {
  uint64_t bytes = 0;
  for (size_t d = 0; d < counts.size(); ++d)
    if (static_cast<int>(d) != rank)
      bytes += static_cast<uint64_t>(counts[d]) * es;
  return bytes;
}

} // namespace

std::string Communicator::checkBuffer(const char *name, const void *p,
                                      int64_t elements, DType) const {
  if (p == nullptr && elements > 0)
    return std::string(name) + " is null but " + std::to_string(elements) +
           " elements are to be accessed";
  return {};
}

Status Communicator::rejectInvalid(const CollectiveCall &call) {
  return Status::invalidArgument(call.where +
                                 ": invalid arguments: " + call.invalid);
}

std::string Communicator::where(CollectiveKind kind) const {
  const Device dev = device();
  return std::string(backendName()) + " " + collectiveName(kind) + " (rank " +
         std::to_string(rank()) + " of " + std::to_string(worldSize()) +
         (dev.isHost() ? std::string() : ", " + deviceName(dev)) + ")";
}

void Communicator::prepare(CollectiveCall &c) const {
  const int w = worldSize(), r = rank();
  c.where = where(c.kind);
  if (c.kind == CollectiveKind::Barrier)
    return;
  if (!validDType(c.dtype)) {
    c.invalid =
        "invalid dtype value " + std::to_string(static_cast<int>(c.dtype));
    return;
  }
  const size_t es = dtypeSize(c.dtype);
  std::string &bad = c.invalid;
  // Where the buffers end, in elements, once the tables are known valid.
  int64_t sendExtent = 0, recvExtent = 0;
  switch (c.kind) {
  case CollectiveKind::AllGatherV:
    bad = checkCount("sendCount", c.count, es);
    if (bad.empty())
      bad = checkTables("recvCounts", *c.recvCounts, "recvDispls",
                        *c.recvDispls, w, es, recvExtent);
    sendExtent = c.count;
    break;
  case CollectiveKind::AllToAllV:
    bad = checkTables("sendCounts", *c.sendCounts, "sendDispls", *c.sendDispls,
                      w, es, sendExtent);
    if (bad.empty())
      bad = checkTables("recvCounts", *c.recvCounts, "recvDispls",
                        *c.recvDispls, w, es, recvExtent);
    break;
  case CollectiveKind::ReduceScatterV:
    bad = checkTables("counts", *c.sendCounts, "displs", *c.sendDispls, w, es,
                      sendExtent);
    if (bad.empty())
      recvExtent = (*c.sendCounts)[r];
    break;
  case CollectiveKind::AllReduce:
    bad = checkCount("count", c.count, es);
    sendExtent = recvExtent = c.count;
    break;
  case CollectiveKind::Broadcast:
    if (c.root < 0 || c.root >= w)
      bad = "root = " + std::to_string(c.root) + " is not a rank of 0.." +
            std::to_string(w - 1);
    if (bad.empty())
      bad = checkCount("count", c.count, es);
    recvExtent = c.count;
    break;
  case CollectiveKind::Barrier:
    return;
  }
  if (bad.empty())
    bad = checkBackendArguments(c);
  if (bad.empty() && c.kind != CollectiveKind::Broadcast)
    bad = checkBuffer("send", c.send, sendExtent, c.dtype);
  if (bad.empty())
    bad = checkBuffer(c.kind == CollectiveKind::Broadcast ? "buffer" : "recv",
                      c.recv, recvExtent, c.dtype);
  if (!bad.empty())
    return;

  switch (c.kind) {
  case CollectiveKind::AllGatherV:
    c.bytesSent =
        static_cast<uint64_t>(c.count) * static_cast<uint64_t>(w - 1) * es;
    break;
  case CollectiveKind::AllToAllV:
  case CollectiveKind::ReduceScatterV:
    c.bytesSent = othersBytes(*c.sendCounts, r, es);
    break;
  case CollectiveKind::AllReduce: {
    // A reduce-scatter and an all-gather of the count's ceil-rule chunks in
    // rank order (the bandwidth-optimal ring's traffic, which the cost
    // model's allReduceTraffic charges): every other rank's chunk out, then
    // this rank's reduced chunk out to the W - 1 others.
    const int64_t mine = chunkRange(c.count, w, r).size;
    c.bytesSent = static_cast<uint64_t>(c.count - mine + (w - 1) * mine) * es;
    break;
  }
  case CollectiveKind::Broadcast:
    c.bytesSent = r == c.root ? static_cast<uint64_t>(c.count) *
                                    static_cast<uint64_t>(w - 1) * es
                              : 0;
    break;
  case CollectiveKind::Barrier:
    break;
  }
}

Status Communicator::finish(const CollectiveCall &call, Status st) {
  if (st.isOk()) {
    ++stats_.calls;
    stats_.bytesSent += call.bytesSent;
  }
  return st;
}

namespace {

/// A call of `kind` with its arguments; the tables are null where the
/// collective has none.
CollectiveCall makeCall(CollectiveKind kind, DType dtype, const void *send,
                        void *recv, int64_t count,
                        const std::vector<int64_t> *sendCounts = nullptr,
                        const std::vector<int64_t> *sendDispls = nullptr,
                        const std::vector<int64_t> *recvCounts = nullptr,
                        const std::vector<int64_t> *recvDispls = nullptr) {
  return CollectiveCall{kind,       dtype,      send,         recv,
                        count,      /*root=*/0, sendCounts,   sendDispls,
                        recvCounts, recvDispls, /*where=*/{}, /*invalid=*/{},
                        /*bytesSent=*/0};
}

} // namespace

Status Communicator::dispatch(const CollectiveCall &call) {
  // By CollectiveKind, in its order.
  using Hook = Status (Communicator::*)(const CollectiveCall &);
  static constexpr Hook kHooks[] = {
#define SHARDLIN_COLLECTIVE_HOOK_ADDRESS(kind, name) &Communicator::do##kind,
      SHARDLIN_FOR_EACH_COLLECTIVE(SHARDLIN_COLLECTIVE_HOOK_ADDRESS)
#undef SHARDLIN_COLLECTIVE_HOOK_ADDRESS
  };
  static_assert(std::size(kHooks) ==
                    static_cast<size_t>(CollectiveKind::Barrier) + 1,
                "one hook per CollectiveKind");
  const size_t k = static_cast<size_t>(call.kind);
  if (k >= std::size(kHooks))
    return Status::internal(call.where + ": unknown collective kind " +
                            std::to_string(k));
  return (this->*kHooks[k])(call);
}

Status Communicator::run(CollectiveCall call) {
  prepare(call);
  return finish(call, dispatch(call));
}

Status Communicator::allGatherV(const void *send, int64_t sendCount, void *recv,
                                const std::vector<int64_t> &recvCounts,
                                const std::vector<int64_t> &recvDispls,
                                DType dtype) {
  return run(makeCall(CollectiveKind::AllGatherV, dtype, send, recv, sendCount,
                      nullptr, nullptr, &recvCounts, &recvDispls));
}

Status Communicator::allToAllV(const void *send,
                               const std::vector<int64_t> &sendCounts,
                               const std::vector<int64_t> &sendDispls,
                               void *recv,
                               const std::vector<int64_t> &recvCounts,
                               const std::vector<int64_t> &recvDispls,
                               DType dtype) {
  return run(makeCall(CollectiveKind::AllToAllV, dtype, send, recv, 0,
                      &sendCounts, &sendDispls, &recvCounts, &recvDispls));
}

Status Communicator::reduceScatterV(const void *send,
                                    const std::vector<int64_t> &counts,
                                    const std::vector<int64_t> &displs,
                                    void *recv, DType dtype) {
  return run(makeCall(CollectiveKind::ReduceScatterV, dtype, send, recv, 0,
                      &counts, &displs));
}

Status Communicator::allReduce(const void *send, void *recv, int64_t count,
                               DType dtype) {
  return run(makeCall(CollectiveKind::AllReduce, dtype, send, recv, count));
}

Status Communicator::broadcast(void *buffer, int64_t count, DType dtype,
                               int root) {
  CollectiveCall c =
      makeCall(CollectiveKind::Broadcast, dtype, nullptr, buffer, count);
  c.root = root;
  return run(c);
}

Status Communicator::barrier() {
  return run(
      makeCall(CollectiveKind::Barrier, DType::F32, nullptr, nullptr, 0));
}

Status Communicator::split(int color, int key,
                           std::unique_ptr<Communicator> &out) {
  out.reset();
  const std::string at = std::string(backendName()) + " split (rank " +
                         std::to_string(rank()) + " of " +
                         std::to_string(worldSize()) + ")";
  if (color < 0)
    return Status::invalidArgument(at + ": the color must be >= 0, got " +
                                   std::to_string(color));
  Status st = doSplit(color, key, out);
  if (!st)
    out.reset();
  return st;
}

Status Communicator::doSplit(int, int, std::unique_ptr<Communicator> &) {
  return Status::unavailable(std::string("the ") + backendName() +
                               " backend cannot split a communicator");
}

Status Communicator::failCollective(CollectiveKind kind, DType dtype,
                                    const std::string &why) {
  // Well-formed tables (W zeros) and no buffers: the verdict in `invalid`
  // tells the hook not to move anything, and a hook that forwards the call
  // to another communicator (a test's wrapper) still reads valid tables.
  const std::vector<int64_t> zeros(static_cast<size_t>(std::max(0, worldSize())),
                                   0);
  CollectiveCall c;
  c.kind = kind;
  c.dtype = validDType(dtype) ? dtype : DType::F32;
  c.sendCounts = c.sendDispls = c.recvCounts = c.recvDispls = &zeros;
  c.where = where(kind);
  c.invalid = why.empty() ? std::string("no reason given") : why;
  // A barrier has no arguments to be wrong: nothing to take part in; nor
  // has a kind out of range. The five others come before Barrier.
  Status st = kind < CollectiveKind::Barrier ? dispatch(c) : Status::ok();
  // Not counted in stats(), and never a success, whatever the hook said.
  return st.isOk() ? rejectInvalid(c) : st;
}

} // namespace shardlin::rt
