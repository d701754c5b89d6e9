//===- HostDevice.cpp - A rank on host memory -----------------------------===//
//
// The device of the CPU backends' ranks: malloc'd buffers, the OpenBLAS
// GEMM, the host's local ops, and copies that are plain memcpy (so that
// running has one path for host and device memory).
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/backends/Host.h"

#include <cstring>

namespace shardlin::rt {

namespace {

class HostDevice final : public RankDevice {
public:
  DeviceKind kind() const override { return DeviceKind::Host; }
  Status prepare(const Communicator &) override {
    gemm_ = createCpuGemm();
    ops_ = createHostLocalOps();
    return Status::ok();
  }
  Allocator &allocator() override { return hostAllocator(); }
  GemmBackend &gemm() override { return *gemm_; }
  LocalOps &localOps() override { return *ops_; }
  Status copyFromHost(void *dst, const void *src, size_t bytes) override {
    if (bytes)
      std::memcpy(dst, src, bytes);
    return Status::ok();
  }
  Status copyToHost(void *dst, const void *src, size_t bytes) override {
    if (bytes)
      std::memcpy(dst, src, bytes);
    return Status::ok();
  }

private:
  std::unique_ptr<GemmBackend> gemm_;
  std::unique_ptr<LocalOps> ops_;
};

} // namespace

std::unique_ptr<RankDevice> createHostDevice() {
  return std::make_unique<HostDevice>();
}

} // namespace shardlin::rt
