//===- OpTableTest.cpp - The op table and what reads it -------------------===//
//
// The table is what the text form, the plan and the translator read: these
// tests check its shape, and that the text form follows it (attributes only
// where an op has them, the lowering's strategy carried through).
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/program/ProgramText.h"
#include "shardlin/runtime/program/OpTable.h"
#include "exec/OpKernels.h"

#include "ProgramEdit.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace rt = shardlin::rt;

namespace {

TEST(OpTable, OneEntryPerOpCodeInOrder) {
  const std::vector<rt::OpInfo> &table = rt::opTable();
  ASSERT_EQ(table.size(), rt::kNumOpCodes);
  std::set<std::string> mnemonics, irOps;
  for (size_t i = 0; i < table.size(); ++i) {
    const rt::OpInfo &info = table[i];
    EXPECT_EQ(static_cast<size_t>(info.op), i) << info.mnemonic;
    EXPECT_TRUE(mnemonics.insert(info.mnemonic).second) << info.mnemonic;
    EXPECT_EQ(&rt::opInfo(info.op), &info);
    EXPECT_EQ(rt::findOpByMnemonic(info.mnemonic), &info);
    EXPECT_STREQ(rt::opCodeName(info.op), info.mnemonic);
    EXPECT_LE(info.minOperands, info.maxOperands) << info.mnemonic;
    // Every op but elementwise and fill (built from a chain of IR ops) and
    // the attention ops (built with per-rank head tables from
    // shardlin.attention and its chunks) and local_slice and local_place
    // (their `dim` a plain integer) comes from named IR ops.
    EXPECT_EQ(info.irOps.empty(), info.op == rt::OpCode::Elementwise ||
                                      info.op == rt::OpCode::Fill ||
                                      info.op == rt::OpCode::Attention ||
                                      info.op == rt::OpCode::AttentionGrad ||
                                      info.op == rt::OpCode::Rope ||
                                      info.op == rt::OpCode::LocalSlice ||
                                      info.op == rt::OpCode::LocalPlace)
        << info.mnemonic;
    for (const char *name : info.irOps)
      EXPECT_TRUE(irOps.insert(name).second) << name << " maps to two ops";
    EXPECT_TRUE(info.verify) << info.mnemonic;
    // The executor's half of the op: every op has its kernels.
    const rt::OpKernel *kernel = rt::findOpKernel(info.op);
    ASSERT_NE(kernel, nullptr) << info.mnemonic;
    EXPECT_EQ(kernel->op, info.op) << info.mnemonic;
    std::set<std::string> keywords;
    for (const rt::OpAttribute &attr : info.attributes) {
      EXPECT_TRUE(keywords.insert(attr.keyword).second) << attr.keyword;
      EXPECT_NE(std::string(attr.keyword), "loc");
      EXPECT_NE(std::string(attr.keyword), "strategy");
      ASSERT_FALSE(attr.fields.empty()) << attr.keyword;
      if (attr.kind != rt::OpAttribute::Kind::Flags)
        EXPECT_EQ(attr.fields.size(), 1u) << attr.keyword;
      for (const rt::OpAttribute::Field &f : attr.fields) {
        EXPECT_EQ(attr.kind == rt::OpAttribute::Kind::Chunks,
                  f.chunks != nullptr)
            << f.odsName;
        EXPECT_EQ(attr.kind == rt::OpAttribute::Kind::Flags, f.flag != nullptr)
            << f.odsName;
        EXPECT_EQ(attr.kind == rt::OpAttribute::Kind::Expr, f.expr != nullptr)
            << f.odsName;
        EXPECT_EQ(attr.kind == rt::OpAttribute::Kind::Ints, f.ints != nullptr)
            << f.odsName;
        EXPECT_EQ(attr.kind == rt::OpAttribute::Kind::Real, f.real != nullptr)
            << f.odsName;
      }
    }
  }
  EXPECT_EQ(rt::findOpByMnemonic("gemv"), nullptr);
}

// A column-wise layer over two ranks gathering the weight, with the
// lowering's strategy on its GEMM.
const char *kGatherW2 = R"(shardlin-program v1
name main
world_size 2
values 5
value 0 f64 2 3 4
value 1 f64 2 ? 4
value 2 f64 2 ? 4
value 3 f64 2 6 4
value 4 f64 2 3 6
arg 0 plain
arg 1 sharded 2 6 4 spec 0 2 1 0
instr local_shard result 2 operands 1 1 loc col.mlir:4:8
instr all_gather result 3 operands 1 2 chunk 0 2 1 0 strategy gather-weight loc col.mlir:4:8
instr gemm result 4 operands 2 0 3 trans 0 1 strategy gather-weight loc col.mlir:4:8
results 1 4
end
)";

TEST(OpTable, TextCarriesTheStrategy) {
  rt::Program p;
  rt::Status s = rt::parseProgram(kGatherW2, p);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(p.instrs[0].strategy, "");
  EXPECT_EQ(p.instrs[1].strategy, "gather-weight");
  EXPECT_EQ(p.instrs[2].strategy, "gather-weight");
  EXPECT_EQ(p.instrs[2].location, "col.mlir:4:8");
  EXPECT_EQ(rt::serializeProgram(p), kGatherW2);
}

rt::Status parseEdited(const std::string &from, const std::string &to,
                       rt::Program &p) {
  return rt::testutil::parseEdited(kGatherW2, from, to, p);
}

TEST(OpTable, AttributesOnlyWhereTheOpHasThem) {
  rt::Program p;
  // The gemm has no chunk spec, and the gather no transposes.
  rt::Status s = parseEdited("trans 0 1 strategy", "chunk 0 2 1 0 strategy", p);
  EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument);
  EXPECT_EQ(s.message(), "program line 14: unexpected 'chunk'");
  s = parseEdited("chunk 0 2 1 0 strategy", "trans 0 1 strategy", p);
  EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument);
  EXPECT_EQ(s.message(), "program line 13: unexpected 'trans'");
  s = parseEdited("trans 0 1 strategy", "trans 0 2 strategy", p);
  EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument);
  EXPECT_EQ(s.message(), "program line 14: integer 2 out of range");
  s = parseEdited("strategy gather-weight loc col.mlir:4:8\nresults",
                  "strategy\nresults", p);
  EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument);
  EXPECT_EQ(s.message(),
            "program line 14: expected a strategy name after 'strategy'");
}

TEST(OpTable, ValidateUsesTheOperandRange) {
  rt::Program p;
  ASSERT_TRUE(rt::parseProgram(kGatherW2, p).isOk());
  p.instrs[2].operands.push_back(0);
  p.instrs[2].operands.push_back(0);
  rt::Status s = p.validate();
  EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument);
  EXPECT_EQ(s.message(), "instruction 2 (gemm) has 4 operands, expected 2 to 3");
  p.instrs[2].operands.resize(3); // lhs, rhs and a bias: in range.
  s = p.validate();
  // Now the op's own check speaks: the third operand is no rank-1 bias.
  EXPECT_EQ(s.message(),
            "instruction 2 (gemm) needs rank-2 operands and result");
}

TEST(OpTable, ValidateRejectsWhatTheTextCannotHold) {
  rt::Program p;
  ASSERT_TRUE(rt::parseProgram(kGatherW2, p).isOk());
  p.instrs[2].strategy = "gather weight";
  rt::Status s = p.validate();
  EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument);
  EXPECT_EQ(s.message(), "instruction 2 (gemm) has a strategy name with white "
                         "space: 'gather weight'");
  p.instrs[2].strategy = "";
  p.instrs[2].op = static_cast<rt::OpCode>(200);
  s = p.validate();
  EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument);
  EXPECT_EQ(s.message(), "instruction 2 has an unknown op code 200");
}

} // namespace
