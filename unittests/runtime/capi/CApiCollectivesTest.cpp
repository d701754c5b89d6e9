//===- CApiCollectivesTest.cpp - The C ABI's collectives across ranks -----===//
//
// Collectives of the C ABI on a threads group: a rank whose arguments are
// rejected makes the others fail at once (naming it) instead of waiting for
// the timeout, ranks that disagree fail together, and shardlin_gather_bounds
// exchanges every rank's size as the bounds that the *_bounds collectives
// then stack and split rows by.
//
//===----------------------------------------------------------------------===//

#include "CApiTestSupport.h"
#include "shardlin-c/Runtime.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <thread>
#include <string>
#include <vector>

namespace {

using namespace shardlin::capi_test;

/// One rank passes an input that contradicts the chunk rule: it gets a
/// message with what it passed and what its chunk is; the other rank fails
/// at once (well before the 30 s timeout), naming it; nothing is written.
TEST(CApi, ChunkRuleViolationFailsEveryRankAtOnce) {
  Group g(2);
  const int64_t placements[2] = {0, 1};
  shardlin_status st[2];
  std::string msg[2];
  Tensor out0({5, 2}), out1({5, 2});
  Tensor in0({3, 2}), in1({3, 2}); // rank 1's chunk of 5 is 2 rows, not 3
  const auto start = std::chrono::steady_clock::now();
  g.run([&](int r) {
    st[r] = shardlin_all_gather(g.ctx[r], SHARDLIN_F32,
                                r == 0 ? &in0.ref : &in1.ref,
                                r == 0 ? &out0.ref : &out1.ref, 0, placements);
    msg[r] = message(g.ctx[r]);
  });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_LT(seconds, 10.0);
  EXPECT_EQ(st[1], SHARDLIN_INVALID_ARGUMENT);
  EXPECT_EQ(msg[1], "shardlin_all_gather (rank 1 of 2): in [3, 2] has 3 "
                    "along dim 0 but rank 1's chunk of 5 (chunk 1 of 2, "
                    "split 3) has 2 (out is [5, 2])");
  EXPECT_EQ(st[0], SHARDLIN_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(msg[0], "shardlin_all_gather (rank 0 of 2): threads "
                               "allGatherV (rank 0 of 2): invalid arguments "
                               "on rank 1: shardlin_all_gather (rank 1 of "
                               "2): in [3, 2] has 3"));
  for (float v : out0.data)
    EXPECT_EQ(v, 1.5f);
  EXPECT_EQ(shardlin_context_collective_calls(g.ctx[0]), 0u);
  EXPECT_EQ(shardlin_context_bytes_sent(g.ctx[0]), 0u);
}

/// shardlin_gather_bounds: every rank's size, as the bounds of their blocks
/// in chunk order (a permutation, a rank with none), which then stack and
/// split rows of run-time sizes through the *_bounds collectives; a bad
/// size fails every rank at once, naming it.
TEST(CApi, GatherBoundsStacksEveryRanksRows) {
  Group g(3);
  const int64_t placements[3] = {2, 0, 1};
  const int64_t rows[3] = {2, 0, 3}; // rank r's rows
  int64_t bounds[3][4];
  shardlin_status st[3], gathered[3], scattered[3];
  // A Tensor's view points into the Tensor itself: a deque never moves them.
  std::deque<Tensor> in, out, back;
  for (int r = 0; r < 3; ++r) {
    in.emplace_back(std::vector<int64_t>{rows[r], 2}, 1.0f + r);
    out.emplace_back(std::vector<int64_t>{5, 2}, -1.0f);
    back.emplace_back(std::vector<int64_t>{rows[r], 2}, -1.0f);
  }
  g.run([&](int r) {
    st[r] = shardlin_gather_bounds(g.ctx[r], rows[r], placements, bounds[r]);
    gathered[r] =
        shardlin_all_gather_bounds(g.ctx[r], SHARDLIN_F32, &in[r].ref,
                                   &out[r].ref, 0, placements, bounds[r]);
    scattered[r] = shardlin_reduce_scatter_bounds(
        g.ctx[r], SHARDLIN_F32, &out[r].ref, &back[r].ref, 0, placements,
        bounds[r]);
  });
  for (int r = 0; r < 3; ++r) {
    ASSERT_EQ(st[r], SHARDLIN_OK) << message(g.ctx[r]);
    ASSERT_EQ(gathered[r], SHARDLIN_OK) << message(g.ctx[r]);
    ASSERT_EQ(scattered[r], SHARDLIN_OK) << message(g.ctx[r]);
    // Chunk 0 is rank 2's 3 rows, chunk 1 rank 0's 2, chunk 2 rank 1's 0.
    EXPECT_EQ(std::vector<int64_t>(bounds[r], bounds[r] + 4),
              (std::vector<int64_t>{0, 3, 5, 5}));
    const std::vector<float> expected = {3, 3, 3, 3, 3, 3, 1, 1, 1, 1};
    EXPECT_EQ(out[r].data, expected) << "rank " << r;
    // Summed over the 3 ranks and split back into the same blocks.
    for (float v : back[r].data)
      EXPECT_EQ(v, 3.0f * (1.0f + r)) << "rank " << r;
    EXPECT_EQ(shardlin_context_collective_calls(g.ctx[r]), 3u);
  }

  Group h(2);
  const int64_t two[2] = {0, 1};
  int64_t b[2][3];
  const int64_t sizes[2] = {4, -1};
  h.run([&](int r) {
    st[r] = shardlin_gather_bounds(h.ctx[r], sizes[r], two, b[r]);
  });
  EXPECT_EQ(st[1], SHARDLIN_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(message(h.ctx[1]),
                       "shardlin_gather_bounds (rank 1 of 2): size must be in "
                       "[0, 2^53), got -1"));
  EXPECT_EQ(st[0], SHARDLIN_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(message(h.ctx[0]), "invalid arguments on rank 1"));
}

/// Ranks that disagree (each one's own arguments fine) fail together.
TEST(CApi, RanksThatDisagreeFailTogether) {
  Group g(2);
  const int64_t placements[2] = {0, 1};
  shardlin_status st[2];
  std::string msg[2];
  // Rank 0 gathers 5 rows (its chunk: 3, rank 1's: 2), rank 1 gathers 6
  // (3 each): rank 0 expects 2 rows from rank 1, which sends 3.
  Tensor in0({3, 2}), out0({5, 2}), in1({3, 2}), out1({6, 2});
  g.run([&](int r) {
    st[r] = shardlin_all_gather(g.ctx[r], SHARDLIN_F32,
                                r == 0 ? &in0.ref : &in1.ref,
                                r == 0 ? &out0.ref : &out1.ref, 0, placements);
    msg[r] = message(g.ctx[r]);
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(st[r], SHARDLIN_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(msg[r], "size mismatch: rank 1 sends 6 elements "
                                 "but rank 0 expects recvCounts[1] = 4"));
  }
}

} // namespace

namespace {

/// shardlin_context_split as a DP x TP grid uses it: 2 replicas of 2 ranks
/// on a threads group of 4. World rank g's replica context (color g / 2)
/// and across context (color g % 2, key reversed: ranked by key first)
/// have the expected ranks and sizes, carry collectives of their own
/// groups only, and outlive the parent; a negative color fails the
/// context (sticky), a null out is an argument error.
TEST(CApi, ContextSplitMakesAGridsGroups) {
  auto g = std::make_unique<Group>(4);
  shardlin_context *replica[4] = {}, *across[4] = {};
  shardlin_status st[4][2];
  g->run([&](int r) {
    st[r][0] = shardlin_context_split(g->ctx[r], r / 2, r, &replica[r]);
    st[r][1] = shardlin_context_split(g->ctx[r], r % 2, -r, &across[r]);
  });
  for (int r = 0; r < 4; ++r) {
    ASSERT_EQ(st[r][0], SHARDLIN_OK) << message(g->ctx[r]);
    ASSERT_EQ(st[r][1], SHARDLIN_OK) << message(g->ctx[r]);
    EXPECT_EQ(shardlin_context_world_size(replica[r]), 2);
    EXPECT_EQ(shardlin_context_rank(replica[r]), r % 2);
    EXPECT_EQ(shardlin_context_world_size(across[r]), 2);
    // Keys -r: the higher world rank comes first.
    EXPECT_EQ(shardlin_context_rank(across[r]), r / 2 == 0 ? 1 : 0);
  }
  g.reset(); // the new contexts outlive the parent

  // Within a replica: an all_gather of one row per rank; across: an
  // all_reduce that sums the two replicas' values.
  std::deque<Tensor> mine, gathered, sum;
  for (int r = 0; r < 4; ++r) {
    mine.emplace_back(std::vector<int64_t>{1, 2}, 1.0f + r);
    gathered.emplace_back(std::vector<int64_t>{2, 2}, -1.0f);
    sum.emplace_back(std::vector<int64_t>{1, 2}, -1.0f);
  }
  const int64_t placements[2] = {0, 1};
  std::vector<std::thread> threads;
  for (int r = 0; r < 4; ++r)
    threads.emplace_back([&, r] {
      st[r][0] = shardlin_all_gather(replica[r], SHARDLIN_F32, &mine[r].ref,
                                     &gathered[r].ref, 0, placements);
      st[r][1] = shardlin_all_reduce(across[r], SHARDLIN_F32, &mine[r].ref,
                                     &sum[r].ref);
    });
  for (std::thread &t : threads)
    t.join();
  for (int r = 0; r < 4; ++r) {
    ASSERT_EQ(st[r][0], SHARDLIN_OK) << message(replica[r]);
    ASSERT_EQ(st[r][1], SHARDLIN_OK) << message(across[r]);
    const float first = 1.0f + 2 * (r / 2); // the replica's rank 0
    EXPECT_EQ(gathered[r].data, (std::vector<float>{first, first, first + 1,
                                                    first + 1}));
    const float total = (1.0f + r % 2) + (3.0f + r % 2);
    EXPECT_EQ(sum[r].data, (std::vector<float>{total, total}));
    EXPECT_EQ(shardlin_context_collective_calls(replica[r]), 1u);
    EXPECT_EQ(shardlin_context_collective_calls(across[r]), 1u);
    shardlin_context_destroy(replica[r]);
    shardlin_context_destroy(across[r]);
  }

  // A negative color: every rank's context fails, with the reason; the
  // failure is sticky. A null out is an argument error.
  Group bad(2);
  shardlin_context *none[2] = {reinterpret_cast<shardlin_context *>(1),
                               reinterpret_cast<shardlin_context *>(1)};
  bad.run([&](int r) {
    st[r][0] = shardlin_context_split(bad.ctx[r], -1, 0, &none[r]);
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(st[r][0], SHARDLIN_INVALID_ARGUMENT);
    EXPECT_EQ(none[r], nullptr);
    EXPECT_TRUE(contains(message(bad.ctx[r]),
                         "shardlin_context_split (rank " + std::to_string(r) +
                             " of 2): "));
    EXPECT_TRUE(contains(message(bad.ctx[r]), "color"));
    EXPECT_EQ(shardlin_context_status(bad.ctx[r]), SHARDLIN_INVALID_ARGUMENT);
  }
  Group one(1);
  EXPECT_EQ(shardlin_context_split(one.ctx[0], 0, 0, nullptr),
            SHARDLIN_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(message(one.ctx[0]),
                       "shardlin_context_split (rank 0 of 1): out is null"));
  EXPECT_EQ(shardlin_context_split(nullptr, 0, 0, &none[0]),
            SHARDLIN_INVALID_ARGUMENT);
}

} // namespace
