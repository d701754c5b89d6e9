//===- LateRankTest.cpp - Ranks stuck outside the runtime's timed waits ---===//
//
// Issue 12.3: on the threads backend a rank that never reaches the first
// collective (its bind blocks, as a read of an input that never comes
// does) used to hold runProgram forever: the other ranks timed out in the
// agreement, but the run joined every thread. With
// RunOptions::abandonLateRanks (what the file runner sets), the run ends
// within the timeout plus the grace period and names the late rank and
// where it is; without it, the run still waits for every rank.
//
//===----------------------------------------------------------------------===//

#include "RowLayerProgram.h"

#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/program/ProgramText.h"
#include "shardlin/runtime/exec/Execute.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace rt = shardlin::rt;

namespace {

/// A gate the stuck rank waits on, and the news that its thread is done.
/// Shared with the callbacks, so it outlives a run that gave up on them.
struct Gate {
  std::mutex mutex;
  std::condition_variable cv;
  bool open = false, released = false;

  void waitOpen() {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return open; });
  }
  void set(bool Gate::*flag) {
    std::lock_guard<std::mutex> lock(mutex);
    this->*flag = true;
    cv.notify_all();
  }
  bool waitReleased(std::chrono::seconds limit) {
    std::unique_lock<std::mutex> lock(mutex);
    return cv.wait_for(lock, limit, [&] { return released; });
  }
};

/// Rank 1's bind blocks until the gate opens; both ranks bind real data
/// otherwise (never reached by rank 0's run: the agreement fails first).
rt::RankCallbacks stuckBindCallbacks(const std::shared_ptr<Gate> &gate) {
  using rt::test::kRowLayerK, rt::test::kRowLayerN, rt::test::kRowLayerRows;
  struct Data {
    std::vector<float> x, a, y;
  };
  auto data = std::make_shared<std::vector<Data>>(2);
  for (Data &d : *data) {
    d.x.assign(kRowLayerRows * kRowLayerK, 0.5f);
    d.a.assign(kRowLayerN * kRowLayerK, 0.25f); // more than a chunk needs
    d.y.resize(kRowLayerRows * kRowLayerN);
  }
  rt::RankCallbacks callbacks;
  callbacks.bind = [gate, data](const rt::Plan &plan, rt::RankDevice &,
                                rt::RankBuffers &buffers) {
    if (plan.rank() == 1)
      gate->waitOpen();
    Data &d = (*data)[size_t(plan.rank())];
    buffers.args = {d.x.data(), d.a.data()};
    buffers.results = {d.y.data()};
    return rt::Status::ok();
  };
  callbacks.release = [gate](int rank) {
    if (rank == 1)
      gate->set(&Gate::released);
  };
  return callbacks;
}

class LateRank : public ::testing::Test {
protected:
  void SetUp() override {
    // The row-wise layer over 2 ranks (RowLayerProgram.h): the first
    // collective is the agreement, then the all_to_all.
    rt::Status s = rt::parseProgram(rt::test::kRowLayerW2, program);
    ASSERT_TRUE(s.isOk()) << s.message();
    options.worldSize = 2;
    options.comm.timeoutSeconds = 1;
  }
  rt::Program program;
  rt::RunOptions options;
};

TEST_F(LateRank, StuckBindIsGivenUpOnWithinTimeoutAndGrace) {
  auto gate = std::make_shared<Gate>();
  options.abandonLateRanks = true;
  std::vector<rt::RankResult> ranks;
  const auto start = std::chrono::steady_clock::now();
  rt::Status st =
      rt::runProgram(program, options, stuckBindCallbacks(gate), &ranks);
  const double seconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - start)
                             .count();
  // The timeout (1 s) for rank 0's agreement, then min(timeout, 2 s) of
  // grace for rank 1; a few seconds of slack for a loaded machine.
  EXPECT_LT(seconds, 1 + 1 + 4.0);
  EXPECT_GE(seconds, 1.0);
  ASSERT_FALSE(st.isOk());
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(ranks[0].status.code(), rt::StatusCode::DeadlineExceeded)
      << ranks[0].status.message();
  EXPECT_NE(ranks[0].status.message().find("waiting for rank 1"),
            std::string::npos)
      << ranks[0].status.message();
  EXPECT_EQ(ranks[1].rank, 1);
  EXPECT_EQ(ranks[1].status.code(), rt::StatusCode::DeadlineExceeded);
  EXPECT_NE(ranks[1].status.message().find(
                "rank 1: still loading its inputs (bind) 1 s after another "
                "rank failed; given up on"),
            std::string::npos)
      << ranks[1].status.message();
  // The rank left running ends on its own once its bind returns: the
  // aborted group fails its agreement at once, and release runs.
  gate->set(&Gate::open);
  EXPECT_TRUE(gate->waitReleased(std::chrono::seconds(30)));
}

TEST_F(LateRank, WithoutAbandoningTheRunWaitsForEveryRank) {
  auto gate = std::make_shared<Gate>();
  std::vector<rt::RankResult> ranks;
  rt::RankCallbacks callbacks = stuckBindCallbacks(gate);
  auto run = std::async(std::launch::async, [&] {
    return rt::runProgram(program, options, callbacks, &ranks);
  });
  // Well past the timeout and the grace, the run is still waiting.
  EXPECT_EQ(run.wait_for(std::chrono::seconds(4)), std::future_status::timeout);
  gate->set(&Gate::open);
  ASSERT_EQ(run.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  rt::Status st = run.get();
  EXPECT_EQ(st.code(), rt::StatusCode::DeadlineExceeded) << st.message();
  ASSERT_EQ(ranks.size(), 2u);
  // Rank 1 came back on its own: its agreement failed on the aborted group.
  EXPECT_FALSE(ranks[1].status.isOk());
  EXPECT_TRUE(gate->waitReleased(std::chrono::seconds(1)));
}

} // namespace
