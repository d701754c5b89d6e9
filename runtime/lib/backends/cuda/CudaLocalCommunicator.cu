//===- CudaLocalCommunicator.cu - Ranks sharing one GPU -------------------===//
//
// W ranks as threads of one process, all on one GPU, each with its own
// stream. NCCL cannot place two ranks of a communicator on one device, so
// this backend is what runs W > 1 on a single GPU (tests, small machines).
//
// A collective is the threads backend's rendezvous with the data movement
// done on the device:
//   1. each rank records a "ready" event on its stream (after everything it
//      enqueued before the call, e.g. the GEMM that produced its send
//      buffer), publishes it with its arguments and waits, with the group
//      timeout, for all W ranks to arrive;
//   2. every rank checks all W slots; the check is a pure function of the
//      slots, so all ranks reach the same verdict;
//   3. each rank makes its stream wait for the peers' ready events (a device
//      side wait, the host does not block) and enqueues its share: device
//      to device copies straight from the peers' buffers, or the reduction
//      kernel reading all of them;
//   4. it records a "done" event and the host waits for it, then a final
//      rendezvous. So when any rank returns, every rank's reads of every
//      buffer have completed, and a caller may reuse or free them.
// Step 4 makes each collective complete on return (what the NCCL backend
// also does with a finite timeout) and keeps buffer lifetimes simple; GEMMs
// stay asynchronous.
//
// The rendezvous is the threads backend's (LocalGroup.h), deadlines
// included: a rank that arrives after a waiting rank's deadline ends the
// rendezvous as a timeout of that rank, so the outcome depends on the
// arrival times alone, not on thread scheduling. A timeout aborts the group
// (every later collective of every rank fails at once). A CUDA failure on one
// rank after the arrival is reported to all ranks at the final rendezvous, so
// that an error on one rank is an error on all of them, as in the threads
// backend.
//
// This file is CUDA C++ only because it is built with the kernels; the
// kernels themselves live in Kernels.cu.
//
//===----------------------------------------------------------------------===//

#include "comm/LocalGroup.h"
#include "comm/LocalSplit.h"
#include "backends/cuda/CudaCheck.h"
#include "backends/cuda/Kernels.h"

#include "shardlin/runtime/backends/Cuda.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace shardlin::rt {
namespace {

using namespace cuda;

using local::chunkSize;
using local::Kind;
using local::kindName;

/// What one rank passed to the collective it is in (see local::Slot), plus
/// its events.
struct Slot : local::Slot {
  Slot() = default;
  explicit Slot(const CollectiveCall &call) : local::Slot(call) {}
  /// Recorded on the rank's stream at arrival: its inputs are ready then.
  cudaEvent_t ready = nullptr;
  /// allReduce: recorded after this rank's chunk sum into `scratch`.
  cudaEvent_t mid = nullptr;
};

/// State shared by the communicators of one group: the threads backend's
/// rendezvous (LocalGroup.h), so cuda-local has its deterministic deadlines
/// too: whether a collective times out depends on when the ranks arrived,
/// not on when a waiting thread is scheduled. And what a split needs: every
/// rank's stream (a new group's rank keeps its stream) and the options.
class Group : public local::LocalGroup<Slot> {
public:
  Group(std::vector<std::shared_ptr<ExecutionStream>> streams,
        const CommOptions &options, double timeout)
      : LocalGroup(int(streams.size()), timeout, cuda::formatSeconds(timeout)),
        streams(std::move(streams)), options(options),
        splitter(worldSize(), timeout, "cuda-local split") {}

  const std::vector<std::shared_ptr<ExecutionStream>> streams;
  const CommOptions options;
  local::LocalSplit splitter;
};

class CudaLocalCommunicator final : public CudaCommunicator {
public:
  CudaLocalCommunicator(std::shared_ptr<Group> group, int rank,
                        std::shared_ptr<ExecutionStream> stream)
      : CudaCommunicator(std::move(stream)), group_(std::move(group)),
        rank_(rank), device_(stream_->device()) {}

  Status init() {
    ScopedDevice guard;
    SHARDLIN_RETURN_IF_ERROR(guard.enter(device_));
    SHARDLIN_RETURN_IF_ERROR(ready_.create(device_, false));
    SHARDLIN_RETURN_IF_ERROR(mid_.create(device_, false));
    // The host blocks on `done` once per collective; with W rank threads on
    // a few cores, sleeping beats spinning.
    SHARDLIN_RETURN_IF_ERROR(done_.create(device_, true));
    SHARDLIN_RETURN_IF_ERROR(pageableMemoryAccess(device_, pageableOk_));
    return Status::ok();
  }

  int rank() const override { return rank_; }
  int worldSize() const override { return group_->worldSize(); }
  const char *backendName() const override { return "cuda-local"; }

protected:
  SHARDLIN_COMMUNICATOR_OVERRIDES
  /// Reachable from the device and aligned (see checkDeviceBuffer).
  std::string checkBuffer(const char *name, const void *p, int64_t elements,
                          DType dtype) const override {
    return checkDeviceBuffer(name, p, elements, dtype, device_, pageableOk_);
  }

private:
  cudaStream_t s() const { return nativeStream(*stream_); }

  /// A local failure, tagged with this rank so that the peers that report
  /// it say whose it was.
  std::string fail(const Status &st) const {
    return "rank " + std::to_string(rank_) + ": " + st.message();
  }
  std::string fail(cudaError_t e, const char *call) const {
    return fail(cudaFailure(e, call, device_));
  }

  /// Runs one collective: arrival, group-wide check, `pull` (enqueues this
  /// rank's share; returns "" or a fail() message, and makes the same
  /// number of group_->sync calls on every rank), completion, departure.
  template <typename Pull> Status run(Slot slot, Pull pull);

  /// Makes this rank's stream wait for the peers' ready events.
  std::string waitForPeers();
  std::string copy(void *dst, const void *src, int64_t n, size_t es);
  /// Records `done` and waits for it.
  std::string complete();

  // stream_ (CudaCommunicator) outlives the events, which are destroyed
  // while the stream still exists.
  std::shared_ptr<Group> group_;
  const int rank_;
  const int device_;
  bool pageableOk_ = false;
  Event ready_, mid_, done_;
  StreamScratch scratch_;
};

template <typename Pull>
Status CudaLocalCommunicator::run(Slot slot, Pull pull) {
  const std::string at = slot.where;
  ScopedDevice guard;
  Status entered = guard.enter(device_);
  if (!entered.isOk() && slot.invalid.empty())
    slot.invalid = entered.message();
  if (slot.invalid.empty()) {
    cudaError_t e = cudaEventRecord(ready_.get(), s());
    if (e != cudaSuccess)
      slot.invalid = cudaFailure(e, "cudaEventRecord", device_).message();
  }
  slot.ready = ready_.get();
  SHARDLIN_RETURN_IF_ERROR(group_->arrive(rank_, std::move(slot), at));

  const std::string problem = group_->checkSlots();
  std::string local;
  if (problem.empty()) {
    local = pull();
    // Even after a failure, wait for whatever was enqueued: peers' buffers
    // must not be read after they return.
    std::string completion = complete();
    if (local.empty())
      local = std::move(completion);
  }
  const std::string groupError = group_->sync(rank_, std::move(local));
  if (!problem.empty())
    return Status::invalidArgument(at + ": " + problem);
  if (!groupError.empty())
    return Status::internal(at + ": " + groupError);
  return Status::ok();
}

std::string CudaLocalCommunicator::waitForPeers() {
  for (int r = 0; r < worldSize(); ++r) {
    if (r == rank_)
      continue; // own earlier work precedes this on the same stream
    cudaError_t e = cudaStreamWaitEvent(s(), group_->slot(r).ready, 0);
    if (e != cudaSuccess)
      return fail(e, "cudaStreamWaitEvent");
  }
  return {};
}

std::string CudaLocalCommunicator::copy(void *dst, const void *src, int64_t n,
                                        size_t es) {
  // An in-place caller's block is already where it belongs; copying it
  // onto itself would write memory that peers may be reading.
  if (n == 0 || dst == src)
    return {};
  cudaError_t e =
      cudaMemcpyAsync(dst, src, size_t(n) * es, cudaMemcpyDefault, s());
  return e == cudaSuccess ? std::string() : fail(e, "cudaMemcpyAsync");
}

std::string CudaLocalCommunicator::complete() {
  cudaError_t e = cudaEventRecord(done_.get(), s());
  if (e != cudaSuccess) {
    // Without the event, wait for the whole stream instead.
    (void)cudaStreamSynchronize(s());
    return fail(e, "cudaEventRecord");
  }
  e = cudaEventSynchronize(done_.get());
  return e == cudaSuccess ? std::string() : fail(e, "cudaEventSynchronize");
}

Status CudaLocalCommunicator::doAllGatherV(const CollectiveCall &c) {
  return run(Slot(c), [&]() -> std::string {
    const size_t es = dtypeSize(c.dtype);
    std::string err = waitForPeers();
    for (int r = 0; r < worldSize() && err.empty(); ++r)
      err = copy(offsetBytes(c.recv, (*c.recvDispls)[r], es),
                 group_->slot(r).send, (*c.recvCounts)[r], es);
    return err;
  });
}

Status CudaLocalCommunicator::doAllToAllV(const CollectiveCall &c) {
  return run(Slot(c), [&]() -> std::string {
    const size_t es = dtypeSize(c.dtype);
    std::string err = waitForPeers();
    for (int r = 0; r < worldSize() && err.empty(); ++r) {
      const Slot &from = group_->slot(r);
      err = copy(offsetBytes(c.recv, (*c.recvDispls)[r], es),
                 offsetBytes(from.send, (*from.sendDispls)[rank_], es),
                 (*c.recvCounts)[r], es);
    }
    return err;
  });
}

Status CudaLocalCommunicator::doReduceScatterV(const CollectiveCall &c) {
  return run(Slot(c), [&]() -> std::string {
    const int w = worldSize();
    const size_t es = dtypeSize(c.dtype);
    std::string err = waitForPeers();
    if (!err.empty())
      return err;
    SumSources sources;
    sources.count = w;
    for (int r = 0; r < w; ++r) {
      const Slot &from = group_->slot(r);
      sources.ptr[r] = offsetBytes(from.send, (*from.sendDispls)[rank_], es);
    }
    cudaError_t e =
        launchSumInOrder(c.dtype, sources, c.recv, (*c.sendCounts)[rank_], s());
    return e == cudaSuccess ? std::string() : fail(e, "sumInOrder kernel");
  });
}

Status CudaLocalCommunicator::doAllReduce(const CollectiveCall &c) {
  // local::allReduceInRankOrder on the ranks' streams: rank r records `mid`
  // once its chunk is reduced, and every stream waits for the peers' `mid`
  // before it copies their chunks.
  const int w = worldSize();
  const size_t es = dtypeSize(c.dtype);
  const int64_t count = c.count;
  Slot slot(c);
  if (slot.invalid.empty()) {
    // Grown before the arrival, when no peer reads the old block any more
    // (their reads completed before the previous collective returned).
    const size_t scratchBytes = size_t(chunkSize(count, w, rank_)) * es;
    ScopedDevice guard;
    const Status entered = guard.enter(device_);
    const Status reserved = entered.isOk()
                                ? scratch_.reserve(scratchBytes, device_, s())
                                : entered;
    if (!reserved.isOk())
      slot.invalid = reserved.message();
    slot.scratch = scratch_.get();
    slot.mid = mid_.get();
  }

  return run(std::move(slot), [&]() -> std::string {
    if (std::string err = waitForPeers(); !err.empty()) {
      // The one sync every rank makes (allReduceInRankOrder's).
      return group_->sync(rank_, err);
    }
    return local::allReduceInRankOrder(
        *group_, rank_, c.recv, count, es,
        [&](const std::vector<const void *> &srcs, int64_t n) {
          SumSources sources;
          sources.count = w;
          for (int r = 0; r < w; ++r)
            sources.ptr[r] = srcs[r];
          cudaError_t e =
              launchSumInOrder(c.dtype, sources, scratch_.get(), n, s());
          return e == cudaSuccess ? std::string()
                                  : fail(e, "sumInOrder kernel");
        },
        [&] {
          cudaError_t e = cudaEventRecord(mid_.get(), s());
          return e == cudaSuccess ? std::string() : fail(e, "cudaEventRecord");
        },
        [&] {
          // The peers' reduced chunks are ready when their `mid` is.
          for (int r = 0; r < w; ++r) {
            if (r == rank_)
              continue;
            cudaError_t e = cudaStreamWaitEvent(s(), group_->slot(r).mid, 0);
            if (e != cudaSuccess)
              return fail(e, "cudaStreamWaitEvent");
          }
          return std::string();
        },
        [&](void *dst, const void *src, int64_t n) {
          return copy(dst, src, n, es);
        });
  });
}

Status CudaLocalCommunicator::doBroadcast(const CollectiveCall &c) {
  return run(Slot(c), [&]() -> std::string {
    std::string err = waitForPeers();
    if (err.empty() && rank_ != c.root)
      err =
          copy(c.recv, group_->slot(c.root).recv, c.count, dtypeSize(c.dtype));
    return err;
  });
}

Status CudaLocalCommunicator::doBarrier(const CollectiveCall &c) {
  // Besides the host rendezvous, every stream waits for every rank's ready
  // event and the host for `done`: when barrier returns, all work that any
  // rank enqueued before it has completed.
  return run(Slot(c), [&] { return waitForPeers(); });
}

/// A new in-process group of the members' streams (LocalSplit.h).
Status CudaLocalCommunicator::doSplit(int color, int key,
                                      std::unique_ptr<Communicator> &out) {
  return group_->splitter.split(
      rank_, color, key,
      [&](const std::vector<int> &members,
          std::vector<std::unique_ptr<Communicator>> &comms) {
        std::vector<std::shared_ptr<ExecutionStream>> streams;
        for (int m : members)
          streams.push_back(group_->streams[size_t(m)]);
        return createCudaLocalGroup(streams, group_->options, comms);
      },
      out);
}

} // namespace

Status createCudaLocalGroup(
    const std::vector<std::shared_ptr<ExecutionStream>> &streams,
    const CommOptions &options,
    std::vector<std::unique_ptr<Communicator>> &out) {
  out.clear();
  const std::string at = "createCudaLocalGroup";
  const size_t w = streams.size();
  if (w < 1)
    return Status::invalidArgument(at +
                                   ": no streams (worldSize must be >= 1)");
  if (w > size_t(kMaxCudaLocalRanks))
    return Status::invalidArgument(at + ": worldSize " + std::to_string(w) +
                                   " exceeds the cuda-local limit of " +
                                   std::to_string(kMaxCudaLocalRanks) +
                                   " ranks");
  for (size_t r = 0; r < w; ++r) {
    if (!streams[r])
      return Status::invalidArgument(at + ": stream of rank " +
                                     std::to_string(r) + " is null");
    if (streams[r]->device() != streams[0]->device())
      return Status::invalidArgument(
          at + ": all ranks must share one device, but rank 0 is on cuda:" +
          std::to_string(streams[0]->device()) + " and rank " +
          std::to_string(r) +
          " on cuda:" + std::to_string(streams[r]->device()));
    for (size_t q = 0; q < r; ++q)
      if (streams[q]->nativeHandle() == streams[r]->nativeHandle())
        return Status::invalidArgument(at + ": ranks " + std::to_string(q) +
                                       " and " + std::to_string(r) +
                                       " share a stream");
  }
  double timeout = 0;
  SHARDLIN_RETURN_IF_ERROR(
      cuda::checkTimeout(options.timeoutSeconds, timeout).withContext(at));

  auto group = std::make_shared<Group>(streams, options, timeout);
  std::vector<std::unique_ptr<Communicator>> comms;
  for (size_t r = 0; r < w; ++r) {
    auto comm =
        std::make_unique<CudaLocalCommunicator>(group, int(r), streams[r]);
    SHARDLIN_RETURN_IF_ERROR(
        comm->init().withContext(at + " (rank " + std::to_string(r) + ")"));
    comms.push_back(std::move(comm));
  }
  out = std::move(comms);
  return Status::ok();
}

Status createCudaLocalGroup(int worldSize, int device,
                            const CommOptions &options,
                            std::vector<std::unique_ptr<Communicator>> &out) {
  out.clear();
  if (worldSize < 1)
    return Status::invalidArgument(
        "createCudaLocalGroup: worldSize = " + std::to_string(worldSize) +
        " (must be >= 1)");
  if (worldSize > kMaxCudaLocalRanks)
    return Status::invalidArgument(
        "createCudaLocalGroup: worldSize " + std::to_string(worldSize) +
        " exceeds the cuda-local limit of " +
        std::to_string(kMaxCudaLocalRanks) + " ranks");
  std::vector<std::shared_ptr<ExecutionStream>> streams(worldSize);
  for (auto &s : streams)
    SHARDLIN_RETURN_IF_ERROR(
        ExecutionStream::create(device, s).withContext("createCudaLocalGroup"));
  return createCudaLocalGroup(streams, options, out);
}

} // namespace shardlin::rt
