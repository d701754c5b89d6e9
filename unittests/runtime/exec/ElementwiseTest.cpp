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
// VectorMath's accuracy (exp, log, tanh, erf in f32) is
// measured over dense sweeps against the double libm, edges and special
// values included. A Plan on the threads backend (W = 2) runs a program
// using the op, every rank checked; the op's and validateExpr's errors are
// checked with their codes and messages.
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

/// Random values in [lo, hi] with |x| >= 1/16 (non-zero).
std::vector<double> randomValues(size_t n, double lo, double hi,
                                 unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(n);
  for (double &x : v) {
    do
      x = dist(gen);
    while (std::fabs(x) < 1.0 / 16);
  }
  return v;
}

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

//===----------------------------------------------------------------------===//
// VectorMath: the f32 exp, log, tanh, erf over dense sweeps
//===----------------------------------------------------------------------===//

float asFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

/// Evaluates one f32 function of the host kernels over `x`.
std::vector<float> evalF32(ExprOp op, const std::vector<float> &x) {
  Builder b;
  b.op(op, b.input(0));
  std::vector<float> y(x.size());
  std::unique_ptr<rt::LocalOps> host = rt::createHostLocalOps();
  rt::Status s = host->elementwise(b.p, {{x.data()}}, y.data(), 1,
                                   int64_t(x.size()), DType::F32);
  EXPECT_TRUE(s.isOk()) << s.message();
  return y;
}

/// A dense grid of [lo, hi] (2^20 steps), plus every 251st float bit
/// pattern in it (so every binade, subnormals included, is sampled).
std::vector<float> sweep(float lo, float hi) {
  std::vector<float> x;
  for (float v = lo; v <= hi; v += (hi - lo) / (1 << 20))
    x.push_back(v);
  for (int sign = 0; sign < 2; ++sign)
    for (uint32_t u = 0; u < 0x7f800000u; u += 251) {
      const float f = sign ? -asFloat(u) : asFloat(u);
      if (f >= lo && f <= hi)
        x.push_back(f);
    }
  return x;
}

/// Below FLT_MIN results are subnormal: errors there are absolute, within
/// one subnormal step (2^-149).
constexpr double kFltMin = 1.1754943508222875e-38;
constexpr double kSubnormalStep = 1.401298464324817e-45;

struct Accuracy {
  double maxRel = 0, maxAbs = 0;
  float worstX = 0;
};

/// Errors of op(x) against libm's double function: relative where
/// |ref| >= absBelow, absolute below.
Accuracy measure(ExprOp op, const std::vector<float> &x,
                 double (*f)(double), double absBelow);

/// Prints what was measured (the bounds in VectorMath.h come from these).
void print(const char *what, const Accuracy &a) {
  std::printf("%s: max relative error %.3g (at %.9g), max absolute %.3g\n",
              what, a.maxRel, a.worstX, a.maxAbs);
}

Accuracy measure(ExprOp op, const std::vector<float> &x,
                 double (*f)(double), double absBelow) {
  const std::vector<float> y = evalF32(op, x);
  Accuracy a;
  for (size_t i = 0; i < x.size(); ++i) {
    const double ref = f(x[i]);
    const double err = std::fabs(double(y[i]) - ref);
    if (std::fabs(ref) < absBelow) {
      a.maxAbs = std::max(a.maxAbs, err);
    } else if (err / std::fabs(ref) > a.maxRel) {
      a.maxRel = err / std::fabs(ref);
      a.worstX = x[i];
    }
  }
  return a;
}

TEST(VectorMath, ExpAccuracyAndEdges) {
  // Normal results: x in [ln(FLT_MIN), ln(FLT_MAX)].
  Accuracy a = measure(ExprOp::Exp, sweep(-87.33f, 88.72f),
                       [](double v) { return std::exp(v); }, 0);
  print("exp", a);
  EXPECT_LE(a.maxRel, 3e-7) << "worst at " << a.worstX;
  // Subnormal results: within a few subnormal steps.
  a = measure(ExprOp::Exp, sweep(-103.9f, -87.4f),
              [](double v) { return std::exp(v); }, kFltMin);
  print("exp, subnormal results", a);
  EXPECT_LE(a.maxAbs, kSubnormalStep);
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> edges = {88.73f, 100.0f, inf, -104.0f, -200.0f,
                                    -inf, std::nanf(""), 0.0f, -0.0f};
  const std::vector<float> y = evalF32(ExprOp::Exp, edges);
  EXPECT_EQ(y[0], inf);
  EXPECT_EQ(y[1], inf);
  EXPECT_EQ(y[2], inf);
  EXPECT_EQ(y[3], 0.0f);
  EXPECT_EQ(y[4], 0.0f);
  EXPECT_EQ(y[5], 0.0f);
  EXPECT_TRUE(std::isnan(y[6]));
  EXPECT_EQ(y[7], 1.0f);
  EXPECT_EQ(y[8], 1.0f);
}

TEST(VectorMath, LogAccuracyAndEdges) {
  // Every positive float pattern (subnormals included), and near 1 where
  // the result goes through zero: absolute there.
  Accuracy a = measure(ExprOp::Log, sweep(1e-45f, 3.4e38f),
                       [](double v) { return std::log(v); }, 0.01);
  print("log", a);
  EXPECT_LE(a.maxRel, 3e-7) << "worst at " << a.worstX;
  EXPECT_LE(a.maxAbs, 1e-8);
  a = measure(ExprOp::Log, sweep(0.9f, 1.1f),
              [](double v) { return std::log(v); }, 0.01);
  print("log near 1", a);
  EXPECT_LE(a.maxAbs, 1e-8);
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> edges = {0.0f, -0.0f, -1.0f, -inf, inf,
                                    std::nanf(""), 1.0f};
  const std::vector<float> y = evalF32(ExprOp::Log, edges);
  EXPECT_EQ(y[0], -inf);
  EXPECT_EQ(y[1], -inf);
  EXPECT_TRUE(std::isnan(y[2]));
  EXPECT_TRUE(std::isnan(y[3]));
  EXPECT_EQ(y[4], inf);
  EXPECT_TRUE(std::isnan(y[5]));
  EXPECT_EQ(y[6], 0.0f);
}

TEST(VectorMath, TanhAccuracyAndEdges) {
  Accuracy a = measure(ExprOp::Tanh, sweep(-20.0f, 20.0f),
                       [](double v) { return std::tanh(v); }, kFltMin);
  print("tanh", a);
  EXPECT_LE(a.maxRel, 4e-7) << "worst at " << a.worstX;
  EXPECT_LE(a.maxAbs, kSubnormalStep);
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> edges = {inf, -inf, 50.0f, -50.0f, -0.0f,
                                    std::nanf(""), 1e-30f};
  const std::vector<float> y = evalF32(ExprOp::Tanh, edges);
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[1], -1.0f);
  EXPECT_EQ(y[2], 1.0f);
  EXPECT_EQ(y[3], -1.0f);
  EXPECT_EQ(y[4], 0.0f);
  EXPECT_TRUE(std::signbit(y[4]));
  EXPECT_TRUE(std::isnan(y[5]));
  EXPECT_EQ(y[6], 1e-30f);
}

TEST(VectorMath, ErfAccuracyAndEdges) {
  Accuracy a = measure(ExprOp::Erf, sweep(-10.0f, 10.0f),
                       [](double v) { return std::erf(v); }, kFltMin);
  print("erf", a);
  EXPECT_LE(a.maxRel, 4e-7) << "worst at " << a.worstX;
  EXPECT_LE(a.maxAbs, kSubnormalStep);
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> edges = {inf, -inf, 4.5f, -0.0f, std::nanf(""),
                                    1e-30f};
  const std::vector<float> y = evalF32(ExprOp::Erf, edges);
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[1], -1.0f);
  EXPECT_EQ(y[2], 1.0f);
  EXPECT_TRUE(std::signbit(y[3]));
  EXPECT_TRUE(std::isnan(y[4]));
  EXPECT_NEAR(y[5], 1.1283791670955126e-30, 1e-37);
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

void expectInvalid(const rt::ExprProgram &e, size_t operands,
                   const std::string &message) {
  rt::Status s = rt::validateExpr(e, operands, "elementwise");
  EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument) << message;
  EXPECT_EQ(s.message(), message);
}

TEST(Elementwise, ValidateExprErrors) {
  expectInvalid({}, 1, "elementwise has an empty expression");
  {
    Builder b;
    const int x = b.input(0);
    for (int i = 0; i < 64; ++i)
      b.op(ExprOp::Neg, x);
    expectInvalid(b.p, 1,
                  "elementwise has an expression of 65 nodes (at most 64)");
  }
  {
    Builder b;
    b.op(ExprOp::Add, b.input(0), 1);
    expectInvalid(b.p, 1,
                  "elementwise: expression node 1 (add): arg 1 refers to "
                  "node 1, not an earlier node");
  }
  {
    Builder b;
    b.op(ExprOp::Neg, b.input(0), 0);
    expectInvalid(b.p, 1,
                  "elementwise: expression node 1 (neg): arg 1 is 0 but the "
                  "op takes 1 (unused args must be -1)");
  }
  {
    Builder b;
    b.input(2);
    expectInvalid(b.p, 2,
                  "elementwise: expression node 0 (input): reads operand 2 "
                  "but the op has 2 operands");
  }
  {
    Builder b;
    const int x = b.input(0);
    b.op(ExprOp::Add, b.cmp(CmpPredicate::OLT, x, x), x);
    expectInvalid(b.p, 1,
                  "elementwise: expression node 2 (add): arg 0 is the "
                  "boolean node 1 (only a select's condition may be a "
                  "boolean)");
  }
  {
    Builder b;
    const int x = b.input(0);
    b.op(ExprOp::Select, x, x, x);
    expectInvalid(b.p, 1,
                  "elementwise: expression node 1 (select): the condition "
                  "(arg 0) is node 0 (input), not a boolean (a cmp)");
  }
  {
    Builder b;
    const int x = b.input(0);
    b.cmp(CmpPredicate::OLT, x, x);
    expectInvalid(b.p, 1,
                  "elementwise: the result (expression node 1) is a boolean; "
                  "select on it");
  }
  {
    Builder b;
    b.op(static_cast<ExprOp>(77), b.input(0));
    expectInvalid(b.p, 1,
                  "elementwise: expression node 1 (op 77): unknown op");
  }
}

TEST(Elementwise, KernelRefusesBadArguments) {
  Builder b;
  b.op(ExprOp::Exp, b.input(0));
  std::unique_ptr<rt::LocalOps> host = rt::createHostLocalOps();
  float x[4] = {1, 2, 3, 4}, y[4];
  rt::Status s = host->elementwise(b.p, {{x}}, y, -1, 4, DType::F32);
  EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument);
  EXPECT_EQ(s.message(), "elementwise: negative size -1 x 4");
  s = host->elementwise(b.p, {{nullptr}}, y, 1, 4, DType::F32);
  EXPECT_EQ(s.message(), "elementwise: operand 0 is null");
  s = host->elementwise(b.p, {}, y, 1, 4, DType::F32);
  EXPECT_EQ(s.message(), "elementwise: expression node 0 (input): reads "
                         "operand 0 but the op has 0 operands");
  s = host->elementwise(b.p, {{x}}, y, INT64_MAX, 4, DType::F32);
  EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument);
}

//===----------------------------------------------------------------------===//
// The op in a program: text form, validation, a plan on threads
//===----------------------------------------------------------------------===//

// Each rank: h = gelu-tanh(x * s + b) over its 3 x 5 rows (s, b row
// vectors), r = select(h ugt 0, h, 0) (in place over h), then the ranks'
// rows gathered: a 6 x 5 result on every rank.
const char *kBlockW2 = R"(shardlin-program v1
name main
world_size 2
values 6
value 0 f32 2 3 5
value 1 f32 1 5
value 2 f32 1 5
value 3 f32 2 3 5
value 4 f32 2 3 5
value 5 f32 2 6 5
arg 0 plain
arg 1 plain
arg 2 plain
instr elementwise result 3 operands 3 0 1 2 expr 18 input 0 input 1 mul 0 1 input 2 add 2 3 mul 4 4 mul 5 4 const 0x1.6e4e26d4801f7p-5 mul 7 6 add 4 8 const 0x1.9884533d43651p-1 mul 10 9 tanh 11 const 0x1p+0 add 13 12 const 0x1p-1 mul 15 4 mul 16 14 loc blk.mlir:3:8
instr elementwise result 4 operands 1 3 expr 4 input 0 const 0x0p+0 cmp ugt 0 1 select 2 0 1 loc blk.mlir:4:8
instr all_gather result 5 operands 1 4 chunk 0 2 0 1 loc blk.mlir:5:8
results 1 5
end
)";

TEST(ElementwiseProgram, TextRoundTripsConstantsBitExact) {
  rt::Program p;
  rt::Status s = rt::parseProgram(kBlockW2, p);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(rt::serializeProgram(p), kBlockW2);
  ASSERT_EQ(p.instrs[0].expr.nodes.size(), 18u);
  EXPECT_EQ(p.instrs[1].expr.nodes[2].predicate, CmpPredicate::UGT);
  // Constants of every kind read back bit for bit.
  const double nanPayload = [] {
    uint64_t u = 0x7ff4000000000123ull;
    double d;
    std::memcpy(&d, &u, sizeof(d));
    return d;
  }();
  const double values[] = {0.0,
                           -0.0,
                           1.5,
                           -0.044715,
                           0.7978845608028654,
                           std::numeric_limits<double>::denorm_min(),
                           std::numeric_limits<double>::max(),
                           std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN(),
                           -std::numeric_limits<double>::quiet_NaN(),
                           nanPayload};
  rt::Instr &in = p.instrs[1];
  in.expr.nodes.resize(2);
  in.expr.nodes.back().op = ExprOp::Neg;
  in.expr.nodes.back().args[0] = 0;
  for (double v : values) {
    rt::ExprNode c;
    c.op = ExprOp::Const;
    c.value = v;
    in.expr.nodes.insert(in.expr.nodes.end() - 1, c);
  }
  in.expr.nodes.back().args[0] = 0;
  ASSERT_TRUE(p.validate().isOk()) << p.validate().message();
  const std::string text = rt::serializeProgram(p);
  EXPECT_NE(text.find("const -0x0p+0 const 0x1.8p+0"), std::string::npos)
      << text;
  EXPECT_NE(text.find("const inf const -inf const nan const -nan const "
                      "nan(0x7ff4000000000123)"),
            std::string::npos)
      << text;
  rt::Program back;
  s = rt::parseProgram(text, back);
  ASSERT_TRUE(s.isOk()) << s.message();
  for (size_t i = 0; i < in.expr.nodes.size(); ++i) {
    uint64_t a, b;
    std::memcpy(&a, &in.expr.nodes[i].value, 8);
    std::memcpy(&b, &back.instrs[1].expr.nodes[i].value, 8);
    EXPECT_EQ(a, b) << "node " << i;
  }
  EXPECT_EQ(rt::serializeProgram(back), text);
}

rt::Status parseEdited(const std::string &from, const std::string &to) {
  return rt::testutil::parseEdited(kBlockW2, from, to);
}

TEST(ElementwiseProgram, TextAndValidationErrors) {
  rt::Status s = parseEdited("const 0x0p+0", "const 0.5.1");
  EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument);
  EXPECT_EQ(s.message(), "program line 15: bad expression constant '0.5.1' "
                         "(expected a hex float such as 0x1.8p+1, inf or nan)");
  // validateExpr through the op's verify.
  s = parseEdited("select 2 0 1", "select 0 0 1");
  EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument);
  rt::testutil::expectRefused(
      kBlockW2,
      {{"cmp ugt", "cmp ugtx",
        "program line 15: unknown comparison predicate 'ugtx'"},
       {"tanh 11", "cosh 11", "program line 14: unknown expression op 'cosh'"},
       {"expr 4 input", "expr 65 input",
        "program line 15: integer 65 out of range"},
       {"select 2 0 1", "select 0 0 1",
        "instruction 1 (elementwise): expression node 3 (select): the "
        "condition (arg 0) is node 0 (input), not a boolean (a cmp)"},
       // Shapes: a row vector of the wrong length, an operand of another
       // shape, no full operand.
       {"value 1 f32 1 5", "value 1 f32 1 4",
        "instruction 0 (elementwise) operand 1 [4] is a row vector of 4 "
        "elements but the result [3, 5] has rows of 5"},
       {"value 1 f32 1 5", "value 1 f32 2 5 1",
        "instruction 0 (elementwise) operand 1 [5, 1] differs from the "
        "result [3, 5] in dim 0"},
       {"operands 3 0 1 2 expr", "operands 3 1 1 2 expr",
        "instruction 0 (elementwise) needs an operand of the result's shape "
        "[3, 5] (all its operands are row vectors)"},
       {"value 2 f32 1 5", "value 2 f64 1 5",
        "instruction 0 (elementwise) mixes element types"}});
}

TEST(ElementwiseProgram, ResolveChecksRankDependentShapes) {
  // Full operands with dynamic dims must agree on each rank: here one is a
  // rank's chunk of 5 rows (3 or 2) and the other 3 rows on every rank.
  const char *text = R"(shardlin-program v1
name main
world_size 2
values 4
value 0 f32 2 ? 4
value 1 f32 2 3 4
value 2 f32 2 ? 4
value 3 f32 2 ? 4
arg 0 sharded 2 5 4 spec 0 2 0 1
arg 1 plain
instr local_shard result 2 operands 1 0 loc a:1:1
instr elementwise result 3 operands 2 2 1 expr 3 input 0 input 1 add 0 1 loc a:2:1
results 1 3
end
)";
  rt::Program p;
  ASSERT_TRUE(rt::parseProgram(text, p).isOk());
  std::unique_ptr<rt::Plan> plan;
  EXPECT_TRUE(rt::Plan::build(p, 0, 2, rt::hostAllocator(), plan).isOk());
  rt::Status s = rt::Plan::build(p, 1, 2, rt::hostAllocator(), plan);
  EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument);
  EXPECT_EQ(s.message(), "a:2:1: shardlin.elementwise: on rank 1 operand 1 "
                         "is [3, 4] but operand 0 is [2, 4]");
}

TEST(ElementwiseProgram, PlanOnThreadsEveryRank) {
  rt::Program p;
  ASSERT_TRUE(rt::parseProgram(kBlockW2, p).isOk());
  const int w = 2;
  std::vector<std::vector<float>> x(w), out(w);
  const std::vector<float> scale = [] {
    std::vector<double> d = randomValues(5, -2, 2, 41);
    return std::vector<float>(d.begin(), d.end());
  }();
  const std::vector<float> bias = [] {
    std::vector<double> d = randomValues(5, -1, 1, 42);
    return std::vector<float>(d.begin(), d.end());
  }();
  for (int r = 0; r < w; ++r) {
    std::vector<double> d = randomValues(15, -3, 3, 50 + r);
    x[r].assign(d.begin(), d.end());
    out[r].assign(30, std::nanf(""));
  }
  rt::RankCallbacks callbacks;
  callbacks.bind = [&](const rt::Plan &plan, rt::RankDevice &,
                       rt::RankBuffers &buffers) {
    const int r = plan.rank();
    buffers.args = {x[r].data(), scale.data(), bias.data()};
    buffers.results = {out[r].data()};
    return rt::Status::ok();
  };
  rt::RunOptions options;
  options.worldSize = w;
  options.blasThreads = 1;
  std::vector<rt::RankResult> ranks;
  rt::Status s = rt::runProgram(p, options, callbacks, &ranks);
  ASSERT_TRUE(s.isOk()) << s.message();
  for (int r = 0; r < w; ++r)
    for (int src = 0; src < w; ++src)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 5; ++j) {
          const double v = double(x[src][i * 5 + j]) * scale[j] + bias[j];
          const double h =
              0.5 * v *
              (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
          const double ref = h > 0 ? h : 0;
          EXPECT_NEAR(out[r][(src * 3 + i) * 5 + j], ref,
                      4e-6 * std::fabs(ref) + 1e-6)
              << "rank " << r << ", row " << src * 3 + i << ", col " << j;
        }
}

TEST(ElementwiseProgram, TheOpInTheTable) {
  const rt::OpInfo *info = rt::findOpByMnemonic("elementwise");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->op, rt::OpCode::Elementwise);
  EXPECT_TRUE(info->irOps.empty());
  EXPECT_EQ(info->minOperands, 1u);
  EXPECT_EQ(info->maxOperands, rt::kMaxExprNodes);
  // fill takes the most: a value to size its dynamic dims by, and the
  // expression's inputs.
  EXPECT_EQ(rt::maxOperandsOfAnyOp(), rt::kMaxExprNodes + 1);
  for (size_t i = 0; i < rt::kNumExprOps; ++i) {
    const ExprOp op = static_cast<ExprOp>(i);
    EXPECT_EQ(rt::parseExprOp(rt::exprOpName(op)), op);
  }
  for (size_t i = 0; i < rt::kNumCmpPredicates; ++i) {
    const CmpPredicate p = static_cast<CmpPredicate>(i);
    EXPECT_EQ(rt::parseCmpPredicate(rt::cmpPredicateName(p)), p);
  }
}

} // namespace
