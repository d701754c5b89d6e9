//===- GpuCollectiveSuites.cpp - The collective suites on GPU ranks -------===//
//
// The collective suites (CollectiveSuites.h) reach a rank's memory through a
// RankMemory; here is the one of a cuda-local or NCCL rank: device buffers
// from its allocator, copies on its stream.
//
//===----------------------------------------------------------------------===//

#include "GpuTestSupport.h"

namespace shardlin::rt::testing {

namespace {

/// A rank's device memory, reached through its stream.
class CudaRankMemory final : public RankMemory {
public:
  CudaRankMemory(std::shared_ptr<ExecutionStream> stream,
                 std::unique_ptr<Allocator> alloc)
      : stream_(std::move(stream)), alloc_(std::move(alloc)) {}
  Status toDevice(const Bytes &host, Buffer &out) override {
    SHARDLIN_RETURN_IF_ERROR(Buffer::allocate(*alloc_, host.size(), out));
    return copyToDevice(*stream_, out.data(), host.data(), host.size());
  }
  Status toHost(const Buffer &dev, Bytes &host) override {
    host.assign(dev.bytes(), 0);
    return copyToHost(*stream_, host.data(), dev.data(), dev.bytes());
  }

private:
  std::shared_ptr<ExecutionStream> stream_;
  std::unique_ptr<Allocator> alloc_;
};

} // namespace

MakeSuiteRanks suiteRanks(MakeRanks make) {
  return [make](int w, SuiteRanks &out) {
    out.clear();
    Ranks ranks;
    SHARDLIN_RETURN_IF_ERROR(make(w, ranks));
    for (Rank &r : ranks) {
      SuiteRank s;
      s.comm = std::move(r.comm);
      s.memory = std::make_unique<CudaRankMemory>(r.stream, std::move(r.alloc));
      out.push_back(std::move(s));
    }
    return Status::ok();
  };
}

} // namespace shardlin::rt::testing
