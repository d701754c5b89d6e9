//===- ReduceLastTest.cpp - reduce_last and column operands ---------------===//
//
// A norm's rank-local pieces (issue 40): LocalOps::reduceLast on the host
// and shardlin's reduce_last op in programs, and elementwise operands that
// are columns (R x 1, one value per row):
//  - the host's reductions equal, bit for bit, the scalar loop in the
//    order LocalOps.h states (from init, elements in order, f32
//    accumulator for f16/bf16/f32, f64 for f64, one final rounding), for
//    sum, maximum and maxnum, every type; sums within the recursive-summation
//    bound of the float64 sum;
//  - maximum propagates NaN, maxnum skips it, -0 < +0; 0 columns give init;
//  - argument and program rules, the text form;
//  - an RMSNorm program (x * x, reduce_last, rsqrt(sum / n), x times that
//    column) run on 3 ranks whose rows differ (one has none), f32 and f16,
//    every rank against the float64 reference.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/exec/LocalOps.h"
#include "shardlin/runtime/program/OpTable.h"
#include "shardlin/runtime/program/ProgramText.h"

#include "ProgramEdit.h"
#include "RandomValues.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace rt = shardlin::rt;
using shardlin::rt::test::randomValues;

namespace {

const rt::DType kTypes[] = {rt::DType::F64, rt::DType::F32, rt::DType::F16,
                            rt::DType::BF16};
const rt::ExprOp kCombines[] = {rt::ExprOp::Add, rt::ExprOp::Maximum,
                                rt::ExprOp::MaxNum};

/// The stated combination and order, scalar, in the accumulator type C.
template <typename C> C combine(rt::ExprOp op, C x, C acc) {
  if (op == rt::ExprOp::Add)
    return x + acc;
  if (std::isnan(x) || std::isnan(acc)) {
    if (op == rt::ExprOp::Maximum)
      return std::numeric_limits<C>::quiet_NaN();
    return std::isnan(x) ? acc : x;
  }
  if (x == acc)
    return std::signbit(x) ? acc : x;
  return x > acc ? x : acc;
}

std::vector<double> scalarReduce(rt::ExprOp op, const std::vector<double> &x,
                                 const std::vector<double> &init, rt::DType t,
                                 int64_t rows, int64_t cols) {
  std::vector<double> y(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) {
    if (t == rt::DType::F64) {
      double acc = init[i];
      for (int64_t j = 0; j < cols; ++j)
        acc = combine<double>(op, x[i * cols + j], acc);
      y[i] = acc;
    } else {
      float acc = static_cast<float>(init[i]);
      for (int64_t j = 0; j < cols; ++j)
        acc = combine<float>(op, static_cast<float>(x[i * cols + j]), acc);
      y[i] = acc;
    }
  }
  // Rounded once to the type.
  std::vector<uint8_t> bytes(y.size() * rt::dtypeSize(t));
  rt::convertFromF64(t, y.data(), bytes.data(), y.size());
  rt::convertToF64(t, bytes.data(), y.data(), y.size());
  return y;
}

/// `v` stored in `t`, and the values it then holds.
std::vector<uint8_t> store(rt::DType t, std::vector<double> &v) {
  std::vector<uint8_t> bytes(v.size() * rt::dtypeSize(t) + 1);
  rt::convertFromF64(t, v.data(), bytes.data(), v.size());
  rt::convertToF64(t, bytes.data(), v.data(), v.size());
  return bytes;
}

bool sameBits(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
}

TEST(ReduceLast, HostIsTheStatedOrderBitForBitAndSumsWithinTheBound) {
  std::unique_ptr<rt::LocalOps> ops = rt::createHostLocalOps();
  const struct {
    int64_t rows, cols;
  } sizes[] = {{1, 1}, {7, 37}, {100, 19}, {3, 2051}};
  uint64_t seed = 1;
  for (rt::DType t : kTypes)
    for (rt::ExprOp op : kCombines)
      for (const auto &sz : sizes) {
        SCOPED_TRACE(std::string(rt::dtypeName(t)) + " " + rt::exprOpName(op) +
                     ", " + std::to_string(sz.rows) + " x " +
                     std::to_string(sz.cols));
        std::vector<float> f = randomValues(sz.rows * sz.cols, seed++);
        std::vector<double> x(f.begin(), f.end());
        std::vector<float> g = randomValues(sz.rows, seed++);
        std::vector<double> init(g.begin(), g.end());
        std::vector<uint8_t> xb = store(t, x), ib = store(t, init);
        std::vector<uint8_t> yb(sz.rows * rt::dtypeSize(t), 0xff);
        rt::Status s = ops->reduceLast(op, xb.data(), ib.data(), yb.data(),
                                       sz.rows, sz.cols, t);
        ASSERT_TRUE(s) << s.message();
        std::vector<double> got(sz.rows);
        rt::convertToF64(t, yb.data(), got.data(), got.size());
        std::vector<double> want =
            scalarReduce(op, x, init, t, sz.rows, sz.cols);
        const double uAcc =
            t == rt::DType::F64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
        const double uOut = t == rt::DType::F16    ? std::ldexp(1.0, -11)
                            : t == rt::DType::BF16 ? std::ldexp(1.0, -8)
                                                   : 0.0;
        for (int64_t i = 0; i < sz.rows; ++i) {
          ASSERT_TRUE(sameBits(got[i], want[i]))
              << "row " << i << ": " << got[i] << " vs " << want[i];
          double exact = init[i], mag = std::fabs(init[i]);
          double most = init[i];
          for (int64_t j = 0; j < sz.cols; ++j) {
            exact += x[i * sz.cols + j];
            mag += std::fabs(x[i * sz.cols + j]);
            most = std::max(most, x[i * sz.cols + j]);
          }
          if (op == rt::ExprOp::Add)
            ASSERT_LE(std::fabs(got[i] - exact),
                      ((sz.cols + 1) * uAcc + uOut) * mag)
                << "row " << i;
          else
            ASSERT_EQ(got[i], most) << "row " << i; // exact: no rounding
        }
      }
}

TEST(ReduceLast, NaNsSignedZerosAndNoColumns) {
  std::unique_ptr<rt::LocalOps> ops = rt::createHostLocalOps();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float x[6] = {1.0f, nan, 3.0f, -0.0f, -0.0f, -0.0f};
  const float init[2] = {-5.0f, 0.0f};
  float y[2];
  ASSERT_TRUE(
      ops->reduceLast(rt::ExprOp::Maximum, x, init, y, 2, 3, rt::DType::F32));
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], 0.0f);
  EXPECT_FALSE(std::signbit(y[1])); // max(-0, +0) = +0
  ASSERT_TRUE(
      ops->reduceLast(rt::ExprOp::MaxNum, x, init, y, 2, 3, rt::DType::F32));
  EXPECT_EQ(y[0], 3.0f);
  ASSERT_TRUE(
      ops->reduceLast(rt::ExprOp::Add, x, init, y, 2, 3, rt::DType::F32));
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_FALSE(std::signbit(y[1])); // +0 + -0 + -0 + -0 = +0
  // No columns: the init; in place (y == init).
  float inPlace[2] = {2.5f, -1.0f};
  ASSERT_TRUE(ops->reduceLast(rt::ExprOp::Add, nullptr, inPlace, inPlace, 2, 0,
                              rt::DType::F32));
  EXPECT_EQ(inPlace[0], 2.5f);
  EXPECT_EQ(inPlace[1], -1.0f);
}

TEST(ReduceLast, RejectsBadArguments) {
  std::unique_ptr<rt::LocalOps> ops = rt::createHostLocalOps();
  float x[4] = {1, 2, 3, 4}, init[2] = {0, 0}, y[2];
  rt::Status s =
      ops->reduceLast(rt::ExprOp::Mul, x, init, y, 2, 2, rt::DType::F32);
  EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument);
  EXPECT_EQ(s.message(),
            "reduceLast: no reduction by mul (add, maximum or maxnum)");
  s = ops->reduceLast(rt::ExprOp::Add, x, init, y, -1, 2, rt::DType::F32);
  EXPECT_EQ(s.message(), "reduceLast: negative size -1 x 2");
  s = ops->reduceLast(rt::ExprOp::Add, x, nullptr, y, 2, 2, rt::DType::F32);
  EXPECT_EQ(s.message(), "reduceLast: the init is null");
  s = ops->reduceLast(rt::ExprOp::Add, nullptr, init, y, 2, 2, rt::DType::F32);
  EXPECT_EQ(s.message(), "reduceLast: the input is null");
  EXPECT_TRUE(ops->reduceLast(rt::ExprOp::Add, nullptr, nullptr, nullptr, 0, 5,
                              rt::DType::F32));
}

// RMSNorm of each rank's rows: s = sum_j x^2 (reduce_last from a zero
// fill), r = rsqrt(s / 7) (a ? x 1 elementwise), y = x * r (r a column).
const char *kRms = R"(shardlin-program v1
name rms
world_size 0
values 6
value 0 f32 2 ? 7
value 1 f32 2 ? 7
value 2 f32 2 ? 1
value 3 f32 2 ? 1
value 4 f32 2 ? 1
value 5 f32 2 ? 7
arg 0 plain
instr elementwise result 1 operands 1 0 expr 3 input 0 input 0 mul 0 1 loc n.mlir:1:1
instr fill result 2 operands 1 0 expr 1 const 0x0p+0 loc n.mlir:2:1
instr reduce_last result 3 operands 2 1 2 expr 3 input 0 input 1 add 0 1 loc n.mlir:3:1
instr elementwise result 4 operands 1 3 expr 4 input 0 const 0x1.cp+2 div 0 1 rsqrt 2 loc n.mlir:4:1
instr elementwise result 5 operands 2 0 4 expr 3 input 0 input 1 mul 0 1 loc n.mlir:5:1
results 1 5
end
)";

TEST(ReduceLast, ProgramTextAndRules) {
  rt::Program p;
  rt::Status s = rt::parseProgram(kRms, p);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(rt::serializeProgram(p), kRms);
  EXPECT_EQ(p.instrs[2].op, rt::OpCode::ReduceLast);
  EXPECT_EQ(rt::reduceLastCombiner(p.instrs[2].expr), rt::ExprOp::Add);
  // A column of a result with static rows; the other combinations.
  EXPECT_TRUE(rt::testutil::parseEdited(kRms, "value 5 f32 2 ? 7",
                                        "value 5 f32 2 3 7"));
  EXPECT_TRUE(rt::testutil::parseEdited(kRms, "input 1 add 0 1 loc n.mlir:3:1",
                                        "input 1 maxnum 1 0 loc n.mlir:3:1"));
  EXPECT_TRUE(rt::testutil::parseEdited(kRms, "input 1 add 0 1 loc n.mlir:3:1",
                                        "input 1 maximum 0 1 loc n.mlir:3:1"));
  rt::testutil::expectRefused(
      kRms,
      {{"input 1 add 0 1 loc n.mlir:3:1", "input 1 mul 0 1 loc n.mlir:3:1",
        "instruction 2 (reduce_last): the combination is not one of add, "
        "maximum, maxnum (input 0 the element, input 1 the accumulator)"},
       {"value 3 f32 2 ? 1", "value 3 f32 2 ? 2",
        "instruction 2 (reduce_last): the init [?, 1] and the result [?, 2] "
        "differ"}});
}

void runRms(rt::DType t) {
  SCOPED_TRACE(rt::dtypeName(t));
  std::string text = kRms;
  if (t != rt::DType::F32)
    for (size_t at = text.find(" f32 "); at != std::string::npos;
         at = text.find(" f32 ", at))
      text.replace(at, 5, std::string(" ") + rt::dtypeName(t) + " ");
  rt::Program program;
  rt::Status parsed = rt::parseProgram(text, program);
  ASSERT_TRUE(parsed) << parsed.message();
  const int w = 3;
  const std::vector<int64_t> rows = {4, 0, 9};
  std::vector<std::vector<double>> x(w);
  std::vector<std::vector<uint8_t>> xb(w), yb(w);
  rt::RankCallbacks callbacks;
  callbacks.argShapes = [&](int rank, std::vector<std::vector<int64_t>> &shapes,
                            std::vector<std::string> &) {
    shapes = {{rows[rank], 7}};
    return rt::Status::ok();
  };
  callbacks.bind = [&](const rt::Plan &plan, rt::RankDevice &,
                       rt::RankBuffers &buffers) {
    const int r = plan.rank();
    std::vector<float> v = randomValues(rows[r] * 7, 60 + r);
    x[r].assign(v.begin(), v.end());
    xb[r] = store(t, x[r]);
    yb[r].assign(rows[r] * 7 * rt::dtypeSize(t) + 1, 0);
    buffers.args = {xb[r].data()};
    buffers.results = {yb[r].data()};
    return rt::Status::ok();
  };
  rt::RunOptions options;
  options.worldSize = w;
  rt::Status s = rt::runProgram(program, options, callbacks);
  ASSERT_TRUE(s) << s.message();
  // f32: the sum of 7 squares, a division, rsqrt and a product, each within
  // a few 2^-24; f16/bf16 round x^2 and y once more in their type.
  const double bound = t == rt::DType::F32   ? 1e-6
                       : t == rt::DType::F16 ? 4e-3
                                             : 3e-2;
  for (int r = 0; r < w; ++r) {
    std::vector<double> y(rows[r] * 7);
    rt::convertToF64(t, yb[r].data(), y.data(), y.size());
    for (int64_t i = 0; i < rows[r]; ++i) {
      double ss = 0;
      for (int j = 0; j < 7; ++j)
        ss += x[r][i * 7 + j] * x[r][i * 7 + j];
      const double inv = 1.0 / std::sqrt(ss / 7.0);
      for (int j = 0; j < 7; ++j) {
        const double want = x[r][i * 7 + j] * inv;
        ASSERT_LE(std::fabs(y[i * 7 + j] - want), bound * (1 + std::fabs(want)))
            << "rank " << r << " row " << i << " col " << j;
      }
    }
  }
}

TEST(ReduceLast, RmsNormProgramRunsOnEveryRankWithItsOwnRows) {
  runRms(rt::DType::F32);
  runRms(rt::DType::F16);
  runRms(rt::DType::BF16);
}

} // namespace
