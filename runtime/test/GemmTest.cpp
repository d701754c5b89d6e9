//===- GemmTest.cpp - The OpenBLAS GEMM backend ---------------------------===//
//
// Every element of C is compared with a float64 reference computed here from
// the exact stored input values. With S = |bias| + sum_p |a_ip b_pj| (the
// condition of the dot product), the bounds are:
//
//  * f64: |c - ref| <= 1e-12 S. Any summation order of k + 1 terms has error
//    below (k+1) * 2^-53 S (about 1e-14 S for the sizes here); the reference
//    itself is computed in double and has the same order of error.
//  * f32: |c - ref| <= 1e-5 S, the same argument with 2^-24: (k+1) 2^-24 is
//    below 5e-6 for k <= 67, the largest k used.
//  * f16/bf16: the backend widens the inputs exactly, accumulates in f32
//    (error e <= (k+1) 2^-24 S as above) and rounds once to the narrow type,
//    which moves the value by at most half an ulp of the narrow type: at most
//    u |s| (u = 2^-11 for f16, 2^-8 for bf16) for |s| in the normal range,
//    plus half the smallest subnormal. With |s| <= |ref| + e:
//      |c - ref| <= e + u (|ref| + e) + minSubnormal / 2.
//    e is taken as (k+2) 2^-24 S: the extra 2^-24 S covers the second-order
//    term of gamma_{k+1} = (k+1)u / (1 - (k+1)u) and the reference's own
//    double rounding error (about 1e-14 S).
//    Accumulating in f16/bf16 instead of f32, or a result off by a whole ulp
//    of the narrow type, exceeds it wherever cancellation does not make e
//    dominate, which is most elements.
//
// C is filled with 0xFF bytes (a NaN in every dtype) before each call, so an
// element the backend fails to write shows up, and the padding columns
// between n and ldc must still hold those bytes afterwards. The padding of A
// and B is NaN too, so reading it would poison the result.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/Gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace shardlin::rt;

namespace {

/// A matrix stored as rows x cols with leading dimension ld, in `dtype`,
/// with the exact double value of every stored element.
struct Matrix {
  int64_t rows = 0, cols = 0, ld = 0;
  DType dtype = DType::F32;
  std::vector<unsigned char> bytes;
  std::vector<double> values; // rows x cols, dense

  double at(int64_t i, int64_t j) const { return values[size_t(i * cols + j)]; }
  void *data() { return bytes.empty() ? nullptr : bytes.data(); }
};

/// Random values with magnitude in [0.25, 1) and random sign: never zero, so
/// a dropped term always changes the result.
Matrix randomMatrix(std::mt19937 &rng, DType t, int64_t rows, int64_t cols,
                    int64_t ld) {
  Matrix m;
  m.rows = rows;
  m.cols = cols;
  m.ld = ld;
  m.dtype = t;
  const size_t es = dtypeSize(t);
  m.bytes.assign(size_t(rows * ld) * es, 0xFF); // padding = NaN
  m.values.resize(size_t(rows * cols));
  std::uniform_real_distribution<double> mag(0.25, 1.0);
  std::bernoulli_distribution neg(0.5);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      double v = mag(rng);
      if (neg(rng))
        v = -v;
      unsigned char *dst = m.bytes.data() + size_t(i * ld + j) * es;
      convertFromF64(t, &v, dst, 1);
      // The exact value that was stored, after rounding to `t`.
      convertToF64(t, dst, &m.values[size_t(i * cols + j)], 1);
    }
  return m;
}

struct Shape {
  int64_t m, n, k;
};

struct Options {
  bool transA = false, transB = false, bias = false;
  int64_t padA = 0, padB = 0, padC = 0;
};

std::string describe(DType t, Shape s, const Options &o) {
  return std::string(dtypeName(t)) + " m=" + std::to_string(s.m) +
         " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k) +
         (o.transA ? " transA" : "") + (o.transB ? " transB" : "") +
         (o.bias ? " bias" : "") + " pads=" + std::to_string(o.padA) + "," +
         std::to_string(o.padB) + "," + std::to_string(o.padC);
}

/// Runs one GEMM on `backend` and checks every element of C (and that the
/// padding of C was not written).
void checkGemm(GemmBackend &backend, std::mt19937 &rng, DType t, Shape s,
               const Options &o) {
  SCOPED_TRACE(describe(t, s, o));
  const int64_t aRows = o.transA ? s.k : s.m, aCols = o.transA ? s.m : s.k;
  const int64_t bRows = o.transB ? s.n : s.k, bCols = o.transB ? s.k : s.n;
  Matrix a = randomMatrix(rng, t, aRows, aCols, aCols + o.padA);
  Matrix b = randomMatrix(rng, t, bRows, bCols, bCols + o.padB);
  Matrix bias = randomMatrix(rng, t, 1, s.n, s.n);

  const size_t es = dtypeSize(t);
  const int64_t ldc = s.n + o.padC;
  std::vector<unsigned char> c(size_t(s.m * ldc) * es, 0xFF);

  GemmOp op;
  op.m = s.m;
  op.n = s.n;
  op.k = s.k;
  op.transA = o.transA;
  op.transB = o.transB;
  op.dtype = t;
  op.a = a.data();
  op.lda = a.ld;
  op.b = b.data();
  op.ldb = b.ld;
  op.bias = o.bias ? bias.data() : nullptr;
  op.c = c.empty() ? nullptr : c.data();
  op.ldc = ldc;
  Status st = backend.run(op);
  ASSERT_TRUE(st.isOk()) << st.message();

  double unit = 0, minSubnormalHalf = 0;
  switch (t) {
  case DType::F16:
    unit = std::ldexp(1.0, -11);
    minSubnormalHalf = std::ldexp(1.0, -25);
    break;
  case DType::BF16:
    unit = std::ldexp(1.0, -8);
    minSubnormalHalf = std::ldexp(1.0, -134);
    break;
  case DType::F32:
  case DType::F64:
    break;
  }
  const double accumulation = double(s.k + 2) * std::ldexp(1.0, -24);

  int failures = 0;
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const unsigned char *elem = c.data() + size_t(i * ldc + j) * es;
      if (j >= s.n) {
        for (size_t q = 0; q < es; ++q)
          if (elem[q] != 0xFF) {
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
        bound = 1e-5 * cond;
        break;
      case DType::F16:
      case DType::BF16: {
        const double e = accumulation * cond;
        bound = e + unit * (std::fabs(ref) + e) + minSubnormalHalf;
        break;
      }
      }
      // k == 0: C is the bias (or zero) exactly, not approximately.
      if (s.k == 0)
        bound = 0;
      const bool ok = std::fabs(got - ref) <= bound; // false for NaN
      if (!ok && ++failures <= 5)
        ADD_FAILURE() << "C[" << i << "][" << j << "] = " << got
                      << ", reference " << ref << ", |error| "
                      << std::fabs(got - ref) << " > bound " << bound;
    }
  }
}

const DType allTypes[] = {DType::F64, DType::F32, DType::F16, DType::BF16};

} // namespace

TEST(CpuGemm, Name) {
  auto backend = createCpuGemm();
  ASSERT_NE(backend, nullptr);
  EXPECT_STREQ(backend->name(), "openblas");
  EXPECT_TRUE(backend->device().isHost());
}

// Every dtype x transpose combination x bias, on sizes where no dimension is
// a multiple of another or of a SIMD width.
TEST(CpuGemm, AllTransposesAndBias) {
  auto backend = createCpuGemm();
  std::mt19937 rng(42);
  const Shape shapes[] = {{7, 13, 5}, {1, 9, 11}, {6, 1, 4}, {5, 3, 1},
                          {33, 17, 67}};
  for (DType t : allTypes)
    for (Shape s : shapes)
      for (int flags = 0; flags < 8; ++flags) {
        Options o;
        o.transA = flags & 1;
        o.transB = flags & 2;
        o.bias = flags & 4;
        checkGemm(*backend, rng, t, s, o);
        if (HasFailure())
          return;
      }
}

TEST(CpuGemm, PaddedLeadingDimensions) {
  auto backend = createCpuGemm();
  std::mt19937 rng(7);
  for (DType t : allTypes)
    for (int flags = 0; flags < 8; ++flags) {
      Options o;
      o.transA = flags & 1;
      o.transB = flags & 2;
      o.bias = flags & 4;
      o.padA = 3;
      o.padB = 5;
      o.padC = 2;
      checkGemm(*backend, rng, t, {7, 13, 5}, o);
      checkGemm(*backend, rng, t, {1, 8, 19}, o);
      if (HasFailure())
        return;
    }
}

// k == 0: C = bias or zeros, exactly; A and B may be null then.
TEST(CpuGemm, EmptyReduction) {
  auto backend = createCpuGemm();
  std::mt19937 rng(3);
  for (DType t : allTypes)
    for (bool bias : {false, true}) {
      Options o;
      o.bias = bias;
      o.padC = 1;
      checkGemm(*backend, rng, t, {4, 6, 0}, o);
      o.transA = o.transB = true;
      checkGemm(*backend, rng, t, {3, 2, 0}, o);
    }

  // Explicitly null A and B with zero leading dims.
  const float bias[3] = {1.5f, -2.0f, 0.25f};
  float c[6];
  std::memset(c, 0xFF, sizeof(c));
  GemmOp op;
  op.m = 2;
  op.n = 3;
  op.k = 0;
  op.dtype = DType::F32;
  op.bias = bias;
  op.c = c;
  op.ldc = 3;
  Status st = backend->run(op);
  ASSERT_TRUE(st.isOk()) << st.message();
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(c[i], bias[i % 3]);
}

// m == 0 or n == 0: nothing to compute, C untouched (and may be null).
TEST(CpuGemm, EmptyOutput) {
  auto backend = createCpuGemm();
  std::mt19937 rng(5);
  for (DType t : allTypes) {
    Options o;
    o.bias = true;
    checkGemm(*backend, rng, t, {0, 5, 3}, o);
    checkGemm(*backend, rng, t, {0, 0, 0}, o);
    o.padC = 2; // ldc = 2 > n = 0: C has padding only, which must stay.
    checkGemm(*backend, rng, t, {4, 0, 3}, o);
  }
  GemmOp op;
  op.m = 0;
  op.n = 4;
  op.k = 2;
  op.lda = 2;
  op.ldb = 4;
  op.ldc = 4;
  float b[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  op.b = b; // a and c null: they have no elements.
  Status st = backend->run(op);
  EXPECT_TRUE(st.isOk()) << st.message();
}

// The f16/bf16 workspaces are reused and grown between calls on one backend;
// a stale or too-small workspace would show up as wrong elements.
TEST(CpuGemm, WorkspaceReuseAcrossSizes) {
  auto backend = createCpuGemm();
  std::mt19937 rng(11);
  const Shape shapes[] = {{20, 30, 40}, {3, 4, 5}, {41, 7, 50}, {2, 60, 3}};
  for (DType t : {DType::F16, DType::BF16})
    for (Shape s : shapes)
      for (bool bias : {true, false}) {
        Options o;
        o.bias = bias;
        o.transB = true;
        checkGemm(*backend, rng, t, s, o);
      }
}

namespace {

/// A valid 2x3x4 f32 op over real buffers, for the error tests to break.
struct ValidOp {
  float a[2 * 4] = {};
  float b[4 * 3] = {};
  float c[2 * 3] = {};
  GemmOp op;
  ValidOp() {
    op.m = 2;
    op.n = 3;
    op.k = 4;
    op.a = a;
    op.lda = 4;
    op.b = b;
    op.ldb = 3;
    op.c = c;
    op.ldc = 3;
  }
};

void expectError(GemmBackend &backend, const GemmOp &op,
                 const std::string &needle) {
  Status st = backend.run(op);
  ASSERT_FALSE(st.isOk()) << "expected an error mentioning '" << needle << "'";
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument) << st.message();
  // Which argument is wrong, and by how much, is what the message is for.
  EXPECT_NE(st.message().find(needle), std::string::npos) << st.message();
}

} // namespace

TEST(CpuGemm, RejectsInvalidOps) {
  auto backend = createCpuGemm();
  {
    ValidOp v;
    Status st = backend->run(v.op);
    ASSERT_TRUE(st.isOk()) << st.message();
  }
  {
    ValidOp v;
    v.op.m = -1;
    expectError(*backend, v.op, "m is negative (-1)");
  }
  {
    ValidOp v;
    v.op.n = -3;
    expectError(*backend, v.op, "n is negative (-3)");
  }
  {
    ValidOp v;
    v.op.k = -2;
    expectError(*backend, v.op, "k is negative (-2)");
  }
  {
    ValidOp v;
    v.op.m = int64_t(1) << 32;
    expectError(*backend, v.op, "exceeds the OpenBLAS integer range");
  }
  {
    ValidOp v;
    v.op.a = nullptr;
    expectError(*backend, v.op, "a is null");
  }
  {
    ValidOp v;
    v.op.b = nullptr;
    expectError(*backend, v.op, "b is null");
  }
  {
    ValidOp v;
    v.op.c = nullptr;
    expectError(*backend, v.op, "c is null");
  }
  {
    ValidOp v;
    v.op.lda = 3;
    expectError(*backend, v.op, "lda (3)");
  }
  {
    // Transposed, A is stored k x m, so lda must be >= m = 2 only.
    ValidOp v;
    v.op.transA = true;
    v.op.lda = 2;
    Status st = backend->run(v.op);
    EXPECT_TRUE(st.isOk()) << st.message();
    v.op.lda = 1;
    expectError(*backend, v.op, "lda (1)");
  }
  {
    ValidOp v;
    v.op.ldb = 2;
    expectError(*backend, v.op, "ldb (2)");
    v.op.transB = true; // B stored n x k: ldb >= k = 4.
    v.op.ldb = 3;
    expectError(*backend, v.op, "ldb (3)");
  }
  {
    ValidOp v;
    v.op.ldc = 2;
    expectError(*backend, v.op, "ldc (2)");
  }
  {
    ValidOp v;
    v.op.dtype = static_cast<DType>(9);
    expectError(*backend, v.op, "invalid dtype");
  }
  {
    // A negative leading dimension is rejected whatever the shape.
    ValidOp v;
    v.op.m = 0;
    v.op.ldc = -1;
    expectError(*backend, v.op, "ldc (-1) is negative");
  }
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
  // A failed allocation is a failed library call (posix_memalign): Internal.
  EXPECT_EQ(st.code(), StatusCode::Internal) << st.message();
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

  // Buffer.cpp does not classify these errors (they say Internal); its
  // callers with user input (readNpy, writeNpy) turn them into
  // InvalidArgument, which NpyTest checks. A code given here at the source
  // changes these expectations.
  Status st = checkedNumElements({2, -5, 3}, n);
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.code(), StatusCode::Internal) << st.message();
  EXPECT_NE(st.message().find("dim 1"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("(-5)"), std::string::npos) << st.message();
  // Negative dims are reported even next to a zero dim.
  EXPECT_FALSE(checkedNumElements({0, -1}, n).isOk());

  st = checkedNumElements({int64_t(1) << 32, int64_t(1) << 31}, n);
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.code(), StatusCode::Internal) << st.message();
  EXPECT_NE(st.message().find("overflows int64"), std::string::npos)
      << st.message();
  // 2^62 elements fit; their bytes at 2 or more bytes each do not.
  ASSERT_TRUE(checkedNumElements({int64_t(1) << 62}, n, 1).isOk());
  st = checkedNumElements({int64_t(1) << 62}, n, 2);
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.code(), StatusCode::Internal) << st.message();
  EXPECT_NE(st.message().find("byte size"), std::string::npos) << st.message();
  ASSERT_TRUE(checkedNumElements({(int64_t(1) << 62) - 1}, n, 2).isOk());
  EXPECT_EQ(n, (int64_t(1) << 62) - 1);
}
