//===- VectorMathTest.cpp - The f32 exp, log, tanh, erf of the host kernels ===//
//
// VectorMath's accuracy (exp, log, tanh, erf in f32, which the host
// elementwise kernels use) measured over dense sweeps against the double
// libm, edges and special values included; the bounds in VectorMath.h come
// from these figures. Split from ElementwiseTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "ExprTestSupport.h"

#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/base/Expr.h"
#include "shardlin/runtime/exec/LocalOps.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace rt = shardlin::rt;
using rt::CmpPredicate;
using rt::DType;
using rt::ExprOp;
using shardlin::rt::testing::Builder;

namespace {

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

} // namespace
