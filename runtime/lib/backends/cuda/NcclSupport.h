//===- NcclSupport.h - Helpers of the NCCL communicator ---------*- C++ -*-===//
//
// What NcclCommunicator.cpp needs around the NCCL API: the dtype mapping, the
// configuration of a (non-)blocking communicator, the wait for a
// non-blocking communicator's last call, an RAII NCCL group and the
// send/receive record of a grouped exchange. Private to the runtime.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_CUDA_NCCLSUPPORT_H
#define SHARDLIN_RUNTIME_LIB_CUDA_NCCLSUPPORT_H

#include "backends/cuda/CudaCheck.h"

#include "shardlin/runtime/base/DType.h"
#include "shardlin/runtime/base/Status.h"

#include <nccl.h>

#include <cstdint>
#include <string>

namespace shardlin::rt::nccl {

/// The NCCL data type of `t`.
Status ncclType(DType t, ncclDataType_t &out);

/// A communicator configuration, blocking or not.
ncclConfig_t makeConfig(bool blocking);

/// ncclCommGetAsyncError as a probe: Pending while an operation is still
/// being enqueued (ncclInProgress).
cuda::ProbeState asyncState(ncclComm_t comm, int device, std::string &error);

/// Seconds left until `deadline` (inf stays inf).
double remaining(double deadline);

/// The deadline `timeout` seconds from now on the steady clock (inf stays
/// inf).
double deadlineAfter(double timeout);

/// Waits until a non-blocking communicator has finished its last call
/// (initialization or enqueue): ok, DeadlineExceeded ("timed out after
/// <timeout> s") or the NCCL failure (Internal).
Status waitReady(ncclComm_t comm, int device, double deadline, double timeout);

/// ncclGroupStart/ncclGroupEnd that always closes the group, also on an
/// early return (an unclosed group would capture the next NCCL calls).
class NcclGroup {
public:
  NcclGroup(ncclComm_t comm, int device) : comm_(comm), device_(device) {}
  ~NcclGroup() {
    if (open_)
      (void)ncclGroupEnd();
  }
  Status start() {
    SHARDLIN_NCCL_RETURN_IF_ERROR(device_, comm_, ncclGroupStart());
    open_ = true;
    return Status::ok();
  }
  Status end() {
    open_ = false;
    SHARDLIN_NCCL_RETURN_IF_ERROR(device_, comm_, ncclGroupEnd());
    return Status::ok();
  }

private:
  ncclComm_t comm_;
  int device_;
  bool open_ = false;
};

/// One send or receive of a grouped exchange.
struct P2p {
  bool isSend;
  int peer;
  const void *ptr;
  int64_t count;
};

} // namespace shardlin::rt::nccl

#endif // SHARDLIN_RUNTIME_LIB_CUDA_NCCLSUPPORT_H
