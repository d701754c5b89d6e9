//===- JitEndToEndTest.cpp - Compiled code on the threads backend ---------===//
//
// The end-to-end suite's layers compiled to native code the way
// `shardlin-run --jit` compiles them (JitTesting.h) and run through the same
// in-memory run API as a plan, one thread per rank:
//
//  - a sample of threadsConfigs() (every sixth: both sharding dims, W = 1..8,
//    even, uneven and empty chunks, identity, reversed and scrambled
//    placements, 1-D to 4-D inputs, bias or not, every dtype, both
//    strategies), every element of every rank against the float64
//    reference within errorBound(), and each rank's collectives and bytes
//    equal to the plan executor's for the same layer: the compiled code
//    makes the same runtime calls;
//  - a replay (one compilation, three runs with new inputs);
//  - fused blocks (MLP and SwiGLU, BlockTesting.h) against their float64
//    reference and the cost model's bytes, and MLPs with a 153-op chain
//    between their linears;
//  - batch sizes known only at run time, one to three dynamic dims (issue
//    27, finding 1: two or more in one group crashed upstream's
//    expand-strided-metadata), sized by the compiled code on each rank:
//    gathering the weight, and moving activations and fused blocks, whose
//    code exchanges the ranks' row counts (shardlin.gather_bounds).
//
//===----------------------------------------------------------------------===//

#include "E2ESupport.h"
#include "ImportCases.h"
#include "JitTesting.h"
#include "SingleBlasThread.h"

#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/exec/Gemm.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <ostream>

namespace shardlin::testkit {
void PrintTo(const LinearSpec &c, std::ostream *os) { *os << c.name(); }
void PrintTo(const BlockSpec &c, std::ostream *os) { *os << c.name(); }
} // namespace shardlin::testkit

namespace shardlin::e2e {

namespace rt = ::shardlin::rt;
using testkit::BlockSpec;
using testkit::JitProgram;

namespace {

constexpr double kCollectiveTimeoutSeconds = 30;

// The ranks run as threads at the same time: one BLAS thread each.
const ::testing::Environment *const singleBlasThread =
    ::testing::AddGlobalTestEnvironment(new rt::test::SingleBlasThread);

rt::RunOptions threadsOptions() {
  rt::RunOptions options;
  options.comm.timeoutSeconds = kCollectiveTimeoutSeconds;
  options.blasThreads = 1;
  return options;
}

/// Every sixth configuration of the threads suite at the ceil rule's chunks,
/// and every fifth of those at explicit, skewed chunk bounds with empty
/// chunks (an odd stride: both strategies; about 32 of 160).
std::vector<LinearConfig> sampledConfigs() {
  std::vector<LinearConfig> ceil, bounded, some;
  for (LinearConfig &c : threadsConfigs())
    (c.bounds.empty() ? ceil : bounded).push_back(std::move(c));
  for (size_t i = 0; i < ceil.size(); i += 6)
    some.push_back(ceil[i]);
  for (size_t i = 0; i < bounded.size(); i += 5)
    some.push_back(bounded[i]);
  return some;
}

std::string configName(const ::testing::TestParamInfo<LinearConfig> &info) {
  return info.param.name();
}

//===----------------------------------------------------------------------===//
// Linears
//===----------------------------------------------------------------------===//

class JitLinear : public ::testing::TestWithParam<LinearConfig> {};

TEST_P(JitLinear, MatchesFloat64ReferenceWithThePlansCalls) {
  const LinearConfig &config = GetParam();
  JitProgram jit;
  rt::Status compiled = testkit::jitLinear(config, jit);
  ASSERT_TRUE(compiled.isOk()) << compiled.message();
  ASSERT_FALSE(jit.program.compiled.empty());
  const LinearData data = makeLinearData(config);
  std::vector<std::vector<std::vector<uint8_t>>> outputs;
  std::vector<rt::RankResult> ranks;
  rt::Status ran = runLinear(jit.program, config, {&data}, threadsOptions(),
                             outputs, ranks, nullptr, jit.executors);
  ASSERT_TRUE(ran.isOk()) << ran.message();

  // The plan executor's run of the same layer, for its traffic.
  rt::Program program;
  ASSERT_TRUE(compileLinear(config, program).isOk());
  std::vector<std::vector<std::vector<uint8_t>>> planOutputs;
  std::vector<rt::RankResult> planRanks;
  ASSERT_TRUE(runLinear(program, config, {&data}, threadsOptions(),
                        planOutputs, planRanks)
                  .isOk());

  const int w = config.worldSize();
  ASSERT_EQ(ranks.size(), static_cast<size_t>(w));
  for (int r = 0; r < w; ++r) {
    std::string report;
    EXPECT_EQ(checkOutput(config, data, r, outputs[0][r], report), 0)
        << report;
    EXPECT_EQ(ranks[r].stats.calls, planRanks[r].stats.calls)
        << "rank " << r << ": collectives";
    EXPECT_EQ(ranks[r].stats.bytesSent, planRanks[r].stats.bytesSent)
        << "rank " << r << ": bytes sent";
    EXPECT_EQ(ranks[r].stats.bytesSent, expectedBytesSent(config, r))
        << "rank " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(Sweep, JitLinear,
                         ::testing::ValuesIn(sampledConfigs()), configName);

/// One compilation, three runs with new inputs: the compiled code keeps no
/// pointer or state from an earlier run (nor does its executor).
TEST(JitReplay, EveryRunMatchesItsReference) {
  for (const LinearConfig &config :
       {makeConfig(1, 11, 19, {3, 1, 0, 2}, {5}, true, rt::DType::F32),
        makeConfig(0, 6, 7, {7, 2, 5, 0, 3, 6, 1, 4}, {}, true,
                   rt::DType::F16, "gather-weight")}) {
    JitProgram jit;
    rt::Status compiled = testkit::jitLinear(config, jit);
    ASSERT_TRUE(compiled.isOk()) << compiled.message();
    const std::vector<LinearData> runs = {makeLinearData(config, 0),
                                          makeLinearData(config, 1),
                                          makeLinearData(config, 2)};
    std::vector<std::vector<std::vector<uint8_t>>> outputs;
    std::vector<rt::RankResult> ranks;
    rt::Status status =
        runLinear(jit.program, config, {&runs[0], &runs[1], &runs[2]},
                  threadsOptions(), outputs, ranks, nullptr, jit.executors);
    ASSERT_TRUE(status.isOk()) << status.message();
    for (int r = 0; r < config.worldSize(); ++r)
      for (size_t i = 0; i < runs.size(); ++i) {
        std::string report;
        EXPECT_EQ(checkOutput(config, runs[i], r, outputs[i][r], report), 0)
            << config.name() << " run " << i << ":\n"
            << report;
      }
  }
}

/// A compiled program without its executor is refused by every rank before
/// the first collective, with a message that says what is missing.
TEST(JitErrors, CompiledProgramWithoutExecutorIsRefused) {
  const LinearConfig config =
      makeConfig(1, 11, 19, {2, 0, 1}, {5}, true, rt::DType::F32);
  JitProgram jit;
  ASSERT_TRUE(testkit::jitLinear(config, jit).isOk());
  const LinearData data = makeLinearData(config);
  std::vector<std::vector<std::vector<uint8_t>>> outputs;
  std::vector<rt::RankResult> ranks;
  rt::Status ran = runLinear(jit.program, config, {&data}, threadsOptions(),
                             outputs, ranks);
  ASSERT_FALSE(ran.isOk());
  EXPECT_EQ(ran.code(), rt::StatusCode::InvalidArgument);
  EXPECT_NE(ran.message().find("is compiled code"), std::string::npos)
      << ran.message();
  for (const rt::RankResult &r : ranks)
    EXPECT_EQ(r.stats.calls, 0u) << "rank " << r.rank;
}

//===----------------------------------------------------------------------===//
// Blocks
//===----------------------------------------------------------------------===//

BlockSpec block(testkit::BlockKind kind, testkit::Activation act,
                std::vector<int64_t> placements, std::vector<int64_t> batch,
                rt::DType dtype, std::string strategy, bool residual) {
  BlockSpec s;
  s.kind = kind;
  s.activation = act;
  s.placements = std::move(placements);
  s.batch = std::move(batch);
  s.dtype = dtype;
  s.strategy = std::move(strategy);
  s.residual = residual;
  return s;
}

class JitBlock : public ::testing::TestWithParam<BlockSpec> {};

/// Compiles `spec` with the JIT, runs it on the threads backend on
/// makeBlockData(spec, seed) and checks every rank's output against the
/// float64 reference; `ranks` receives every rank's outcome and traffic.
void runJitBlock(const BlockSpec &spec, uint64_t seed,
                 std::vector<rt::RankResult> &ranks) {
  JitProgram jit;
  rt::Status compiled = testkit::jitBlock(spec, jit);
  ASSERT_TRUE(compiled.isOk()) << compiled.message();
  const testkit::BlockData data = testkit::makeBlockData(spec, seed);
  std::vector<std::vector<uint8_t>> outputs;
  rt::RunOptions options = threadsOptions();
  options.worldSize = spec.worldSize();
  rt::Status ran = testkit::runBlock(jit.program, spec, data, options,
                                     outputs, ranks, {}, nullptr,
                                     jit.executors);
  ASSERT_TRUE(ran.isOk()) << ran.message();
  for (int r = 0; r < spec.worldSize(); ++r) {
    std::string report;
    EXPECT_EQ(testkit::checkBlockOutput(spec, data, r, outputs[r], report), 0)
        << report;
  }
}

TEST_P(JitBlock, MatchesFloat64ReferenceAndCostModelBytes) {
  const BlockSpec &spec = GetParam();
  std::vector<rt::RankResult> ranks;
  ASSERT_NO_FATAL_FAILURE(runJitBlock(spec, 1, ranks));
  const std::vector<uint64_t> bytes = testkit::expectedBlockBytes(spec);
  for (int r = 0; r < spec.worldSize(); ++r)
    EXPECT_EQ(ranks[r].stats.bytesSent, bytes[r]) << "rank " << r;
}

std::string blockName(const ::testing::TestParamInfo<BlockSpec> &info) {
  return info.param.name();
}

using testkit::Activation;
using testkit::BlockKind;
INSTANTIATE_TEST_SUITE_P(
    Blocks, JitBlock,
    ::testing::Values(
        // Fused (moving activations): GELU-tanh on uneven chunks of F = 20
        // over 3, permuted; SwiGLU with a residual over 4; bf16 ReLU.
        block(BlockKind::Mlp, Activation::GeluTanh, {2, 0, 1}, {5},
              rt::DType::F32, "activations", false),
        block(BlockKind::SwiGlu, Activation::Silu, {1, 3, 0, 2}, {2, 3},
              rt::DType::F32, "activations", true),
        block(BlockKind::Mlp, Activation::Relu, {1, 0}, {4}, rt::DType::BF16,
              "activations", false),
        block(BlockKind::Mlp, Activation::GeluErf, {0, 1, 2}, {}, rt::DType::F16,
              "activations", true),
        // Each linear gathering its weight (not fused), f64.
        block(BlockKind::Mlp, Activation::Silu, {2, 0, 1}, {3},
              rt::DType::F64, "gather-weight", false)),
    blockName);

/// Long elementwise chains between the linears (GELU-tanh 17 times: 153
/// ops; issue 27, finding 6): the JIT runs them as the plan executor does
/// (e2e.blocks.LongChains), both against float64.
BlockSpec longChain(rt::DType dtype, const char *strategy) {
  BlockSpec s = block(BlockKind::Mlp, Activation::GeluTanh, {1, 2, 0}, {2, 3},
                      dtype, strategy, false);
  s.repeat = 17;
  return s;
}
INSTANTIATE_TEST_SUITE_P(LongChains, JitBlock,
                         ::testing::Values(longChain(rt::DType::F32,
                                                     "activations"),
                                           longChain(rt::DType::F64,
                                                     "gather-weight")),
                         blockName);

//===----------------------------------------------------------------------===//
// Run-time batch sizes
//===----------------------------------------------------------------------===//

/// A linear with dynamic batch dims (K = 19) and each rank's sizes.
struct DynamicCase {
  int64_t dim;
  int64_t n;
  std::vector<int64_t> placements;
  std::vector<int64_t> batch;
  std::vector<std::vector<int64_t>> rankBatch;
  rt::DType dtype;
  bool bias;
  const char *strategy;

  LinearConfig config() const {
    LinearConfig c =
        makeConfig(dim, n, 19, placements, batch, bias, dtype, strategy);
    c.rankBatch = rankBatch;
    return c;
  }
};

/// Runs `config` (dynamic batch dims, each rank's in config.rankBatch)
/// compiled by the JIT, each rank's result sized by the compiled code and
/// handed over (RankBuffers::resultShapes), and checks every rank's shape
/// and every element against the float64 reference.
void runDynamicJit(const LinearConfig &config,
                   std::vector<uint64_t> *calls = nullptr) {
  SCOPED_TRACE(config.name());
  JitProgram jit;
  rt::Status compiled = testkit::jitLinear(config, jit);
  ASSERT_TRUE(compiled.isOk()) << compiled.message();
  const LinearData data = makeLinearData(config);
  const int w = config.worldSize();
  std::vector<std::vector<uint8_t>> chunks(w), outputs(w);
  std::vector<std::vector<int64_t>> shapes(w);
  rt::RankCallbacks callbacks;
  callbacks.executor = jit.executors;
  callbacks.argShapes = [&](int rank, std::vector<std::vector<int64_t>> &s,
                            std::vector<std::string> &) {
    return testkit::dynamicArgShapes(jit.program, 0,
                                     config.inputShapeOf(rank), s);
  };
  callbacks.bind = [&](const rt::Plan &plan, rt::RankDevice &,
                       rt::RankBuffers &buffers) {
    const int r = plan.rank();
    if (!rt::hasDynamicDim(plan.resultShape(0)))
      return rt::Status::internal("the result's shape should be the run's");
    buffers.results = {nullptr};
    return bindArguments(jit.program, plan, config, data, r, chunks[r],
                         buffers.args);
  };
  callbacks.finish = [&](const rt::Plan &plan, rt::RankDevice &,
                         const rt::RankBuffers &buffers, rt::Communicator &) {
    const int r = plan.rank();
    shapes[r] = buffers.resultShapes.at(0);
    int64_t count = 1;
    for (int64_t d : shapes[r])
      count *= d;
    const auto *p = static_cast<const uint8_t *>(buffers.results[0]);
    outputs[r].assign(p, p + count * rt::dtypeSize(config.dtype));
    return rt::Status::ok();
  };
  rt::RunOptions options = threadsOptions();
  options.worldSize = w;
  std::vector<rt::RankResult> ranks;
  rt::Status ran = rt::runProgram(jit.program, options, callbacks, &ranks);
  ASSERT_TRUE(ran.isOk()) << ran.message();
  if (calls)
    for (const rt::RankResult &rank : ranks)
      calls->push_back(rank.stats.calls);
  for (int r = 0; r < w; ++r) {
    EXPECT_EQ(shapes[r], config.outputShapeOf(r)) << "rank " << r;
    std::string report;
    EXPECT_EQ(checkOutput(config, data, r, outputs[r], report), 0) << report;
  }
}

/// Gathering the weight moves no rows, so the native path runs a batch
/// size known only at run time; each rank's result is sized by the compiled
/// code and handed over (RankBuffers::resultShapes).
TEST(JitDynamicBatch, GatherWeightRunsEveryRanksOwnRows) {
  LinearConfig config =
      makeConfig(1, 11, 19, {2, 3, 0, 1}, {rt::kDynamic, 3}, true,
                 rt::DType::F32, "gather-weight");
  config.rankBatch = {{2, 3}, {0, 3}, {5, 3}, {1, 3}};
  runDynamicJit(config);
}

/// Two and three dynamic batch dims (batch x sequence, and one more) in one
/// group of the result's expand_shape, which upstream's
/// --expand-strided-metadata crashed on (issue 27, finding 1): both
/// sharding dims, every dtype, uneven and empty chunks, a rank with no
/// rows, each rank's own sizes. Gathering the weight (and `auto`, which
/// picks it for dynamic rows); moving activations is the next test.
TEST(JitDynamicBatch, SeveralDynamicDimsEveryShardingDimAndDtype) {
  constexpr int64_t kDyn = rt::kDynamic;
  const std::vector<std::vector<int64_t>> twoDims = {
      {2, 3}, {0, 4}, {1, 1}, {3, 0}};
  const std::vector<std::vector<int64_t>> threeDims = {
      {1, 2, 3}, {2, 0, 2}, {1, 3, 1}};
  const std::vector<DynamicCase> cases = {
      {1, 11, {2, 3, 0, 1}, {kDyn, kDyn}, twoDims, rt::DType::F32, true,
       "gather-weight"},
      {0, 11, {1, 3, 0, 2}, {kDyn, kDyn}, twoDims, rt::DType::BF16, false,
       "gather-weight"},
      {1, 11, {0, 2, 1, 3}, {kDyn, kDyn}, twoDims, rt::DType::F16, true,
       "auto"},
      {0, 11, {2, 0, 1}, {kDyn, kDyn, kDyn}, threeDims, rt::DType::F64, true,
       "gather-weight"},
      {1, 11, {1, 2, 0}, {kDyn, kDyn, kDyn}, threeDims, rt::DType::F32, false,
       "gather-weight"},
      {0, 11, {0, 1, 2}, {kDyn, 2, kDyn}, {{1, 2, 3}, {0, 2, 1}, {2, 2, 2}},
       rt::DType::BF16, true, "gather-weight"},
  };
  for (const DynamicCase &c : cases)
    runDynamicJit(c.config());
}

/// Moving activations stacks every rank's rows: the compiled code exchanges
/// the ranks' row counts first (shardlin.gather_bounds, one 8-byte
/// all_gather) and passes their bounds to the collectives that stack the
/// rows and split them back. Both sharding dims, every dtype, uneven and
/// empty chunks, a rank with no rows, every rank with none, one to three
/// dynamic dims; each rank makes the layer's two collectives plus the one
/// exchange.
TEST(JitDynamicBatch, MovingActivationsRunsEveryRanksOwnRows) {
  constexpr int64_t kDyn = rt::kDynamic;
  const char *act = "activations";
  const std::vector<DynamicCase> cases = {
      {1, 11, {2, 3, 0, 1}, {kDyn, 3}, {{2, 3}, {0, 3}, {5, 3}, {1, 3}},
       rt::DType::F32, true, act},
      {0, 11, {1, 3, 0, 2}, {kDyn, 3}, {{2, 3}, {0, 3}, {5, 3}, {1, 3}},
       rt::DType::F32, true, act},
      {0, 2, {2, 0, 1}, {kDyn}, {{4}, {1}, {0}}, rt::DType::BF16, true, act},
      {1, 11, {1, 0, 2}, {kDyn}, {{0}, {0}, {0}}, rt::DType::F16, false, act},
      {0, 11, {0, 1}, {kDyn, kDyn}, {{2, 3}, {1, 0}}, rt::DType::F64, true,
       act},
      {1, 11, {1, 2, 0}, {kDyn, kDyn, kDyn}, {{1, 2, 3}, {2, 0, 2}, {1, 3, 1}},
       rt::DType::BF16, true, act},
      {1, 11, {0}, {kDyn}, {{6}}, rt::DType::F32, true, act},
  };
  for (const DynamicCase &c : cases) {
    const LinearConfig config = c.config();
    std::vector<uint64_t> calls;
    runDynamicJit(config, &calls);
    const uint64_t expected = config.worldSize() == 1 ? 0 : 3;
    for (size_t r = 0; r < calls.size(); ++r)
      EXPECT_EQ(calls[r], expected) << config.name() << " rank " << r;
  }
}

/// Fused blocks and separately lowered linears on rows known only at run
/// time: the fused block's one all_gather and one reduce_scatter share one
/// exchange of the row counts; against the float64 reference.
TEST(JitDynamicBatch, BlocksRunEveryRanksOwnRows) {
  constexpr int64_t kDyn = rt::kDynamic;
  std::vector<BlockSpec> specs;
  specs.push_back(block(BlockKind::Mlp, Activation::GeluTanh, {2, 0, 1},
                        {kDyn}, rt::DType::F32, "activations", false));
  specs.back().rankBatch = {{3}, {0}, {5}};
  specs.push_back(block(BlockKind::SwiGlu, Activation::Silu, {1, 3, 0, 2},
                        {kDyn, 2}, rt::DType::BF16, "activations", true));
  specs.back().form = testkit::OpForm::LinalgGeneric;
  specs.back().colBias = false;
  specs.back().rankBatch = {{1, 2}, {4, 2}, {0, 2}, {2, 2}};
  specs.push_back(specs.back());
  specs.back().fuse = false;
  specs.push_back(block(BlockKind::Mlp, Activation::Relu, {1, 0}, {kDyn},
                        rt::DType::F64, "activations", true));
  specs.back().rankBatch = {{0}, {7}};
  // Batch x sequence, both dynamic (issue 27, finding 1's fused MLP on
  // tensor<?x?xK>), f16.
  specs.push_back(block(BlockKind::Mlp, Activation::GeluErf, {0, 2, 1},
                        {kDyn, kDyn}, rt::DType::F16, "activations", false));
  specs.back().rankBatch = {{2, 3}, {1, 0}, {3, 1}};
  for (const BlockSpec &spec : specs) {
    SCOPED_TRACE(spec.name());
    std::vector<rt::RankResult> ranks;
    ASSERT_NO_FATAL_FAILURE(runJitBlock(spec, 11, ranks));
    // Fused: the exchange, the all_gather and the reduce_scatter.
    for (int r = 0; spec.fuse && r < spec.worldSize(); ++r)
      EXPECT_EQ(ranks[r].stats.calls, 3u) << "rank " << r;
  }
}

//===----------------------------------------------------------------------===//
// Upstream-form modules (ImportCases.h) compiled to native code
//===----------------------------------------------------------------------===//

class JitImport : public ::testing::TestWithParam<ImportCase> {};

TEST_P(JitImport, EveryRankMatchesTheReference) {
  char pattern[] = "/tmp/shardlin-jit-import-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string dir = pattern;
  std::string report;
  const int64_t failures = runImportCase(
      GetParam(), "threads", -1, dir, report,
      [](const std::string &text, rt::Program &program,
         rt::RankCallbacks::MakeExecutor &executor) {
        JitProgram compiled;
        SHARDLIN_RETURN_IF_ERROR(
            testkit::jitMlir(text, "activations", compiled));
        program = compiled.program;
        executor = compiled.executors;
        return rt::Status::ok();
      });
  std::filesystem::remove_all(dir);
  EXPECT_EQ(failures, 0) << report;
}

INSTANTIATE_TEST_SUITE_P(
    Upstream, JitImport, ::testing::ValuesIn(importJitCases()),
    [](const ::testing::TestParamInfo<ImportCase> &info) {
      return info.param.name();
    });

} // namespace
} // namespace shardlin::e2e
