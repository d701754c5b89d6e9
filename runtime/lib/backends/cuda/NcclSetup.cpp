//===- NcclSetup.cpp - Creating and splitting NCCL communicators ----------===//
//
// The NCCL communicator's creation (from a unique id; over a bootstrap
// communicator that carries the id; as a group of threads of one process)
// and its split. Each follows the collectives' timeout rules
// (NcclCommunicator.cpp): with a finite CommOptions::timeoutSeconds the NCCL
// communicators are non-blocking and the host waits for them with a deadline;
// a rank that fails or times out aborts what it made, and a failed split
// aborts the communicator being split too, since its peers may still be
// waiting in it.
//
//===----------------------------------------------------------------------===//

#include "backends/cuda/NcclCommunicator.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace shardlin::rt {
namespace nccl {

using namespace cuda;

std::string initWhere(int rank, int worldSize, int device) {
  return "nccl init (rank " + std::to_string(rank) + " of " +
         std::to_string(worldSize) + ", cuda:" + std::to_string(device) + ")";
}

/// The checked CommOptions::timeoutSeconds of a creation and its deadline,
/// that many seconds from now.
Status startClock(const CommOptions &options, const std::string &at,
                  double &timeout, double &deadline) {
  SHARDLIN_RETURN_IF_ERROR(
      checkTimeout(options.timeoutSeconds, timeout).withContext(at));
  deadline = deadlineAfter(timeout);
  return Status::ok();
}

/// `id` as NCCL's type.
ncclUniqueId nativeId(const NcclUniqueId &id) {
  ncclUniqueId nid;
  std::memcpy(&nid, id.bytes, sizeof(nid));
  return nid;
}

/// ncclCommInitRankConfig of `rank`, on the current device (`device`, for
/// messages): ok also while a non-blocking initialization is in progress.
Status initRank(ncclComm_t &comm, int worldSize, const ncclUniqueId &nid,
                int rank, ncclConfig_t &config, int device) {
  ncclResult_t r = ncclCommInitRankConfig(&comm, worldSize, nid, rank, &config);
  if (r == ncclSuccess || r == ncclInProgress)
    return Status::ok();
  return ncclFailure(r, "ncclCommInitRankConfig", device, comm);
}

/// ncclCommSplit.
Status NcclCommunicator::doSplit(int color, int key,
                                 std::unique_ptr<Communicator> &out) {
  // The group in every message: with several groups failing at once (a
  // grid's DP groups), each rank says which one it was joining.
  const std::string at = "nccl split (rank " + std::to_string(rank_) + " of " +
                         std::to_string(worldSize_) + ", color " +
                         std::to_string(color) + ", key " +
                         std::to_string(key) + ")";
  SHARDLIN_RETURN_IF_ERROR(usable(at));
  ScopedDevice guard;
  double deadline = 0;
  SHARDLIN_RETURN_IF_ERROR(enter(at, guard, deadline));

  // The child gets the parent's configuration (blocking or not), and no
  // shared resources (splitShare unset: 0), so that either may be destroyed
  // first. A blocking split waits in ncclCommSplit for every rank; a
  // non-blocking one returns ncclInProgress, and both the child and the
  // parent are polled until they are ready or the deadline passes.
  ncclConfig_t config = makeConfig(blocking_);
  ncclComm_t child = nullptr;
  ncclResult_t r = ncclCommSplit(comm_, color, key, &child, &config);
  Status st = Status::ok();
  if (r != ncclSuccess && r != ncclInProgress)
    st = ncclFailure(r, "ncclCommSplit", device_, comm_);
  if (st.isOk() && !blocking_) {
    st = waitReady(comm_, device_, deadline, timeout_);
    if (st.isOk() && child)
      st = waitReady(child, device_, deadline, timeout_);
    if (!st.isOk())
      st = Status::error(
          st.code(), st.message() + " waiting for the other ranks to split");
  }
  int childRank = -1, childSize = 0;
  if (st.isOk() && !child)
    st = Status::internal("ncclCommSplit returned no communicator for color " +
                          std::to_string(color));
  if (st.isOk()) {
    ncclResult_t q = ncclCommUserRank(child, &childRank);
    if (q == ncclSuccess)
      q = ncclCommCount(child, &childSize);
    if (q != ncclSuccess)
      st = ncclFailure(q, "ncclCommUserRank/ncclCommCount", device_, child);
  }
  if (!st.isOk()) {
    if (child)
      (void)ncclCommAbort(child);
    // The peers may be waiting in the split for this rank, and the parent's
    // state is unknown: it cannot be used again.
    abort(st.message());
    return Status::error(st.code(), at + ": " + st.message() +
                                        "; the communicator was aborted");
  }
  auto made = std::make_unique<NcclCommunicator>(child, childRank, childSize,
                                                 stream_, timeout_);
  SHARDLIN_RETURN_IF_ERROR(made->init().withContext(at));
  out = std::move(made);
  return Status::ok();
}

} // namespace nccl

using namespace cuda;
using namespace nccl;

bool ncclAvailable() { return true; }

Status createNcclUniqueId(NcclUniqueId &id) {
  ncclUniqueId nid;
  SHARDLIN_NCCL_RETURN_IF_ERROR(-1, nullptr, ncclGetUniqueId(&nid));
  std::memcpy(id.bytes, &nid, sizeof(nid));
  return Status::ok();
}

Status createNcclCommunicator(const NcclUniqueId &id, int rank, int worldSize,
                              std::shared_ptr<ExecutionStream> stream,
                              const CommOptions &options,
                              std::unique_ptr<Communicator> &out) {
  out.reset();
  if (!stream)
    return Status::invalidArgument("createNcclCommunicator: null stream");
  const int device = stream->device();
  const std::string at = initWhere(rank, worldSize, device);
  if (worldSize < 1 || rank < 0 || rank >= worldSize)
    return Status::invalidArgument(at + ": rank must be in 0..worldSize-1 and "
                                        "worldSize >= 1");
  double timeout = 0, deadline = 0;
  SHARDLIN_RETURN_IF_ERROR(startClock(options, at, timeout, deadline));

  ScopedDevice guard;
  SHARDLIN_RETURN_IF_ERROR(guard.enter(device).withContext(at));
  const ncclUniqueId nid = nativeId(id);
  ncclConfig_t config = makeConfig(std::isinf(timeout));
  ncclComm_t comm = nullptr;
  Status started = initRank(comm, worldSize, nid, rank, config, device);
  if (!started.isOk()) {
    if (comm)
      (void)ncclCommAbort(comm);
    return started.withContext(at);
  }
  if (!config.blocking) {
    Status ready = waitReady(comm, device, deadline, timeout);
    if (!ready.isOk()) {
      (void)ncclCommAbort(comm);
      return Status::error(ready.code(),
                           at + ": " + ready.message() +
                               " waiting for the other ranks to join; aborted");
    }
  }
  auto result = std::make_unique<nccl::NcclCommunicator>(
      comm, rank, worldSize, std::move(stream), timeout);
  SHARDLIN_RETURN_IF_ERROR(result->init().withContext(at));
  out = std::move(result);
  return Status::ok();
}

Status createNcclCommunicator(Communicator &bootstrap,
                              std::shared_ptr<ExecutionStream> stream,
                              const CommOptions &options,
                              std::unique_ptr<Communicator> &out) {
  out.reset();
  const int rank = bootstrap.rank(), worldSize = bootstrap.worldSize();
  const std::string at = std::string("createNcclCommunicator (rank ") +
                         std::to_string(rank) + " of " +
                         std::to_string(worldSize) + ", bootstrap " +
                         bootstrap.backendName() + ")";
  if (!bootstrap.device().isHost())
    return Status::invalidArgument(at +
                                   ": the bootstrap communicator must work on "
                                   "host memory");
  // Byte 0 says whether rank 0 made an id, so a failure there fails every
  // rank instead of handing them garbage; the id follows at byte 2. Sent as
  // f16 elements because the collectives move elements bit for bit.
  std::vector<unsigned char> message(2 + sizeof(NcclUniqueId::bytes), 0);
  Status made = Status::ok();
  if (rank == 0) {
    NcclUniqueId id;
    made = createNcclUniqueId(id);
    message[0] = made.isOk() ? 1 : 0;
    std::memcpy(message.data() + 2, id.bytes, sizeof(id.bytes));
  }
  SHARDLIN_RETURN_IF_ERROR(
      bootstrap
          .broadcast(message.data(), int64_t(message.size() / 2), DType::F16, 0)
          .withContext(at + ": broadcasting the NCCL unique id"));
  if (!made.isOk())
    return made.withContext(at);
  if (message[0] != 1)
    return Status::internal(at +
                            ": rank 0 could not create the NCCL unique id");
  NcclUniqueId id;
  std::memcpy(id.bytes, message.data() + 2, sizeof(id.bytes));
  return createNcclCommunicator(id, rank, worldSize, std::move(stream), options,
                                out);
}

Status createNcclThreadsGroup(
    const std::vector<std::shared_ptr<ExecutionStream>> &streams,
    const CommOptions &options,
    std::vector<std::unique_ptr<Communicator>> &out) {
  out.clear();
  const std::string at = "createNcclThreadsGroup";
  const int w = int(streams.size());
  if (w < 1)
    return Status::invalidArgument(at +
                                   ": no streams (worldSize must be >= 1)");
  for (int r = 0; r < w; ++r) {
    if (!streams[r])
      return Status::invalidArgument(at + ": stream of rank " +
                                     std::to_string(r) + " is null");
    for (int q = 0; q < r; ++q)
      if (streams[q]->device() == streams[r]->device())
        return Status::invalidArgument(
            at + ": ranks " + std::to_string(q) + " and " + std::to_string(r) +
            " are both on cuda:" + std::to_string(streams[r]->device()) +
            " (NCCL needs one device per rank; use cuda-local to share one)");
  }
  double timeout = 0, deadline = 0;
  SHARDLIN_RETURN_IF_ERROR(startClock(options, at, timeout, deadline));

  NcclUniqueId id;
  SHARDLIN_RETURN_IF_ERROR(createNcclUniqueId(id).withContext(at));
  const ncclUniqueId nid = nativeId(id);

  std::vector<ncclComm_t> comms(w, nullptr);
  auto abortAll = [&] {
    for (ncclComm_t &c : comms)
      if (c) {
        (void)ncclCommAbort(c);
        c = nullptr;
      }
  };
  ncclConfig_t config = makeConfig(std::isinf(timeout));
  {
    ScopedDevice guard; // restores the caller's device after the loop
    SHARDLIN_RETURN_IF_ERROR(guard.enter(streams[0]->device()).withContext(at));
    // One thread initializes all ranks: inside a group the init calls do
    // not wait for each other.
    Status st = Status::ok();
    NcclGroup group(nullptr, -1);
    st = group.start();
    for (int r = 0; r < w && st.isOk(); ++r) {
      const int device = streams[r]->device();
      cudaError_t e = cudaSetDevice(device);
      if (e != cudaSuccess) {
        st = cudaFailure(e, "cudaSetDevice", device);
        break;
      }
      st = initRank(comms[r], w, nid, r, config, device);
    }
    Status ended = group.end();
    if (st.isOk())
      st = ended;
    if (!st.isOk()) {
      abortAll();
      return st.withContext(at);
    }
  }
  if (!config.blocking)
    for (int r = 0; r < w; ++r) {
      Status ready =
          waitReady(comms[r], streams[r]->device(), deadline, timeout);
      if (!ready.isOk()) {
        abortAll();
        return Status::error(
            ready.code(), at + ": " + initWhere(r, w, streams[r]->device()) +
                              ": " + ready.message() + "; all ranks aborted");
      }
    }

  // Every handle gets its owner before anything else can fail, so that an
  // early return releases all of them.
  std::vector<std::unique_ptr<nccl::NcclCommunicator>> owners;
  for (int r = 0; r < w; ++r) {
    owners.push_back(std::make_unique<nccl::NcclCommunicator>(
        comms[r], r, w, streams[r], timeout));
    comms[r] = nullptr;
  }
  for (int r = 0; r < w; ++r)
    SHARDLIN_RETURN_IF_ERROR(owners[r]->init().withContext(
        at + ": " + initWhere(r, w, streams[r]->device())));
  for (auto &c : owners)
    out.push_back(std::move(c));
  return Status::ok();
}

} // namespace shardlin::rt
