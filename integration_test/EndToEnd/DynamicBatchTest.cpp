//===- DynamicBatchTest.cpp - Batch sizes known only at run time ----------===//
//
// A linear (or a block) whose batch dims are dynamic (`tensor<?x19xf32>`) is
// compiled once and run, in one process, with several sets of batch sizes:
// different on each rank, 0 rows, 1 row, several dynamic dims. Every rank's
// output is compared with the float64 reference, every rank's bytes with
// the chunk tables' count for its own and the others' rows, and the plan
// cache must build one plan per rank and distinct set of sizes and reuse
// it when the sizes come back. The negative cases (a static dim that does
// not match, no shapes given) fail every rank with one clear error.
//
//===----------------------------------------------------------------------===//

#include "BlockTesting.h"
#include "E2ESupport.h"

#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/base/ChunkLayout.h"
#include "shardlin/runtime/exec/PlanCache.h"

#include <gtest/gtest.h>

#include <set>

namespace rt = ::shardlin::rt;
using namespace shardlin::e2e;
using shardlin::testkit::BlockSpec;

namespace shardlin::testkit {
void PrintTo(const BlockSpec &c, std::ostream *os) { *os << c.name(); }
} // namespace shardlin::testkit

namespace {

constexpr int64_t kDyn = rt::kDynamic;

/// A dynamic layer and the per-rank batch dims of each run, in order.
struct DynamicCase {
  LinearConfig base;
  std::vector<std::vector<std::vector<int64_t>>> runs;
};

void PrintTo(const DynamicCase &c, std::ostream *os) { *os << c.base.name(); }

std::vector<std::vector<std::vector<int64_t>>>
rowSets(int w, const std::vector<int64_t> &batch) {
  return batchSizeRuns(w, batch);
}

/// The same for two dynamic dims (batch x sequence).
std::vector<std::vector<std::vector<int64_t>>> gridSets(int w) {
  std::vector<std::vector<std::vector<int64_t>>> sets(2);
  for (int r = 0; r < w; ++r) {
    sets[0].push_back({1 + r, 3 - r % 3});
    sets[1].push_back({2, r % 2 == 0 ? 0 : 5});
  }
  sets.push_back(sets[0]);
  return sets;
}

std::vector<DynamicCase> dynamicCases() {
  std::vector<DynamicCase> cases;
  auto add = [&](LinearConfig c, bool grid = false) {
    cases.push_back({c, grid ? gridSets(c.worldSize())
                             : rowSets(c.worldSize(), c.batch)});
  };
  // One dynamic batch dim over 3 ranks: uneven chunks of N = 11 and K = 19.
  auto oneDynamicDim = [](int64_t dim, const char *strategy) {
    LinearConfig c;
    c.dim = dim;
    c.strategy = strategy;
    c.batch = {kDyn};
    c.placements = {2, 0, 1};
    return c;
  };
  for (int64_t dim : {1, 0})
    for (const char *strategy : {"activations", "gather-weight"}) {
      LinearConfig c = oneDynamicDim(dim, strategy);
      add(c);
      c.batch = {kDyn, 3};
      c.placements = {1, 3, 0, 2};
      c.bias = false;
      add(c);
    }
  {
    LinearConfig c; // two dynamic dims, row-wise, 2 ranks
    c.batch = {kDyn, kDyn};
    c.placements = {1, 0};
    add(c, /*grid=*/true);
    c.dim = 0;
    c.strategy = "auto";
    add(c, /*grid=*/true);
  }
  {
    LinearConfig c; // f16: the partial sums in f32, per-rank rows
    c.dtype = rt::DType::F16;
    c.batch = {kDyn};
    c.placements = {0, 1, 2};
    add(c);
    c.dtype = rt::DType::F64;
    c.dim = 0;
    add(c);
  }
  for (int64_t dim : {1, 0})
    for (const char *strategy : {"activations", "gather-weight"}) {
      // Explicit chunk bounds with an empty chunk (upstream's
      // sharded_dims_offsets): N = 11 at [0, 0, 4, 11], K = 19 at [0, 0, 6,
      // 19]; f16 for the partial sums of a K split.
      LinearConfig c = oneDynamicDim(dim, strategy);
      c.bounds = dim == 0 ? std::vector<int64_t>{0, 0, 4, 11}
                          : std::vector<int64_t>{0, 0, 6, 19};
      add(c);
      c.dtype = rt::DType::F16;
      add(c);
    }
  {
    LinearConfig c; // W = 1: one GEMM, no collectives
    c.batch = {kDyn};
    c.placements = {0};
    add(c);
  }
  return cases;
}

class DynamicLinear : public ::testing::TestWithParam<DynamicCase> {};

TEST_P(DynamicLinear, OneProgramRunsEveryBatchSize) {
  const DynamicCase &dc = GetParam();
  const int w = dc.base.worldSize();
  rt::Program program;
  rt::Status compiled = compileLinear(dc.base, program);
  ASSERT_TRUE(compiled) << compiled.message();
  // What `auto` chose (for the assumed rows), for the byte counts.
  std::string strategy = dc.base.strategy;
  for (const rt::Instr &in : program.instrs)
    if (in.op == rt::OpCode::Gemm && w > 1)
      strategy = in.strategy;
  rt::PlanCache cache;
  std::set<std::vector<std::vector<int64_t>>> seen;
  for (const std::vector<std::vector<int64_t>> &sizes : dc.runs) {
    LinearConfig config = dc.base;
    config.rankBatch = sizes;
    const LinearData data = makeLinearData(config);
    LinearConfig chosen = config;
    chosen.strategy = strategy;
    std::vector<std::vector<std::vector<uint8_t>>> outputs;
    std::vector<rt::RankResult> ranks;
    rt::RunOptions options;
    rt::Status ran =
        runLinear(program, config, {&data}, options, outputs, ranks, &cache);
    ASSERT_TRUE(ran) << config.name() << ": " << ran.message();
    const bool repeat = !seen.insert(sizes).second;
    for (int r = 0; r < w; ++r) {
      std::string report;
      EXPECT_EQ(checkOutput(config, data, r, outputs[0][r], report), 0)
          << report;
      EXPECT_EQ(ranks[r].stats.bytesSent, expectedBytesSent(chosen, r))
          << config.name() << " rank " << r;
      // A set of sizes seen before reuses its plans; a new one builds.
      EXPECT_EQ(ranks[r].planReused, repeat) << config.name() << " rank " << r;
    }
  }
  const rt::PlanCache::Stats stats = cache.stats();
  EXPECT_EQ(stats.builds, static_cast<uint64_t>(w) * seen.size());
  EXPECT_EQ(stats.reuses, static_cast<uint64_t>(w) * (dc.runs.size() - seen.size()));
}

INSTANTIATE_TEST_SUITE_P(
    Dynamic, DynamicLinear, ::testing::ValuesIn(dynamicCases()),
    [](const ::testing::TestParamInfo<DynamicCase> &info) {
      return info.param.base.name();
    });

//===----------------------------------------------------------------------===//
// Blocks: the fused MLP / SwiGLU with dynamic rows, in every op form.
//===----------------------------------------------------------------------===//

std::vector<BlockSpec> blockCases() {
  std::vector<BlockSpec> cases;
  BlockSpec base;
  base.batch = {kDyn};
  base.placements = {1, 2, 0};
  base.f = 13; // uneven over 3 ranks
  base.h = 9;
  for (auto form : {shardlin::testkit::OpForm::Arith,
                    shardlin::testkit::OpForm::LinalgGeneric,
                    shardlin::testkit::OpForm::LinalgElementwise}) {
    BlockSpec s = base;
    s.form = form;
    s.activation = shardlin::testkit::Activation::Relu;
    // The generic form adds a col-wise bias inside the generic, as a vector
    // broadcast, which is never fused (BlockFusion.cpp says why).
    s.colBias = form != shardlin::testkit::OpForm::LinalgGeneric;
    cases.push_back(s);
  }
  BlockSpec g = base;
  g.kind = shardlin::testkit::BlockKind::SwiGlu;
  g.batch = {kDyn, 2};
  g.residual = true;
  g.form = shardlin::testkit::OpForm::LinalgGeneric;
  g.colBias = false;
  cases.push_back(g);
  g.fuse = false; // the same chain between two separately lowered linears
  cases.push_back(g);
  g.fuse = true;
  g.strategy = "gather-weight";
  cases.push_back(g);
  return cases;
}

class DynamicBlock : public ::testing::TestWithParam<BlockSpec> {};

TEST_P(DynamicBlock, OneProgramRunsEveryBatchSize) {
  const BlockSpec &base = GetParam();
  const int w = base.worldSize();
  rt::Program program;
  rt::Status compiled = shardlin::testkit::compileBlock(base, program);
  ASSERT_TRUE(compiled) << compiled.message();
  // Fused (as activations with fusion on must), the program has no
  // all_to_all: its rows are stacked by the all_gather and split again by
  // the reduce_scatter.
  bool fused = false, anyAllToAll = false;
  for (const rt::Instr &in : program.instrs) {
    fused |= in.strategy == "fused";
    anyAllToAll |= in.op == rt::OpCode::AllToAll;
  }
  EXPECT_EQ(fused, base.fuse && base.strategy == "activations") << base.name();
  EXPECT_EQ(anyAllToAll, !fused && base.strategy == "activations")
      << base.name();
  rt::PlanCache cache;
  std::vector<std::vector<std::vector<int64_t>>> runs = rowSets(w, base.batch);
  for (size_t i = 0; i < runs.size(); ++i) {
    shardlin::testkit::BlockBatchRun run;
    rt::Status ran = shardlin::testkit::runBlockAt(program, base, runs[i],
                                                   7 + i, {}, cache, run);
    ASSERT_TRUE(ran) << run.spec.name() << ": " << ran.message();
    for (int r = 0; r < w; ++r) {
      std::string report;
      EXPECT_EQ(shardlin::testkit::checkBlockOutput(run.spec, run.data, r,
                                                    run.outputs[r], report),
                0)
          << report;
      EXPECT_EQ(run.ranks[r].planReused, i + 1 == runs.size())
          << run.spec.name() << " rank " << r;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Dynamic, DynamicBlock, ::testing::ValuesIn(blockCases()),
    [](const ::testing::TestParamInfo<BlockSpec> &info) {
      return info.param.name();
    });

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

/// A rank whose input's static dim is wrong fails with its own error; the
/// others stop (Aborted) at the size exchange, before any collective of the
/// program: no hang, no result.
TEST(DynamicBatchErrors, WrongStaticDimFailsEveryRank) {
  LinearConfig c;
  c.batch = {kDyn, 3};
  c.placements = {0, 1, 2};
  rt::Program program;
  ASSERT_TRUE(compileLinear(c, program));
  rt::RankCallbacks callbacks;
  callbacks.argShapes = [](int rank, std::vector<std::vector<int64_t>> &shapes,
                           std::vector<std::string> &names) {
    shapes.assign(3, {});
    shapes[0] = {2, rank == 1 ? 4 : 3, 19};
    names.assign(3, {});
    names[0] = "x." + std::to_string(rank) + ".npy";
    return rt::Status::ok();
  };
  bool bound = false;
  callbacks.bind = [&](const rt::Plan &, rt::RankDevice &, rt::RankBuffers &) {
    bound = true;
    return rt::Status::ok();
  };
  std::vector<rt::RankResult> ranks;
  rt::RunOptions options;
  rt::Status s = rt::runProgram(program, options, callbacks, &ranks);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(),
            "rank 1: argument 0 (x.1.npy): shape [2, 4, 19] does not match "
            "the entry signature's [?, 3, 19] (dim 1 is 4, not 3)");
  ASSERT_EQ(ranks.size(), 3u);
  EXPECT_EQ(ranks[0].status.code(), rt::StatusCode::Aborted);
  EXPECT_EQ(ranks[2].status.code(), rt::StatusCode::Aborted);
  EXPECT_FALSE(bound);
}

TEST(DynamicBatchErrors, NoShapesGiven) {
  LinearConfig c;
  c.batch = {kDyn};
  c.placements = {1, 0};
  rt::Program program;
  ASSERT_TRUE(compileLinear(c, program));
  rt::RankCallbacks callbacks;
  rt::RunOptions options;
  rt::Status s = rt::runProgram(program, options, callbacks);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("has dynamic argument dims, but the caller gave "
                             "no argument shapes"),
            std::string::npos)
      << s.message();
}

} // namespace
