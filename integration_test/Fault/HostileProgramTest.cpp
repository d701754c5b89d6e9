//===- HostileProgramTest.cpp - Programs built by hand, not by the parser -===//
//
// Program is a public struct: an embedder can build one without the text
// parser, so Program::validate and Plan::build must reject what the parser
// would, and every size they derive from types is checked before it is
// multiplied. Each case here once reached undefined behaviour or an
// out-of-bounds access (found by the program fuzzer or by review; see
// docs/robustness.md); under the sanitized build a regression is a report.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/base/Buffer.h"
#include "shardlin/runtime/exec/Plan.h"
#include "shardlin/runtime/program/Program.h"

#include <gtest/gtest.h>

using namespace shardlin;
using rt::kDynamic;

namespace {

constexpr int64_t k2to62 = int64_t(1) << 62;

rt::ValueType f32(std::vector<int64_t> shape) {
  rt::ValueType t;
  t.dtype = rt::DType::F32;
  t.shape = std::move(shape);
  return t;
}

rt::Argument plain(const rt::ValueType &t) {
  rt::Argument a;
  a.type = t;
  return a;
}

rt::ChunkSpec spec(int64_t dim, std::vector<int64_t> placements) {
  rt::ChunkSpec s;
  s.dim = dim;
  s.placements = std::move(placements);
  return s;
}

rt::Instr instr(rt::OpCode op, std::vector<int> operands, int result) {
  rt::Instr in;
  in.op = op;
  in.operands = std::move(operands);
  in.result = result;
  return in;
}

/// Plan::build on every rank must fail with `code` and a message containing
/// `what`. A hostile program is the caller's input: Program::validate's
/// rejections and the size overflows Plan::build finds are InvalidArgument.
void expectBuildFails(const rt::Program &p, int worldSize,
                      const std::string &what,
                      rt::StatusCode code = rt::StatusCode::InvalidArgument) {
  for (int r = 0; r < worldSize; ++r) {
    std::unique_ptr<rt::Plan> plan;
    rt::Status s = rt::Plan::build(p, r, worldSize, rt::hostAllocator(), plan);
    ASSERT_FALSE(s.isOk()) << "rank " << r;
    EXPECT_EQ(s.code(), code) << s.message();
    EXPECT_NE(s.message().find(what), std::string::npos) << s.message();
  }
}

// Value i is argument i; a program whose argument type differs from its
// value's was sized from one and used through the other (a rank-0 argument
// read as rank 2 by a GEMM).
TEST(HostileProgram, ArgumentTypeDiffersFromItsValue) {
  rt::Program p;
  p.values = {f32({5, 7}), f32({6, 7}), f32({5, 6})};
  p.args = {plain(f32({})), plain(f32({6, 7}))};
  rt::Instr g = instr(rt::OpCode::Gemm, {0, 1}, 2);
  g.transposeRhs = true;
  p.instrs = {g};
  p.results = {2};
  rt::Status s = p.validate();
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument) << s.message();
  EXPECT_NE(s.message().find("argument 0 has type f32 [] but value 0 has type "
                             "f32 [5, 7]"),
            std::string::npos)
      << s.message();
  expectBuildFails(p, 1, "argument 0 has type");
}

// Chunk specs in a program for "any" world size: a plan for W = 3 read the
// 2-entry chunk tables at rank 2 (found by the program fuzzer).
TEST(HostileProgram, ChunkSpecsWithWorldSizeZero) {
  rt::Program p;
  p.worldSize = 0;
  p.values = {f32({4, 2}), f32({4, 2})};
  p.args = {plain(f32({4, 2}))};
  rt::Instr c = instr(rt::OpCode::LocalChunk, {0}, 1);
  c.along = spec(0, {1, 0});
  p.values[1].shape = {2, 2};
  p.instrs = {c};
  p.results = {1};
  EXPECT_FALSE(p.validate().isOk());
  expectBuildFails(p, 3, "world size is 0");
}

// A reshape to 2^62 x 4 elements: the element count was multiplied before
// it was checked (signed overflow).
TEST(HostileProgram, ReshapeToHugeShape) {
  rt::Program p;
  p.values = {f32({4}), f32({k2to62, 4})};
  p.args = {plain(f32({4}))};
  p.instrs = {instr(rt::OpCode::Reshape, {0}, 1)};
  p.results = {1};
  ASSERT_TRUE(p.validate().isOk());
  expectBuildFails(p, 1, "overflows int64");
}

// all_gather to a static dim of 2^62 along rows of 4: the gathered shape was
// split into collective counts (products) before its size was checked.
TEST(HostileProgram, AllGatherToHugeDim) {
  // Two blocks of 2^61 x 4 fit int64 elements each; the gathered 2^62 x 4
  // does not fit its bytes.
  rt::Program p;
  p.worldSize = 2;
  p.values = {f32({int64_t(1) << 61, 4}), f32({k2to62, 4})};
  p.args = {plain(p.values[0])};
  rt::Instr g = instr(rt::OpCode::AllGather, {0}, 1);
  g.along = spec(0, {0, 1});
  p.instrs = {g};
  p.results = {1};
  ASSERT_TRUE(p.validate().isOk());
  expectBuildFails(p, 2, "overflows");
}

// all_to_all concatenating to a static dim of 2^62.
TEST(HostileProgram, AllToAllToHugeDim) {
  rt::Program p;
  p.worldSize = 2;
  p.values = {f32({int64_t(1) << 61, 4}), f32({int64_t(1) << 62, 2})};
  p.args = {plain(p.values[0])};
  rt::Instr a = instr(rt::OpCode::AllToAll, {0}, 1);
  a.split = spec(1, {0, 1});
  a.concat = spec(0, {0, 1});
  p.instrs = {a};
  p.results = {1};
  ASSERT_TRUE(p.validate().isOk());
  expectBuildFails(p, 2, "overflows");
}

// Operands and results out of range, a use before definition, a value
// defined twice: validate() says so, and Plan::build does not index with
// them.
TEST(HostileProgram, BadIds) {
  rt::Program base;
  base.values = {f32({4}), f32({2, 2})};
  base.args = {plain(f32({4}))};
  base.results = {1};

  rt::Program p = base;
  p.instrs = {instr(rt::OpCode::Reshape, {7}, 1)};
  expectBuildFails(p, 1, "uses undefined value 7");
  p.instrs = {instr(rt::OpCode::Reshape, {-1}, 1)};
  expectBuildFails(p, 1, "uses undefined value -1");
  p.instrs = {instr(rt::OpCode::Reshape, {0}, 9)};
  expectBuildFails(p, 1, "defines invalid or duplicate value 9");
  p.instrs = {instr(rt::OpCode::Reshape, {1}, 1)};
  expectBuildFails(p, 1, "uses undefined value 1");
  p.instrs = {instr(rt::OpCode::Reshape, {0}, 0)};
  expectBuildFails(p, 1, "defines invalid or duplicate value 0");
  p.instrs = {instr(rt::OpCode::Reshape, {0}, 1)};
  p.results = {5};
  expectBuildFails(p, 1, "program result 5 is not defined");
}

} // namespace
