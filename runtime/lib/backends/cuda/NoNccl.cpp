//===- NoNccl.cpp - The NCCL entry points of a CUDA build without NCCL ----===//
//
// Built into the GPU module instead of NcclCommunicator.cpp when CMake
// found the CUDA toolkit but not NCCL: the NCCL entry points of Cuda.h exist
// and say why they cannot work, so callers need no #ifdef.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/backends/Cuda.h"

namespace shardlin::rt {

namespace {
Status noNccl() {
  return Status::unavailable("this shardlin runtime was built without NCCL "
                       "(nccl.h / libnccl not found at configure time)");
}
} // namespace

bool ncclAvailable() { return false; }
Status createNcclUniqueId(NcclUniqueId &) { return noNccl(); }
Status createNcclCommunicator(const NcclUniqueId &, int, int,
                              std::shared_ptr<ExecutionStream>,
                              const CommOptions &,
                              std::unique_ptr<Communicator> &out) {
  out.reset();
  return noNccl();
}
Status createNcclCommunicator(Communicator &, std::shared_ptr<ExecutionStream>,
                              const CommOptions &,
                              std::unique_ptr<Communicator> &out) {
  out.reset();
  return noNccl();
}
Status
createNcclThreadsGroup(const std::vector<std::shared_ptr<ExecutionStream>> &,
                       const CommOptions &,
                       std::vector<std::unique_ptr<Communicator>> &out) {
  out.clear();
  return noNccl();
}

} // namespace shardlin::rt
