//===- CudaLane.cpp - A GPU rank's two streams in a pipelined block -------===//
//
// The LaneOrdering of exec/CommLane.h for a GPU rank: the block's
// collectives go to a second stream of the rank's device (created with the
// first pipeline, kept for the rank's life), its GEMMs and kernels stay on
// the rank's stream, and events order them: collective k waits for the
// compute work issued before it was submitted (an event recorded then on the
// compute stream), compute issued after the lane's wait(k) waits for
// collective k (an event recorded after it on the second stream). On one
// GPU the copy engines and the reduction kernels of cuda-local then run
// beside the GEMMs; with NCCL its kernels share the SMs with them.
//
//===----------------------------------------------------------------------===//

#include "backends/cuda/CudaCheck.h"
#include "shardlin/runtime/backends/Cuda.h"

#include <memory>
#include <vector>

namespace shardlin::rt {

namespace {

using cuda::Event;
using cuda::nativeStream;
using cuda::ScopedDevice;

class CudaLaneOrdering final : public LaneOrdering {
public:
  CudaLaneOrdering(CudaCommunicator &comm,
                   std::shared_ptr<ExecutionStream> compute)
      : comm_(comm), compute_(std::move(compute)),
        device_(compute_->device()) {}

  ~CudaLaneOrdering() override {
    // The collectives' stream must not outlive the lane unrestored.
    if (comm_.stream() != compute_)
      comm_.setCollectiveStream(compute_);
  }

  Status begin(size_t slots) override {
    ScopedDevice guard;
    SHARDLIN_RETURN_IF_ERROR(guard.enter(device_));
    if (!lane_)
      SHARDLIN_RETURN_IF_ERROR(ExecutionStream::create(device_, lane_));
    if (!finished_.get())
      SHARDLIN_RETURN_IF_ERROR(finished_.create(device_, false));
    while (computeMarks_.size() < slots) {
      computeMarks_.push_back(std::make_unique<Event>());
      SHARDLIN_RETURN_IF_ERROR(computeMarks_.back()->create(device_, false));
      laneMarks_.push_back(std::make_unique<Event>());
      SHARDLIN_RETURN_IF_ERROR(laneMarks_.back()->create(device_, false));
    }
    comm_.setCollectiveStream(lane_);
    return Status::ok();
  }

  Status markCompute(size_t slot) override {
    return onEvent(true, slot, computeMarks_, *compute_,
                   "marking the compute work");
  }
  Status commWaits(size_t slot) override {
    return onEvent(false, slot, computeMarks_, *lane_, "ordering a collective");
  }
  Status markComm(size_t slot) override {
    return onEvent(true, slot, laneMarks_, *lane_, "marking a collective");
  }
  Status computeWaits(size_t slot) override {
    return onEvent(false, slot, laneMarks_, *compute_,
                   "ordering the compute work");
  }

  Status end() override {
    comm_.setCollectiveStream(compute_);
    ScopedDevice guard;
    SHARDLIN_RETURN_IF_ERROR(guard.enter(device_));
    // Later compute (and the next pipeline's GEMMs, which overwrite what
    // this one's reduce_scatters read) waits for all of the lane's work.
    cudaError_t e = cudaEventRecord(finished_.get(), nativeStream(*lane_));
    if (e == cudaSuccess)
      e = cudaStreamWaitEvent(nativeStream(*compute_), finished_.get(), 0);
    if (e != cudaSuccess)
      return cuda::cudaFailure(e, "cudaStreamWaitEvent", device_)
          .withContext("ending a pipelined block");
    return Status::ok();
  }

private:
  using Marks = std::vector<std::unique_ptr<Event>>;

  /// Records marks[slot] on `on` (record) or makes `on` wait for it.
  Status onEvent(bool record, size_t slot, const Marks &marks,
                 const ExecutionStream &on, const char *what) {
    if (slot >= marks.size())
      return Status::internal(std::string(what) + ": no event for slot " +
                              std::to_string(slot));
    ScopedDevice guard;
    SHARDLIN_RETURN_IF_ERROR(guard.enter(device_));
    cudaEvent_t event = marks[slot]->get();
    cudaError_t e = record ? cudaEventRecord(event, nativeStream(on))
                           : cudaStreamWaitEvent(nativeStream(on), event, 0);
    if (e != cudaSuccess)
      return cuda::cudaFailure(e,
                               record ? "cudaEventRecord"
                                      : "cudaStreamWaitEvent",
                               device_)
          .withContext(what);
    return Status::ok();
  }

  CudaCommunicator &comm_;
  const std::shared_ptr<ExecutionStream> compute_;
  const int device_;
  std::shared_ptr<ExecutionStream> lane_;
  Event finished_;
  Marks computeMarks_, laneMarks_;
};

} // namespace

Status createCudaLaneOrdering(CudaCommunicator &comm,
                              std::shared_ptr<ExecutionStream> compute,
                              std::unique_ptr<LaneOrdering> &out) {
  if (!compute)
    return Status::internal("createCudaLaneOrdering: no compute stream");
  out = std::make_unique<CudaLaneOrdering>(comm, std::move(compute));
  return Status::ok();
}

} // namespace shardlin::rt
