//===- GridTest.cpp - Data-parallel grids of the run API ------------------===//
//
// RunOptions::replicas on the threads backend (exec/Grid.cpp): 2 replicas
// of a row-wise layer over W = 2 (RowLayerProgram.h), 4 threads.
// Each replica's own callbacks (RankCallbacks::perReplica) bind its own
// inputs; every world rank sees its place (the group's rank and size, the
// communicator across the replicas); averageOverReplicas of the output
// equals, bit for bit, the mean of the two replicas' outputs run on their
// own (the sum of two f32 rounded once, halved exactly). Then: one
// replica's failure stops the other replica before its first collective,
// and resolveLaunchedRanks' checks.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/exec/Execute.h"
#include "shardlin/runtime/program/ProgramText.h"
#include "shardlin/runtime/tooling/Runner.h"

#include "RandomValues.h"
#include "RowLayerProgram.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace rt = shardlin::rt;
using shardlin::rt::test::randomValues;

namespace {

constexpr int kW = rt::test::kRowLayerW, kReplicas = 2;
constexpr int64_t kRows = rt::test::kRowLayerRows, kN = rt::test::kRowLayerN,
                  kK = rt::test::kRowLayerK;

struct RankData {
  std::vector<float> x, y;
  std::vector<uint8_t> chunk;
};

class Grid : public ::testing::Test {
protected:
  void SetUp() override {
    rt::Status s = rt::parseProgram(rt::test::kRowLayerW2, program);
    ASSERT_TRUE(s.isOk()) << s.message();
  }

  /// Binds replica `replica`'s input of rank r (its own random rows) and
  /// the rank's chunk of A into data[r].
  rt::RankCallbacks callbacksOf(int replica, std::vector<RankData> &data) {
    rt::RankCallbacks c;
    c.bind = [this, replica, &data](const rt::Plan &plan, rt::RankDevice &,
                                    rt::RankBuffers &buffers) {
      RankData &d = data[size_t(plan.rank())];
      d.x = randomValues(kRows * kK, 100 + 10 * replica + plan.rank());
      rt::extractLocalChunk(a.data(), program.args[1].globalShape,
                            rt::DType::F32, program.args[1].sharding,
                            plan.rank(), d.chunk);
      d.y.assign(kRows * kN, NAN);
      buffers.args = {d.x.data(), d.chunk.data()};
      buffers.results = {d.y.data()};
      return rt::Status::ok();
    };
    return c;
  }

  /// Runs the program on a grid of kReplicas with `perReplica`'s callbacks.
  rt::Status runGrid(std::shared_ptr<std::vector<rt::RankCallbacks>> perReplica,
                     std::vector<rt::RankResult> &ranks) {
    rt::RankCallbacks callbacks;
    callbacks.perReplica = std::move(perReplica);
    rt::RunOptions options;
    options.worldSize = kW;
    options.replicas = kReplicas;
    options.comm.timeoutSeconds = 60;
    return rt::runProgram(program, options, callbacks, &ranks);
  }

  rt::Program program;
  const std::vector<float> a = randomValues(kN * kK, 7);
};

TEST_F(Grid, ReplicasRunTheirOwnInputsAndAverage) {
  // Each replica on its own, the reference of the average.
  std::vector<RankData> alone[kReplicas];
  for (int d = 0; d < kReplicas; ++d) {
    alone[d].resize(kW);
    rt::RunOptions options;
    options.worldSize = kW;
    rt::Status s = rt::runProgram(program, options, callbacksOf(d, alone[d]));
    ASSERT_TRUE(s.isOk()) << s.message();
  }

  std::vector<RankData> grid[kReplicas];
  std::mutex mutex;
  struct Place {
    int groupRank = -1, groupSize = -1, acrossRank = -1, acrossSize = -1;
  } places[kReplicas][kW];
  auto perReplica = std::make_shared<std::vector<rt::RankCallbacks>>();
  for (int d = 0; d < kReplicas; ++d) {
    grid[d].resize(kW);
    rt::RankCallbacks c = callbacksOf(d, grid[d]);
    c.run = [&, d](rt::RankRun &run) -> rt::Status {
      SHARDLIN_RETURN_IF_ERROR(run.execute());
      if (!run.replicas())
        return rt::Status::internal("no communicator across the replicas");
      {
        std::lock_guard<std::mutex> lock(mutex);
        Place &p = places[d][run.plan().rank()];
        p.groupRank = run.comm().rank();
        p.groupSize = run.comm().worldSize();
        p.acrossRank = run.replicas()->rank();
        p.acrossSize = run.replicas()->worldSize();
      }
      return rt::averageOverReplicas(run, 0);
    };
    perReplica->push_back(std::move(c));
  }
  std::vector<rt::RankResult> ranks;
  rt::Status s = runGrid(perReplica, ranks);
  ASSERT_TRUE(s.isOk()) << s.message();
  ASSERT_EQ(ranks.size(), size_t(kReplicas * kW));
  for (int g = 0; g < kReplicas * kW; ++g) {
    EXPECT_EQ(ranks[g].rank, g);
    // all_to_all and reduce_scatter: the program's only (the average's
    // all-reduce is the hook's own, on another communicator).
    EXPECT_EQ(ranks[g].stats.calls, 2u) << "world rank " << g;
  }
  for (int d = 0; d < kReplicas; ++d)
    for (int r = 0; r < kW; ++r) {
      const Place &p = places[d][r];
      EXPECT_EQ(p.groupRank, r);
      EXPECT_EQ(p.groupSize, kW);
      EXPECT_EQ(p.acrossRank, d);
      EXPECT_EQ(p.acrossSize, kReplicas);
      for (int64_t e = 0; e < kRows * kN; ++e) {
        const float mean = float(
            (double(alone[0][r].y[e]) + double(alone[1][r].y[e])) / 2);
        EXPECT_EQ(grid[d][r].y[e], mean)
            << "replica " << d << " rank " << r << " element " << e;
      }
      // The inputs were each replica's own.
      EXPECT_EQ(grid[d][r].x, alone[d][r].x);
    }
}

TEST_F(Grid, OneReplicasFailureStopsTheOtherAtOnce) {
  std::vector<RankData> data[kReplicas];
  auto perReplica = std::make_shared<std::vector<rt::RankCallbacks>>();
  for (int d = 0; d < kReplicas; ++d) {
    data[d].resize(kW);
    rt::RankCallbacks c = callbacksOf(d, data[d]);
    if (d == 1) {
      auto bind = c.bind;
      c.bind = [bind](const rt::Plan &plan, rt::RankDevice &device,
                      rt::RankBuffers &buffers) -> rt::Status {
        if (plan.rank() == 1)
          return rt::Status::invalidArgument("replica 1's input is bad");
        return bind(plan, device, buffers);
      };
    }
    perReplica->push_back(std::move(c));
  }
  std::vector<rt::RankResult> ranks;
  const auto start = std::chrono::steady_clock::now();
  rt::Status s = runGrid(perReplica, ranks);
  const double seconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - start)
                             .count();
  EXPECT_LT(seconds, 10.0);
  EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument);
  EXPECT_EQ(s.message(), "replica 1: rank 1: replica 1's input is bad");
  ASSERT_EQ(ranks.size(), size_t(4));
  for (int g : {0, 1}) {
    EXPECT_EQ(ranks[g].status.code(), rt::StatusCode::Aborted);
    EXPECT_NE(ranks[g].status.message().find(
                  "stopped because a rank of another replica failed"),
              std::string::npos)
        << ranks[g].status.message();
  }
  EXPECT_EQ(ranks[2].status.code(), rt::StatusCode::Aborted);
  // Nothing ran: no collective of the program.
  for (const rt::RankResult &r : ranks)
    EXPECT_EQ(r.stats.calls, 0u);
}

TEST_F(Grid, LaunchedRanksAreChecked) {
  rt::RunOptions options;
  options.replicas = 2;
  int ranks = 0;
  // Threads: the program's W times the replicas.
  ASSERT_TRUE(rt::resolveLaunchedRanks(program, options, 0, ranks).isOk());
  EXPECT_EQ(ranks, 4);
  // A launcher's world: DP * W processes.
  ASSERT_TRUE(rt::resolveLaunchedRanks(program, options, 4, ranks).isOk());
  EXPECT_EQ(ranks, 4);
  rt::Status s = rt::resolveLaunchedRanks(program, options, 3, ranks);
  EXPECT_EQ(s.message(),
            "a grid of 2 replicas needs a multiple of 2 MPI processes, not 3");
  EXPECT_EQ(s.subject(), "replicas");
  s = rt::resolveLaunchedRanks(program, options, 6, ranks);
  EXPECT_EQ(s.message(), "each of the grid's 2 replicas: the MPI world size 3 "
                         "does not match the 2 placements of the program's "
                         "sharded values");
  options.worldSize = 2;
  s = rt::resolveLaunchedRanks(program, options, 6, ranks);
  EXPECT_EQ(s.message(), "a grid of 2 replicas of 2 ranks needs 4 MPI "
                         "processes, not 6");
  options.replicas = rt::kMaxWorldSize / 2 + 1;
  s = rt::resolveLaunchedRanks(program, options, 0, ranks);
  EXPECT_EQ(s.message(), "a grid of 2049 replicas of 2 ranks has more than "
                         "4096 ranks");
}

} // namespace
