//===- ThreadsEndToEndTest.cpp - shardlin.linear on the threads backend ---===//
//
// Every configuration of threadsConfigs() (both sharding dims, W = 1..8,
// even, uneven and empty chunks, identity, reversed, all 24 permutations of
// W = 4 and random permutations for W >= 5, 1-D to 4-D inputs, bias or not,
// every dtype on a subset, larger 67 x 97 shapes) is compiled from MLIR
// text, run with one thread per rank, and every element of every rank's
// output is compared with a float64 reference within errorBound() (see
// E2ESupport.cpp for the bounds).
//
// Also: a plan replayed with new inputs, the bytes each rank sends (from the
// chunk tables), and the runtime's own errors for a plan used with the wrong
// world size, rank or arguments.
//
//===----------------------------------------------------------------------===//

#include "E2ESupport.h"
#include "SingleBlasThread.h"
#include "shardlin/Analysis/CostModel.h"

#include "shardlin/runtime/base/Buffer.h"
#include "shardlin/runtime/base/ChunkLayout.h"
#include "shardlin/runtime/backends/Host.h"

#include <gtest/gtest.h>

#include <cmath>
#include <ostream>

namespace shardlin::testkit {
/// How gtest prints a configuration (in failure messages and ctest's
/// listing); found by argument-dependent lookup, so it lives in the
/// namespace of LinearSpec.
void PrintTo(const LinearSpec &c, std::ostream *os) { *os << c.name(); }
} // namespace shardlin::testkit

namespace shardlin::e2e {

namespace rt = ::shardlin::rt;

namespace {

/// A collective that a bug leaves waiting fails after this long instead of
/// hanging the test (ctest's timeout would only say "timeout").
constexpr double kCollectiveTimeoutSeconds = 30;

// The ranks run as threads at the same time: one BLAS thread each.
const ::testing::Environment *const singleBlasThread =
    ::testing::AddGlobalTestEnvironment(new rt::test::SingleBlasThread);

struct ThreadsRun {
  std::vector<rt::Status> status;
  std::vector<std::vector<uint8_t>> outputs;
  std::vector<rt::CommStats> stats;
};

/// Runs every rank of `config` through the in-memory run API on threads.
ThreadsRun runOnThreads(const rt::Program &program, const LinearConfig &config,
                        const LinearData &data) {
  rt::RunOptions options;
  options.comm.timeoutSeconds = kCollectiveTimeoutSeconds;
  options.blasThreads = 1;
  std::vector<std::vector<std::vector<uint8_t>>> outputs;
  std::vector<rt::RankResult> ranks;
  // Each rank's outcome is in `ranks`; the root cause is not needed here.
  static_cast<void>(
      runLinear(program, config, {&data}, options, outputs, ranks));
  const int w = config.worldSize();
  ThreadsRun run;
  run.status.resize(w);
  run.stats.resize(w);
  run.outputs = std::move(outputs[0]);
  for (const rt::RankResult &rank : ranks) {
    run.status.at(rank.rank) = rank.status;
    run.stats.at(rank.rank) = rank.stats;
  }
  return run;
}

/// Compiles, runs and checks every rank of `config`.
void expectCorrect(const LinearConfig &config) {
  rt::Program program;
  rt::Status compiled = compileLinear(config, program);
  ASSERT_TRUE(compiled.isOk()) << config.name() << ": " << compiled.message();
  const LinearData data = makeLinearData(config);
  ThreadsRun run = runOnThreads(program, config, data);
  for (int r = 0; r < config.worldSize(); ++r) {
    EXPECT_TRUE(run.status[r].isOk())
        << config.name() << " rank " << r << ": " << run.status[r].message();
    if (!run.status[r].isOk())
      continue;
    std::string report;
    EXPECT_EQ(checkOutput(config, data, r, run.outputs[r], report), 0)
        << report;
  }
}

//===----------------------------------------------------------------------===//
// The configuration sweep
//===----------------------------------------------------------------------===//

class ThreadsLinear : public ::testing::TestWithParam<LinearConfig> {};

TEST_P(ThreadsLinear, MatchesFloat64Reference) { expectCorrect(GetParam()); }

std::string configName(const ::testing::TestParamInfo<LinearConfig> &info) {
  return info.param.name();
}

INSTANTIATE_TEST_SUITE_P(Sweep, ThreadsLinear,
                         ::testing::ValuesIn(threadsConfigs()), configName);

//===----------------------------------------------------------------------===//
// Replay, traffic, failure modes
//===----------------------------------------------------------------------===//

const LinearConfig kRowUnevenPermuted =
    makeConfig(1, 11, 19, {3, 1, 0, 2}, {5}, true, rt::DType::F32);
const LinearConfig kColUnevenPermuted =
    makeConfig(0, 11, 19, {3, 1, 0, 2}, {5}, true, rt::DType::F32);

/// One plan per rank, run three times with different inputs; every run must
/// match its own reference (a plan must not keep pointers or state from an
/// earlier run).
class ThreadsReplay : public ::testing::TestWithParam<LinearConfig> {};

TEST_P(ThreadsReplay, SecondRunWithNewInputsIsCorrect) {
  const LinearConfig &config = GetParam();
  rt::Program program;
  rt::Status compiled = compileLinear(config, program);
  ASSERT_TRUE(compiled.isOk()) << compiled.message();
  const int w = config.worldSize();
  const std::vector<LinearData> runs = {makeLinearData(config, 0),
                                        makeLinearData(config, 1),
                                        makeLinearData(config, 2)};
  rt::RunOptions options;
  options.comm.timeoutSeconds = kCollectiveTimeoutSeconds;
  options.blasThreads = 1;
  std::vector<std::vector<std::vector<uint8_t>>> outputs;
  std::vector<rt::RankResult> ranks;
  rt::Status status = runLinear(program, config, {&runs[0], &runs[1], &runs[2]},
                                options, outputs, ranks);
  ASSERT_TRUE(status.isOk()) << status.message();
  ASSERT_EQ(ranks.size(), static_cast<size_t>(w));
  for (int r = 0; r < w; ++r) {
    for (size_t i = 0; i < runs.size(); ++i) {
      std::string report;
      EXPECT_EQ(checkOutput(config, runs[i], r, outputs[i][r], report), 0)
          << "run " << i << ":\n"
          << report;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Plans, ThreadsReplay,
    ::testing::Values(kRowUnevenPermuted, kColUnevenPermuted,
                      makeConfig(1, 7, 5, {2, 0, 3, 1}, {2, 3}, false,
                                 rt::DType::BF16),
                      makeConfig(0, 6, 7, {7, 2, 5, 0, 3, 6, 1, 4}, {}, true,
                                 rt::DType::F16)),
    configName);

/// The bytes each rank sends are derived from the chunk tables by
/// expectedBytesSent (E2ESupport.h). The agreement allReduce before the run
/// is not counted (stats are reset after it).
LinearConfig withStrategy(LinearConfig c, const std::string &strategy) {
  c.strategy = strategy;
  return c;
}

class ThreadsTraffic : public ::testing::TestWithParam<LinearConfig> {};

TEST_P(ThreadsTraffic, BytesSentMatchChunkTables) {
  const LinearConfig &config = GetParam();
  rt::Program program;
  rt::Status compiled = compileLinear(config, program);
  ASSERT_TRUE(compiled.isOk()) << compiled.message();
  const LinearData data = makeLinearData(config);
  ThreadsRun run = runOnThreads(program, config, data);
  for (int r = 0; r < config.worldSize(); ++r) {
    ASSERT_TRUE(run.status[r].isOk()) << run.status[r].message();
    std::string report;
    EXPECT_EQ(checkOutput(config, data, r, run.outputs[r], report), 0)
        << report;
    EXPECT_EQ(run.stats[r].bytesSent, expectedBytesSent(config, r))
        << "rank " << r;
    // The cost model the pass chooses by must predict the same bytes.
    if (config.worldSize() > 1) {
      ::shardlin::LinearShape shape;
      shape.rows = config.rows();
      shape.n = config.n;
      shape.k = config.k;
      shape.dim = config.dim;
      shape.placements = config.placements;
      shape.elementBytes = rt::dtypeSize(config.dtype);
      ::shardlin::StrategyCost cost = ::shardlin::estimateCost(
          shape, *::shardlin::parseStrategy(config.strategy),
          ::shardlin::MachineModel());
      EXPECT_EQ(run.stats[r].bytesSent, cost.bytesSent[r])
          << "cost model, rank " << r;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Bytes, ThreadsTraffic,
    ::testing::Values(
        kRowUnevenPermuted, kColUnevenPermuted,
        makeConfig(1, 11, 3, {4, 2, 0, 3, 1}, {2, 3}, false, rt::DType::F16),
        makeConfig(0, 3, 19, {4, 2, 0, 3, 1}, {2, 3}, true, rt::DType::F64),
        makeConfig(1, 11, 19, {0}, {5}, true, rt::DType::F32),
        withStrategy(kRowUnevenPermuted, "gather-weight"),
        withStrategy(kColUnevenPermuted, "gather-weight"),
        withStrategy(makeConfig(1, 11, 3, {4, 2, 0, 3, 1}, {2, 3}, false,
                                rt::DType::F16),
                     "gather-weight"),
        withStrategy(makeConfig(0, 3, 19, {4, 2, 0, 3, 1}, {2, 3}, true,
                                rt::DType::F64),
                     "gather-weight")),
    configName);

/// The harness itself: the data is what the bounds assume, and the checker
/// catches a wrong element, unwritten (poisoned) elements and a short output.
TEST(ThreadsHarness, DataIsNonZeroRoundedAndDistinctPerRank) {
  for (rt::DType dt :
       {rt::DType::F16, rt::DType::BF16, rt::DType::F32, rt::DType::F64}) {
    const LinearConfig c = makeConfig(1, 11, 19, {2, 0, 1}, {2, 3}, true, dt);
    const LinearData d = makeLinearData(c);
    ASSERT_EQ(d.inputs.size(), 3u);
    for (const HostTensor *t :
         {&d.weight, &d.bias, &d.inputs[0], &d.inputs[1], &d.inputs[2]}) {
      std::vector<double> back(t->values.size());
      rt::convertToF64(dt, t->bytes.data(), back.data(), back.size());
      EXPECT_EQ(back, t->values) << "values are not the dtype's values";
      for (double v : t->values) {
        EXPECT_GE(std::fabs(v), 0.25);
        EXPECT_LE(std::fabs(v), 1.0);
      }
    }
    EXPECT_NE(d.inputs[0].values, d.inputs[1].values);
    EXPECT_NE(d.inputs[1].values, d.inputs[2].values);
    EXPECT_EQ(makeLinearData(c).weight.values, d.weight.values);
    EXPECT_NE(makeLinearData(c, 1).inputs[0].values, d.inputs[0].values);
  }
}

TEST(ThreadsHarness, CheckerCatchesWrongPoisonedAndShortOutputs) {
  const LinearConfig c =
      makeConfig(0, 11, 19, {2, 0, 1}, {5}, true, rt::DType::F32);
  rt::Program program;
  rt::Status compiled = compileLinear(c, program);
  ASSERT_TRUE(compiled.isOk()) << compiled.message();
  const LinearData data = makeLinearData(c);
  ThreadsRun run = runOnThreads(program, c, data);
  ASSERT_TRUE(run.status[1].isOk()) << run.status[1].message();
  std::string report;
  ASSERT_EQ(checkOutput(c, data, 1, run.outputs[1], report), 0) << report;

  // One element off by 10x the bound.
  const Reference ref = referenceOutput(c, data, 1);
  std::vector<double> y(c.rows() * c.n);
  rt::convertToF64(c.dtype, run.outputs[1].data(), y.data(), y.size());
  y[7] = ref.y[7] + 10 * errorBound(c) * ref.scale[7];
  std::vector<uint8_t> wrong(run.outputs[1].size());
  rt::convertFromF64(c.dtype, y.data(), wrong.data(), y.size());
  report.clear();
  EXPECT_EQ(checkOutput(c, data, 1, wrong, report), 1);
  EXPECT_NE(report.find("element 7 "), std::string::npos) << report;

  // Another rank's (correct) output is wrong for this rank.
  report.clear();
  EXPECT_GT(checkOutput(c, data, 1, run.outputs[0], report), 0);

  std::vector<uint8_t> poisoned(run.outputs[1].size(), 0xFF);
  report.clear();
  EXPECT_EQ(checkOutput(c, data, 1, poisoned, report), c.rows() * c.n);
  EXPECT_NE(report.find("NaN"), std::string::npos) << report;

  std::vector<uint8_t> shorter(run.outputs[1].begin(),
                               run.outputs[1].end() - 4);
  report.clear();
  EXPECT_GT(checkOutput(c, data, 1, shorter, report), 0);
}

/// Failure modes the runtime (not the verifier) reports: a plan for the
/// wrong world size or rank, and a plan run with the wrong communicator or
/// arguments. Each must be an error status, not a crash or a hang.
class ThreadsRuntimeErrors : public ::testing::Test {
protected:
  void SetUp() override {
    rt::Status compiled = compileLinear(kRowUnevenPermuted, program);
    ASSERT_TRUE(compiled.isOk()) << compiled.message();
  }
  rt::Program program;
};

TEST_F(ThreadsRuntimeErrors, PlanForWrongWorldSizeFails) {
  ASSERT_EQ(program.worldSize, 4);
  for (int w : {1, 3, 5, 8}) {
    std::unique_ptr<rt::Plan> plan;
    rt::Status s = rt::Plan::build(program, 0, w, rt::hostAllocator(), plan);
    EXPECT_FALSE(s.isOk()) << "world size " << w;
    EXPECT_EQ(plan, nullptr) << "world size " << w;
    // A plan asked for the wrong world size is the caller's mistake.
    EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument) << s.message();
    EXPECT_NE(s.message().find(std::to_string(w)), std::string::npos)
        << s.message();
  }
}

TEST_F(ThreadsRuntimeErrors, PlanForSingleRankProgramOnTwoRanksFails) {
  rt::Program single;
  rt::Status compiled = compileLinear(
      makeConfig(0, 11, 19, {0}, {5}, true, rt::DType::F32), single);
  ASSERT_TRUE(compiled.isOk()) << compiled.message();
  std::unique_ptr<rt::Plan> plan;
  rt::Status s = rt::Plan::build(single, 0, 2, rt::hostAllocator(), plan);
  EXPECT_FALSE(s.isOk());
}

TEST_F(ThreadsRuntimeErrors, PlanForRankOutOfRangeFails) {
  for (int rank : {-1, 4, 100}) {
    std::unique_ptr<rt::Plan> plan;
    rt::Status s = rt::Plan::build(program, rank, 4, rt::hostAllocator(), plan);
    EXPECT_FALSE(s.isOk()) << "rank " << rank;
  }
}

TEST_F(ThreadsRuntimeErrors, RunWithCommunicatorOfOtherGroupFails) {
  std::unique_ptr<rt::Plan> plan;
  ASSERT_TRUE(rt::Plan::build(program, 0, 4, rt::hostAllocator(), plan).isOk());
  const LinearData data = makeLinearData(kRowUnevenPermuted);
  std::unique_ptr<rt::GemmBackend> gemm = rt::createCpuGemm();
  std::unique_ptr<rt::LocalOps> ops = rt::createHostLocalOps();
  // Rank 0 of a group of 3 for a plan of 4 ranks, and rank 1 of 4 for a plan
  // built for rank 0: both must fail before the first collective (a single
  // thread, so a collective would time out).
  std::vector<std::unique_ptr<rt::Communicator>> three =
      rt::createThreadsGroup(3, rt::CommOptions{2.0});
  std::vector<uint8_t> chunk;
  std::vector<const void *> args;
  ASSERT_TRUE(bindArguments(program, *plan, kRowUnevenPermuted, data, 0, chunk,
                            args)
                  .isOk());
  std::vector<uint8_t> out = poisonedOutput(*plan);
  rt::Status s = plan->run(*three[0], *gemm, *ops, args, {out.data()});
  EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument) << s.message();
  std::vector<std::unique_ptr<rt::Communicator>> four =
      rt::createThreadsGroup(4, rt::CommOptions{2.0});
  s = plan->run(*four[1], *gemm, *ops, {nullptr, nullptr, nullptr},
                {nullptr});
  EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument) << s.message();
}

TEST_F(ThreadsRuntimeErrors, RunWithWrongArgumentCountFails) {
  std::unique_ptr<rt::Plan> plan;
  ASSERT_TRUE(rt::Plan::build(program, 0, 4, rt::hostAllocator(), plan).isOk());
  std::unique_ptr<rt::GemmBackend> gemm = rt::createCpuGemm();
  std::unique_ptr<rt::LocalOps> ops = rt::createHostLocalOps();
  std::vector<std::unique_ptr<rt::Communicator>> four =
      rt::createThreadsGroup(4, rt::CommOptions{2.0});
  std::vector<uint8_t> out = poisonedOutput(*plan);
  rt::Status s =
      plan->run(*four[0], *gemm, *ops, {nullptr, nullptr}, {out.data()});
  EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument) << s.message();
  s = plan->run(*four[0], *gemm, *ops, {nullptr, nullptr, nullptr}, {});
  EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument) << s.message();
}

} // namespace
} // namespace shardlin::e2e
