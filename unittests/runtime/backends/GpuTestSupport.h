//===- GpuTestSupport.h - Shared by the GPU tests ---------------*- C++ -*-===//
//
// The GPU tests (GpuWaitLogicTest.cpp, GpuLocalOpsTest.cpp, GpuGemmTest.cpp,
// GpuCollectivesTest.cpp; one executable, shardlin-gpu-tests) are of two
// kinds:
//  - GPU tests (everything that touches a device) begin with
//    REQUIRE_CUDA_DEVICE(), which skips them (GTEST_SKIP, with the reason
//    CUDA gave) on a machine without a usable GPU. They never pass without
//    running.
//  - CPU tests that run everywhere: the polling loop behind every timeout
//    (waitWithDeadline, driven by a fake clock), the argument checks, and
//    the behaviour of the factories when there is no device.
//
// Bounds are those of GemmTest.cpp (GEMM) and CollectivesTestSupport.h
// (collectives); every buffer starts poisoned (0xFF bytes, NaN in every
// dtype), so unwritten or overwritten elements show.
//
// Here: the skip macros, and the ranks of a cuda-local or NCCL group with
// their streams and device memory, also as the collective suites of
// CollectiveSuites.h take them.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_TEST_GPUTESTSUPPORT_H
#define SHARDLIN_RUNTIME_TEST_GPUTESTSUPPORT_H

#include "CollectiveSuites.h"
#include "CollectivesTestSupport.h"
#include "backends/cuda/CudaCheck.h"
#include "GemmSuite.h" // Matrix and randomMatrix, for GEMM operands

#include "shardlin/runtime/backends/Cuda.h"
#include "shardlin/runtime/exec/LocalOps.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#define REQUIRE_CUDA_DEVICE()                                                  \
  do {                                                                         \
    std::string shardlinWhy_;                                                  \
    if (!cudaDevicesAvailable(&shardlinWhy_))                                  \
      GTEST_SKIP() << "no usable CUDA device: " << shardlinWhy_;               \
  } while (false)

#define REQUIRE_NCCL()                                                         \
  do {                                                                         \
    if (!ncclAvailable())                                                      \
      GTEST_SKIP() << "this runtime was built without NCCL";                   \
  } while (false)

namespace shardlin::rt::testing {

using Clock = std::chrono::steady_clock;

inline double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

inline bool contains(const std::string &s, const std::string &needle) {
  return s.find(needle) != std::string::npos;
}

//===----------------------------------------------------------------------===//
// Fixture base: a stream and device memory on cuda:0
//===----------------------------------------------------------------------===//

/// A stream and device memory on cuda:0; skips without a device. Derived
/// fixtures that set up more return early when this skipped or failed.
class CudaDeviceTest : public ::testing::Test {
protected:
  void SetUp() override {
    REQUIRE_CUDA_DEVICE();
    Status st = ExecutionStream::create(0, stream_);
    ASSERT_TRUE(st.isOk()) << st.message();
    st = createCudaAllocator(0, alloc_);
    ASSERT_TRUE(st.isOk()) << st.message();
  }

  Status upload(const Bytes &host, Buffer &out) {
    SHARDLIN_RETURN_IF_ERROR(Buffer::allocate(*alloc_, host.size(), out));
    return copyToDevice(*stream_, out.data(), host.data(), host.size());
  }

  std::shared_ptr<ExecutionStream> stream_;
  std::unique_ptr<Allocator> alloc_;
};

//===----------------------------------------------------------------------===//
// GPU helpers
//===----------------------------------------------------------------------===//

/// One rank's stream, device memory and communicator.
struct Rank {
  std::shared_ptr<ExecutionStream> stream;
  std::unique_ptr<Allocator> alloc;
  std::unique_ptr<Communicator> comm;
};
using Ranks = std::vector<Rank>;
using MakeRanks = std::function<Status(int, Ranks &)>;

inline Status makeCudaLocalRanks(int w, const CommOptions &options,
                                 Ranks &ranks) {
  ranks.clear();
  std::vector<std::unique_ptr<Communicator>> comms;
  SHARDLIN_RETURN_IF_ERROR(createCudaLocalGroup(w, 0, options, comms));
  for (auto &c : comms) {
    Rank r;
    r.stream = cudaStreamOf(*c);
    if (!r.stream)
      return Status::internal("cuda-local communicator without a stream");
    SHARDLIN_RETURN_IF_ERROR(createCudaAllocator(0, r.alloc));
    r.comm = std::move(c);
    ranks.push_back(std::move(r));
  }
  return Status::ok();
}

inline Status makeNcclRanks(int w, const CommOptions &options, Ranks &ranks) {
  ranks.clear();
  std::vector<std::shared_ptr<ExecutionStream>> streams(w);
  for (int r = 0; r < w; ++r)
    SHARDLIN_RETURN_IF_ERROR(ExecutionStream::create(r, streams[r]));
  std::vector<std::unique_ptr<Communicator>> comms;
  SHARDLIN_RETURN_IF_ERROR(createNcclThreadsGroup(streams, options, comms));
  for (int r = 0; r < w; ++r) {
    Rank rank;
    rank.stream = streams[r];
    SHARDLIN_RETURN_IF_ERROR(createCudaAllocator(r, rank.alloc));
    rank.comm = std::move(comms[r]);
    ranks.push_back(std::move(rank));
  }
  return Status::ok();
}

inline int deviceCount() {
  int n = 0;
  return cudaDeviceCount(n).isOk() ? n : 0;
}

/// A device copy of host bytes (no memory for no bytes).
inline Status toDevice(Rank &rank, const Bytes &host, Buffer &out) {
  SHARDLIN_RETURN_IF_ERROR(Buffer::allocate(*rank.alloc, host.size(), out));
  return copyToDevice(*rank.stream, out.data(), host.data(), host.size());
}

inline Status toHost(Rank &rank, const Buffer &dev, Bytes &host) {
  host.assign(dev.bytes(), 0);
  return copyToHost(*rank.stream, host.data(), dev.data(), dev.bytes());
}

/// The ranks `make` builds, with their device memory, as the collective
/// suites of CollectiveSuites.h take them (GpuCollectiveSuites.cpp).
MakeSuiteRanks suiteRanks(MakeRanks make);

/// A stream, device memory and the CUDA local ops on cuda:0.
class CudaLocalOpsTest : public CudaDeviceTest {
protected:
  void SetUp() override {
    CudaDeviceTest::SetUp();
    if (IsSkipped() || HasFatalFailure())
      return;
    Status st = createCudaLocalOps(stream_, ops_);
    ASSERT_TRUE(st.isOk()) << st.message();
  }

  Status download(const Buffer &dev, Bytes &host) {
    host.assign(dev.bytes(), 0);
    return copyToHost(*stream_, host.data(), dev.data(), dev.bytes());
  }

  std::unique_ptr<LocalOps> ops_;
};

} // namespace shardlin::rt::testing

#endif // SHARDLIN_RUNTIME_TEST_GPUTESTSUPPORT_H
