//===- ReplicatedTest.cpp - The check of replicated arguments --------------===//
//
// exec/Replicated.h: the content hash (xxHash64's published values, and the
// same digest however the bytes are fed), and runRank's check on the
// threads backend over W = 3: a program whose argument 0 is replicated
// (all_reduce of it) fails on every rank, naming the argument and the ranks
// that differ, when a rank binds other values (or, with a dynamic dim,
// another shape); runs when all bind the same; and runs unchecked with
// RunOptions::checkReplicated = false. A rank-local argument is not checked.
//
//===----------------------------------------------------------------------===//

#include "exec/Replicated.h"
#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/exec/Execute.h"
#include "shardlin/runtime/program/ProgramText.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace rt = shardlin::rt;

namespace {

uint64_t hashOf(const std::string &s) {
  rt::ContentHash h;
  h.update(s.data(), s.size());
  return h.digest();
}

TEST(ContentHash, IsXxHash64) {
  EXPECT_EQ(hashOf(""), 0xEF46DB3751D8E999ull);
  EXPECT_EQ(hashOf("a"), 0xD24EC4F1A98C6E5Bull);
  EXPECT_EQ(hashOf("abc"), 0x44BC2CF5AD770999ull);
}

TEST(ContentHash, TheSameDigestHoweverTheBytesAreFed) {
  std::string bytes;
  for (int i = 0; i < 1000; ++i)
    bytes += static_cast<char>(i * 7 + i / 13);
  const uint64_t whole = hashOf(bytes);
  for (size_t piece : {1u, 3u, 31u, 32u, 33u, 100u, 999u}) {
    rt::ContentHash h;
    for (size_t at = 0; at < bytes.size(); at += piece)
      h.update(bytes.data() + at, std::min(piece, bytes.size() - at));
    EXPECT_EQ(h.digest(), whole) << "pieces of " << piece;
  }
  // One bit anywhere changes it.
  for (size_t at : {0u, 31u, 32u, 500u, 999u}) {
    std::string other = bytes;
    other[at] ^= 1;
    EXPECT_NE(hashOf(other), whole) << "byte " << at;
  }
}

// Argument 0 replicated (2 x ? f32), argument 1 rank-local (2 f32).
const char *kProgram = R"(shardlin-program v1
name sum
world_size 0
values 4
value 0 f32 2 2 ?
value 1 f32 1 2
value 2 f32 2 2 ?
value 3 f32 1 2
arg 0 plain replicated loc sum.mlir:1:20
arg 1 plain
instr all_reduce result 2 operands 1 0 loc sum.mlir:2:8
instr all_reduce result 3 operands 1 1 loc sum.mlir:3:8
results 2 2 3
end
)";

constexpr int kW = 3;

class ReplicatedCheck : public ::testing::Test {
protected:
  void SetUp() override {
    rt::Status s = rt::parseProgram(kProgram, program);
    ASSERT_TRUE(s.isOk()) << s.message();
    options.worldSize = kW;
    options.comm.timeoutSeconds = 60;
    for (int r = 0; r < kW; ++r) {
      x[r] = {1, 2, 3, 4, 5, 6};
      cols[r] = 3;
      local[r] = {float(r), float(-r)};
    }
  }

  rt::Status run() {
    rt::RankCallbacks callbacks;
    callbacks.argShapes = [this](int rank,
                                 std::vector<std::vector<int64_t>> &shapes,
                                 std::vector<std::string> &) {
      shapes = {{2, cols[rank]}, {2}};
      return rt::Status::ok();
    };
    callbacks.bind = [this](const rt::Plan &plan, rt::RankDevice &,
                            rt::RankBuffers &buffers) {
      const int r = plan.rank();
      y[r].assign(size_t(2 * cols[r]), 0.0f);
      z[r].assign(2, 0.0f);
      buffers.args = {x[r].data(), local[r].data()};
      buffers.results = {y[r].data(), z[r].data()};
      return rt::Status::ok();
    };
    return rt::runProgram(program, options, callbacks, &ranks);
  }

  rt::Program program;
  rt::RunOptions options;
  std::vector<float> x[kW], local[kW], y[kW], z[kW];
  int64_t cols[kW];
  std::vector<rt::RankResult> ranks;
};

TEST_F(ReplicatedCheck, TheSameValuesRun) {
  rt::Status s = run();
  ASSERT_TRUE(s.isOk()) << s.message();
  for (int r = 0; r < kW; ++r) {
    EXPECT_EQ(y[r], (std::vector<float>{3, 6, 9, 12, 15, 18}));
    // The rank-local argument differs between ranks: not checked.
    EXPECT_EQ(z[r], (std::vector<float>{3, -3}));
    EXPECT_GT(ranks[r].seconds.check, 0.0);
  }
}

TEST_F(ReplicatedCheck, OtherValuesFailEveryRankNamingTheArgument) {
  x[1][5] = 7;
  x[2][0] = -1;
  rt::Status s = run();
  ASSERT_FALSE(s.isOk());
  const std::string expected =
      "argument 0 (sum.mlir:1:20) is declared replicated but its values "
      "differ between ranks: ranks 1, 2 hold other values than rank 0";
  EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument);
  EXPECT_NE(s.message().find(expected), std::string::npos) << s.message();
  ASSERT_EQ(ranks.size(), size_t(kW));
  for (const rt::RankResult &r : ranks) {
    EXPECT_EQ(r.status.code(), rt::StatusCode::InvalidArgument)
        << r.status.message();
    EXPECT_NE(r.status.message().find(expected), std::string::npos);
    // Nothing ran.
    EXPECT_EQ(r.stats.calls, 0u);
  }
  x[2][0] = 1;
  s = run();
  EXPECT_NE(s.message().find("rank 1 holds other values than rank 0"),
            std::string::npos)
      << s.message();
}

TEST_F(ReplicatedCheck, AnotherShapeFailsEveryRankNamingTheArgument) {
  cols[0] = 2;
  cols[2] = 0;
  x[0].resize(4);
  x[2].clear();
  rt::Status s = run();
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument);
  const std::string expected =
      "argument 0 (sum.mlir:1:20) is declared replicated but its shape "
      "differs between ranks (rank 0 [2, 2], rank 1 [2, 3], rank 2 [2, 0])";
  for (const rt::RankResult &r : ranks)
    EXPECT_NE(r.status.message().find(expected), std::string::npos)
        << r.status.message();
}

TEST_F(ReplicatedCheck, TurnedOffItTrustsTheCaller) {
  x[1][5] = 7;
  options.checkReplicated = false;
  rt::Status s = run();
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(y[0][5], 6 + 6 + 7);
  EXPECT_EQ(ranks[0].seconds.check, 0.0);
}

} // namespace
