//===- SumRowsTest.cpp - The sum_rows op: kernel, type rules, plans -------===//
//
// LocalOps::sumRows on the host and shardlin.sum_rows in programs (a bias's
// gradient, docs/training.md):
//  - the host's vectorized sums equal, bit for bit, the scalar loop in the
//    order LocalOps.h states (each column from +0, rows in order, f32
//    accumulator for f16/bf16/f32, f64 for f64, one final rounding), for
//    every pair of types, column counts that are not multiples of the
//    vector width and more columns than one block; and are within the
//    recursive-summation bound of the float64 sum: |s - S| <= (rows u_acc
//    + u_out) sum_i |x_ij| (u_acc = 2^-24 in f32, 2^-53 in f64; u_out the
//    result type's unit roundoff, 0 for an f32 result of f32);
//  - 0 rows give +0, a column of -0 gives +0;
//  - argument and program type rules, the text form;
//  - a program run on 3 ranks whose rows differ per rank (one has none),
//    f16 rows summed into f32.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/exec/LocalOps.h"
#include "shardlin/runtime/program/ProgramText.h"

#include "ProgramEdit.h"
#include "RandomValues.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace rt = shardlin::rt;
using shardlin::rt::test::randomValues;

namespace {

/// The stated order, scalar: what every device must compute.
std::vector<uint8_t> scalarSumRows(const std::vector<uint8_t> &x,
                                   rt::DType from, rt::DType to,
                                   int64_t rows, int64_t cols) {
  std::vector<double> acc64(cols, 0.0);
  std::vector<float> acc32(cols, 0.0f);
  std::vector<double> v(static_cast<size_t>(rows * cols));
  rt::convertToF64(from, x.data(), v.data(), v.size());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      if (from == rt::DType::F64)
        acc64[j] += v[i * cols + j];
      else
        acc32[j] += static_cast<float>(v[i * cols + j]); // exact widening
    }
  std::vector<uint8_t> y(cols * rt::dtypeSize(to));
  if (from == rt::DType::F64) {
    std::memcpy(y.data(), acc64.data(), y.size());
    return y;
  }
  for (int64_t j = 0; j < cols; ++j)
    acc64[j] = acc32[j];
  rt::convertFromF64(to, acc64.data(), y.data(), cols);
  return y;
}

double unitRoundoff(rt::DType t) {
  switch (t) {
  case rt::DType::F16:
    return std::ldexp(1.0, -11);
  case rt::DType::BF16:
    return std::ldexp(1.0, -8);
  case rt::DType::F32:
    return std::ldexp(1.0, -24);
  case rt::DType::F64:
    return std::ldexp(1.0, -53);
  }
  return 1;
}

struct Pair {
  rt::DType from, to;
};
const Pair kPairs[] = {{rt::DType::F64, rt::DType::F64},
                       {rt::DType::F32, rt::DType::F32},
                       {rt::DType::F16, rt::DType::F16},
                       {rt::DType::F16, rt::DType::F32},
                       {rt::DType::BF16, rt::DType::BF16},
                       {rt::DType::BF16, rt::DType::F32}};

TEST(SumRows, HostIsTheStatedOrderBitForBitAndWithinTheBound) {
  std::unique_ptr<rt::LocalOps> ops = rt::createHostLocalOps();
  const struct {
    int64_t rows, cols;
  } sizes[] = {{1, 1}, {7, 37}, {100, 19}, {3, 2051}, {65, 4100}};
  uint64_t seed = 1;
  for (const Pair &p : kPairs)
    for (const auto &sz : sizes) {
      SCOPED_TRACE(std::string(rt::dtypeName(p.from)) + " -> " +
                   rt::dtypeName(p.to) + ", " + std::to_string(sz.rows) +
                   " x " + std::to_string(sz.cols));
      const int64_t n = sz.rows * sz.cols;
      std::vector<float> f = randomValues(n, seed++);
      std::vector<double> v(f.begin(), f.end());
      std::vector<uint8_t> x(n * rt::dtypeSize(p.from));
      rt::convertFromF64(p.from, v.data(), x.data(), n);
      rt::convertToF64(p.from, x.data(), v.data(), n); // the values it holds
      std::vector<uint8_t> y(sz.cols * rt::dtypeSize(p.to), 0xff);
      rt::Status s =
          ops->sumRows(x.data(), p.from, y.data(), p.to, sz.rows, sz.cols);
      ASSERT_TRUE(s) << s.message();
      EXPECT_EQ(y, scalarSumRows(x, p.from, p.to, sz.rows, sz.cols));
      std::vector<double> got(sz.cols);
      rt::convertToF64(p.to, y.data(), got.data(), sz.cols);
      const double uAcc = unitRoundoff(p.from == rt::DType::F64
                                           ? rt::DType::F64
                                           : rt::DType::F32);
      const double uOut = p.to == p.from && p.from != rt::DType::F16 &&
                                  p.from != rt::DType::BF16
                              ? 0.0
                              : unitRoundoff(p.to);
      for (int64_t j = 0; j < sz.cols; ++j) {
        double exact = 0, mag = 0;
        for (int64_t i = 0; i < sz.rows; ++i) {
          exact += v[i * sz.cols + j];
          mag += std::fabs(v[i * sz.cols + j]);
        }
        ASSERT_LE(std::fabs(got[j] - exact), (sz.rows * uAcc + uOut) * mag)
            << "column " << j;
      }
    }
}

TEST(SumRows, NoRowsGiveZerosAndNegativeZerosSumToPlusZero) {
  std::unique_ptr<rt::LocalOps> ops = rt::createHostLocalOps();
  for (const Pair &p : kPairs) {
    std::vector<uint8_t> y(3 * rt::dtypeSize(p.to), 0xff);
    ASSERT_TRUE(ops->sumRows(nullptr, p.from, y.data(), p.to, 0, 3));
    EXPECT_EQ(y, std::vector<uint8_t>(y.size(), 0)) << rt::dtypeName(p.from);
    std::vector<double> minusZero(3, -0.0);
    std::vector<uint8_t> x(3 * rt::dtypeSize(p.from));
    rt::convertFromF64(p.from, minusZero.data(), x.data(), 3);
    ASSERT_TRUE(ops->sumRows(x.data(), p.from, y.data(), p.to, 1, 3));
    EXPECT_EQ(y, std::vector<uint8_t>(y.size(), 0)) << rt::dtypeName(p.from);
  }
}

TEST(SumRows, RejectsOtherTypesAndBadArguments) {
  std::unique_ptr<rt::LocalOps> ops = rt::createHostLocalOps();
  float x[4] = {1, 2, 3, 4};
  double y[2];
  rt::Status s = ops->sumRows(x, rt::DType::F32, y, rt::DType::F64, 2, 2);
  EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument);
  EXPECT_NE(s.message().find("sumRows: no sum of element type"),
            std::string::npos)
      << s.message();
  s = ops->sumRows(x, rt::DType::F16, y, rt::DType::BF16, 2, 2);
  EXPECT_NE(s.message().find("sumRows: no sum"), std::string::npos);
  s = ops->sumRows(x, rt::DType::F32, y, rt::DType::F32, -1, 2);
  EXPECT_EQ(s.message(), "sumRows: negative size -1 x 2");
  s = ops->sumRows(x, rt::DType::F32, nullptr, rt::DType::F32, 2, 2);
  EXPECT_EQ(s.message(), "sumRows: the result is null");
  s = ops->sumRows(nullptr, rt::DType::F32, y, rt::DType::F32, 2, 2);
  EXPECT_EQ(s.message(), "sumRows: the input is null");
  s = ops->sumRows(x, rt::DType::F32, y, rt::DType::F32, INT64_MAX / 2, 4);
  EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument);
  EXPECT_TRUE(ops->sumRows(nullptr, rt::DType::F32, nullptr, rt::DType::F32,
                           5, 0));
}

// Every rank's rows of f16 (a run-time count, 0 on rank 1), summed into
// f32 as a bias's gradient before its sum over ranks.
const char *kBiasGrad = R"(shardlin-program v1
name db
world_size 0
values 2
value 0 f16 2 ? 6
value 1 f32 1 6
arg 0 plain
instr sum_rows result 1 operands 1 0 loc g.mlir:2:9
results 1 1
end
)";

rt::Status parseEdited(const std::string &from, const std::string &to) {
  return rt::testutil::parseEdited(kBiasGrad, from, to);
}

TEST(SumRows, ProgramTextAndTypeRules) {
  rt::Program p;
  rt::Status s = rt::parseProgram(kBiasGrad, p);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(rt::serializeProgram(p), kBiasGrad);
  EXPECT_EQ(p.instrs[0].op, rt::OpCode::SumRows);
  EXPECT_TRUE(parseEdited("value 1 f32 1 6", "value 1 f16 1 6"));
  EXPECT_TRUE(parseEdited("value 1 f32 1 6", "value 1 f32 1 ?"));
  rt::testutil::expectRefused(
      kBiasGrad,
      {{"value 1 f32 1 6", "value 1 f64 1 6",
        "instruction 0 (sum_rows) has a f64 result of a f16 input (the "
        "result has its type, or f32 for f16 and bf16)"},
       {"value 1 f32 1 6", "value 1 f32 1 5",
        "instruction 0 (sum_rows) sums the rows of [?, 6] into [5] (the "
        "result has one element per column)"},
       {"value 1 f32 1 6", "value 1 f32 2 1 6",
        "instruction 0 (sum_rows) needs a rank-2 input and a rank-1 result"},
       {"value 0 f16 2 ? 6", "value 0 f16 3 1 ? 6",
        "instruction 0 (sum_rows) needs a rank-2 input and a rank-1 result"}});
}

TEST(SumRows, RunsOnEveryRankWithItsOwnRows) {
  rt::Program program;
  ASSERT_TRUE(rt::parseProgram(kBiasGrad, program));
  const int w = 3;
  const std::vector<int64_t> rows = {4, 0, 9};
  std::vector<std::vector<uint8_t>> x(w);
  std::vector<std::vector<float>> y(w);
  rt::RankCallbacks callbacks;
  callbacks.argShapes = [&](int rank, std::vector<std::vector<int64_t>> &shapes,
                            std::vector<std::string> &) {
    shapes = {{rows[rank], 6}};
    return rt::Status::ok();
  };
  callbacks.bind = [&](const rt::Plan &plan, rt::RankDevice &,
                       rt::RankBuffers &buffers) {
    const int r = plan.rank();
    std::vector<float> v = randomValues(rows[r] * 6, 40 + r);
    std::vector<double> d(v.begin(), v.end());
    x[r].resize(d.size() * 2 + 1);
    rt::convertFromF64(rt::DType::F16, d.data(), x[r].data(), d.size());
    y[r].assign(6, NAN);
    buffers.args = {x[r].data()};
    buffers.results = {y[r].data()};
    return rt::Status::ok();
  };
  rt::RunOptions options;
  options.worldSize = w;
  rt::Status s = rt::runProgram(program, options, callbacks);
  ASSERT_TRUE(s) << s.message();
  for (int r = 0; r < w; ++r) {
    x[r].pop_back();
    std::vector<uint8_t> want =
        scalarSumRows(x[r], rt::DType::F16, rt::DType::F32, rows[r], 6);
    std::vector<uint8_t> got(6 * sizeof(float));
    std::memcpy(got.data(), y[r].data(), got.size());
    EXPECT_EQ(got, want) << "rank " << r;
  }
}

} // namespace
