//===- ExecuteTest.cpp - The in-memory run API's replay hook --------------===//
//
// RankCallbacks::run on the threads backend: a row-wise layer y_r = x_r A^T
// over W = 2 ranks (all_to_all, GEMM, reduce_scatter), executed 3 times in
// one run with new inputs each time. Every execution's output of every rank
// is compared with a float64 reference within (K + W) * 2^-24 of
// sum_k |x_k A_jk| (f32 accumulation of K products, then a W-term sum); the
// rank's stats must be 3 times those of the default single execution, with
// the hook's own collectives not counted. Then the hook's errors: a buffer
// table the hook broke, and a hook that fails.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/program/ProgramText.h"
#include "shardlin/runtime/exec/Execute.h"
#include "shardlin/runtime/tooling/Runner.h"

#include "RandomValues.h"
#include "RowLayerProgram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace rt = shardlin::rt;
using shardlin::rt::test::randomValues;

namespace {

constexpr int kW = rt::test::kRowLayerW;
constexpr int64_t kRows = rt::test::kRowLayerRows, kN = rt::test::kRowLayerN,
                  kK = rt::test::kRowLayerK;
constexpr int kReplays = 3;

std::vector<float> inputOf(int rank, int replay) {
  return randomValues(kRows * kK, 100 + 10 * rank + replay);
}

/// Failures of y = x A^T against the float64 reference, described.
std::string checkOutput(const std::vector<float> &x,
                        const std::vector<float> &a,
                        const std::vector<float> &y) {
  std::string report;
  for (int64_t i = 0; i < kRows; ++i)
    for (int64_t j = 0; j < kN; ++j) {
      double exact = 0, scale = 0;
      for (int64_t k = 0; k < kK; ++k) {
        exact += double(x[i * kK + k]) * double(a[j * kK + k]);
        scale += std::fabs(double(x[i * kK + k]) * double(a[j * kK + k]));
      }
      const double bound = (kK + kW) * std::ldexp(1.0, -24) * scale;
      const double got = y[i * kN + j];
      if (!(std::fabs(got - exact) <= bound))
        report += "y[" + std::to_string(i) + "][" + std::to_string(j) +
                  "] = " + std::to_string(got) + ", reference " +
                  std::to_string(exact) + ", bound " + std::to_string(bound) +
                  "\n";
    }
  return report;
}

class ExecuteReplay : public ::testing::Test {
protected:
  void SetUp() override {
    rt::Status s = rt::parseProgram(rt::test::kRowLayerW2, program);
    ASSERT_TRUE(s.isOk()) << s.message();
    options.worldSize = kW;
    options.comm.timeoutSeconds = 60;
  }

  /// Binds replay 0's input and the rank's chunk of A; the output starts as
  /// NaN, so an element the plan does not write fails the check.
  rt::RankCallbacks bindingCallbacks() {
    rt::RankCallbacks callbacks;
    callbacks.bind = [this](const rt::Plan &plan, rt::RankDevice &,
                            rt::RankBuffers &buffers) {
      Rank &r = ranks[plan.rank()];
      r.x = inputOf(plan.rank(), 0);
      rt::extractLocalChunk(a.data(), program.args[1].globalShape,
                            rt::DType::F32, program.args[1].sharding,
                            plan.rank(), r.chunk);
      r.y.assign(kRows * kN, NAN);
      buffers.args = {r.x.data(), r.chunk.data()};
      buffers.results = {r.y.data()};
      return rt::Status::ok();
    };
    return callbacks;
  }

  struct Rank {
    std::vector<float> x, y;
    std::vector<uint8_t> chunk;
    std::vector<std::string> reports;
  };
  rt::Program program;
  rt::RunOptions options;
  const std::vector<float> a = randomValues(kN * kK, 7);
  Rank ranks[kW];
};

TEST_F(ExecuteReplay, ReplaysCheckOutputsAndSumStats) {
  // The default path: one execution.
  std::vector<rt::RankResult> once;
  rt::Status s = rt::runProgram(program, options, bindingCallbacks(), &once);
  ASSERT_TRUE(s.isOk()) << s.message();
  ASSERT_EQ(once.size(), size_t(kW));
  for (int r = 0; r < kW; ++r) {
    EXPECT_EQ(checkOutput(ranks[r].x, a, ranks[r].y), "") << "rank " << r;
    // all_to_all and reduce_scatter.
    EXPECT_EQ(once[r].stats.calls, 2u) << "rank " << r;
    EXPECT_GT(once[r].stats.bytesSent, 0u) << "rank " << r;
  }

  // The hook: 3 executions, new inputs and a poisoned output each time, a
  // barrier of the hook's own before each (not the program's traffic).
  rt::RankCallbacks callbacks = bindingCallbacks();
  std::vector<rt::CommStats> lastStats(kW);
  callbacks.run = [&](rt::RankRun &run) {
    const int rank = run.plan().rank();
    Rank &r = ranks[rank];
    for (int i = 0; i < kReplays; ++i) {
      SHARDLIN_RETURN_IF_ERROR(run.comm().barrier());
      // Into the bound storage: the buffer table keeps pointing at it.
      const std::vector<float> x = inputOf(rank, i);
      std::copy(x.begin(), x.end(), r.x.begin());
      std::fill(r.y.begin(), r.y.end(), NAN);
      SHARDLIN_RETURN_IF_ERROR(run.execute());
      r.reports.push_back(checkOutput(r.x, a, r.y));
      lastStats[rank] = run.lastStats();
    }
    if (run.executions() != kReplays)
      return rt::Status::internal("executions() = " +
                                  std::to_string(run.executions()));
    return rt::Status::ok();
  };
  std::vector<rt::RankResult> replayed;
  s = rt::runProgram(program, options, callbacks, &replayed);
  ASSERT_TRUE(s.isOk()) << s.message();
  ASSERT_EQ(replayed.size(), size_t(kW));
  for (int r = 0; r < kW; ++r) {
    ASSERT_EQ(ranks[r].reports.size(), size_t(kReplays)) << "rank " << r;
    for (int i = 0; i < kReplays; ++i)
      EXPECT_EQ(ranks[r].reports[i], "") << "rank " << r << " replay " << i;
    // Each replay was checked against its own input: a plan that kept the
    // first input would fail replays 1 and 2.
    EXPECT_NE(inputOf(r, 0), inputOf(r, 1));
    EXPECT_EQ(lastStats[r].calls, once[r].stats.calls) << "rank " << r;
    EXPECT_EQ(lastStats[r].bytesSent, once[r].stats.bytesSent)
        << "rank " << r;
    EXPECT_EQ(replayed[r].stats.calls, kReplays * once[r].stats.calls)
        << "rank " << r;
    EXPECT_EQ(replayed[r].stats.bytesSent, kReplays * once[r].stats.bytesSent)
        << "rank " << r;
    EXPECT_GT(replayed[r].seconds.run, 0.0);
  }
}

TEST_F(ExecuteReplay, ExecuteChecksTheBufferTablesAgain) {
  rt::RankCallbacks callbacks = bindingCallbacks();
  callbacks.run = [](rt::RankRun &run) {
    run.buffers().results.clear();
    return run.execute();
  };
  std::vector<rt::RankResult> result;
  rt::Status s = rt::runProgram(program, options, callbacks, &result);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument);
  EXPECT_EQ(s.message(), "rank 0: the plan returns 1 result(s) but 0 result "
                         "buffer(s) were bound");
  ASSERT_EQ(result.size(), size_t(kW));
  // Nothing ran: no traffic.
  EXPECT_EQ(result[1].stats.calls, 0u);
}

TEST_F(ExecuteReplay, HookErrorsFailTheirRank) {
  rt::RankCallbacks callbacks = bindingCallbacks();
  callbacks.run = [](rt::RankRun &run) {
    SHARDLIN_RETURN_IF_ERROR(run.execute());
    if (run.plan().rank() == 1)
      return rt::Status::ioError("could not record the timings");
    return rt::Status::ok();
  };
  bool finished[kW] = {false, false};
  callbacks.finish = [&](const rt::Plan &plan, rt::RankDevice &,
                         const rt::RankBuffers &, rt::Communicator &) {
    finished[plan.rank()] = true;
    return rt::Status::ok();
  };
  std::vector<rt::RankResult> result;
  rt::Status s = rt::runProgram(program, options, callbacks, &result);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.code(), rt::StatusCode::IoError);
  EXPECT_EQ(s.message(), "rank 1: could not record the timings");
  ASSERT_EQ(result.size(), size_t(kW));
  EXPECT_TRUE(result[0].status.isOk()) << result[0].status.message();
  EXPECT_TRUE(finished[0]);
  EXPECT_FALSE(finished[1]);
  // The failed rank still reports the traffic of its execution.
  EXPECT_EQ(result[1].stats.calls, 2u);
}

} // namespace
