//===- ElementwiseTest.cpp - The fused elementwise op and its host kernels ===//
//
// Every expression op and cmpf predicate on every dtype through the host
// LocalOps, against a float64 reference evaluated on the same (stored)
// inputs, random and non-zero. Bounds:
//   f64:  1e-15 relative (+1e-300) for arithmetic, 4e-15 for libm's functions;
//   f32:  2e-7 relative for arithmetic (one rounding is 6e-8), the
//         VectorMath bounds for exp/log/tanh/erf (below), composites (GELU,
//         SiLU) 4e-6 relative + 1e-6 absolute (tanh's 4e-7 amplified by the
//         1 + tanh cancellation at negative x);
//   f16/bf16: computed in f32 and rounded once: within one ulp of the
//         dtype (2^-10 / 2^-7 relative) of the float64 value, plus the f32
//         bound above.
// Maximum/minimum/maxnum/minnum and cmp on NaN, inf and signed zeros are
// checked bit for bit. The activation forms (recognizeActivation) are
// recognized as written in several orders, not recognized where they differ
// (maxnum, ogt, -0, another constant), and their fused loops are checked
// against the float64 reference and against the generic evaluation of the
// same program (HostLocalOpsOptions::activationKernels = false), within
// the same bounds (ReLU on NaN, infinities and signed zeros bit for bit).
// VectorMathTest.cpp measures the f32 functions' accuracy;
// ElementwiseProgramTest.cpp checks the op's errors and runs it in programs.
//
//===----------------------------------------------------------------------===//

#include "ExprTestSupport.h"
#include "ProgramEdit.h"

#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/program/ProgramText.h"
#include "shardlin/runtime/exec/Execute.h"
#include "shardlin/runtime/base/Expr.h"
#include "shardlin/runtime/exec/LocalOps.h"
#include "shardlin/runtime/program/OpTable.h"
#include "shardlin/runtime/program/Program.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace rt = shardlin::rt;
using rt::CmpPredicate;
using rt::DType;
using rt::ExprOp;
using shardlin::rt::testing::Builder;
using shardlin::rt::testing::geluErf;
using shardlin::rt::testing::geluTanh;
using shardlin::rt::testing::randomValues;
using shardlin::rt::testing::silu;

namespace {

const DType kAllTypes[] = {DType::F16, DType::BF16, DType::F32, DType::F64};

/// Evaluates `e` in float64 at element (i, j) of rows x cols.
double reference(const rt::ExprProgram &e,
                 const std::vector<std::vector<double>> &in,
                 const std::vector<bool> &rowVector, int64_t i, int64_t j,
                 int64_t cols) {
  std::vector<double> at(in.size());
  for (size_t k = 0; k < in.size(); ++k)
    at[k] = in[k][rowVector[k] ? j : i * cols + j];
  return shardlin::rt::testing::referenceAt(e, at);
}

/// Values of one dtype, kept as bytes and as the doubles they hold.
struct Tensor {
  DType dtype;
  std::vector<unsigned char> bytes;
  std::vector<double> values;
  Tensor(DType t, const std::vector<double> &v) : dtype(t) {
    bytes.resize(v.size() * rt::dtypeSize(t) + 1);
    rt::convertFromF64(t, v.data(), bytes.data(), v.size());
    values.resize(v.size());
    rt::convertToF64(t, bytes.data(), values.data(), v.size());
  }
  explicit Tensor(DType t, size_t n) : Tensor(t, std::vector<double>(n, 0)) {}
  std::vector<double> read() const {
    std::vector<double> out(values.size());
    rt::convertToF64(dtype, bytes.data(), out.data(), out.size());
    return out;
  }
};

double ulpOf(DType t) {
  switch (t) {
  case DType::F16: return std::ldexp(1.0, -10);
  case DType::BF16: return std::ldexp(1.0, -7);
  case DType::F32: return std::ldexp(1.0, -23);
  case DType::F64: return std::ldexp(1.0, -52);
  }
  return 1;
}

/// The bound for a result whose f32 evaluation is within rel32 * |ref| +
/// abs32 of the float64 value (f64: rel64).
struct Bound {
  double rel32, abs32, rel64;
  double at(DType t, double ref) const {
    const double a = std::fabs(ref);
    if (t == DType::F64)
      return rel64 * a + 1e-300;
    const double f32 = rel32 * a + abs32;
    if (t == DType::F32)
      return f32;
    // One rounding to the narrow type of the f32 value (its ulp, relative;
    // for f16, whose normals end at 6.1e-5, the subnormal step 2^-24).
    return f32 + ulpOf(t) * (a + f32) +
           (t == DType::F16 ? std::ldexp(1.0, -24) : 0.0);
  }
};

const Bound kArith{2e-7, 0, 1e-15};

/// Runs `e` on the host LocalOps (made with `options`) and checks every
/// element against the float64 reference; returns what it computed.
std::vector<double> checkExpr(const rt::ExprProgram &e, DType t, int64_t rows,
                              int64_t cols,
                              const std::vector<std::vector<double>> &inputs,
                              const std::vector<bool> &rowVector,
                              const Bound &bound, const std::string &what,
                              const rt::HostLocalOpsOptions &options = {}) {
  std::vector<Tensor> tensors;
  std::vector<rt::ExprOperand> ops;
  for (size_t k = 0; k < inputs.size(); ++k)
    tensors.emplace_back(t, inputs[k]);
  for (size_t k = 0; k < inputs.size(); ++k)
    ops.push_back({tensors[k].bytes.data(), rowVector[k]});
  // Poisoned output: unwritten elements show as NaN / garbage.
  Tensor y(t, std::vector<double>(size_t(rows * cols),
                                  std::numeric_limits<double>::quiet_NaN()));
  std::unique_ptr<rt::LocalOps> host = rt::createHostLocalOps(options);
  rt::Status s = host->elementwise(e, ops, y.bytes.data(), rows, cols, t);
  EXPECT_TRUE(s.isOk()) << what << ": " << s.message();
  if (!s.isOk())
    return {};
  std::vector<std::vector<double>> stored;
  for (const Tensor &x : tensors)
    stored.push_back(x.values);
  const std::vector<double> got = y.read();
  int bad = 0;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      const double ref = reference(e, stored, rowVector, i, j, cols);
      const double g = got[i * cols + j];
      const bool ok = std::isnan(ref)   ? std::isnan(g)
                      : std::isinf(ref) ? g == ref
                                        : std::fabs(g - ref) <= bound.at(t, ref);
      if (!ok && ++bad <= 5)
        ADD_FAILURE() << what << " " << rt::dtypeName(t) << " at (" << i
                      << ", " << j << "): got " << g << ", expected " << ref
                      << " (bound " << bound.at(t, ref) << ")";
    }
  return got;
}

//===----------------------------------------------------------------------===//
// Every op and predicate on every dtype
//===----------------------------------------------------------------------===//

TEST(Elementwise, UnaryOpsEveryDtype) {
  struct Case {
    ExprOp op;
    double lo, hi;
    Bound bound;
  };
  const Case cases[] = {
      {ExprOp::Neg, -8, 8, kArith},
      {ExprOp::Abs, -8, 8, kArith},
      {ExprOp::Exp, -10, 10, {3e-7, 0, 4e-15}}, // e^10 < f16's max
      {ExprOp::Log, 1.0 / 16, 1000, {3e-7, 1e-7, 4e-15}},
      {ExprOp::Sqrt, 1.0 / 16, 1000, kArith},
      {ExprOp::Rsqrt, 1.0 / 16, 1000, {2.5e-7, 0, 2e-15}},
      {ExprOp::Tanh, -6, 6, {4e-7, 0, 4e-15}},
      {ExprOp::Erf, -5, 5, {4e-7, 0, 4e-15}},
  };
  unsigned seed = 1;
  for (const Case &c : cases)
    for (DType t : kAllTypes) {
      Builder b;
      b.op(c.op, b.input(0));
      checkExpr(b.p, t, 7, 333, {randomValues(7 * 333, c.lo, c.hi, seed++)},
                {false}, c.bound, rt::exprOpName(c.op));
    }
}

TEST(Elementwise, BinaryOpsEveryDtype) {
  const ExprOp ops[] = {ExprOp::Add,     ExprOp::Sub,     ExprOp::Mul,
                        ExprOp::Div,     ExprOp::Maximum, ExprOp::Minimum,
                        ExprOp::MaxNum,  ExprOp::MinNum};
  unsigned seed = 100;
  for (ExprOp op : ops)
    for (DType t : kAllTypes) {
      Builder b;
      b.op(op, b.input(0), b.input(1));
      const size_t n = 5 * 301;
      checkExpr(b.p, t, 5, 301,
                {randomValues(n, -10, 10, seed), randomValues(n, -10, 10,
                                                              seed + 1)},
                {false, false}, kArith, rt::exprOpName(op));
      seed += 2;
    }
}

TEST(Elementwise, EveryPredicateEveryDtype) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> specials = {nan, inf, -inf, 0.0, -0.0, 1.5, -2.0};
  // Every pair of specials, then random pairs (with some equal ones).
  std::vector<double> a, c;
  for (double x : specials)
    for (double y : specials) {
      a.push_back(x);
      c.push_back(y);
    }
  std::vector<double> ra = randomValues(200, -4, 4, 7);
  std::vector<double> rc = randomValues(200, -4, 4, 8);
  for (size_t i = 0; i < ra.size(); ++i) {
    a.push_back(ra[i]);
    c.push_back(i % 5 == 0 ? ra[i] : rc[i]);
  }
  for (size_t p = 0; p < rt::kNumCmpPredicates; ++p)
    for (DType t : kAllTypes) {
      // select(cmp(x, y), x - y, y + 3): a value, as the result cannot be
      // the boolean itself.
      Builder b;
      const int x = b.input(0), y = b.input(1);
      const int pred = b.cmp(static_cast<CmpPredicate>(p), x, y);
      b.op(ExprOp::Select, pred, b.op(ExprOp::Sub, x, y),
           b.op(ExprOp::Add, y, b.constant(3)));
      checkExpr(b.p, t, 1, int64_t(a.size()), {a, c}, {false, false}, kArith,
                std::string("cmp ") +
                    rt::cmpPredicateName(static_cast<CmpPredicate>(p)));
    }
}

/// The bit pattern of a stored element, as 64 bits.
uint64_t bitsAt(const Tensor &t, size_t i) {
  uint64_t u = 0;
  std::memcpy(&u, t.bytes.data() + i * rt::dtypeSize(t.dtype),
              rt::dtypeSize(t.dtype));
  return u;
}

TEST(Elementwise, MaxMinNaNInfSignedZeroBitExact) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> specials = {nan, inf, -inf, 0.0, -0.0, 1.0, -1.0};
  std::vector<double> a, c;
  for (double x : specials)
    for (double y : specials) {
      a.push_back(x);
      c.push_back(y);
    }
  const ExprOp ops[] = {ExprOp::Maximum, ExprOp::Minimum, ExprOp::MaxNum,
                        ExprOp::MinNum};
  for (ExprOp op : ops)
    for (DType t : kAllTypes) {
      Builder b;
      b.op(op, b.input(0), b.input(1));
      Tensor x(t, a), y(t, c), out(t, a.size());
      std::unique_ptr<rt::LocalOps> host = rt::createHostLocalOps();
      ASSERT_TRUE(host->elementwise(b.p, {{x.bytes.data()}, {y.bytes.data()}},
                                    out.bytes.data(), 1, int64_t(a.size()), t)
                      .isOk());
      const std::vector<double> got = out.read();
      for (size_t i = 0; i < a.size(); ++i) {
        const double ref =
            reference(b.p, {a, c}, {false, false}, 0, int64_t(i), 0);
        SCOPED_TRACE(std::string(rt::exprOpName(op)) + " " +
                     rt::dtypeName(t) + " (" + std::to_string(a[i]) + ", " +
                     std::to_string(c[i]) + ")");
        if (std::isnan(ref)) {
          EXPECT_TRUE(std::isnan(got[i])) << got[i];
          continue;
        }
        Tensor expected(t, std::vector<double>{ref});
        EXPECT_EQ(bitsAt(out, i), bitsAt(expected, 0)) << got[i] << " vs "
                                                        << ref;
      }
    }
}

//===----------------------------------------------------------------------===//
// Layouts: row vectors, in place, empty
//===----------------------------------------------------------------------===//

TEST(Elementwise, RowVectorsBroadcastOverRows) {
  // x * scale + bias, scale and bias row vectors; column counts on both
  // sides of the block length (short rows are tiled, long ones split).
  for (int64_t cols : {1, 3, 100, 1000, 5000})
    for (DType t : kAllTypes) {
      const int64_t rows = cols >= 1000 ? 3 : 37;
      Builder b;
      b.op(ExprOp::Add, b.op(ExprOp::Mul, b.input(0), b.input(1)),
           b.input(2));
      checkExpr(b.p, t, rows, cols,
                {randomValues(size_t(rows * cols), -3, 3, 11),
                 randomValues(size_t(cols), -2, 2, 12),
                 randomValues(size_t(cols), -1, 1, 13)},
                {false, true, true},
                // x * s + b rounds twice in f32 (or once with an FMA): the
                // error is relative to |x s| <= 6 where the sum cancels.
                {2e-7, 1e-6, 2e-15},
                "row vectors, cols " + std::to_string(cols));
    }
}

TEST(Elementwise, InPlaceOverAFullOperand) {
  for (DType t : kAllTypes) {
    const int64_t rows = 9, cols = 700;
    std::vector<double> x = randomValues(size_t(rows * cols), -3, 3, 21);
    std::vector<double> bias = randomValues(size_t(cols), -1, 1, 22);
    Tensor xt(t, x), bt(t, bias);
    const std::vector<double> xs = xt.values, bs = bt.values;
    // y = tanh(x + bias) * x, written over x.
    Builder b;
    const int in = b.input(0);
    b.op(ExprOp::Mul, b.op(ExprOp::Tanh, b.op(ExprOp::Add, in, b.input(1))),
         in);
    std::unique_ptr<rt::LocalOps> host = rt::createHostLocalOps();
    ASSERT_TRUE(host->elementwise(b.p,
                                  {{xt.bytes.data(), false},
                                   {bt.bytes.data(), true}},
                                  xt.bytes.data(), rows, cols, t)
                    .isOk());
    const std::vector<double> got = xt.read();
    const Bound bound{1e-6, 1e-6, 4e-15};
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        const double ref = std::tanh(xs[i * cols + j] + bs[j]) * xs[i * cols + j];
        ASSERT_LE(std::fabs(got[i * cols + j] - ref), bound.at(t, ref))
            << rt::dtypeName(t) << " at " << i << ", " << j;
      }
  }
}

TEST(Elementwise, EmptyTensorsWriteNothing) {
  Builder b;
  b.op(ExprOp::Exp, b.input(0));
  std::unique_ptr<rt::LocalOps> host = rt::createHostLocalOps();
  for (DType t : kAllTypes) {
    EXPECT_TRUE(host->elementwise(b.p, {{nullptr}}, nullptr, 0, 5, t).isOk());
    EXPECT_TRUE(host->elementwise(b.p, {{nullptr}}, nullptr, 4, 0, t).isOk());
  }
}

//===----------------------------------------------------------------------===//
// The activations a transformer block uses
//===----------------------------------------------------------------------===//

TEST(Elementwise, Activations) {
  const Bound composite{4e-6, 1e-6, 1e-14};
  rt::ExprProgram reluMax, reluSelect;
  {
    Builder b;
    b.op(ExprOp::Maximum, b.input(0), b.constant(0));
    reluMax = b.p;
  }
  {
    Builder b;
    const int x = b.input(0), zero = b.constant(0);
    b.op(ExprOp::Select, b.cmp(CmpPredicate::UGT, x, zero), x, zero);
    reluSelect = b.p;
  }
  const struct {
    const char *name;
    rt::ExprProgram e;
    Bound bound;
  } cases[] = {{"gelu-tanh", geluTanh(), composite},
               {"gelu-erf", geluErf(), composite},
               {"silu", silu(), composite},
               {"relu-maximum", reluMax, kArith},
               {"relu-select", reluSelect, kArith}};
  for (const auto &c : cases)
    for (DType t : kAllTypes)
      checkExpr(c.e, t, 16, 1024, {randomValues(16 * 1024, -8, 8, 31)},
                {false}, c.bound, c.name);
}

//===----------------------------------------------------------------------===//
// Activation forms: recognized, and their fused loops against the generic
// evaluation and the float64 reference
//===----------------------------------------------------------------------===//

using rt::Activation;
using Post = rt::ActivationForm::Post;

/// One program of the activation tests, with its operands' kinds and the
/// form recognizeActivation must find (act unset: none).
struct FormCase {
  std::string name;
  rt::ExprProgram e;
  std::vector<bool> rowVector;
  std::optional<rt::ActivationForm> form;
  Bound bound;
};

rt::ActivationForm form(Activation act, int x, int bias = -1,
                        Post post = Post::None, int other = -1,
                        std::vector<double> c = {}) {
  rt::ActivationForm f;
  f.act = act;
  f.x = x;
  f.bias = bias;
  f.post = post;
  f.other = other;
  for (size_t k = 0; k < c.size(); ++k)
    f.c[k] = c[k];
  return f;
}

constexpr double kS2Pi = 0.7978845608028654, kCube = 0.044715;
constexpr double kS1_2 = 0.7071067811865476;

/// GELU-tanh as test/shardlin-run/elementwise.mlir's translation writes it:
/// (x * (tanh(s (x + x^3 c)) + 1)) * 0.5, of v = input 0 (+ input 1).
rt::ExprProgram geluTanhOtherOrder(bool bias) {
  Builder b;
  int x = b.input(0);
  if (bias)
    x = b.op(ExprOp::Add, x, b.input(1));
  const int x3 = b.op(ExprOp::Mul, b.op(ExprOp::Mul, x, x), x);
  const int inner =
      b.op(ExprOp::Add, x, b.op(ExprOp::Mul, x3, b.constant(kCube)));
  const int t = b.op(ExprOp::Tanh, b.op(ExprOp::Mul, inner, b.constant(kS2Pi)));
  b.op(ExprOp::Mul,
       b.op(ExprOp::Mul, x, b.op(ExprOp::Add, t, b.constant(1))),
       b.constant(0.5));
  return b.p;
}

std::vector<FormCase> formCases() {
  const Bound composite{4e-6, 1e-6, 1e-14};
  const Bound arith{2e-7, 1e-6, 2e-15};
  std::vector<FormCase> cases;
  cases.push_back({"gelu-tanh (0.5 x)(1 + t)", geluTanh(), {false},
                   form(Activation::GeluTanh, 0, -1, Post::None, -1,
                        {0.5, 1, kS2Pi, kCube}),
                   composite});
  cases.push_back({"gelu-tanh (x (t + 1)) 0.5 of x + bias",
                   geluTanhOtherOrder(true), {false, true},
                   form(Activation::GeluTanh, 0, 1, Post::None, -1,
                        {0.5, 1, kS2Pi, kCube}),
                   composite});
  cases.push_back({"gelu-erf", geluErf(), {false},
                   form(Activation::GeluErf, 0, -1, Post::None, -1,
                        {0.5, 1, kS1_2}),
                   composite});
  cases.push_back({"silu x * (1 / (1 + exp(-x)))", silu(), {false},
                   form(Activation::Silu, 0), composite});
  {
    Builder b;
    const int x = b.input(0);
    b.op(ExprOp::Div, x,
         b.op(ExprOp::Add, b.constant(1),
              b.op(ExprOp::Exp, b.op(ExprOp::Neg, x))));
    cases.push_back({"silu x / (1 + exp(-x))", b.p, {false},
                     form(Activation::Silu, 0), composite});
  }
  {
    Builder b;
    const int v = b.op(ExprOp::Add, b.input(0), b.input(1));
    b.op(ExprOp::Maximum, b.constant(0), v);
    cases.push_back({"relu maximum(0, x + bias)", b.p, {false, true},
                     form(Activation::Relu, 0, 1), arith});
  }
  {
    Builder b;
    const int v = b.op(ExprOp::Add, b.input(0), b.input(1));
    const int zero = b.constant(0);
    b.op(ExprOp::Select, b.cmp(CmpPredicate::UGT, v, zero), v, zero);
    cases.push_back({"relu select(x + bias ugt 0)", b.p, {false, true},
                     form(Activation::Relu, 0, 1), arith});
  }
  {
    Builder b;
    b.op(ExprOp::Add, b.input(0), b.input(1));
    cases.push_back({"bias add", b.p, {false, true},
                     form(Activation::Identity, 0, 1), arith});
  }
  {
    Builder b;
    b.op(ExprOp::Add, b.input(1), b.input(0));
    cases.push_back({"residual add", b.p, {false, false},
                     form(Activation::Identity, 1, 0), arith});
  }
  {
    Builder b;
    b.input(0);
    cases.push_back({"copy", b.p, {false}, form(Activation::Identity, 0),
                     arith});
  }
  {
    // gelu-tanh(x + bias) + residual.
    rt::ExprProgram g = geluTanhOtherOrder(true);
    Builder b;
    b.p = g;
    b.op(ExprOp::Add, b.input(2), static_cast<int>(g.nodes.size()) - 1);
    cases.push_back({"gelu-tanh(x + bias) + residual", b.p,
                     {false, true, false},
                     form(Activation::GeluTanh, 0, 1, Post::Add, 2,
                          {0.5, 1, kS2Pi, kCube}),
                     composite});
  }
  {
    // SwiGLU's product: silu(gate) * up.
    rt::ExprProgram g = silu();
    Builder b;
    b.p = g;
    b.op(ExprOp::Mul, static_cast<int>(g.nodes.size()) - 1, b.input(1));
    cases.push_back({"silu(gate) * up", b.p, {false, false},
                     form(Activation::Silu, 0, -1, Post::Mul, 1), composite});
  }
  {
    // relu(x) * scale, a row vector after the activation.
    rt::ExprProgram g = rt::testing::relu();
    Builder b;
    b.p = g;
    const int r = static_cast<int>(g.nodes.size()) - 1;
    b.op(ExprOp::Mul, b.input(1), r);
    cases.push_back({"relu(x) * scale", b.p, {false, true},
                     form(Activation::Relu, 0, -1, Post::Mul, 1), arith});
  }
  // Not activations: maxnum and ogt differ from ReLU on NaN, -0 on signed
  // zeros; a factor too many, another constant in SiLU, a cube of another
  // value.
  {
    Builder b;
    b.op(ExprOp::MaxNum, b.input(0), b.constant(0));
    cases.push_back({"maxnum(x, 0)", b.p, {false}, std::nullopt, arith});
  }
  {
    Builder b;
    const int x = b.input(0), zero = b.constant(0);
    b.op(ExprOp::Select, b.cmp(CmpPredicate::OGT, x, zero), x, zero);
    cases.push_back({"select(x ogt 0)", b.p, {false}, std::nullopt, arith});
  }
  {
    Builder b;
    b.op(ExprOp::Maximum, b.input(0), b.constant(-0.0));
    cases.push_back({"maximum(x, -0)", b.p, {false}, std::nullopt, arith});
  }
  {
    Builder b;
    const int x = b.input(0);
    b.op(ExprOp::Div, x,
         b.op(ExprOp::Add, b.constant(2),
              b.op(ExprOp::Exp, b.op(ExprOp::Neg, x))));
    cases.push_back({"x / (2 + exp(-x))", b.p, {false}, std::nullopt,
                     composite});
  }
  {
    rt::ExprProgram g = geluTanh();
    Builder b;
    b.p = g;
    b.op(ExprOp::Mul, static_cast<int>(g.nodes.size()) - 1, b.constant(2));
    cases.push_back({"gelu-tanh * 2", b.p, {false}, std::nullopt, composite});
  }
  {
    // 0.5 x (1 + tanh(s (x + c x x y))): the cube is not of x.
    Builder b;
    const int x = b.input(0), y = b.input(1);
    const int x3 = b.op(ExprOp::Mul, b.op(ExprOp::Mul, x, x), y);
    const int inner =
        b.op(ExprOp::Add, x, b.op(ExprOp::Mul, b.constant(kCube), x3));
    const int t =
        b.op(ExprOp::Tanh, b.op(ExprOp::Mul, b.constant(kS2Pi), inner));
    b.op(ExprOp::Mul, b.op(ExprOp::Mul, b.constant(0.5), x),
         b.op(ExprOp::Add, b.constant(1), t));
    cases.push_back({"gelu-tanh with x x y", b.p, {false, false},
                     std::nullopt, composite});
  }
  {
    Builder b;
    b.op(ExprOp::Tanh, b.input(0));
    cases.push_back({"tanh", b.p, {false}, std::nullopt, {4e-7, 0, 4e-15}});
  }
  return cases;
}

TEST(ActivationForms, RecognizedAsWritten) {
  for (const FormCase &c : formCases()) {
    SCOPED_TRACE(c.name);
    ASSERT_TRUE(rt::validateExpr(c.e, c.rowVector.size(), c.name).isOk());
    const std::optional<rt::ActivationForm> got = rt::recognizeActivation(c.e);
    ASSERT_EQ(got.has_value(), c.form.has_value());
    if (!got)
      continue;
    EXPECT_EQ(std::string(rt::activationName(got->act)),
              rt::activationName(c.form->act));
    EXPECT_EQ(got->x, c.form->x);
    EXPECT_EQ(got->bias, c.form->bias);
    EXPECT_EQ(static_cast<int>(got->post), static_cast<int>(c.form->post));
    EXPECT_EQ(got->other, c.form->other);
    for (int k = 0; k < 4; ++k)
      EXPECT_EQ(got->c[k], c.form->c[k]) << "constant " << k;
  }
}

// Every case on every dtype, with short rows (tiled) and long ones (split
// into blocks): the fused loops and the generic evaluation each within the
// bound of the float64 reference, and within that bound of each other.
TEST(ActivationForms, FusedLoopsAgreeWithGenericAndReference) {
  const rt::HostLocalOpsOptions generic{false};
  unsigned seed = 300;
  for (const FormCase &c : formCases())
    for (DType t : kAllTypes)
      for (int64_t cols : {int64_t(7), int64_t(1500)}) {
        const int64_t rows = cols > 100 ? 5 : 61;
        std::vector<std::vector<double>> inputs;
        for (bool row : c.rowVector)
          inputs.push_back(
              randomValues(size_t(row ? cols : rows * cols), -8, 8, seed++));
        const std::string what =
            c.name + ", cols " + std::to_string(cols);
        const std::vector<double> fused =
            checkExpr(c.e, t, rows, cols, inputs, c.rowVector, c.bound, what);
        const std::vector<double> plain = checkExpr(
            c.e, t, rows, cols, inputs, c.rowVector, c.bound,
            what + " (generic)", generic);
        ASSERT_EQ(fused.size(), plain.size());
        int bad = 0;
        for (size_t i = 0; i < fused.size(); ++i)
          if (!(std::fabs(fused[i] - plain[i]) <= 2 * c.bound.at(t, plain[i])) &&
              ++bad <= 3)
            ADD_FAILURE() << what << " " << rt::dtypeName(t) << " element "
                          << i << ": fused " << fused[i] << ", generic "
                          << plain[i];
      }
}

// NaN, infinities and signed zeros through ReLU's two forms, with and
// without a bias, bit for bit the same on both paths (and a NaN stays NaN:
// maximum, not maxnum).
TEST(ActivationForms, ReluSpecialValuesBitExactOnBothPaths) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> x = {nan, inf, -inf, 0.0, -0.0, 1.5, -2.0, 3.0};
  const std::vector<double> bias = {0.0, -0.0, 1.0, -0.0, -0.0, -1.5, 2.0, nan};
  for (const FormCase &c : formCases()) {
    if (!c.form || c.form->act != Activation::Relu || c.form->post != Post::None)
      continue;
    for (DType t : kAllTypes) {
      Tensor xt(t, x), bt(t, bias), fused(t, x.size()), plain(t, x.size());
      std::vector<rt::ExprOperand> ops = {{xt.bytes.data(), false}};
      if (c.rowVector.size() == 2)
        ops.push_back({bt.bytes.data(), true});
      ASSERT_TRUE(rt::createHostLocalOps()
                      ->elementwise(c.e, ops, fused.bytes.data(), 1,
                                    int64_t(x.size()), t)
                      .isOk());
      ASSERT_TRUE(rt::createHostLocalOps({false})
                      ->elementwise(c.e, ops, plain.bytes.data(), 1,
                                    int64_t(x.size()), t)
                      .isOk());
      const std::vector<double> got = fused.read();
      for (size_t i = 0; i < x.size(); ++i) {
        SCOPED_TRACE(c.name + " " + rt::dtypeName(t) + " element " +
                     std::to_string(i));
        EXPECT_EQ(bitsAt(fused, i), bitsAt(plain, i));
        const double v = c.rowVector.size() == 2 ? x[i] + bias[i] : x[i];
        if (std::isnan(v))
          EXPECT_TRUE(std::isnan(got[i]));
        else
          EXPECT_FALSE(std::signbit(got[i])) << got[i];
      }
    }
  }
}

} // namespace
