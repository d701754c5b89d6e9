//===- GpuGemmTest.cpp - cuBLAS GEMM --------------------------------------===//
//
// The GEMM conformance suite (GemmSuite.h: bounds, poisoning, the tests) on
// the cublas backend with device memory, once with the bias and the
// activation epilogues in cuBLASLt (which must add the bias along the right
// dimension) and once with the fill-and-accumulate path and the elementwise
// kernel after the GEMM (GemmEpilogueSuite.cpp's tests included); and what only this backend has: its device,
// TF32 only when allowed, replay of cached cuBLASLt plans, and refusing
// memory the device cannot read. Every test skips without a device.
//
//===----------------------------------------------------------------------===//

#include "GemmSuite.h"
#include "GpuTestSupport.h"

#include <cmath>
#include <random>

using namespace shardlin::rt;
using namespace shardlin::rt::testing;

namespace {

/// cublas on cuda:0 with `options`; uploads are device buffers.
class CublasGemmTarget final : public GemmTarget {
public:
  explicit CublasGemmTarget(GemmOptions options) : options_(options) {}

  Status setUp(std::string &skip) override {
    std::string why;
    if (!cudaDevicesAvailable(&why)) {
      skip = "no usable CUDA device: " + why;
      return Status::ok();
    }
    SHARDLIN_RETURN_IF_ERROR(ExecutionStream::create(0, stream_));
    SHARDLIN_RETURN_IF_ERROR(createCudaAllocator(0, alloc_));
    SHARDLIN_RETURN_IF_ERROR(createCudaLocalOps(stream_, ops_));
    return createCublasGemm(stream_, options_, gemm_);
  }
  GemmBackend &gemm() override { return *gemm_; }
  LocalOps &localOps() override { return *ops_; }
  Status upload(const Bytes &host, void *&ptr) override {
    ptr = nullptr;
    Buffer buf;
    SHARDLIN_RETURN_IF_ERROR(Buffer::allocate(*alloc_, host.size(), buf));
    SHARDLIN_RETURN_IF_ERROR(
        copyToDevice(*stream_, buf.data(), host.data(), host.size()));
    ptr = buf.data();
    buffers_.push_back(std::move(buf));
    return Status::ok();
  }
  Status download(const void *ptr, size_t bytes, Bytes &host) override {
    host.assign(bytes, 0);
    return copyToHost(*stream_, host.data(), ptr, bytes);
  }
  void release() override {
    // Work on the stream may still read the buffers.
    (void)stream_->synchronize();
    buffers_.clear();
  }

private:
  GemmOptions options_;
  std::shared_ptr<ExecutionStream> stream_;
  std::unique_ptr<Allocator> alloc_;
  std::unique_ptr<GemmBackend> gemm_;
  std::unique_ptr<LocalOps> ops_;
  std::vector<Buffer> buffers_;
};

/// With `fused`, the bias and GELU in cuBLASLt's epilogues; without,
/// the bias filled in by a kernel and every elementwise epilogue a kernel of
/// its own after the GEMM. cuBLASLt's GELU (the tanh form) has no stated
/// accuracy: the 2^-10 relative allowed it in the epilogue tests is an
/// estimate to be confirmed on a GPU (it has not run on one).
GemmSuiteParam cublasParam(const char *name, bool fused) {
  GemmOptions options;
  options.fuseBiasEpilogue = fused;
  options.fuseActivationEpilogue = fused;
  return {name,
          [options] { return std::make_unique<CublasGemmTarget>(options); },
          "cuBLAS", fused ? std::ldexp(1.0, -10) : 4e-6};
}

/// A device, a stream and a cuBLAS backend for the tests of this backend
/// alone.
class CublasGemm : public CudaDeviceTest {
protected:
  std::unique_ptr<GemmBackend> makeGemm(const GemmOptions &options) {
    std::unique_ptr<GemmBackend> gemm;
    Status st = createCublasGemm(stream_, options, gemm);
    EXPECT_TRUE(st.isOk()) << st.message();
    return gemm;
  }
};

} // namespace

INSTANTIATE_TEST_SUITE_P(CublasGemm, GemmConformance,
                         ::testing::Values(cublasParam("cublas", true),
                                           cublasParam("cublas_unfused",
                                                       false)),
                         gemmParamName);

TEST_F(CublasGemm, NameAndDevice) {
  auto gemm = makeGemm(GemmOptions());
  ASSERT_NE(gemm, nullptr);
  EXPECT_STREQ(gemm->name(), "cublas");
  EXPECT_EQ(gemm->device(), (Device{DeviceKind::Cuda, 0}));
}

TEST_F(CublasGemm, Tf32OnlyWhenAllowed) {
  // TF32 rounds each input to 11 significant bits: products err by up to
  // about 2^-10 relative, so the bound is 2^-9 S instead of 1e-5 S.
  GemmOptions options;
  options.allowTf32 = true;
  CublasGemmTarget target(options);
  std::string skip;
  Status st = target.setUp(skip);
  ASSERT_TRUE(skip.empty()) << skip; // the fixture found a device
  ASSERT_TRUE(st.isOk()) << st.message();
  std::mt19937 rng(13);
  GemmCase o;
  o.transB = true;
  o.bias = true;
  checkGemm(target, rng, DType::F32, {64, 64, 512}, o, std::ldexp(1.0, -9));
}

// Replaying an op reuses the cached cuBLASLt plan and gives the same bits.
TEST_F(CublasGemm, ReplayIsDeterministic) {
  auto gemm = makeGemm(GemmOptions());
  std::mt19937 rng(17);
  const Shape s{33, 40, 300};
  Matrix a = randomMatrix(rng, DType::BF16, s.m, s.k, s.k);
  Matrix b = randomMatrix(rng, DType::BF16, s.n, s.k, s.k);
  Matrix bias = randomMatrix(rng, DType::BF16, 1, s.n, s.n);
  Buffer da, db, dbias, dc;
  ASSERT_TRUE(upload(a.bytes, da).isOk());
  ASSERT_TRUE(upload(b.bytes, db).isOk());
  ASSERT_TRUE(upload(bias.bytes, dbias).isOk());
  ASSERT_TRUE(upload(Bytes(size_t(s.m * s.n) * 2, 0xFF), dc).isOk());
  GemmOp op;
  op.m = s.m;
  op.n = s.n;
  op.k = s.k;
  op.transB = true;
  op.dtype = DType::BF16;
  op.a = da.data();
  op.lda = s.k;
  op.b = db.data();
  op.ldb = s.k;
  op.bias = dbias.data();
  op.c = dc.data();
  op.ldc = s.n;
  Bytes first;
  for (int i = 0; i < 3; ++i) {
    Status st = gemm->run(op);
    ASSERT_TRUE(st.isOk()) << st.message();
    Bytes got(dc.bytes());
    ASSERT_TRUE(copyToHost(*stream_, got.data(), dc.data(), got.size()).isOk());
    if (i == 0)
      first = got;
    else
      EXPECT_EQ(got, first) << "replay " << i;
  }
}

// The argument checks every backend shares are GemmConformance's
// RejectsInvalidOps; these are cublas's own: memory the device cannot read
// is refused before any kernel runs (a fault would poison the context for
// every later call).
TEST_F(CublasGemm, RejectsInvalidOps) {
  auto gemm = makeGemm(GemmOptions());
  Buffer da, db, dc;
  ASSERT_TRUE(upload(Bytes(2 * 4 * 4, 0), da).isOk());
  ASSERT_TRUE(upload(Bytes(4 * 3 * 4, 0), db).isOk());
  ASSERT_TRUE(upload(Bytes(2 * 3 * 4, 0), dc).isOk());
  auto valid = [&] {
    GemmOp op;
    op.m = 2;
    op.n = 3;
    op.k = 4;
    op.a = da.data();
    op.lda = 4;
    op.b = db.data();
    op.ldb = 3;
    op.c = dc.data();
    op.ldc = 3;
    return op;
  };
  auto expectError = [&](const GemmOp &op, const std::string &needle) {
    Status st = gemm->run(op);
    ASSERT_FALSE(st.isOk())
        << "expected an error mentioning '" << needle << "'";
    EXPECT_TRUE(contains(st.message(), needle)) << st.message();
    EXPECT_TRUE(contains(st.message(), "cublas gemm")) << st.message();
  };
  {
    Status st = gemm->run(valid());
    ASSERT_TRUE(st.isOk()) << st.message();
  }
  std::vector<float> host(12, 0.0f);
  GemmOp op = valid();
  op.b = host.data();
  bool pageable = false;
  ASSERT_TRUE(cuda::pageableMemoryAccess(0, pageable).isOk());
  if (!pageable)
    expectError(op, "b is host memory");
  op = valid();
  op.c = static_cast<unsigned char *>(dc.data()) + 2;
  expectError(op, "c is not aligned");
  // The backend still works after all of that.
  Status st = gemm->run(valid());
  EXPECT_TRUE(st.isOk()) << st.message();
  EXPECT_TRUE(stream_->synchronize().isOk());
}
