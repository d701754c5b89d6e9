//===- GpuGemmTest.cpp - cuBLAS GEMM --------------------------------------===//
//
// The cuBLAS GEMM backend against a float64 reference with the bounds of
// GemmTest.cpp: every transpose, with and without the fused bias (cuBLASLt's
// epilogue must add it along the right dimension), padded leading
// dimensions, TF32 only when allowed. Every test skips without a device.
//
//===----------------------------------------------------------------------===//

#include "GpuTestSupport.h"

#include <cmath>
#include <random>

using namespace shardlin::rt;
using namespace shardlin::rt::testing;

//===----------------------------------------------------------------------===//
// GPU: cuBLAS GEMM (bounds: GemmTest.cpp)
//===----------------------------------------------------------------------===//

namespace {

struct Shape {
  int64_t m, n, k;
};

struct GemmCase {
  bool transA = false, transB = false, bias = false;
  int64_t padA = 0, padB = 0, padC = 0;
};

std::string describe(DType t, Shape s, const GemmCase &o) {
  return std::string(dtypeName(t)) + " m=" + std::to_string(s.m) +
         " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k) +
         (o.transA ? " transA" : "") + (o.transB ? " transB" : "") +
         (o.bias ? " bias" : "") + " pads=" + std::to_string(o.padA) + "," +
         std::to_string(o.padB) + "," + std::to_string(o.padC);
}

/// A device, a stream and a cuBLAS backend for the GEMM tests.
class CublasGemm : public CudaDeviceTest {
protected:
  std::unique_ptr<GemmBackend> makeGemm(const GemmOptions &options) {
    std::unique_ptr<GemmBackend> gemm;
    Status st = createCublasGemm(stream_, options, gemm);
    EXPECT_TRUE(st.isOk()) << st.message();
    return gemm;
  }

  /// Runs one GEMM and checks every element of C against the f64
  /// reference, and that C's padding was not written. `relBound`
  /// overrides the f32 bound (TF32).
  void check(GemmBackend &gemm, std::mt19937 &rng, DType t, Shape s,
             const GemmCase &o, double f32Bound = 1e-5) {
    SCOPED_TRACE(describe(t, s, o));
    const int64_t aRows = o.transA ? s.k : s.m, aCols = o.transA ? s.m : s.k;
    const int64_t bRows = o.transB ? s.n : s.k, bCols = o.transB ? s.k : s.n;
    Matrix a = randomMatrix(rng, t, aRows, aCols, aCols + o.padA);
    Matrix b = randomMatrix(rng, t, bRows, bCols, bCols + o.padB);
    Matrix bias = randomMatrix(rng, t, 1, s.n, s.n);
    const size_t es = dtypeSize(t);
    const int64_t ldc = s.n + o.padC;
    Bytes c(size_t(s.m * ldc) * es, 0xFF);

    Buffer da, db, dbias, dc;
    ASSERT_TRUE(upload(a.bytes, da).isOk());
    ASSERT_TRUE(upload(b.bytes, db).isOk());
    ASSERT_TRUE(upload(bias.bytes, dbias).isOk());
    ASSERT_TRUE(upload(c, dc).isOk());

    GemmOp op;
    op.m = s.m;
    op.n = s.n;
    op.k = s.k;
    op.transA = o.transA;
    op.transB = o.transB;
    op.dtype = t;
    op.a = da.data();
    op.lda = a.ld;
    op.b = db.data();
    op.ldb = b.ld;
    op.bias = o.bias ? dbias.data() : nullptr;
    op.c = dc.data();
    op.ldc = ldc;
    Status st = gemm.run(op);
    ASSERT_TRUE(st.isOk()) << st.message();
    st = copyToHost(*stream_, c.data(), dc.data(), c.size());
    ASSERT_TRUE(st.isOk()) << st.message();

    double unit = 0, minSubnormalHalf = 0;
    if (t == DType::F16) {
      unit = std::ldexp(1.0, -11);
      minSubnormalHalf = std::ldexp(1.0, -25);
    } else if (t == DType::BF16) {
      unit = std::ldexp(1.0, -8);
      minSubnormalHalf = std::ldexp(1.0, -134);
    }
    const double accumulation = double(s.k + 2) * std::ldexp(1.0, -24);
    int failures = 0;
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < ldc; ++j) {
        const unsigned char *elem = c.data() + size_t(i * ldc + j) * es;
        if (j >= s.n) {
          if (!isPoison(elem, es)) {
            ADD_FAILURE() << "padding C[" << i << "][" << j << "] was written";
            return;
          }
          continue;
        }
        double ref = o.bias ? bias.at(0, j) : 0.0;
        double cond = std::fabs(ref);
        for (int64_t p = 0; p < s.k; ++p) {
          const double av = o.transA ? a.at(p, i) : a.at(i, p);
          const double bv = o.transB ? b.at(j, p) : b.at(p, j);
          ref += av * bv;
          cond += std::fabs(av * bv);
        }
        double got = 0;
        convertToF64(t, elem, &got, 1);
        double bound = 0;
        switch (t) {
        case DType::F64:
          bound = 1e-12 * cond;
          break;
        case DType::F32:
          bound = f32Bound * cond;
          break;
        case DType::F16:
        case DType::BF16: {
          const double e = accumulation * cond;
          bound = e + unit * (std::fabs(ref) + e) + minSubnormalHalf;
          break;
        }
        }
        if (s.k == 0)
          bound = 0; // C = bias or zero exactly
        if (!(std::fabs(got - ref) <= bound) && ++failures <= 5)
          ADD_FAILURE() << "C[" << i << "][" << j << "] = " << got
                        << ", reference " << ref << ", |error| "
                        << std::fabs(got - ref) << " > bound " << bound;
      }
  }
};

const DType kGemmTypes[] = {DType::F64, DType::F32, DType::F16, DType::BF16};

} // namespace

TEST_F(CublasGemm, NameAndDevice) {
  auto gemm = makeGemm(GemmOptions());
  ASSERT_NE(gemm, nullptr);
  EXPECT_STREQ(gemm->name(), "cublas");
  EXPECT_EQ(gemm->device(), (Device{DeviceKind::Cuda, 0}));
}

// Every dtype x transposes x bias, through the fused epilogue and through
// the fill-and-accumulate path.
TEST_F(CublasGemm, AllTransposesAndBias) {
  const Shape shapes[] = {{7, 13, 5}, {1, 9, 11},   {6, 1, 4},
                          {5, 3, 1},  {33, 17, 67}, {64, 128, 256}};
  for (bool fuse : {true, false}) {
    GemmOptions options;
    options.fuseBiasEpilogue = fuse;
    auto gemm = makeGemm(options);
    ASSERT_NE(gemm, nullptr);
    std::mt19937 rng(fuse ? 42 : 43);
    for (DType t : kGemmTypes)
      for (Shape s : shapes)
        for (int flags = 0; flags < 8; ++flags) {
          GemmCase o;
          o.transA = flags & 1;
          o.transB = flags & 2;
          o.bias = flags & 4;
          check(*gemm, rng, t, s, o);
          if (HasFailure())
            return;
        }
  }
}

TEST_F(CublasGemm, PaddedLeadingDimensions) {
  auto gemm = makeGemm(GemmOptions());
  std::mt19937 rng(7);
  for (DType t : kGemmTypes)
    for (int flags = 0; flags < 8; ++flags) {
      GemmCase o;
      o.transA = flags & 1;
      o.transB = flags & 2;
      o.bias = flags & 4;
      o.padA = 3;
      o.padB = 5;
      o.padC = 2;
      check(*gemm, rng, t, {7, 13, 5}, o);
      check(*gemm, rng, t, {1, 8, 19}, o);
      if (HasFailure())
        return;
    }
}

// Sizes where cuBLAS picks real tensor-core kernels and split-K, including
// the long-k case of a row-wise shard.
TEST_F(CublasGemm, LargerShapes) {
  auto gemm = makeGemm(GemmOptions());
  std::mt19937 rng(9);
  for (DType t : kGemmTypes)
    for (bool bias : {false, true}) {
      GemmCase o;
      o.transB = true; // y = x A^T, the linear layer's form
      o.bias = bias;
      check(*gemm, rng, t, {128, 96, 1024}, o);
      check(*gemm, rng, t, {2, 64, 4096}, o);
      if (HasFailure())
        return;
    }
}

TEST_F(CublasGemm, Tf32OnlyWhenAllowed) {
  // TF32 rounds each input to 11 significant bits: products err by up to
  // about 2^-10 relative, so the bound is 2^-9 S instead of 1e-5 S.
  GemmOptions options;
  options.allowTf32 = true;
  auto gemm = makeGemm(options);
  std::mt19937 rng(13);
  GemmCase o;
  o.transB = true;
  o.bias = true;
  check(*gemm, rng, DType::F32, {64, 64, 512}, o, std::ldexp(1.0, -9));
}

TEST_F(CublasGemm, EmptyReduction) {
  auto gemm = makeGemm(GemmOptions());
  std::mt19937 rng(3);
  for (DType t : kGemmTypes)
    for (bool bias : {false, true}) {
      GemmCase o;
      o.bias = bias;
      o.padC = 1;
      check(*gemm, rng, t, {4, 6, 0}, o);
      o.transA = o.transB = true;
      check(*gemm, rng, t, {3, 2, 0}, o);
    }
}

TEST_F(CublasGemm, EmptyOutput) {
  auto gemm = makeGemm(GemmOptions());
  std::mt19937 rng(5);
  for (DType t : kGemmTypes) {
    GemmCase o;
    o.bias = true;
    check(*gemm, rng, t, {0, 5, 3}, o);
    check(*gemm, rng, t, {0, 0, 0}, o);
    o.padC = 2;
    check(*gemm, rng, t, {4, 0, 3}, o);
  }
  GemmOp op; // m = 0, a and c null: nothing to do
  op.n = 4;
  op.k = 2;
  op.lda = 2;
  op.ldb = 4;
  op.ldc = 4;
  Status st = gemm->run(op);
  EXPECT_TRUE(st.isOk()) << st.message();
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
  GemmOp op = valid();
  op.m = -1;
  expectError(op, "m is negative (-1)");
  op = valid();
  op.k = int64_t(1) << 32;
  expectError(op, "exceeds the cuBLAS integer range");
  op = valid();
  op.a = nullptr;
  expectError(op, "a is null");
  op = valid();
  op.c = nullptr;
  expectError(op, "c is null");
  op = valid();
  op.lda = 3;
  expectError(op, "lda (3)");
  op = valid();
  op.ldc = 2;
  expectError(op, "ldc (2)");
  op = valid();
  op.dtype = static_cast<DType>(9);
  expectError(op, "invalid dtype");
  // Memory the device cannot read is refused before any kernel runs (a
  // fault would poison the context for every later call).
  std::vector<float> host(12, 0.0f);
  op = valid();
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
