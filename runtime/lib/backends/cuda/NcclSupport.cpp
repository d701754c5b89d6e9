//===- NcclSupport.cpp - Helpers of the NCCL communicator -----------------===//
//
// See NcclSupport.h.
//
//===----------------------------------------------------------------------===//
#include "backends/cuda/NcclSupport.h"

#include "shardlin/runtime/backends/Cuda.h"

#include <cmath>

namespace shardlin::rt::nccl {

using namespace cuda;

static_assert(sizeof(NcclUniqueId::bytes) == sizeof(ncclUniqueId),
              "NcclUniqueId must hold an ncclUniqueId");

ProbeState asyncState(ncclComm_t comm, int device, std::string &error) {
  ncclResult_t async = ncclSuccess;
  ncclResult_t r = ncclCommGetAsyncError(comm, &async);
  if (r != ncclSuccess) {
    error = ncclFailure(r, "ncclCommGetAsyncError", device, comm).message();
    return ProbeState::Failed;
  }
  if (async == ncclInProgress)
    return ProbeState::Pending;
  if (async != ncclSuccess) {
    error = ncclFailure(async, "an asynchronous NCCL operation", device, comm)
                .message();
    return ProbeState::Failed;
  }
  return ProbeState::Done;
}

Status ncclType(DType t, ncclDataType_t &out) {
  switch (t) {
  case DType::F16:
    out = ncclFloat16;
    return Status::ok();
  case DType::BF16:
    // ncclBfloat16 exists since NCCL 2.10; the build requires >= 2.14 for
    // non-blocking communicators anyway.
    out = ncclBfloat16;
    return Status::ok();
  case DType::F32:
    out = ncclFloat32;
    return Status::ok();
  case DType::F64:
    out = ncclFloat64;
    return Status::ok();
  }
  return Status::invalidArgument("invalid dtype value " +
                                 std::to_string(static_cast<int>(t)));
}

ncclConfig_t makeConfig(bool blocking) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = blocking ? 1 : 0;
  return config;
}

double remaining(double deadline) {
  return std::isinf(deadline) ? deadline : deadline - steadySeconds();
}

double deadlineAfter(double timeout) {
  return std::isinf(timeout) ? timeout : steadySeconds() + timeout;
}

Status waitReady(ncclComm_t comm, int device, double deadline, double timeout) {
  WaitResult w = waitWithDeadline(
      [&](std::string &error) { return asyncState(comm, device, error); },
      remaining(deadline), steadySeconds, sleepSeconds);
  return waitStatus(w, "timed out after " + formatSeconds(timeout) + " s");
}

} // namespace shardlin::rt::nccl
