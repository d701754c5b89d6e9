//===- ConstantProgramTest.cpp - A program's constants table --------------===//
//
// The `constant` op and Program::constants (a module's weights and biases):
// the text form (bytes in hex, a split entry's chunk spec and bounds) read
// back to the same program, the validator's and the parser's errors, and a
// run on the threads backend (W = 3, placements out of rank order, an empty
// chunk, a split of the inner dim: a strided copy) where every rank gets
// exactly its chunk of the split constant and all of the replicated one.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/exec/Execute.h"
#include "shardlin/runtime/program/OpTable.h"
#include "shardlin/runtime/program/Program.h"
#include "shardlin/runtime/program/ProgramText.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace rt = shardlin::rt;

namespace {

std::vector<char> bytesOf(const std::vector<float> &v) {
  std::vector<char> out(v.size() * sizeof(float));
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

/// A 3 x 5 constant split along dim 1 at bounds [0, 2, 2, 5] over 3 ranks,
/// chunk c on rank placements[c] = [2, 0, 1] (rank 0's chunk is empty), and
/// a replicated vector of 4.
rt::Program constantsProgram(std::vector<float> &global,
                             std::vector<float> &vec) {
  global.clear();
  for (int i = 0; i < 15; ++i)
    global.push_back(0.25f * static_cast<float>(i) - 1.5f);
  vec = {3.5f, -2.0f, 0.125f, 7.0f};
  rt::Program p;
  p.name = "consts";
  p.worldSize = 3;
  p.values = {{rt::DType::F32, {3, rt::kDynamic}}, {rt::DType::F32, {4}}};
  rt::Constant split;
  split.shape = {3, 5};
  split.sharded = true;
  split.sharding.dim = 1;
  split.sharding.placements = {2, 0, 1};
  split.sharding.bounds = {0, 2, 2, 5};
  split.bytes = bytesOf(global);
  split.location = "c.mlir:3:8";
  rt::Constant whole;
  whole.shape = {4};
  whole.bytes = bytesOf(vec);
  p.constants = {split, whole};
  for (int k = 0; k < 2; ++k) {
    rt::Instr in;
    in.op = rt::OpCode::Constant;
    in.constantIndex = {k};
    in.result = k;
    in.location = "c.mlir:" + std::to_string(3 + k) + ":8";
    p.instrs.push_back(in);
  }
  p.results = {0, 1};
  return p;
}

TEST(ConstantProgram, TextRoundTrips) {
  std::vector<float> global, vec;
  rt::Program p = constantsProgram(global, vec);
  ASSERT_TRUE(p.validate().isOk()) << p.validate().message();
  const std::string text = rt::serializeProgram(p);
  EXPECT_NE(text.find("constant 0 f32 2 3 5 sharded spec 1 3 2 0 1 bounds 0 "
                      "2 2 5 data 60 0000c0bf"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("constant 1 f32 1 4 data 16 00006040"), std::string::npos)
      << text;
  EXPECT_NE(text.find("instr constant result 1 operands 0 index 1 1 loc "
                      "c.mlir:4:8"),
            std::string::npos)
      << text;
  rt::Program q;
  rt::Status s = rt::parseProgram(text, q);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(rt::serializeProgram(q), text);
  ASSERT_EQ(q.constants.size(), 2u);
  EXPECT_EQ(q.constants[0].bytes, bytesOf(global));
  EXPECT_EQ(q.constants[0].sharding.bounds, (std::vector<int64_t>{0, 2, 2, 5}));
  EXPECT_EQ(q.constants[0].location, "c.mlir:3:8");
  EXPECT_FALSE(q.constants[1].sharded);
  const rt::OpInfo *info = rt::findOpByMnemonic("constant");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->op, rt::OpCode::Constant);
}

TEST(ConstantProgram, ErrorsNameTheConstant) {
  std::vector<float> global, vec;
  const std::string text =
      rt::serializeProgram(constantsProgram(global, vec));
  struct Case {
    std::string from, to, message;
  } cases[] = {
      {"data 16 00006040", "data 16 0000604", "expected 16 bytes as 32 hex digits"},
      {"data 16 00006040", "data 16 0000604g", "bad hex digit in the constant's data at byte 3"},
      {"data 16 00006040", "data 12 00006040", "expected 12 bytes as 24 hex digits"},
      {"constant 1 f32 1 4", "constant 1 f32 1 5",
       "constant 1 of f32 [5] holds 16 bytes, not 20"},
      {"constant 1 f32", "constant 1 f64",
       "constant 1 of f64 [4] holds 16 bytes, not 32"},
      {"bounds 0 2 2 5", "bounds 0 2 2 6", "bounds end at 6 but the dim has 5"},
      {"constant 1 f32", "constant 2 f32",
       "expected constant 1, got constant 2 (constant lines are numbered in order)"},
      {"index 1 1", "index 1 2",
       "reads no constant of the program's 2 (expected `index 1 K`, 0 <= K < that count)"},
      {"value 1 f32 1 4", "value 1 f64 1 4",
       "instruction 1 (constant) of f32 constant 1 defines a f64 value"},
      {"value 1 f32 1 4", "value 1 f32 1 3",
       "instruction 1 (constant): its result [3] is not constant 1 [4] (dim 0)"},
      {"value 0 f32 2 3 ?", "value 0 f32 2 2 ?",
       "its result [2, ?] is not a rank's chunk of constant 0 [3, 5] (dim 0)"},
  };
  for (const Case &c : cases) {
    std::string bad = text;
    ASSERT_NE(bad.find(c.from), std::string::npos) << c.from;
    bad.replace(bad.find(c.from), c.from.size(), c.to);
    rt::Program q;
    rt::Status s = rt::parseProgram(bad, q);
    EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument) << c.to;
    EXPECT_NE(s.message().find(c.message), std::string::npos)
        << s.message() << "\n  expected: " << c.message;
  }
}

TEST(ConstantProgram, EveryRankGetsItsChunk) {
  std::vector<float> global, vec;
  rt::Program p = constantsProgram(global, vec);
  const int w = 3;
  // Rank r's columns [begin, end) of the 3 x 5 constant.
  const int cols[3][2] = {{2, 2}, {2, 5}, {0, 2}};
  std::vector<std::vector<float>> chunk(w), whole(w);
  for (int r = 0; r < w; ++r) {
    chunk[r].assign(3 * (cols[r][1] - cols[r][0]), std::nanf(""));
    whole[r].assign(4, std::nanf(""));
  }
  rt::RankCallbacks callbacks;
  callbacks.bind = [&](const rt::Plan &plan, rt::RankDevice &,
                       rt::RankBuffers &buffers) {
    const int r = plan.rank();
    EXPECT_EQ(plan.resultShape(0),
              (std::vector<int64_t>{3, cols[r][1] - cols[r][0]}));
    buffers.args = {};
    buffers.results = {chunk[r].data(), whole[r].data()};
    return rt::Status::ok();
  };
  rt::RunOptions options;
  options.worldSize = w;
  options.blasThreads = 1;
  // Twice: the constants are copied at every run.
  for (int run = 0; run < 2; ++run) {
    rt::Status s = rt::runProgram(p, options, callbacks);
    ASSERT_TRUE(s.isOk()) << s.message();
    for (int r = 0; r < w; ++r) {
      const int width = cols[r][1] - cols[r][0];
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < width; ++j)
          EXPECT_EQ(chunk[r][i * width + j], global[i * 5 + cols[r][0] + j])
              << "rank " << r << " (" << i << ", " << j << ")";
      EXPECT_EQ(whole[r], vec) << "rank " << r;
    }
  }
}

} // namespace
