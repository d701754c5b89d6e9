//===- GpuElementwiseTest.cpp - The CUDA elementwise kernel vs the host ---===//
//
// CudaLocalOps::elementwise against the host's LocalOps on the same
// expressions and inputs (special values included), every dtype, shapes
// around the grid's, in place and not. Skips without a device.
//
//===----------------------------------------------------------------------===//

#include "ExprTestSupport.h"
#include "GpuTestSupport.h"

#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/exec/LocalOps.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace shardlin::rt;
using namespace shardlin::rt::testing;

// elementwise against the host's: the same expression on the same inputs.
// Arithmetic, comparisons and max/min are correctly rounded on both, so
// their results are the same bits; exp/log/tanh/erf differ by the two
// implementations' errors (CUDA's within 2 ulp, the host's within 4e-7):
// f32 within 2e-6 relative + 1e-6 absolute (the activations' 1 + tanh
// cancellation), f16/bf16 within one ulp of the type, f64 within 1e-14
// relative + 1e-15 absolute (the same cancellation: on an H200, CUDA's
// GELU-tanh of an f64 near -0.008 differed from the host's by 1.5e-16).
namespace {

struct ExprCase {
  std::string name;
  ExprProgram expr;
  std::vector<bool> rowVector;
  bool exact;
};

std::vector<ExprCase> exprCases() {
  std::vector<ExprCase> cases = {
      {"gelu-tanh", geluTanh(), {false}, false},
      {"gelu-erf", geluErf(), {false}, false},
      {"silu", silu(), {false}, false}};
  {
    // (x * s + b) with s, b row vectors, then every max/min kind, log,
    // sqrt, rsqrt, abs, exp of the result.
    Builder b;
    const int x = b.input(0), y = b.input(1);
    const int v = b.op(ExprOp::Add, b.op(ExprOp::Mul, x, b.input(2)),
                       b.input(3));
    const int m = b.op(ExprOp::MaxNum, b.op(ExprOp::Maximum, v, y),
                       b.op(ExprOp::MinNum, b.op(ExprOp::Minimum, v, y), x));
    const int a = b.op(ExprOp::Abs, m);
    const int l = b.op(ExprOp::Log, b.op(ExprOp::Add, a, b.constant(1)));
    b.op(ExprOp::Sub,
         b.op(ExprOp::Div, b.op(ExprOp::Sqrt, a), b.op(ExprOp::Exp, l)),
         b.op(ExprOp::Rsqrt, b.op(ExprOp::Add, a, b.constant(2))));
    cases.push_back({"row vectors and the rest", b.p,
                     {false, false, true, true}, false});
  }
  for (size_t p = 0; p < kNumCmpPredicates; ++p) {
    Builder b;
    const int x = b.input(0), y = b.input(1);
    b.op(ExprOp::Select, b.cmp(static_cast<CmpPredicate>(p), x, y),
         b.op(ExprOp::Maximum, x, y),
         b.op(ExprOp::Neg, b.op(ExprOp::Minimum, x, y)));
    cases.push_back({std::string("cmp ") +
                         cmpPredicateName(static_cast<CmpPredicate>(p)),
                     b.p, {false, false}, true});
  }
  return cases;
}

/// Whether `got` and `want` (n elements of type t) are the same bits, but
/// for NaNs, which need only both be NaN. IEEE 754 leaves the sign and the
/// payload of a NaN that an operation returns unspecified (arith.minimumf of
/// two NaNs, or f32 -> f16 of a NaN), and the two sides differ there: x86
/// returns the first operand's NaN quieted and the host's conversion keeps
/// its sign and payload, while CUDA's arithmetic returns the canonical NaN
/// 0x7fffffff and __float2half_rn / __float2bfloat16_rn give 0x7fff for any
/// NaN; so `-minimum(NaN, NaN)` in f16 is 0xfe00 on the host and 0x7fff on
/// the device. Every other value, the sign of zero included, is exact.
::testing::AssertionResult sameValuesNaNsAlike(DType t, const Bytes &got,
                                               const Bytes &want, size_t n) {
  const size_t es = dtypeSize(t);
  std::vector<double> g(n), w(n);
  convertToF64(t, got.data(), g.data(), n);
  convertToF64(t, want.data(), w.data(), n);
  for (size_t i = 0; i < n; ++i) {
    if (std::isnan(g[i]) && std::isnan(w[i]))
      continue;
    if (std::memcmp(got.data() + i * es, want.data() + i * es, es) != 0)
      return ::testing::AssertionFailure()
             << "element " << i << ": " << g[i] << " vs " << w[i]
             << " (not the same bits)";
  }
  return ::testing::AssertionSuccess();
}

/// Random values of type t in [-4, 4], and, every 7th, NaN, +-inf or +-0.
Bytes exprInputs(DType t, size_t n, std::mt19937_64 &rng) {
  std::uniform_real_distribution<double> dist(-4, 4);
  const double specials[] = {std::numeric_limits<double>::quiet_NaN(),
                             std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(), 0.0,
                             -0.0};
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = i % 7 == 3 ? specials[(i / 7) % 5] : dist(rng);
  Bytes b(n * dtypeSize(t));
  convertFromF64(t, v.data(), b.data(), n);
  return b;
}

} // namespace

// A column operand (one value per row, a norm's R x 1) beside a full one
// and a row vector: (x - col) * row, exact in both (one rounding each, no
// transcendental), so the devices agree bit for bit.
TEST_F(CudaLocalOpsTest, ColumnOperandsMatchHostBitForBit) {
  auto hostOps = createHostLocalOps();
  ExprProgram expr;
  expr.nodes.resize(5);
  for (int k = 0; k < 3; ++k) {
    expr.nodes[k].op = ExprOp::Input;
    expr.nodes[k].input = k;
  }
  expr.nodes[3].op = ExprOp::Sub;
  expr.nodes[3].args[0] = 0;
  expr.nodes[3].args[1] = 1;
  expr.nodes[4].op = ExprOp::Mul;
  expr.nodes[4].args[0] = 3;
  expr.nodes[4].args[1] = 2;
  for (DType t : kAllDTypes)
    for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1, 1}, {37, 3},
                              {5, 1031}, {3, 70001}}) {
      SCOPED_TRACE(std::string(dtypeName(t)) + " " + std::to_string(rows) +
                   " x " + std::to_string(cols));
      const size_t es = dtypeSize(t), n = size_t(rows * cols);
      std::mt19937_64 rng(rows * 17 + cols);
      std::vector<Bytes> in = {exprInputs(t, n, rng),
                               exprInputs(t, size_t(rows), rng),
                               exprInputs(t, size_t(cols), rng)};
      std::vector<Buffer> din(3);
      for (size_t k = 0; k < 3; ++k)
        ASSERT_TRUE(upload(in[k], din[k]).isOk());
      std::vector<ExprOperand> hostOperands(3), devOperands(3);
      for (size_t k = 0; k < 3; ++k) {
        hostOperands[k].data = in[k].data();
        devOperands[k].data = din[k].data();
      }
      hostOperands[1].column = devOperands[1].column = true;
      hostOperands[2].rowVector = devOperands[2].rowVector = true;
      Bytes want(n * es, kPoisonByte);
      ASSERT_TRUE(
          hostOps->elementwise(expr, hostOperands, want.data(), rows, cols, t)
              .isOk());
      Buffer dy;
      ASSERT_TRUE(upload(Bytes(n * es + 2 * es, kPoisonByte), dy).isOk());
      Status st =
          ops_->elementwise(expr, devOperands, dy.data(), rows, cols, t);
      ASSERT_TRUE(st.isOk()) << st.message();
      Bytes got;
      ASSERT_TRUE(download(dy, got).isOk());
      EXPECT_TRUE(isPoison(got.data() + n * es, 2 * es));
      EXPECT_TRUE(sameValuesNaNsAlike(t, got, want, n));
      if (HasFailure())
        return;
    }
}

TEST_F(CudaLocalOpsTest, ElementwiseMatchesHost) {
  auto hostOps = createHostLocalOps();
  const std::pair<int64_t, int64_t> shapes[] = {{1, 1}, {37, 3}, {5, 1031},
                                                {3, 70001}};
  for (const ExprCase &c : exprCases())
    for (DType t : kAllDTypes)
      for (auto [rows, cols] : shapes)
        for (bool inPlace : {false, true}) {
          SCOPED_TRACE(c.name + " " + dtypeName(t) + " " +
                       std::to_string(rows) + " x " + std::to_string(cols) +
                       (inPlace ? " in place" : ""));
          const size_t es = dtypeSize(t), n = size_t(rows * cols);
          std::mt19937_64 rng(rows * 131 + cols);
          std::vector<Bytes> in;
          std::vector<Buffer> din(c.rowVector.size());
          std::vector<ExprOperand> hostOperands, devOperands;
          for (size_t k = 0; k < c.rowVector.size(); ++k) {
            in.push_back(exprInputs(t, c.rowVector[k] ? size_t(cols) : n, rng));
            ASSERT_TRUE(upload(in[k], din[k]).isOk());
          }
          for (size_t k = 0; k < c.rowVector.size(); ++k) {
            hostOperands.push_back({in[k].data(), c.rowVector[k]});
            devOperands.push_back({din[k].data(), c.rowVector[k]});
          }
          Bytes want(n * es, kPoisonByte);
          ASSERT_TRUE(hostOps
                          ->elementwise(c.expr, hostOperands, want.data(),
                                        rows, cols, t)
                          .isOk());
          Buffer dy;
          ASSERT_TRUE(upload(Bytes(n * es + 2 * es, kPoisonByte), dy).isOk());
          void *y = inPlace ? din[0].data() : dy.data();
          Status st = ops_->elementwise(c.expr, devOperands, y, rows, cols, t);
          ASSERT_TRUE(st.isOk()) << st.message();
          Bytes got;
          ASSERT_TRUE(download(inPlace ? din[0] : dy, got).isOk());
          if (!inPlace) {
            EXPECT_TRUE(isPoison(got.data() + n * es, 2 * es));
          }
          if (c.exact) {
            EXPECT_TRUE(sameValuesNaNsAlike(t, got, want, n));
          } else {
            std::vector<double> g(n), w(n);
            convertToF64(t, got.data(), g.data(), n);
            convertToF64(t, want.data(), w.data(), n);
            const double ulp = t == DType::F16    ? std::ldexp(1.0, -10)
                               : t == DType::BF16 ? std::ldexp(1.0, -7)
                                                  : 0.0;
            for (size_t i = 0; i < n; ++i) {
              if (std::isnan(w[i]) || std::isinf(w[i])) {
                EXPECT_TRUE(std::isnan(w[i]) ? std::isnan(g[i]) : g[i] == w[i])
                    << "element " << i << ": " << g[i] << " vs " << w[i];
                continue;
              }
              const double a = std::fabs(w[i]);
              const double bound =
                  t == DType::F64 ? 1e-14 * a + 1e-15
                                  : 2e-6 * a + 1e-6 + ulp * a +
                                        (t == DType::F16 ? 6e-8 : 0.0);
              EXPECT_LE(std::fabs(g[i] - w[i]), bound)
                  << "element " << i << ": " << g[i] << " vs " << w[i];
              if (HasFailure())
                break;
            }
          }
          if (HasFailure())
            return;
        }
}
