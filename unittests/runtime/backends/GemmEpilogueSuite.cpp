//===- GemmEpilogueSuite.cpp - GEMM epilogues on every GEMM backend -------===//
//
// GemmBackend::runWithEpilogue in the conformance suite of every backend
// (GemmSuite.h): an elementwise expression over C run as the GEMM's
// epilogue (OpenBLAS: on each block of rows of C right after it; cuBLAS:
// in cuBLASLt's bias/ReLU/GELU epilogues where the expression is one of
// them, else the elementwise kernel after the GEMM).
//
// Every checked element of y is compared with the float64 reference of the
// expression applied to the float64 product of the exact stored inputs,
// within
//   L E + rel |ref| + abs,
// plus, for f16/bf16, one rounding of the result (unit (|ref| + that) + half
// the smallest subnormal), where E is the GEMM's own bound for the element
// (gemmBound, which includes C's rounding to f16/bf16), L bounds the
// expression's derivative in C over the inputs' range (1 for a bias and
// ReLU, 1.2 for GELU and for SiLU times |up| <= 1, 2 for tanh(C) s + C with
// |s| <= 1) and rel, abs the expression's own bound (f32: 4e-6 and 1e-6 for
// the composites as in ElementwiseTest, 2e-7 for ReLU and the bias; the
// backend's GemmSuiteParam::epilogueGeluRel for GELU; f64: 1e-14 and
// 1e-14). The same op is then run unfused (run, then LocalOps::elementwise)
// into fresh buffers: every element of the two results must agree within
// twice the bound. When y is not C, C must hold the GEMM's result.
//
// Shapes: 600 x 1024 (three blocks of rows on OpenBLAS: 256, 256, 88;
// reference-checked on the rows at and around the block boundaries and on
// every 37th, fused-against-unfused on every element), small odd ones, k
// == 0, and empty ones (m or n == 0: nothing written). ReLU keeps a NaN of C
// (arith.maximumf) and turns -inf into +0, on every backend. Bad epilogues
// are refused before C is written.
//
//===----------------------------------------------------------------------===//

#include "ExprTestSupport.h"
#include "GemmSuite.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace shardlin::rt::testing {

namespace {

/// An epilogue: its expression (operand 0 is C) and its other operands'
/// kinds.
struct EpilogueCase {
  std::string name;
  ExprProgram expr;
  std::vector<bool> rowVector; // per operand; operand 0 (C) is full
  double lipschitz;
  double rel;
  bool gelu;
};

std::vector<EpilogueCase> epilogueCases() {
  std::vector<EpilogueCase> cases;
  cases.push_back({"gelu-tanh(C)", geluTanh(), {false}, 1.2, 4e-6, true});
  {
    Builder b;
    const int v = b.op(ExprOp::Add, b.input(0), b.input(1));
    b.op(ExprOp::Maximum, v, b.constant(0));
    cases.push_back({"relu(C + bias)", b.p, {false, true}, 1, 2e-7, false});
  }
  {
    Builder b;
    b.op(ExprOp::Add, b.input(1), b.input(0));
    cases.push_back({"bias + C", b.p, {false, true}, 1, 2e-7, false});
  }
  {
    ExprProgram s = silu();
    Builder b;
    b.p = s;
    b.op(ExprOp::Mul, static_cast<int>(s.nodes.size()) - 1, b.input(1));
    cases.push_back({"silu(C) * up", b.p, {false, false}, 1.2, 4e-6, false});
  }
  {
    // Not an activation form: the generic evaluation.
    Builder b;
    const int c = b.input(0);
    b.op(ExprOp::Add, b.op(ExprOp::Mul, b.op(ExprOp::Tanh, c), b.input(1)),
         c);
    cases.push_back({"tanh(C) * s + C", b.p, {false, true}, 2, 4e-6, false});
  }
  return cases;
}

/// The GEMM's case (transB: y = x W^T) and whether y is C.
struct EpilogueRun {
  GemmCase gemm;
  bool inPlace = false;
};

void checkEpilogue(GemmTarget &target, std::mt19937 &rng, DType t, Shape s,
                   const EpilogueCase &c, EpilogueRun r, double geluRel) {
  SCOPED_TRACE(c.name + " " + dtypeName(t) + " m=" + std::to_string(s.m) +
               " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k) +
               (r.gemm.bias ? " gemm-bias" : "") +
               (r.inPlace ? " in-place" : "") +
               (r.gemm.transA ? " transA" : ""));
  Releaser releaser{target};
  const int64_t aRows = r.gemm.transA ? s.k : s.m;
  const int64_t aCols = r.gemm.transA ? s.m : s.k;
  const Matrix a = randomMatrix(rng, t, aRows, aCols, aCols);
  const Matrix b = randomMatrix(rng, t, s.n, s.k, s.k); // y = x B^T
  const Matrix bias = randomMatrix(rng, t, 1, s.n, s.n);
  std::vector<Matrix> others;
  for (size_t k = 1; k < c.rowVector.size(); ++k)
    others.push_back(
        randomMatrix(rng, t, c.rowVector[k] ? 1 : s.m, s.n, s.n));
  const Bytes poison(size_t(s.m * s.n) * dtypeSize(t), 0xFF);

  void *da = nullptr, *db = nullptr, *dbias = nullptr;
  void *dc = nullptr, *dy = nullptr, *dc2 = nullptr, *dy2 = nullptr;
  Status st = uploadAll(target, {{&a.bytes, &da},
                                 {&b.bytes, &db},
                                 {&bias.bytes, &dbias},
                                 {&poison, &dc},
                                 {&poison, &dy},
                                 {&poison, &dc2},
                                 {&poison, &dy2}});
  std::vector<ExprOperand> operands = {{dc, false}};
  for (size_t k = 0; k < others.size() && st.isOk(); ++k) {
    void *p = nullptr;
    st = target.upload(others[k].bytes, p);
    operands.push_back({p, c.rowVector[k + 1]});
  }
  ASSERT_TRUE(st.isOk()) << st.message();

  GemmOp op = gemmOpOf(t, s, r.gemm, a, da, b, db, dbias, dc, s.n);
  GemmEpilogue epilogue{&c.expr, &operands, r.inPlace ? dc : dy};
  st = target.gemm().runWithEpilogue(op, epilogue, target.localOps());
  ASSERT_TRUE(st.isOk()) << st.message();
  // Unfused, into the second pair of buffers.
  op.c = dc2;
  operands[0].data = dc2;
  st = target.gemm().run(op);
  if (st.isOk())
    st = target.localOps().elementwise(c.expr, operands, r.inPlace ? dc2 : dy2,
                                       s.m, s.n, t);
  ASSERT_TRUE(st.isOk()) << st.message();
  Bytes y, y2, cBytes;
  st = target.download(r.inPlace ? dc : dy, poison.size(), y);
  if (st.isOk())
    st = target.download(r.inPlace ? dc2 : dy2, poison.size(), y2);
  if (st.isOk())
    st = target.download(dc, poison.size(), cBytes);
  ASSERT_TRUE(st.isOk()) << st.message();

  const size_t count = size_t(s.m * s.n);
  std::vector<double> got(count), unfused(count), cValues(count);
  convertToF64(t, y.data(), got.data(), count);
  convertToF64(t, y2.data(), unfused.data(), count);
  convertToF64(t, cBytes.data(), cValues.data(), count);
  const double rel = t == DType::F64 ? 1e-14 : (c.gelu ? geluRel : c.rel);
  const double abs = t == DType::F64 ? 1e-14 : 1e-6;
  int failures = 0;
  std::vector<double> at(c.rowVector.size());
  for (int64_t i = 0; i < s.m; ++i) {
    const bool checkRow = epilogueReferenceRow(i, s.m);
    for (int64_t j = 0; j < s.n; ++j) {
      const size_t e = size_t(i * s.n + j);
      double g = r.gemm.bias ? bias.at(0, j) : 0.0;
      double cond = std::fabs(g);
      for (int64_t p = 0; p < s.k; ++p) {
        const double av = r.gemm.transA ? a.at(p, i) : a.at(i, p);
        g += av * b.at(j, p);
        cond += std::fabs(av * b.at(j, p));
      }
      const double gemmErr = gemmBound(t, false, s.k, g, cond);
      // Rows that are not reference-checked take the bound's magnitude
      // from the unfused result (the reference costs a program
      // evaluation).
      double ref = unfused[e];
      if (checkRow) {
        at[0] = g;
        for (size_t k = 0; k < others.size(); ++k)
          at[k + 1] = others[k].at(c.rowVector[k + 1] ? 0 : i, j);
        ref = referenceAt(c.expr, at);
      }
      const double bound =
          epilogueBound(t, c.lipschitz, gemmErr, ref, rel, abs);
      std::string problem;
      if (checkRow && !(std::fabs(got[e] - ref) <= bound))
        problem = "y = " + std::to_string(got[e]) + ", reference " +
                  std::to_string(ref) + ", bound " + std::to_string(bound);
      else if (!(std::fabs(got[e] - unfused[e]) <= 2 * bound))
        problem = "y = " + std::to_string(got[e]) + ", unfused " +
                  std::to_string(unfused[e]);
      else if (!r.inPlace && checkRow &&
               !(std::fabs(cValues[e] - g) <= gemmErr))
        problem = "C = " + std::to_string(cValues[e]) + ", product " +
                  std::to_string(g);
      if (!problem.empty() && ++failures <= 5)
        ADD_FAILURE() << "[" << i << "][" << j << "]: " << problem;
    }
  }
}

const DType kEpilogueTypes[] = {DType::F64, DType::F32, DType::F16,
                                DType::BF16};

} // namespace

TEST_P(GemmConformance, EpilogueMatchesReferenceAndUnfused) {
  std::mt19937 rng(23);
  const Shape shapes[] = {{600, 1024, 8}, {5, 7, 3}, {1, 1, 1}, {4, 6, 0}};
  for (DType t : kEpilogueTypes)
    for (const EpilogueCase &c : epilogueCases())
      for (Shape s : shapes)
        for (int flags = 0; flags < 4; ++flags) {
          // The large shape (for the blocks of rows) on two types, with and
          // without the GEMM's bias and in place; the small ones on all.
          const bool large = s.m == 600;
          if (large && ((flags != 0 && flags != 3) ||
                        (t != DType::F32 && t != DType::BF16)))
            continue;
          EpilogueRun r;
          r.gemm.transB = true;
          r.gemm.bias = flags & 1;
          r.gemm.transA = s.m == 5;
          r.inPlace = flags & 2;
          checkEpilogue(*target_, rng, t, s, c, r,
                        GetParam().epilogueGeluRel);
          if (HasFailure())
            return;
        }
}

// m == 0 or n == 0 (a rank whose chunk of the features is empty): nothing is
// computed or written, and null buffers are fine.
TEST_P(GemmConformance, EpilogueOfEmptyResult) {
  std::mt19937 rng(29);
  for (DType t : kEpilogueTypes)
    for (Shape s : {Shape{0, 7, 3}, Shape{6, 0, 3}, Shape{0, 0, 0}})
      checkEpilogue(*target_, rng, t, s, epilogueCases()[1],
                    EpilogueRun{GemmCase{false, true}, false},
                    GetParam().epilogueGeluRel);
  // A rank whose weight shard has no rows: B and C (and y) null.
  Releaser releaser{*target_};
  void *da = nullptr;
  ASSERT_TRUE(target_->upload(Bytes(4 * 2 * 4, 0), da).isOk());
  const ExprProgram gelu = geluTanh();
  const std::vector<ExprOperand> operands = {{nullptr, false}};
  const GemmOp op =
      denseGemmOp(DType::F32, 4, 0, 2, true, da, nullptr, nullptr);
  Status st = target_->gemm().runWithEpilogue(op, {&gelu, &operands, nullptr},
                                              target_->localOps());
  EXPECT_TRUE(st.isOk()) << st.message();
}

// ReLU is arith.maximumf's: a NaN in C stays NaN (maxnumf would give 0), an
// infinity stays, -inf and negative values become +0. C's NaN and
// infinities come from infinite inputs (inf - inf, inf + inf), written over
// C as cuBLASLt's ReLU epilogue would be used for, with and without a bias.
TEST_P(GemmConformance, EpilogueReluOfNaNAndInfinities) {
  const double inf = std::numeric_limits<double>::infinity();
  const double a[] = {inf, inf, 1, 2};             // 2 x 2
  const double b[] = {1, -1, 1, 1, -1, -1};        // 3 x 2 (transB)
  const double zero[] = {0, 0, 0};
  for (DType t : kEpilogueTypes)
    for (bool bias : {false, true}) {
      SCOPED_TRACE(std::string(dtypeName(t)) + (bias ? " bias" : ""));
      Releaser releaser{*target_};
      const size_t es = dtypeSize(t);
      Bytes ab(4 * es), bb(6 * es), zb(3 * es), c(6 * es, 0xFF);
      convertFromF64(t, a, ab.data(), 4);
      convertFromF64(t, b, bb.data(), 6);
      convertFromF64(t, zero, zb.data(), 3);
      void *da = nullptr, *db = nullptr, *dz = nullptr, *dc = nullptr;
      ASSERT_TRUE(target_->upload(ab, da).isOk());
      ASSERT_TRUE(target_->upload(bb, db).isOk());
      ASSERT_TRUE(target_->upload(zb, dz).isOk());
      ASSERT_TRUE(target_->upload(c, dc).isOk());
      GemmOp op = denseGemmOp(t, 2, 3, 2, true, da, db, dc);
      op.bias = bias ? dz : nullptr; // +0: the same products
      const ExprProgram r = relu();
      const std::vector<ExprOperand> operands = {{dc, false}};
      Status st = target_->gemm().runWithEpilogue(op, {&r, &operands, dc},
                                                  target_->localOps());
      ASSERT_TRUE(st.isOk()) << st.message();
      ASSERT_TRUE(target_->download(dc, c.size(), c).isOk());
      double got[6];
      convertToF64(t, c.data(), got, 6);
      EXPECT_TRUE(std::isnan(got[0])) << got[0];
      EXPECT_EQ(got[1], inf);
      EXPECT_EQ(got[2], 0.0);
      EXPECT_FALSE(std::signbit(got[2]));
      EXPECT_EQ(got[3], 0.0);
      EXPECT_FALSE(std::signbit(got[3]));
      EXPECT_EQ(got[4], 3.0);
      EXPECT_EQ(got[5], 0.0);
    }
}

// Bad epilogues are refused before the GEMM writes anything: C keeps its
// poison.
TEST_P(GemmConformance, EpilogueRejectsBadArguments) {
  Releaser releaser{*target_};
  void *da = nullptr, *db = nullptr, *dc = nullptr;
  const Bytes poison(2 * 3 * 4, 0xFF);
  ASSERT_TRUE(target_->upload(Bytes(2 * 4 * 4, 0), da).isOk());
  ASSERT_TRUE(target_->upload(Bytes(4 * 3 * 4, 0), db).isOk());
  ASSERT_TRUE(target_->upload(poison, dc).isOk());
  const GemmOp op = smallF32Op(da, db, dc);
  const ExprProgram gelu = geluTanh();
  std::vector<ExprOperand> operands = {{dc, false}};
  auto expectError = [&](const GemmOp &o, const GemmEpilogue &e,
                         const std::string &needle) {
    Status st = target_->gemm().runWithEpilogue(o, e, target_->localOps());
    ASSERT_FALSE(st.isOk()) << "expected an error mentioning '" << needle
                            << "'";
    EXPECT_EQ(st.code(), StatusCode::InvalidArgument) << st.message();
    EXPECT_NE(st.message().find(needle), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("with an elementwise epilogue"),
              std::string::npos)
        << st.message();
    Bytes c;
    ASSERT_TRUE(target_->download(dc, poison.size(), c).isOk());
    EXPECT_EQ(c, poison) << "C was written";
  };
  expectError(op, {nullptr, &operands, dc}, "no expression");
  ExprProgram twoInputs = gelu;
  twoInputs.nodes[0].input = 1;
  expectError(op, {&twoInputs, &operands, dc},
              "reads operand 1 but the op has 1 operands");
  expectError(op, {&gelu, &operands, nullptr}, "the result is null");
  GemmOp padded = op;
  padded.ldc = 4;
  expectError(padded, {&gelu, &operands, dc},
              "needs a dense C, but ldc (4) is not n (3)");
  GemmOp negative = op;
  negative.m = -1;
  expectError(negative, {&gelu, &operands, dc}, "m is negative (-1)");
}

} // namespace shardlin::rt::testing
