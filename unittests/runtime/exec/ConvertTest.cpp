//===- ConvertTest.cpp - The convert op and gemm's f32 result --------------===//
//
// The pieces that keep a K split's f16/bf16 partial sums in f32 until the
// reduction (docs/lowering.md, "In which type partial sums are reduced"):
// LocalOps::convert on the host and the program-level type rules of convert
// and of gemm's f32 result. The GEMM itself is in GemmSuite.cpp (F32Result).
//
// Bound: f32 -> f16/bf16 rounds to nearest, so |y - x| <= u |x| for x in the
// normal range (u = 2^-11 f16, 2^-8 bf16), and a value beyond the largest
// finite one becomes an infinity of its sign; f16/bf16 -> f32 is exact.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/program/ProgramText.h"
#include "shardlin/runtime/exec/LocalOps.h"
#include "shardlin/runtime/program/Program.h"

#include "ProgramEdit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace rt = shardlin::rt;

namespace {

TEST(Convert, HostNarrowsWithinHalfAnUlpAndWidensExactly) {
  std::unique_ptr<rt::LocalOps> ops = rt::createHostLocalOps();
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> mag(0.5, 60000.0);
  std::bernoulli_distribution neg(0.5);
  for (rt::DType t : {rt::DType::F16, rt::DType::BF16}) {
    SCOPED_TRACE(rt::dtypeName(t));
    const double u = std::ldexp(1.0, t == rt::DType::F16 ? -11 : -8);
    std::vector<float> x(1000);
    for (float &v : x)
      v = float(neg(rng) ? -mag(rng) : mag(rng));
    x[0] = 65536.0f; // beyond f16's 65504: inf in f16, 65536 in bf16
    x[1] = -70000.0f;
    std::vector<uint16_t> y(x.size());
    ASSERT_TRUE(ops->convert(x.data(), rt::DType::F32, y.data(), t,
                             int64_t(x.size()))
                    .isOk());
    std::vector<double> got(x.size());
    rt::convertToF64(t, y.data(), got.data(), got.size());
    for (size_t i = 0; i < x.size(); ++i) {
      if (t == rt::DType::F16 && std::fabs(x[i]) > 65520.0) {
        EXPECT_TRUE(std::isinf(got[i]) && (got[i] < 0) == (x[i] < 0))
            << i << ": " << x[i] << " -> " << got[i];
        continue;
      }
      EXPECT_LE(std::fabs(got[i] - double(x[i])), u * std::fabs(double(x[i])))
          << i << ": " << x[i] << " -> " << got[i];
    }
    // Back to f32: exactly the narrow values.
    std::vector<float> back(x.size());
    ASSERT_TRUE(ops->convert(y.data(), t, back.data(), rt::DType::F32,
                             int64_t(x.size()))
                    .isOk());
    for (size_t i = 0; i < x.size(); ++i)
      EXPECT_EQ(double(back[i]), got[i]) << i;
  }
}

TEST(Convert, RejectsOtherPairsAndBadArguments) {
  std::unique_ptr<rt::LocalOps> ops = rt::createHostLocalOps();
  float x[2] = {1, 2};
  double y[2];
  rt::Status s = ops->convert(x, rt::DType::F32, y, rt::DType::F64, 2);
  EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument);
  EXPECT_NE(s.message().find("convert: no conversion"), std::string::npos)
      << s.message();
  s = ops->convert(x, rt::DType::F16, y, rt::DType::BF16, 2);
  EXPECT_NE(s.message().find("convert: no conversion"), std::string::npos)
      << s.message();
  s = ops->convert(x, rt::DType::F32, y, rt::DType::F16, -1);
  EXPECT_EQ(s.message(), "convert: negative size -1");
  s = ops->convert(nullptr, rt::DType::F32, y, rt::DType::F16, 2);
  EXPECT_EQ(s.message(), "convert: the source is null");
  EXPECT_TRUE(ops->convert(nullptr, rt::DType::F32, nullptr, rt::DType::F16, 0)
                  .isOk());
}

// A K split's tail: gemm f16 -> f32, reduce_scatter in f32, the bias
// widened, bias_add in f32, one convert to f16.
const char *kSplitTail = R"(shardlin-program v1
name main
world_size 2
values 8
value 0 f16 2 6 4
value 1 f16 2 5 4
value 2 f16 1 5
value 3 f32 2 6 5
value 4 f32 2 3 5
value 5 f32 1 5
value 6 f32 2 3 5
value 7 f16 2 3 5
arg 0 plain
arg 1 plain
arg 2 plain
instr gemm result 3 operands 2 0 1 trans 0 1 loc a:1:1
instr reduce_scatter result 4 operands 1 3 chunk 0 2 0 1 loc a:2:1
instr convert result 5 operands 1 2 loc a:3:1
instr bias_add result 6 operands 2 4 5 loc a:4:1
instr convert result 7 operands 1 6 loc a:5:1
results 1 7
end
)";

TEST(Convert, ProgramTypeRules) {
  rt::Program p;
  rt::Status s = rt::parseProgram(kSplitTail, p);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(rt::serializeProgram(p), kSplitTail);
  EXPECT_EQ(p.instrs[2].op, rt::OpCode::Convert);

  rt::testutil::expectRefused(
      kSplitTail,
      {// gemm: an f32 result of f16/bf16 only, and without a bias.
       {"value 3 f32 2 6 5", "value 3 f64 2 6 5",
        "instruction 0 (gemm) has a f64 result of f16 operands (the result "
        "has their type, or f32 for f16 and bf16)"},
       {"result 3 operands 2 0 1", "result 3 operands 3 0 1 2",
        "instruction 0 (gemm) has a bias and an f32 result of f16 operands"},
       {"value 1 f16 2 5 4", "value 1 bf16 2 5 4",
        "instruction 0 (gemm) mixes element types"},
       // convert: f32 <-> f16/bf16 only, same rank.
       {"value 5 f32 1 5", "value 5 f64 1 5",
        "instruction 2 (convert) converts f16 to f64 (f32 to f16 or bf16, or "
        "back)"},
       {"value 5 f32 1 5", "value 5 f32 2 1 5",
        "instruction 2 (convert) changes the rank"},
       // Every other op still has one element type.
       {"value 4 f32 2 3 5", "value 4 f16 2 3 5",
        "instruction 1 (reduce_scatter) mixes element types"}});
}

} // namespace
