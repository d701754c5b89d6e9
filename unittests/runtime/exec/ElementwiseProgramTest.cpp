//===- ElementwiseProgramTest.cpp - The elementwise op in a program -------===//
//
// The elementwise op's validation (validateExpr's and the kernel's errors,
// with their codes and messages), and the op in a shardlin program: its text
// form (constants bit for bit), the parser's and the validator's errors, rank-dependent shapes, a
// Plan on the threads backend (W = 2) with every rank checked, and its row
// in the op table. Split from ElementwiseTest.cpp (the op and its kernels).
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
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace rt = shardlin::rt;
using rt::ExprOp;
using shardlin::rt::testing::Builder;
using shardlin::rt::testing::randomValues;

namespace {

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
    b.op(ExprOp::Add, b.cmp(rt::CmpPredicate::OLT, x, x), x);
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
    b.cmp(rt::CmpPredicate::OLT, x, x);
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
  rt::Status s = host->elementwise(b.p, {{x}}, y, -1, 4, rt::DType::F32);
  EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument);
  EXPECT_EQ(s.message(), "elementwise: negative size -1 x 4");
  s = host->elementwise(b.p, {{nullptr}}, y, 1, 4, rt::DType::F32);
  EXPECT_EQ(s.message(), "elementwise: operand 0 is null");
  s = host->elementwise(b.p, {}, y, 1, 4, rt::DType::F32);
  EXPECT_EQ(s.message(), "elementwise: expression node 0 (input): reads "
                         "operand 0 but the op has 0 operands");
  s = host->elementwise(b.p, {{x}}, y, INT64_MAX, 4, rt::DType::F32);
  EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument);
}

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
  EXPECT_EQ(p.instrs[1].expr.nodes[2].predicate, rt::CmpPredicate::UGT);
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
    const rt::CmpPredicate p = static_cast<rt::CmpPredicate>(i);
    EXPECT_EQ(rt::parseCmpPredicate(rt::cmpPredicateName(p)), p);
  }
}

} // namespace
