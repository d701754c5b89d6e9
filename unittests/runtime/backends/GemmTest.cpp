//===- GemmTest.cpp - The OpenBLAS GEMM backend ---------------------------===//
//
// The GEMM conformance suite (GemmSuite.h: bounds, poisoning, the tests) on
// the openblas backend with host memory, and what only this backend has:
// its name, the BLAS thread setting and the host buffers it allocates its
// workspaces from.
//
//===----------------------------------------------------------------------===//

#include "GemmSuite.h"

#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/exec/Gemm.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace shardlin::rt;
using namespace shardlin::rt::testing;

namespace {

/// openblas on host memory: an upload is a copy the target keeps.
class CpuGemmTarget final : public GemmTarget {
public:
  Status setUp(std::string &) override {
    gemm_ = createCpuGemm();
    if (!gemm_)
      return Status::internal("createCpuGemm returned null");
    ops_ = createHostLocalOps();
    return Status::ok();
  }
  GemmBackend &gemm() override { return *gemm_; }
  LocalOps &localOps() override { return *ops_; }
  Status upload(const std::vector<unsigned char> &host, void *&ptr) override {
    ptr = nullptr;
    if (host.empty())
      return Status::ok();
    copies_.push_back(std::make_unique<std::vector<unsigned char>>(host));
    ptr = copies_.back()->data();
    return Status::ok();
  }
  Status download(const void *ptr, size_t bytes,
                  std::vector<unsigned char> &host) override {
    host.assign(bytes, 0);
    if (bytes != 0)
      std::memcpy(host.data(), ptr, bytes);
    return Status::ok();
  }
  void release() override { copies_.clear(); }

private:
  std::unique_ptr<GemmBackend> gemm_;
  std::unique_ptr<LocalOps> ops_;
  std::vector<std::unique_ptr<std::vector<unsigned char>>> copies_;
};

} // namespace

INSTANTIATE_TEST_SUITE_P(CpuGemm, GemmConformance,
                         ::testing::Values(GemmSuiteParam{
                             "openblas",
                             [] { return std::make_unique<CpuGemmTarget>(); },
                             "OpenBLAS"}),
                         gemmParamName);

TEST(CpuGemm, Name) {
  auto backend = createCpuGemm();
  ASSERT_NE(backend, nullptr);
  EXPECT_STREQ(backend->name(), "openblas");
  EXPECT_TRUE(backend->device().isHost());
}

TEST(CpuGemm, BlasThreads) {
  const int before = getBlasThreads();
  EXPECT_GE(before, 1);
  setBlasThreads(1);
  EXPECT_EQ(getBlasThreads(), 1);
  setBlasThreads(0); // clamped to 1
  EXPECT_EQ(getBlasThreads(), 1);
  setBlasThreads(before);
  EXPECT_EQ(getBlasThreads(), before);
}

// Buffer.cpp has no test file of its own in runtime/test/CMakeLists.txt; the
// GEMM workspaces are its main host user, so its checks live here.
TEST(GemmHostBuffer, AllocatesAlignedAndReportsFailure) {
  Allocator &host = hostAllocator();
  EXPECT_TRUE(host.device().isHost());
  EXPECT_EQ(deviceName(host.device()), "host");
  EXPECT_EQ(deviceName(Device{DeviceKind::Cuda, 3}), "cuda:3");

  for (size_t bytes : {size_t(1), size_t(63), size_t(100), size_t(1) << 20}) {
    Buffer buf;
    Status st = Buffer::allocate(host, bytes, buf);
    ASSERT_TRUE(st.isOk()) << st.message();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(buf.data()) % 64, 0u);
    EXPECT_EQ(buf.bytes(), bytes);
    std::memset(buf.data(), 0xAB, bytes); // the whole range is usable
    Buffer moved = std::move(buf);
    EXPECT_EQ(buf.data(), nullptr);
    EXPECT_EQ(moved.bytes(), bytes);
  }

  void *p = reinterpret_cast<void *>(uintptr_t(1));
  Status st = host.allocate(0, &p);
  EXPECT_TRUE(st.isOk());
  EXPECT_EQ(p, nullptr);
  host.deallocate(nullptr);

  // No machine has 2^62 bytes: the failure is a Status naming the size.
  // (Under AddressSanitizer run with allocator_may_return_null=1.)
  st = host.allocate(size_t(1) << 62, &p);
  ASSERT_FALSE(st.isOk());
  // Memory ran out (posix_memalign): ResourceExhausted, not the caller's
  // fault nor shardlin's.
  EXPECT_EQ(st.code(), StatusCode::ResourceExhausted) << st.message();
  EXPECT_NE(st.message().find("4611686018427387904 bytes"), std::string::npos)
      << st.message();
  EXPECT_EQ(p, nullptr);
  EXPECT_FALSE(host.allocate(8, nullptr).isOk());
}

TEST(GemmHostBuffer, CheckedNumElements) {
  int64_t n = -1;
  ASSERT_TRUE(checkedNumElements({}, n).isOk());
  EXPECT_EQ(n, 1);
  ASSERT_TRUE(checkedNumElements({2, 3, 4}, n, 8).isOk());
  EXPECT_EQ(n, 24);
  // A zero dim wins over dims whose product alone would overflow.
  ASSERT_TRUE(checkedNumElements({int64_t(1) << 62, 4, 0}, n).isOk());
  EXPECT_EQ(n, 0);

  // A shape that cannot be sized is the caller's input: InvalidArgument.
  Status st = checkedNumElements({2, -5, 3}, n);
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument) << st.message();
  EXPECT_NE(st.message().find("dim 1"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("(-5)"), std::string::npos) << st.message();
  // Negative dims are reported even next to a zero dim.
  EXPECT_FALSE(checkedNumElements({0, -1}, n).isOk());

  st = checkedNumElements({int64_t(1) << 32, int64_t(1) << 31}, n);
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument) << st.message();
  EXPECT_NE(st.message().find("overflows int64"), std::string::npos)
      << st.message();
  // 2^62 elements fit; their bytes at 2 or more bytes each do not.
  ASSERT_TRUE(checkedNumElements({int64_t(1) << 62}, n, 1).isOk());
  st = checkedNumElements({int64_t(1) << 62}, n, 2);
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument) << st.message();
  EXPECT_NE(st.message().find("byte size"), std::string::npos) << st.message();
  ASSERT_TRUE(checkedNumElements({(int64_t(1) << 62) - 1}, n, 2).isOk());
  EXPECT_EQ(n, (int64_t(1) << 62) - 1);
}
