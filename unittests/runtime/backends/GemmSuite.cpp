//===- GemmSuite.cpp - The conformance suite of every GEMM backend --------===//
//
// The tests of GemmConformance (see GemmSuite.h for the bounds). Compiled
// into every test executable that instantiates the suite.
//
//===----------------------------------------------------------------------===//

#include "GemmSuite.h"

#include <cmath>
#include <cstring>

namespace shardlin::rt::testing {

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

RoundingOf roundingOf(DType t) {
  switch (t) {
  case DType::F16:
    return {std::ldexp(1.0, -11), std::ldexp(1.0, -25)};
  case DType::BF16:
    return {std::ldexp(1.0, -8), std::ldexp(1.0, -134)};
  case DType::F32:
  case DType::F64:
    break;
  }
  return {0, 0};
}

double gemmBound(DType t, bool f32Result, int64_t k, double ref, double cond,
                 double f32Bound) {
  // k == 0: C is the bias (or zero) exactly, not approximately.
  if (k == 0)
    return 0;
  switch (t) {
  case DType::F64:
    return 1e-12 * cond;
  case DType::F32:
    return f32Bound * cond;
  case DType::F16:
  case DType::BF16:
    break;
  }
  const double e = double(k + 2) * std::ldexp(1.0, -24) * cond;
  // An f32 result is the accumulation, not rounded to t.
  if (f32Result)
    return e;
  const RoundingOf r = roundingOf(t);
  return e + r.unit * (std::fabs(ref) + e) + r.minSubnormalHalf;
}

GemmOp gemmOpOf(DType t, Shape s, const GemmCase &o, const Matrix &a,
                const void *da, const Matrix &b, const void *db,
                const void *dbias, void *dc, int64_t ldc) {
  GemmOp op;
  op.m = s.m;
  op.n = s.n;
  op.k = s.k;
  op.transA = o.transA;
  op.transB = o.transB;
  op.dtype = t;
  op.a = da;
  op.lda = a.ld;
  op.b = db;
  op.ldb = b.ld;
  op.bias = o.bias ? dbias : nullptr;
  op.c = dc;
  op.ldc = ldc;
  op.f32Result = o.f32Result;
  return op;
}

Status uploadAll(GemmTarget &target,
                 const std::vector<std::pair<const Bytes *, void **>> &uploads) {
  for (const auto &[bytes, ptr] : uploads)
    SHARDLIN_RETURN_IF_ERROR(target.upload(*bytes, *ptr));
  return Status::ok();
}

GemmOp denseGemmOp(DType t, int64_t m, int64_t n, int64_t k, bool transB,
                   const void *da, const void *db, void *dc) {
  GemmOp op;
  op.m = m;
  op.n = n;
  op.k = k;
  op.transB = transB;
  op.dtype = t;
  op.a = da;
  op.lda = k;
  op.b = db;
  op.ldb = transB ? k : n;
  op.c = dc;
  op.ldc = n;
  return op;
}

GemmOp smallF32Op(const void *da, const void *db, void *dc) {
  return denseGemmOp(DType::F32, 2, 3, 4, false, da, db, dc);
}

double epilogueBound(DType t, double lipschitz, double gemmErr, double ref,
                     double rel, double abs) {
  double bound = lipschitz * gemmErr + rel * std::fabs(ref) + abs;
  const RoundingOf r = roundingOf(t);
  return bound + r.unit * (std::fabs(ref) + bound) + r.minSubnormalHalf;
}

bool epilogueReferenceRow(int64_t i, int64_t m) {
  const int64_t inBlock = i % 256;
  return m <= 64 || i % 37 == 0 || inBlock <= 1 || inBlock == 255 ||
         i == m - 1;
}

namespace {

std::string describe(DType t, Shape s, const GemmCase &o) {
  return std::string(dtypeName(t)) + " m=" + std::to_string(s.m) +
         " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k) +
         (o.transA ? " transA" : "") + (o.transB ? " transB" : "") +
         (o.bias ? " bias" : "") + (o.f32Result ? " f32Result" : "") +
         " pads=" + std::to_string(o.padA) + "," +
         std::to_string(o.padB) + "," + std::to_string(o.padC);
}

void checkGemmImpl(GemmTarget &target, std::mt19937 &rng, DType t, Shape s,
                   const GemmCase &o, double f32Bound) {
  const int64_t aRows = o.transA ? s.k : s.m, aCols = o.transA ? s.m : s.k;
  const int64_t bRows = o.transB ? s.n : s.k, bCols = o.transB ? s.k : s.n;
  Matrix a = randomMatrix(rng, t, aRows, aCols, aCols + o.padA);
  Matrix b = randomMatrix(rng, t, bRows, bCols, bCols + o.padB);
  Matrix bias = randomMatrix(rng, t, 1, s.n, s.n);

  const DType ct = o.f32Result ? DType::F32 : t; // C's type
  const size_t es = dtypeSize(ct);
  const int64_t ldc = s.n + o.padC;
  Bytes c(size_t(s.m * ldc) * es, 0xFF);

  void *da = nullptr, *db = nullptr, *dbias = nullptr, *dc = nullptr;
  Status st = uploadAll(target, {{&a.bytes, &da},
                                 {&b.bytes, &db},
                                 {&bias.bytes, &dbias},
                                 {&c, &dc}});
  ASSERT_TRUE(st.isOk()) << st.message();

  const GemmOp op = gemmOpOf(t, s, o, a, da, b, db, dbias, dc, ldc);
  st = target.gemm().run(op);
  ASSERT_TRUE(st.isOk()) << st.message();
  st = target.download(dc, c.size(), c);
  ASSERT_TRUE(st.isOk()) << st.message();

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
      convertToF64(ct, elem, &got, 1);
      const double bound = gemmBound(t, o.f32Result, s.k, ref, cond, f32Bound);
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

void checkGemm(GemmTarget &target, std::mt19937 &rng, DType t, Shape s,
               const GemmCase &o, double f32Bound) {
  SCOPED_TRACE(describe(t, s, o));
  Releaser releaser{target};
  checkGemmImpl(target, rng, t, s, o, f32Bound);
}

void GemmConformance::SetUp() {
  target_ = GetParam().make();
  ASSERT_NE(target_, nullptr);
  std::string skip;
  Status st = target_->setUp(skip);
  if (!skip.empty())
    GTEST_SKIP() << skip;
  ASSERT_TRUE(st.isOk()) << st.message();
}

// Every dtype x transpose combination x bias, on sizes where no dimension is
// a multiple of another or of a SIMD width, and one of tensor-core tiles.
TEST_P(GemmConformance, AllTransposesAndBias) {
  std::mt19937 rng(42);
  const Shape shapes[] = {{7, 13, 5}, {1, 9, 11},   {6, 1, 4},
                          {5, 3, 1},  {33, 17, 67}, {64, 128, 256}};
  for (DType t : allTypes)
    for (Shape s : shapes)
      for (int flags = 0; flags < 8; ++flags) {
        GemmCase o;
        o.transA = flags & 1;
        o.transB = flags & 2;
        o.bias = flags & 4;
        checkGemm(*target_, rng, t, s, o);
        if (HasFailure())
          return;
      }
}

TEST_P(GemmConformance, PaddedLeadingDimensions) {
  std::mt19937 rng(7);
  for (DType t : allTypes)
    for (int flags = 0; flags < 8; ++flags) {
      GemmCase o;
      o.transA = flags & 1;
      o.transB = flags & 2;
      o.bias = flags & 4;
      o.padA = 3;
      o.padB = 5;
      o.padC = 2;
      checkGemm(*target_, rng, t, {7, 13, 5}, o);
      checkGemm(*target_, rng, t, {1, 8, 19}, o);
      if (HasFailure())
        return;
    }
}

// Sizes where GPU libraries pick tensor-core kernels and split-K, including
// the long-k case of a row-wise shard.
TEST_P(GemmConformance, LargerShapes) {
  std::mt19937 rng(9);
  for (DType t : allTypes)
    for (bool bias : {false, true}) {
      GemmCase o;
      o.transB = true; // y = x A^T, the linear layer's form
      o.bias = bias;
      checkGemm(*target_, rng, t, {128, 96, 1024}, o);
      checkGemm(*target_, rng, t, {2, 64, 4096}, o);
      if (HasFailure())
        return;
    }
}

// k == 0: C = bias or zeros, exactly; A and B may be null then.
TEST_P(GemmConformance, EmptyReduction) {
  std::mt19937 rng(3);
  for (DType t : allTypes)
    for (bool bias : {false, true}) {
      GemmCase o;
      o.bias = bias;
      o.padC = 1;
      checkGemm(*target_, rng, t, {4, 6, 0}, o);
      o.transA = o.transB = true;
      checkGemm(*target_, rng, t, {3, 2, 0}, o);
    }

  // Explicitly null A and B with zero leading dims.
  const float bias[3] = {1.5f, -2.0f, 0.25f};
  Bytes biasBytes(sizeof(bias)), c(6 * sizeof(float), 0xFF);
  std::memcpy(biasBytes.data(), bias, sizeof(bias));
  Releaser releaser{*target_};
  void *dbias = nullptr, *dc = nullptr;
  ASSERT_TRUE(target_->upload(biasBytes, dbias).isOk());
  ASSERT_TRUE(target_->upload(c, dc).isOk());
  GemmOp op;
  op.m = 2;
  op.n = 3;
  op.k = 0;
  op.dtype = DType::F32;
  op.bias = dbias;
  op.c = dc;
  op.ldc = 3;
  Status st = target_->gemm().run(op);
  ASSERT_TRUE(st.isOk()) << st.message();
  st = target_->download(dc, c.size(), c);
  ASSERT_TRUE(st.isOk()) << st.message();
  float got[6];
  std::memcpy(got, c.data(), sizeof(got));
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(got[i], bias[i % 3]);
}

// An f32 C from f16/bf16 operands (the partial products of a K split): the
// f32 accumulation, unrounded, for every transpose, padded C, and k == 0
// (zeros). Then the sum that overflows f16 and the one bf16 rounds away:
// 256 * 256 + 256.25 * (-255.875) and 17 * 17 + 1 * (-288), exact in f32.
TEST_P(GemmConformance, F32Result) {
  std::mt19937 rng(11);
  const Shape shapes[] = {{7, 13, 5}, {1, 9, 11}, {33, 17, 67}, {4, 6, 0}};
  for (DType t : {DType::F16, DType::BF16})
    for (Shape s : shapes)
      for (int flags = 0; flags < 8; ++flags) {
        GemmCase o;
        o.f32Result = true;
        o.transA = flags & 1;
        o.transB = flags & 2;
        o.padC = flags & 4 ? 3 : 0;
        checkGemm(*target_, rng, t, s, o);
        if (HasFailure())
          return;
      }

  Releaser releaser{*target_};
  const struct {
    DType t;
    double a[2], b[2], sum;
  } cases[] = {{DType::F16, {256, 256.25}, {256, -255.875}, -31.96875},
               {DType::BF16, {17, 1}, {17, -288}, 1}};
  for (const auto &cs : cases) {
    SCOPED_TRACE(dtypeName(cs.t));
    Bytes a(4), b(4), c(4, 0xFF);
    convertFromF64(cs.t, cs.a, a.data(), 2);
    convertFromF64(cs.t, cs.b, b.data(), 2);
    void *da = nullptr, *db = nullptr, *dc = nullptr;
    ASSERT_TRUE(target_->upload(a, da).isOk());
    ASSERT_TRUE(target_->upload(b, db).isOk());
    ASSERT_TRUE(target_->upload(c, dc).isOk());
    // 1 x 2 times 2 x 1.
    GemmOp op = denseGemmOp(cs.t, 1, 1, 2, false, da, db, dc);
    op.f32Result = true;
    Status st = target_->gemm().run(op);
    ASSERT_TRUE(st.isOk()) << st.message();
    ASSERT_TRUE(target_->download(dc, c.size(), c).isOk());
    float got = 0;
    std::memcpy(&got, c.data(), sizeof(got));
    EXPECT_EQ(got, float(cs.sum));
  }
}

// m == 0 or n == 0: nothing to compute, C untouched (and may be null).
TEST_P(GemmConformance, EmptyOutput) {
  std::mt19937 rng(5);
  for (DType t : allTypes) {
    GemmCase o;
    o.bias = true;
    checkGemm(*target_, rng, t, {0, 5, 3}, o);
    checkGemm(*target_, rng, t, {0, 0, 0}, o);
    o.padC = 2; // ldc = 2 > n = 0: C has padding only, which must stay.
    checkGemm(*target_, rng, t, {4, 0, 3}, o);
  }
  Bytes b(8 * sizeof(float), 0);
  Releaser releaser{*target_};
  void *db = nullptr;
  ASSERT_TRUE(target_->upload(b, db).isOk());
  // a and c null: they have no elements.
  GemmOp op = denseGemmOp(DType::F32, 0, 4, 2, false, nullptr, db, nullptr);
  Status st = target_->gemm().run(op);
  EXPECT_TRUE(st.isOk()) << st.message();
}

// Workspaces and cached plans are reused and grown between calls on one
// backend; a stale or too-small one would show up as wrong elements.
TEST_P(GemmConformance, WorkspaceReuseAcrossSizes) {
  std::mt19937 rng(11);
  const Shape shapes[] = {{20, 30, 40}, {3, 4, 5}, {41, 7, 50}, {2, 60, 3}};
  for (DType t : {DType::F16, DType::BF16})
    for (Shape s : shapes)
      for (bool bias : {true, false}) {
        GemmCase o;
        o.bias = bias;
        o.transB = true;
        checkGemm(*target_, rng, t, s, o);
      }
}

TEST_P(GemmConformance, RejectsInvalidOps) {
  // A valid 2x3x4 f32 op over real buffers, for the cases below to break.
  Releaser releaser{*target_};
  void *da = nullptr, *db = nullptr, *dc = nullptr;
  ASSERT_TRUE(target_->upload(Bytes(2 * 4 * 4, 0), da).isOk());
  ASSERT_TRUE(target_->upload(Bytes(4 * 3 * 4, 0), db).isOk());
  ASSERT_TRUE(target_->upload(Bytes(2 * 3 * 4, 0), dc).isOk());
  auto valid = [&] { return smallF32Op(da, db, dc); };
  const std::string context = std::string(target_->gemm().name()) + " gemm (";
  auto expectError = [&](const GemmOp &op, const std::string &needle) {
    Status st = target_->gemm().run(op);
    ASSERT_FALSE(st.isOk())
        << "expected an error mentioning '" << needle << "'";
    EXPECT_EQ(st.code(), StatusCode::InvalidArgument) << st.message();
    // Which argument is wrong, and by how much, is what the message is for;
    // it starts with the backend and the op's dtype and sizes.
    EXPECT_NE(st.message().find(needle), std::string::npos) << st.message();
    EXPECT_EQ(st.message().rfind(context, 0), 0u) << st.message();
  };
  {
    Status st = target_->gemm().run(valid());
    ASSERT_TRUE(st.isOk()) << st.message();
  }
  GemmOp op = valid();
  op.m = -1;
  expectError(op, "m is negative (-1)");
  op = valid();
  op.n = -3;
  expectError(op, "n is negative (-3)");
  op = valid();
  op.k = -2;
  expectError(op, "k is negative (-2)");
  const std::string range =
      "exceeds the " + GetParam().blasLibrary + " integer range";
  op = valid();
  op.m = int64_t(1) << 32;
  expectError(op, "m (4294967296) " + range);
  op = valid();
  op.k = int64_t(1) << 32;
  expectError(op, "k (4294967296) " + range);
  op = valid();
  op.a = nullptr;
  expectError(op, "a is null");
  op = valid();
  op.b = nullptr;
  expectError(op, "b is null");
  op = valid();
  op.c = nullptr;
  expectError(op, "c is null");
  op = valid();
  op.lda = 3;
  expectError(op, "lda (3)");
  // Transposed, A is stored k x m, so lda must be >= m = 2 only.
  op = valid();
  op.transA = true;
  op.lda = 2;
  {
    Status st = target_->gemm().run(op);
    EXPECT_TRUE(st.isOk()) << st.message();
  }
  op.lda = 1;
  expectError(op, "lda (1)");
  op = valid();
  op.ldb = 2;
  expectError(op, "ldb (2)");
  op.transB = true; // B stored n x k: ldb >= k = 4.
  op.ldb = 3;
  expectError(op, "ldb (3)");
  op = valid();
  op.ldc = 2;
  expectError(op, "ldc (2)");
  op = valid();
  op.dtype = static_cast<DType>(9);
  expectError(op, "invalid dtype");
  // An f32 result only of f16/bf16, and without a bias.
  op = valid();
  op.f32Result = true;
  expectError(op, "an f32 result needs f16 or bf16 operands, not f32");
  op.dtype = DType::F16;
  op.bias = db;
  expectError(op, "a bias with an f32 result is not supported");
  // A negative leading dimension is rejected whatever the shape.
  op = valid();
  op.m = 0;
  op.ldc = -1;
  expectError(op, "ldc (-1) is negative");
  // The backend still works after all of that.
  Status st = target_->gemm().run(valid());
  EXPECT_TRUE(st.isOk()) << st.message();
  Bytes c;
  st = target_->download(dc, 2 * 3 * 4, c);
  EXPECT_TRUE(st.isOk()) << st.message();
}

} // namespace shardlin::rt::testing
