//===- DynamicPlanTest.cpp - Plans for run-time batch sizes ---------------===//
//
// The runtime alone (hand-written programs, no compiler): a col-wise layer
// whose rows are dynamic (`?`), W = 3, as the translator emits it. Each
// rank's plan is resolved for every rank's sizes (they differ, one is 0);
// its shapes, the run's outputs against a float64 reference within
// K * 2^-24 of sum_k |x_k A_jk| and its bytes sent are checked. Then the
// plan cache (reuse, capacity, the key), the text form of a dynamic
// program, and the errors: no sizes, sizes of the wrong count, a reshape
// it cannot size, a program too large to plan for its world size.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/program/ProgramText.h"
#include "shardlin/runtime/exec/Execute.h"
#include "shardlin/runtime/exec/PlanCache.h"
#include "shardlin/runtime/tooling/Runner.h"

#include "RandomValues.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace rt = shardlin::rt;
using shardlin::rt::test::randomValues;

namespace {

constexpr int kW = 3;
constexpr int64_t kN = 5, kK = 4;

// x (? x 4) per rank; A (5 x 4) split along N in chunks 2, 2, 1 held by
// ranks 1, 2, 0: all_gather the rows, GEMM, all_to_all them back.
const char *kColW3 = R"(shardlin-program v1
name main
world_size 3
values 6
value 0 f32 2 ? 4
value 1 f32 2 ? 4
value 2 f32 2 ? 4
value 3 f32 2 ? 4
value 4 f32 2 ? ?
value 5 f32 2 ? 5
arg 0 plain
arg 1 sharded 2 5 4 spec 0 3 1 2 0
instr local_shard result 2 operands 1 1 loc t.mlir:3:8
instr all_gather result 3 operands 1 0 chunk 0 3 0 1 2 loc t.mlir:3:8
instr gemm result 4 operands 2 3 2 trans 0 1 loc t.mlir:3:8
instr all_to_all result 5 operands 1 4 chunk 0 3 0 1 2 concat 1 3 1 2 0 loc t.mlir:3:8
results 1 5
end
)";

const std::vector<int64_t> kRows = {2, 0, 3};

rt::DynamicSizes sizesOf(const std::vector<int64_t> &rows) {
  rt::DynamicSizes sizes;
  for (int64_t r : rows)
    sizes.push_back({r});
  return sizes;
}

class DynamicPlan : public ::testing::Test {
protected:
  void SetUp() override {
    rt::Status s = rt::parseProgram(kColW3, program);
    ASSERT_TRUE(s) << s.message();
  }
  rt::Program program;
};

TEST_F(DynamicPlan, EveryRankIsSizedFromEveryRanksRows) {
  ASSERT_EQ(rt::dynamicArgDims(program).size(), 1u);
  for (int r = 0; r < kW; ++r) {
    std::unique_ptr<rt::Plan> plan;
    rt::Status s = rt::Plan::build(program, r, kW, rt::hostAllocator(), plan,
                                   sizesOf(kRows));
    ASSERT_TRUE(s) << s.message();
    EXPECT_EQ(plan->argShape(0), (std::vector<int64_t>{kRows[r], kK}));
    EXPECT_EQ(plan->resultShape(0), (std::vector<int64_t>{kRows[r], kN}));
    EXPECT_EQ(plan->dynamicSizes(), sizesOf(kRows));
  }
}

TEST_F(DynamicPlan, RunsWithPerRankRowsAndCachesThePlans) {
  const std::vector<float> a = randomValues(kN * kK, 7);
  rt::PlanCache cache;
  for (int run = 0; run < 3; ++run) {
    // Runs 0 and 2 have the same rows: the second reuses the plans.
    const std::vector<int64_t> rows =
        run == 1 ? std::vector<int64_t>{1, 1, 0} : kRows;
    std::vector<std::vector<float>> x(kW), y(kW);
    std::vector<std::vector<uint8_t>> chunks(kW);
    rt::RankCallbacks callbacks;
    callbacks.plans = &cache;
    callbacks.argShapes = [&](int rank,
                              std::vector<std::vector<int64_t>> &shapes,
                              std::vector<std::string> &) {
      shapes = {{rows[rank], kK}, {}};
      return rt::Status::ok();
    };
    callbacks.bind = [&](const rt::Plan &plan, rt::RankDevice &,
                         rt::RankBuffers &buffers) {
      const int r = plan.rank();
      x[r] = randomValues(rows[r] * kK, 100 + 10 * run + r);
      y[r].assign(rows[r] * kN, NAN);
      rt::extractLocalChunk(a.data(), program.args[1].globalShape,
                            rt::DType::F32, program.args[1].sharding, r,
                            chunks[r]);
      buffers.args = {x[r].data(), chunks[r].data()};
      buffers.results = {y[r].data()};
      return rt::Status::ok();
    };
    rt::RunOptions options;
    options.worldSize = kW;
    std::vector<rt::RankResult> ranks;
    rt::Status s = rt::runProgram(program, options, callbacks, &ranks);
    ASSERT_TRUE(s) << s.message();
    int64_t total = 0;
    for (int64_t b : rows)
      total += b;
    const std::vector<int64_t> nOf = {1, 2, 2}; // N chunk of ranks 0, 1, 2
    for (int r = 0; r < kW; ++r) {
      EXPECT_EQ(ranks[r].planReused, run == 2) << "run " << run;
      // all_gather: this rank's rows to the 2 others; all_to_all: its
      // features of the other ranks' rows.
      EXPECT_EQ(ranks[r].stats.bytesSent,
                uint64_t(4 * (2 * rows[r] * kK + (total - rows[r]) * nOf[r])));
      for (int64_t i = 0; i < rows[r]; ++i)
        for (int64_t j = 0; j < kN; ++j) {
          double exact = 0, scale = 0;
          for (int64_t k = 0; k < kK; ++k) {
            exact += double(x[r][i * kK + k]) * a[j * kK + k];
            scale += std::fabs(double(x[r][i * kK + k]) * a[j * kK + k]);
          }
          EXPECT_LE(std::fabs(y[r][i * kN + j] - exact),
                    kK * std::ldexp(1.0, -24) * scale)
              << "run " << run << " rank " << r << " y[" << i << "][" << j
              << "]";
        }
    }
  }
  EXPECT_EQ(cache.stats().builds, 2u * kW);
  EXPECT_EQ(cache.stats().reuses, 1u * kW);
  EXPECT_EQ(cache.stats().size, 2u * kW);
}

TEST_F(DynamicPlan, CacheKeepsTheMostRecentPlans) {
  rt::PlanCache cache(/*capacity=*/1);
  const rt::SharedProgram shared(program);
  auto take = [&](int64_t rows, bool &reused) {
    rt::DynamicSizes sizes = sizesOf({rows, rows, rows});
    rt::PlanCache::Key key = rt::PlanCache::keyOf(shared, 0, kW, sizes);
    std::unique_ptr<rt::Plan> plan;
    rt::Status s = cache.take(shared, key, rt::hostAllocator(), plan, reused);
    ASSERT_TRUE(s) << s.message();
    cache.put(std::move(key), std::move(plan));
  };
  bool reused = true;
  take(1, reused);
  EXPECT_FALSE(reused);
  take(1, reused);
  EXPECT_TRUE(reused);
  take(2, reused); // evicts rows = 1
  EXPECT_FALSE(reused);
  take(1, reused);
  EXPECT_FALSE(reused);
  EXPECT_EQ(cache.stats().size, 1u);
  // Another program (a location differs) is another key.
  rt::Program other = program;
  other.instrs[0].location = "elsewhere:1:1";
  EXPECT_FALSE(rt::PlanCache::keyOf(rt::SharedProgram(other), 0, kW,
                                    sizesOf({1, 1, 1})) ==
               rt::PlanCache::keyOf(shared, 0, kW, sizesOf({1, 1, 1})));
  // The same program, digested by another run, is the same key.
  EXPECT_TRUE(rt::PlanCache::keyOf(rt::SharedProgram(program), 0, kW,
                                   sizesOf({1, 1, 1})) ==
              rt::PlanCache::keyOf(shared, 0, kW, sizesOf({1, 1, 1})));
  // The agreement's fingerprint ignores locations; the text does not.
  EXPECT_EQ(rt::SharedProgram(other).fingerprint(), shared.fingerprint());
  EXPECT_NE(*rt::SharedProgram(other).text(), *shared.text());
  other.instrs[0].result = program.instrs[0].result + 1000;
  EXPECT_NE(rt::SharedProgram(other).fingerprint(), shared.fingerprint());
}

TEST_F(DynamicPlan, TextFormRoundTrips) {
  EXPECT_EQ(rt::serializeProgram(program), kColW3);
}

TEST_F(DynamicPlan, NeedsEveryRanksSizes) {
  std::unique_ptr<rt::Plan> plan;
  rt::Status s = rt::Plan::build(program, 0, kW, rt::hostAllocator(), plan);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "the program 'main' has 1 dynamic argument dim(s): "
                         "the plan needs the sizes of every rank's (3), got 0");
  s = rt::Plan::build(program, 0, kW, rt::hostAllocator(), plan,
                      {{1}, {1, 2}, {1}});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "rank 1 has 2 dynamic sizes, expected 1");
  s = rt::Plan::build(program, 0, kW, rt::hostAllocator(), plan,
                      {{1}, {-1}, {1}});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "rank 1 has a negative dynamic size -1");
  // A static program takes no sizes.
  rt::Program fixed = program;
  for (rt::ValueType *t : {&fixed.values[0], &fixed.args[0].type})
    t->shape = {2, kK};
  s = rt::Plan::build(fixed, 0, kW, rt::hostAllocator(), plan, sizesOf(kRows));
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "the program 'main' has no dynamic argument dims, "
                         "but the plan was given sizes");
}

TEST_F(DynamicPlan, ArgumentShapesAreChecked) {
  std::vector<int64_t> sizes;
  rt::Status s =
      rt::dynamicSizesOf(program, {{3, 5}, {}}, sizes, {"x.npy", ""});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "argument 0 (x.npy): shape [3, 5] does not match "
                         "the entry signature's [?, 4] (dim 1 is 5, not 4)");
  s = rt::dynamicSizesOf(program, {{3}, {}}, sizes);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "argument 0: shape [3] has rank 1 but the entry "
                         "signature's [?, 4] has rank 2");
  ASSERT_TRUE(rt::dynamicSizesOf(program, {{3, 4}}, sizes));
  EXPECT_EQ(sizes, (std::vector<int64_t>{3}));
}

TEST_F(DynamicPlan, ReshapeItCannotSize) {
  // x (? x ? x 4) collapsed to (? x 4) is fine (one dynamic dim, from the
  // count); expanded back without the input to read the dims from is not.
  const char *text = R"(shardlin-program v1
name main
world_size 0
values 3
value 0 f32 3 ? ? 4
value 1 f32 2 ? 4
value 2 f32 3 ? ? 4
arg 0 plain
instr reshape result 1 operands 1 0
instr reshape result 2 operands 1 1
results 1 2
end
)";
  rt::Program p;
  ASSERT_TRUE(rt::parseProgram(text, p));
  std::unique_ptr<rt::Plan> plan;
  rt::Status s =
      rt::Plan::build(p, 0, 1, rt::hostAllocator(), plan, {{2, 3}});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "shardlin.reshape: a reshape to [?, ?, 4] has more "
                         "than one dynamic dim and no value to take them "
                         "from");
  // With the input as its second operand, each dynamic dim is the input's.
  p.instrs[1].operands.push_back(0);
  ASSERT_TRUE(p.validate());
  s = rt::Plan::build(p, 0, 1, rt::hostAllocator(), plan, {{2, 3}});
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(plan->resultShape(0), (std::vector<int64_t>{2, 3, 4}));
}

TEST_F(DynamicPlan, ReshapeSizedByItsGroups) {
  // x (? x ?) split into sequences of 2 (? x 2 x ?) and merged back: two
  // dynamic dims each, sized by the reassociation (`groups`, for each dim
  // of the higher rank the dim of the other side), also where the feature
  // dim is 0 and the element count says nothing.
  const char *text = R"(shardlin-program v1
name main
world_size 0
values 3
value 0 f32 2 ? ?
value 1 f32 3 ? 2 ?
value 2 f32 2 ? ?
arg 0 plain
instr reshape result 1 operands 1 0 groups 3 0 0 1 loc t.mlir:2:3
instr reshape result 2 operands 1 1 groups 3 0 0 1 loc t.mlir:3:3
results 2 1 2
end
)";
  rt::Program p;
  ASSERT_TRUE(rt::parseProgram(text, p));
  EXPECT_EQ(rt::serializeProgram(p), text);
  for (std::vector<int64_t> x : {std::vector<int64_t>{6, 5}, {6, 0}, {0, 3}}) {
    std::unique_ptr<rt::Plan> plan;
    rt::Status s = rt::Plan::build(p, 0, 1, rt::hostAllocator(), plan, {x});
    ASSERT_TRUE(s) << s.message();
    EXPECT_EQ(plan->resultShape(0), (std::vector<int64_t>{x[0] / 2, 2, x[1]}));
    EXPECT_EQ(plan->resultShape(1), x);
  }
  // Rows that do not split into sequences of 2.
  std::unique_ptr<rt::Plan> plan;
  rt::Status s = rt::Plan::build(p, 0, 1, rt::hostAllocator(), plan, {{5, 1}});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "t.mlir:2:3: shardlin.reshape: reshape from [5, 1] "
                         "to [?, 2, ?]: operand dim 0 (5) is not a multiple "
                         "of 2");
  // One group per dim of the higher rank, each a dim of the other side.
  p.instrs[0].reshapeGroups = {0, 0};
  EXPECT_FALSE(p.validate());
  p.instrs[0].reshapeGroups = {0, 0, 2};
  EXPECT_FALSE(p.validate());
}

TEST_F(DynamicPlan, TooLargeToPlan) {
  // Every rank would resolve 2^18 ranks' sizes: refused up front.
  constexpr int w = 1 << 18;
  rt::Program big = program;
  big.worldSize = w;
  std::vector<int64_t> placements(w);
  for (int i = 0; i < w; ++i)
    placements[i] = i;
  big.args[1].sharding.placements = placements;
  big.args[1].globalShape = {w, kK};
  big.instrs[1].along.placements = placements;
  big.instrs[3].split.placements = placements;
  big.instrs[3].concat.placements = placements;
  ASSERT_TRUE(big.validate());
  std::unique_ptr<rt::Plan> plan;
  rt::Status s = rt::Plan::build(big, 0, w, rt::hostAllocator(), plan,
                                 rt::DynamicSizes(w, {1}));
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(),
            "the program 'main' has dynamic argument dims or uneven "
            "chunks, so each rank resolves every rank's sizes: 262144 ranks x 6 values and 2 "
            "collectives is more than this runtime plans (W x values <= "
            "1048576, W^2 x collectives <= 33554432)");
}

} // namespace
