//===- CompiledProgramTest.cpp - What runs a rank's program is pluggable --===//
//
// A compiled program (Program::compiled: an entry's signature whose body is
// native code) run through the in-memory run API with an executor of the
// test's own (RankCallbacks::executor), on the threads backend, W = 3: the
// entry takes a sharded argument (its global 7 x 2 split along dim 0 in
// chunks 3, 3, 1 held by ranks 2, 0, 1) and a plain one, and returns the
// gathered global tensor plus the plain argument, an all_gather on the
// rank's communicator. Checked: every rank's result against the global
// tensor, the traffic counted as a plan's, a replay through RankRun, the
// executor refused or failing (every rank stops before the first
// collective), and the form and text of compiled programs.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/program/ProgramText.h"
#include "shardlin/runtime/base/ChunkLayout.h"
#include "shardlin/runtime/exec/Execute.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace rt = shardlin::rt;

namespace {

constexpr int kW = 3;
const std::vector<int64_t> kPlacements = {2, 0, 1};

/// main(w: sharded<7x2 f32, dim 0 over [2, 0, 1]>, b: 7x2 f32) -> 7x2 f32.
rt::Program gatherProgram() {
  rt::Program p;
  p.name = "main";
  p.worldSize = kW;
  p.compiled = "test-code";
  rt::Argument w;
  w.type = {rt::DType::F32, {rt::kDynamic, 2}};
  w.sharded = true;
  w.globalShape = {7, 2};
  w.sharding = {0, kPlacements};
  rt::Argument b;
  b.type = {rt::DType::F32, {7, 2}};
  p.args = {w, b};
  p.values = {w.type, b.type, {rt::DType::F32, {7, 2}}};
  p.results = {2};
  return p;
}

float globalValue(int64_t i) { return 0.5f + static_cast<float>(i); }

/// The executor: gathers the rank's chunk and adds the plain argument.
class GatherExecutor final : public rt::RankExecutor {
public:
  GatherExecutor(rt::Communicator &comm, const rt::Plan &plan)
      : comm_(comm), rows_(plan.argShape(0)[0]) {}
  rt::Status run(rt::RankBuffers &buffers) override {
    std::vector<int64_t> counts, displs;
    int64_t total = 0;
    for (int r = 0; r < kW; ++r) {
      counts.push_back(2 * rt::ChunkLayout(7, kPlacements).ofRank(r).size);
      displs.push_back(total);
      total += counts.back();
    }
    // Gathered by rank, then put in chunk order.
    std::vector<float> byRank(14);
    SHARDLIN_RETURN_IF_ERROR(comm_.allGatherV(buffers.args[0], 2 * rows_,
                                              byRank.data(), counts, displs,
                                              rt::DType::F32));
    auto *out = static_cast<float *>(buffers.results[0]);
    const auto *plain = static_cast<const float *>(buffers.args[1]);
    int64_t offset = 0;
    for (int r = 0; r < kW; ++r) {
      const rt::Range range = rt::ChunkLayout(7, kPlacements).ofRank(r);
      for (int64_t i = 0; i < 2 * range.size; ++i)
        out[2 * range.offset + i] = byRank[offset + i] + plain[2 * range.offset + i];
      offset += 2 * range.size;
    }
    return rt::Status::ok();
  }

private:
  rt::Communicator &comm_;
  int64_t rows_;
};

struct GatherRun {
  std::vector<std::vector<float>> chunks, results;
  std::vector<float> plain = std::vector<float>(14, 100.0f);
  std::vector<rt::RankResult> ranks;
  rt::Status status;
};

/// Runs gatherProgram() with `executor` (and `run`, if given) on threads.
GatherRun runGather(const rt::RankCallbacks::MakeExecutor &executor,
              const std::function<rt::Status(rt::RankRun &)> &run = {}) {
  GatherRun out;
  out.chunks.resize(kW);
  out.results.assign(kW, std::vector<float>(14, -1.0f));
  rt::RankCallbacks callbacks;
  callbacks.executor = executor;
  callbacks.run = run;
  callbacks.bind = [&](const rt::Plan &plan, rt::RankDevice &,
                       rt::RankBuffers &buffers) {
    const int r = plan.rank();
    const rt::Range range = rt::ChunkLayout(7, kPlacements).ofRank(r);
    if (plan.argShape(0) != std::vector<int64_t>{range.size, 2} ||
        plan.resultShape(0) != std::vector<int64_t>{7, 2})
      return rt::Status::internal("the plan's shapes are not the signature's");
    for (int64_t i = 0; i < 2 * range.size; ++i)
      out.chunks[r].push_back(globalValue(2 * range.offset + i));
    buffers.args = {out.chunks[r].data(), out.plain.data()};
    buffers.results = {out.results[r].data()};
    return rt::Status::ok();
  };
  rt::RunOptions options;
  options.comm.timeoutSeconds = 30;
  out.status = rt::runProgram(gatherProgram(), options, callbacks, &out.ranks);
  return out;
}

rt::RankCallbacks::MakeExecutor gatherExecutors() {
  return [](const rt::Plan &plan, rt::Communicator &comm, rt::RankDevice &,
            std::unique_ptr<rt::RankExecutor> &out) {
    out = std::make_unique<GatherExecutor>(comm, plan);
    return rt::Status::ok();
  };
}

TEST(CompiledProgram, RunsThroughItsExecutorOnEveryRank) {
  GatherRun run = runGather(gatherExecutors());
  ASSERT_TRUE(run.status.isOk()) << run.status.message();
  ASSERT_EQ(run.ranks.size(), static_cast<size_t>(kW));
  for (int r = 0; r < kW; ++r) {
    for (int64_t i = 0; i < 14; ++i)
      EXPECT_EQ(run.results[r][i], globalValue(i) + 100.0f)
          << "rank " << r << " element " << i;
    // The gather's traffic, counted as a plan's: the rank's chunk to the
    // two others, in one collective.
    const int64_t mine = rt::ChunkLayout(7, kPlacements).ofRank(r).size;
    EXPECT_EQ(run.ranks[r].stats.bytesSent, uint64_t(2 * 4 * 2 * mine));
    EXPECT_EQ(run.ranks[r].stats.calls, 1u);
  }
}

TEST(CompiledProgram, RankRunReplaysTheExecutor) {
  GatherRun run = runGather(gatherExecutors(), [](rt::RankRun &r) {
    for (int i = 0; i < 3; ++i)
      SHARDLIN_RETURN_IF_ERROR(r.execute());
    return r.executions() == 3 ? rt::Status::ok()
                               : rt::Status::internal("wrong count");
  });
  ASSERT_TRUE(run.status.isOk()) << run.status.message();
  for (int r = 0; r < kW; ++r) {
    EXPECT_EQ(run.ranks[r].stats.calls, 3u) << "rank " << r;
    EXPECT_EQ(run.results[r][13], globalValue(13) + 100.0f);
  }
}

TEST(CompiledProgram, WithoutAnExecutorEveryRankRefusesBeforeAnyCollective) {
  GatherRun run = runGather({});
  ASSERT_FALSE(run.status.isOk());
  EXPECT_EQ(run.status.code(), rt::StatusCode::InvalidArgument);
  EXPECT_NE(run.status.message().find("is compiled code (test-code)"),
            std::string::npos)
      << run.status.message();
  for (const rt::RankResult &r : run.ranks) {
    EXPECT_FALSE(r.status.isOk());
    EXPECT_EQ(r.stats.calls, 0u);
  }
  EXPECT_EQ(run.results[0][0], -1.0f) << "nothing may be written";
}

TEST(CompiledProgram, AnExecutorThatFailsOnOneRankStopsEveryRank) {
  std::atomic<int> made{0};
  GatherRun run = runGather([&](const rt::Plan &plan, rt::Communicator &comm,
                          rt::RankDevice &device,
                          std::unique_ptr<rt::RankExecutor> &out) {
    ++made;
    if (plan.rank() == 1)
      return rt::Status::unavailable("no code for rank 1");
    return gatherExecutors()(plan, comm, device, out);
  });
  ASSERT_FALSE(run.status.isOk());
  EXPECT_EQ(run.status.code(), rt::StatusCode::Unavailable);
  EXPECT_NE(run.status.message().find("rank 1: no code for rank 1"),
            std::string::npos)
      << run.status.message();
  EXPECT_EQ(made.load(), kW);
  for (const rt::RankResult &r : run.ranks) {
    EXPECT_EQ(r.stats.calls, 0u) << "rank " << r.rank;
    if (r.rank != 1)
      EXPECT_EQ(r.status.code(), rt::StatusCode::Aborted) << r.status.message();
  }
}

TEST(CompiledProgram, FormAndTextForm) {
  rt::Program p = gatherProgram();
  ASSERT_TRUE(p.validate().isOk()) << p.validate().message();
  // The text form keeps the code's name (the agreement's fingerprint and
  // the plan cache read it).
  const std::string text = rt::serializeProgram(p);
  EXPECT_NE(text.find("\ncompiled test-code\n"), std::string::npos) << text;
  rt::Program back;
  ASSERT_TRUE(rt::parseProgram(text, back).isOk());
  EXPECT_EQ(back.compiled, "test-code");
  EXPECT_EQ(rt::serializeProgram(back), text);

  rt::Program bad = p;
  bad.compiled = "two words";
  EXPECT_NE(bad.validate().message().find("white space"), std::string::npos);
  bad = p;
  bad.results = {1};
  EXPECT_NE(bad.validate().message().find("result 0 must be value 2"),
            std::string::npos)
      << bad.validate().message();
  bad = p;
  rt::Instr in;
  in.op = rt::OpCode::Reshape;
  in.operands = {1};
  in.result = 2;
  bad.instrs.push_back(in);
  EXPECT_NE(bad.validate().message().find("signature only"), std::string::npos)
      << bad.validate().message();

  // The plan resolves its shapes and allocates nothing; it does not run.
  std::unique_ptr<rt::Plan> plan;
  ASSERT_TRUE(rt::Plan::build(p, 1, kW, rt::hostAllocator(), plan).isOk());
  EXPECT_EQ(plan->argShape(0), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(plan->resultShape(0), (std::vector<int64_t>{7, 2}));
}

} // namespace
