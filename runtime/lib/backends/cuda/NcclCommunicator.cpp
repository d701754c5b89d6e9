//===- NcclCommunicator.cpp - The collectives over NCCL -------------------===//
//
// The NCCL communicator's lifetime and collectives (its creation and split:
// NcclSetup.cpp). The collectives of Communicator.h on NCCL, all enqueued on
// the rank's ExecutionStream:
//  - allGatherV: ncclAllGather when every count is equal and the blocks are
//    packed in rank order (what the col-wise plan does), otherwise one group
//    of ncclSend/ncclRecv pairs plus a local copy of the rank's own block.
//  - allToAllV: one group of ncclSend/ncclRecv (per-peer counts), own block
//    copied locally.
//  - reduceScatterV: every rank sends each peer that peer's segment (grouped
//    ncclSend/ncclRecv, uneven counts as they are) and receives the W - 1
//    segments it reduces into a staging buffer; a kernel then sums the W
//    segments in rank order. Chosen over padding to the largest count and
//    ncclReduceScatter because
//      * it honours Communicator.h's contract: f16/bf16 summed in f32 and
//        rounded once (NCCL's own reductions add f16/bf16 in the narrow type
//        at every hop), and f32/f64 in rank order, i.e. bit-identical to the
//        threads and cuda-local backends;
//      * it sends exactly the bytes the contract counts (sum of the other
//        ranks' segments), as many as a ring reduce-scatter, with no padding
//        and no compaction pass;
//    its cost is W - 1 concurrent peer connections, which NVLink/NVSwitch
//    within a node (the tensor-parallel case) serves at full bandwidth.
//  - allReduce: ncclAllReduce for f32/f64 (NCCL's fastest path, NVLS on
//    H100/H200; any summation order is within the documented bound). f16 and
//    bf16 go through the reduce-scatter above over balanced chunks followed
//    by an all-gather of the chunks, which keeps "sum in f32, round once"
//    and moves the same 2 (W-1)/W bytes per element as a ring all-reduce.
//  - broadcast: ncclBroadcast. barrier: a 1-element ncclAllReduce.
//
// Timeouts. With a finite CommOptions::timeoutSeconds the NCCL communicator
// is non-blocking (ncclConfig_t::blocking = 0): no NCCL call blocks on a
// peer. After enqueuing, the host polls ncclCommGetAsyncError until the
// enqueue has finished, records an event on the stream, and polls
// cudaEventQuery plus the async error with backoff (waitWithDeadline) until
// the collective is done or the deadline passes. On a timeout or an NCCL
// error the communicator is aborted (ncclCommAbort also makes the kernel
// waiting for a missing peer return) and the Status names the collective,
// the rank and the reason; every later call fails at once. With an infinite
// timeout the communicator is blocking and collectives return as soon as
// they are enqueued, fully asynchronous in stream order (barrier still
// waits: returning before the peers arrive would not be a barrier).
//
//===----------------------------------------------------------------------===//

#include "backends/cuda/NcclCommunicator.h"

#include "backends/cuda/Kernels.h"

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace shardlin::rt::nccl {

using namespace cuda;

NcclCommunicator::NcclCommunicator(ncclComm_t comm, int rank, int worldSize,
                                   std::shared_ptr<ExecutionStream> stream,
                                   double timeout)
    : CudaCommunicator(std::move(stream)), comm_(comm), rank_(rank),
      worldSize_(worldSize), device_(stream_->device()), timeout_(timeout),
      blocking_(std::isinf(timeout)) {}

NcclCommunicator::~NcclCommunicator() {
  if (!comm_)
    return;
  ScopedDevice guard;
  if (!guard.enter(device_).isOk())
    return;
  // Destroy, not abort: with a finite timeout every collective has
  // completed; with an infinite one, waiting for queued work is what the
  // caller chose. ncclInProgress (non-blocking) means the rest of the
  // teardown runs in NCCL's background thread.
  (void)ncclCommDestroy(comm_);
}

Status NcclCommunicator::init() {
  ScopedDevice guard;
  SHARDLIN_RETURN_IF_ERROR(guard.enter(device_));
  SHARDLIN_RETURN_IF_ERROR(done_.create(device_, false));
  SHARDLIN_RETURN_IF_ERROR(barrierWord_.reserve(sizeof(float), device_, s()));
  // Defined contents, so the barrier's reduction never reads
  // uninitialized memory.
  SHARDLIN_CUDA_RETURN_IF_ERROR(
      device_, cudaMemsetAsync(barrierWord_.get(), 0, sizeof(float), s()));
  return Status::ok();
}

template <typename Enqueue>
Status NcclCommunicator::run(const CollectiveCall &call, bool waitAlways,
                             Enqueue enqueue) {
  const std::string &at = call.where;
  SHARDLIN_RETURN_IF_ERROR(usable(at));
  if (!call.invalid.empty())
    return rejectInvalid(call);
  ncclDataType_t type = ncclFloat32;
  if (call.kind != CollectiveKind::Barrier)
    SHARDLIN_RETURN_IF_ERROR(ncclType(call.dtype, type).withContext(at));
  ScopedDevice guard;
  double deadline = 0;
  SHARDLIN_RETURN_IF_ERROR(enter(at, guard, deadline));

  Status st = enqueue(deadline, type);
  if (st.isOk() && (!blocking_ || waitAlways))
    st = waitComplete(deadline);
  if (!st.isOk()) {
    // The peers may be blocked in this collective waiting for this rank,
    // and NCCL's state is unknown: the communicator cannot be used again.
    abort(st.message());
    return Status::error(st.code(), at + ": " + st.message() +
                                        "; the communicator was aborted");
  }
  return Status::ok();
}

Status NcclCommunicator::usable(const std::string &at) const {
  if (!aborted_)
    return Status::ok();
  return Status::aborted(at + ": the communicator was aborted earlier: " +
                         abortReason_);
}

Status NcclCommunicator::enter(const std::string &at, ScopedDevice &guard,
                               double &deadline) {
  SHARDLIN_RETURN_IF_ERROR(guard.enter(device_).withContext(at));
  deadline = deadlineAfter(timeout_);
  // An asynchronous error left by an earlier (not awaited) operation.
  std::string error;
  if (asyncState(comm_, device_, error) == ProbeState::Failed) {
    abort(error);
    return Status::internal(at + ": " + error +
                            "; the communicator was aborted");
  }
  return Status::ok();
}

Status NcclCommunicator::waitEnqueued(double deadline) {
  if (blocking_)
    return Status::ok(); // blocking calls return once enqueued
  Status ready = waitReady(comm_, device_, deadline, timeout_);
  if (!ready.isOk())
    return Status::error(ready.code(), ready.message() + " (enqueuing)");
  return Status::ok();
}

Status NcclCommunicator::waitComplete(double deadline) {
  SHARDLIN_RETURN_IF_ERROR(waitEnqueued(deadline));
  SHARDLIN_CUDA_RETURN_IF_ERROR(device_, cudaEventRecord(done_.get(), s()));
  WaitResult w = waitWithDeadline(
      [&](std::string &error) {
        cudaError_t e = cudaEventQuery(done_.get());
        if (e == cudaSuccess)
          return ProbeState::Done;
        if (e != cudaErrorNotReady) {
          error = cudaFailure(e, "cudaEventQuery", device_).message();
          return ProbeState::Failed;
        }
        // Still running: a failed peer or network shows up here.
        ProbeState async = asyncState(comm_, device_, error);
        return async == ProbeState::Failed ? async : ProbeState::Pending;
      },
      remaining(deadline), steadySeconds, sleepSeconds);
  return waitStatus(
      w, "timed out after " + formatSeconds(timeout_) +
             " s (a peer did not take part, called another collective or "
             "passed other sizes)");
}

void NcclCommunicator::abort(const std::string &reason) {
  aborted_ = true;
  abortReason_ = reason;
  if (!comm_)
    return;
  // Sets NCCL's abort flag, which the kernel waiting for a missing peer
  // polls, so the stream drains; the rest of the teardown may finish in
  // NCCL's background thread (ncclInProgress). The handle is gone either way.
  (void)ncclCommAbort(comm_);
  comm_ = nullptr;
}

Status NcclCommunicator::exchange(const std::vector<P2p> &ops,
                                  ncclDataType_t type) {
  if (ops.empty())
    return Status::ok();
  NcclGroup group(comm_, device_);
  SHARDLIN_RETURN_IF_ERROR(group.start());
  for (const P2p &op : ops) {
    if (op.isSend)
      SHARDLIN_NCCL_RETURN_IF_ERROR(
          device_, comm_,
          ncclSend(op.ptr, size_t(op.count), type, op.peer, comm_, s()));
    else
      SHARDLIN_NCCL_RETURN_IF_ERROR(device_, comm_,
                                    ncclRecv(const_cast<void *>(op.ptr),
                                             size_t(op.count), type, op.peer,
                                             comm_, s()));
  }
  return group.end();
}

Status NcclCommunicator::localCopy(void *dst, const void *src, int64_t n,
                                   size_t es) {
  if (n == 0 || dst == src)
    return Status::ok();
  SHARDLIN_CUDA_RETURN_IF_ERROR(
      device_,
      cudaMemcpyAsync(dst, src, size_t(n) * es, cudaMemcpyDefault, s()));
  return Status::ok();
}

Status NcclCommunicator::reduceSegments(const std::vector<P2p> &sends,
                                        const void *ownSegment, int64_t count,
                                        void *dst, DType dtype,
                                        ncclDataType_t type, double deadline) {
  const size_t es = dtypeSize(dtype);
  if (count > 0 &&
      uint64_t(count) > uint64_t(std::numeric_limits<int64_t>::max()) /
                            (uint64_t(worldSize_) * es))
    return Status::resourceExhausted("the staging buffer for " +
                         std::to_string(worldSize_) + " x " +
                         std::to_string(count) + " elements overflows");
  SHARDLIN_RETURN_IF_ERROR(
      staging_.reserve(size_t(count) * worldSize_ * es, device_, s()));
  void *staging = staging_.get();
  std::vector<P2p> ops = sends;
  for (int p = 0; p < worldSize_ && count > 0; ++p)
    if (p != rank_)
      ops.push_back({false, p, offsetBytes(staging, p * count, es), count});
  SHARDLIN_RETURN_IF_ERROR(localCopy(offsetBytes(staging, rank_ * count, es),
                                     ownSegment, count, es));
  SHARDLIN_RETURN_IF_ERROR(exchange(ops, type));
  // A non-blocking communicator may still be putting the receives on the
  // stream; the sum must come after them.
  SHARDLIN_RETURN_IF_ERROR(waitEnqueued(deadline));
  SHARDLIN_CUDA_RETURN_IF_ERROR(
      device_,
      launchSumStrided(dtype, staging, count, worldSize_, dst, count, s()));
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// The collectives
//===----------------------------------------------------------------------===//

std::string
NcclCommunicator::checkBackendArguments(const CollectiveCall &c) const {
  switch (c.kind) {
  case CollectiveKind::AllGatherV:
    if ((*c.recvCounts)[rank_] != c.count)
      return "recvCounts[" + std::to_string(rank_) +
             "] = " + std::to_string((*c.recvCounts)[rank_]) +
             " differs from sendCount = " + std::to_string(c.count);
    return {};
  case CollectiveKind::AllToAllV:
    if ((*c.sendCounts)[rank_] != (*c.recvCounts)[rank_])
      return "sendCounts[" + std::to_string(rank_) +
             "] = " + std::to_string((*c.sendCounts)[rank_]) +
             " differs from recvCounts[" + std::to_string(rank_) +
             "] = " + std::to_string((*c.recvCounts)[rank_]) +
             " (this rank's own block)";
    return {};
  default:
    return {};
  }
}

Status NcclCommunicator::doAllGatherV(const CollectiveCall &c) {
  return run(c, false, [&](double, ncclDataType_t type) -> Status {
    const int w = worldSize_;
    const size_t es = dtypeSize(c.dtype);
    const void *send = c.send;
    void *recv = c.recv;
    const int64_t sendCount = c.count;
    const std::vector<int64_t> &recvCounts = *c.recvCounts;
    const std::vector<int64_t> &recvDispls = *c.recvDispls;
    bool packed = true;
    for (int r = 0; r < w; ++r)
      packed = packed && recvCounts[r] == sendCount &&
               recvDispls[r] == int64_t(r) * sendCount;
    if (packed) {
      if (sendCount == 0)
        return Status::ok();
      SHARDLIN_NCCL_RETURN_IF_ERROR(
          device_, comm_,
          ncclAllGather(send, recv, size_t(sendCount), type, comm_, s()));
      return Status::ok();
    }
    SHARDLIN_RETURN_IF_ERROR(localCopy(offsetBytes(recv, recvDispls[rank_], es),
                                       send, sendCount, es));
    std::vector<P2p> ops;
    for (int p = 0; p < w; ++p) {
      if (p == rank_)
        continue;
      if (sendCount > 0)
        ops.push_back({true, p, send, sendCount});
      if (recvCounts[p] > 0)
        ops.push_back(
            {false, p, offsetBytes(recv, recvDispls[p], es), recvCounts[p]});
    }
    return exchange(ops, type);
  });
}

Status NcclCommunicator::doAllToAllV(const CollectiveCall &c) {
  return run(c, false, [&](double, ncclDataType_t type) -> Status {
    const int w = worldSize_;
    const size_t es = dtypeSize(c.dtype);
    const void *send = c.send;
    void *recv = c.recv;
    const std::vector<int64_t> &sendCounts = *c.sendCounts;
    const std::vector<int64_t> &sendDispls = *c.sendDispls;
    const std::vector<int64_t> &recvCounts = *c.recvCounts;
    const std::vector<int64_t> &recvDispls = *c.recvDispls;
    SHARDLIN_RETURN_IF_ERROR(localCopy(offsetBytes(recv, recvDispls[rank_], es),
                                       offsetBytes(send, sendDispls[rank_], es),
                                       recvCounts[rank_], es));
    std::vector<P2p> ops;
    for (int p = 0; p < w; ++p) {
      if (p == rank_)
        continue;
      if (sendCounts[p] > 0)
        ops.push_back(
            {true, p, offsetBytes(send, sendDispls[p], es), sendCounts[p]});
      if (recvCounts[p] > 0)
        ops.push_back(
            {false, p, offsetBytes(recv, recvDispls[p], es), recvCounts[p]});
    }
    return exchange(ops, type);
  });
}

Status NcclCommunicator::doReduceScatterV(const CollectiveCall &c) {
  return run(c, false, [&](double deadline, ncclDataType_t type) -> Status {
    const int w = worldSize_;
    const size_t es = dtypeSize(c.dtype);
    const std::vector<int64_t> &counts = *c.sendCounts;
    const std::vector<int64_t> &displs = *c.sendDispls;
    std::vector<P2p> sends;
    for (int p = 0; p < w; ++p)
      if (p != rank_ && counts[p] > 0)
        sends.push_back(
            {true, p, offsetBytes(c.send, displs[p], es), counts[p]});
    return reduceSegments(sends, offsetBytes(c.send, displs[rank_], es),
                          counts[rank_], c.recv, c.dtype, type, deadline);
  });
}

Status NcclCommunicator::doAllReduce(const CollectiveCall &c) {
  return run(c, false, [&](double deadline, ncclDataType_t type) -> Status {
    const int w = worldSize_;
    const size_t es = dtypeSize(c.dtype);
    const DType dtype = c.dtype;
    const void *send = c.send;
    void *recv = c.recv;
    const int64_t count = c.count;
    if (count == 0)
      return Status::ok();
    if (dtype == DType::F32 || dtype == DType::F64) {
      SHARDLIN_NCCL_RETURN_IF_ERROR(
          device_, comm_,
          ncclAllReduce(send, recv, size_t(count), type, ncclSum, comm_, s()));
      return Status::ok();
    }
    // f16/bf16: rank r reduces chunk r (balanced split), then the chunks
    // are gathered. Writing chunk r of recv in phase 1 is safe even when
    // recv == send: the peers read only their own chunks of this rank's
    // send, and those sends have completed (stream order) before the sum.
    auto chunk = [&](int r, int64_t &lo, int64_t &n) {
      const int64_t base = count / w, rem = count % w;
      lo = r * base + std::min<int64_t>(r, rem);
      n = base + (r < rem ? 1 : 0);
    };
    int64_t myLo = 0, myN = 0;
    chunk(rank_, myLo, myN);
    std::vector<P2p> sends;
    for (int p = 0; p < w; ++p) {
      int64_t lo = 0, n = 0;
      chunk(p, lo, n);
      if (p != rank_ && n > 0)
        sends.push_back({true, p, offsetBytes(send, lo, es), n});
    }
    SHARDLIN_RETURN_IF_ERROR(reduceSegments(sends, offsetBytes(send, myLo, es),
                                            myN, offsetBytes(recv, myLo, es),
                                            dtype, type, deadline));
    std::vector<P2p> gather;
    for (int p = 0; p < w; ++p) {
      int64_t lo = 0, n = 0;
      chunk(p, lo, n);
      if (p == rank_)
        continue;
      if (myN > 0)
        gather.push_back({true, p, offsetBytes(recv, myLo, es), myN});
      if (n > 0)
        gather.push_back({false, p, offsetBytes(recv, lo, es), n});
    }
    return exchange(gather, type);
  });
}

Status NcclCommunicator::doBroadcast(const CollectiveCall &c) {
  return run(c, false, [&](double, ncclDataType_t type) -> Status {
    if (c.count == 0)
      return Status::ok();
    SHARDLIN_NCCL_RETURN_IF_ERROR(device_, comm_,
                                  ncclBroadcast(c.recv, c.recv, size_t(c.count),
                                                type, c.root, comm_, s()));
    return Status::ok();
  });
}

Status NcclCommunicator::doBarrier(const CollectiveCall &c) {
  return run(c, true, [&](double, ncclDataType_t) -> Status {
    SHARDLIN_NCCL_RETURN_IF_ERROR(
        device_, comm_,
        ncclAllReduce(barrierWord_.get(), barrierWord_.get(), 1, ncclFloat32,
                      ncclSum, comm_, s()));
    return Status::ok();
  });
}

} // namespace shardlin::rt::nccl
