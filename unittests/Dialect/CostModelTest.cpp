//===- CostModelTest.cpp - The cost model's bytes for every layout --------===//
//
// The bytes each rank sends and receives under each layout of a linear
// (CostModel.h), checked against counts written out by hand from the
// collectives the lowering emits (LowerLayouts.cpp), for even, uneven and
// empty chunks given by explicit bounds; and the explicit-bounds
// ChunkLayout against the ceil rule it generalizes.
//
//===----------------------------------------------------------------------===//

#include "shardlin/Analysis/CostModel.h"
#include "shardlin/runtime/base/ChunkLayout.h"

#include <gtest/gtest.h>

using namespace shardlin;

namespace {

LinearShape shape(int64_t rows, int64_t n, int64_t k, int64_t dim,
                  std::vector<int64_t> bounds, Layout in, Layout out) {
  LinearShape s;
  s.rows = rows;
  s.n = n;
  s.k = k;
  s.dim = dim;
  s.placements = {0, 1, 2, 3};
  s.elementBytes = 4;
  s.bounds = std::move(bounds);
  s.input = in;
  s.result = out;
  return s;
}

std::vector<uint64_t> sent(const LinearShape &s, Strategy strategy) {
  return estimateCost(s, strategy, MachineModel()).bytesSent;
}

TEST(ChunkLayoutTest, CeilRuleIsTheDefault) {
  for (int64_t w = 1; w <= 6; ++w)
    for (int64_t n = 0; n <= 20; ++n) {
      // Reversed placements: chunk i on rank w - 1 - i.
      std::vector<int64_t> placements(w);
      for (int64_t i = 0; i < w; ++i)
        placements[i] = w - 1 - i;
      rt::ChunkLayout ceil(n, placements);
      rt::ChunkLayout explicitCeil(n, placements, rt::ceilBounds(n, w));
      for (int64_t r = 0; r < w; ++r)
        EXPECT_EQ(ceil.ofRank(r), explicitCeil.ofRank(r));
      EXPECT_EQ(rt::checkBounds(rt::ceilBounds(n, w), w, n), "");
      EXPECT_EQ(ceil.uniform(), rt::chunksUniform(n, w));
    }
}

TEST(ChunkLayoutTest, BoundsAreChecked) {
  EXPECT_NE(rt::checkBounds({0, 4}, 2), "");
  EXPECT_NE(rt::checkBounds({1, 4, 8}, 2), "");
  EXPECT_NE(rt::checkBounds({0, 5, 4}, 2), "");
  EXPECT_NE(rt::checkBounds({0, 4, 8}, 2, 9), "");
  EXPECT_EQ(rt::checkBounds({0, 0, 8}, 2, 8), "");
  rt::ChunkLayout layout(10, {2, 0, 3, 1}, {0, 4, 4, 8, 10});
  EXPECT_EQ(layout.ofRank(2), (rt::Range{0, 4}));
  EXPECT_EQ(layout.ofRank(0), (rt::Range{4, 0}));
  EXPECT_EQ(layout.ofRank(3), (rt::Range{4, 4}));
  EXPECT_EQ(layout.ofRank(1), (rt::Range{8, 2}));
  EXPECT_EQ(layout.ofChunk(3), (rt::Range{8, 2}));
  EXPECT_FALSE(layout.uniform());
}

// An all-reduce of M elements: a reduce-scatter and an all-gather of the
// ceil-rule chunks of M in rank order.
TEST(CostModelTest, AllReduceTraffic) {
  // 10 elements over 4: chunks 3, 3, 3, 1.
  auto t = allReduceTraffic(10, 4, 4, 3);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0], (std::pair<uint64_t, uint64_t>{9 * 4, 3 * 1 * 4}));
  EXPECT_EQ(t[1], (std::pair<uint64_t, uint64_t>{3 * 1 * 4, 9 * 4}));
}

// The default layouts with explicit bounds: the K split's all_to_all sends
// the columns of the other ranks' chunks.
TEST(CostModelTest, RowsWithBounds) {
  LinearShape s = shape(5, 11, 10, 1, {0, 4, 4, 8, 10}, Layout::Rows,
                        Layout::Rows);
  s.placements = {2, 0, 3, 1};
  // Rank r owns k_r (0, 2, 4, 4): sends 5 (10 - k_r) 4 + 3 5 11 4.
  EXPECT_EQ(sent(s, Strategy::Activations),
            (std::vector<uint64_t>{860, 820, 780, 780}));
  // Its chunk of the weight to the 3 others: 3 k_r 11 4.
  EXPECT_EQ(sent(s, Strategy::GatherWeight),
            (std::vector<uint64_t>{0, 264, 528, 528}));
}

// A replicated x: no byte of x moves.
TEST(CostModelTest, ReplicatedInput) {
  // N split (12 = 3 each), features result: nothing.
  EXPECT_EQ(sent(shape(8, 12, 16, 0, {}, Layout::Replicated, Layout::Features),
                 Strategy::Activations),
            (std::vector<uint64_t>{0, 0, 0, 0}));
  EXPECT_FALSE(strategyApplies(
      shape(8, 12, 16, 0, {}, Layout::Replicated, Layout::Features),
      Strategy::GatherWeight));
  // N split at [0, 4, 4, 8, 12], replicated result: the rank's 8 x n_r to
  // the 3 others.
  EXPECT_EQ(sent(shape(8, 12, 16, 0, {0, 4, 4, 8, 12}, Layout::Replicated,
                       Layout::Replicated),
                 Strategy::Activations),
            (std::vector<uint64_t>{384, 0, 384, 384}));
  // N split, rows result (8 rows: 2 each): the rank's n_r features of the
  // other ranks' 6 rows.
  EXPECT_EQ(sent(shape(8, 12, 16, 0, {0, 4, 4, 8, 12}, Layout::Replicated,
                       Layout::Rows),
                 Strategy::Activations),
            (std::vector<uint64_t>{96, 0, 96, 96}));
  // K split, replicated result: an all_reduce of 8 x 12 partial sums.
  EXPECT_EQ(sent(shape(8, 12, 16, 1, {}, Layout::Replicated,
                       Layout::Replicated),
                 Strategy::Activations),
            (std::vector<uint64_t>{576, 576, 576, 576}));
  // K split, rows result at [0, 3, 6, 8, 8] (rank 3 has no row): the other
  // ranks' rows of the 8 x 12 partial sums.
  LinearShape rows = shape(8, 12, 16, 1, {}, Layout::Replicated, Layout::Rows);
  rows.rowBounds = {0, 3, 6, 8, 8};
  EXPECT_EQ(sent(rows, Strategy::Activations),
            (std::vector<uint64_t>{5 * 48, 5 * 48, 6 * 48, 8 * 48}));
  // Gathering the weight computes the rank's own rows: same bytes for both
  // results.
  EXPECT_EQ(sent(rows, Strategy::GatherWeight),
            (std::vector<uint64_t>{576, 576, 576, 576}));
}

// f16 partial sums are reduced in f32: 4 bytes per element on the wire.
TEST(CostModelTest, FeaturesInputPartialSums) {
  LinearShape s = shape(8, 12, 16, 1, {}, Layout::Features, Layout::Replicated);
  s.elementBytes = 2;
  EXPECT_EQ(sent(s, Strategy::Activations),
            (std::vector<uint64_t>{576, 576, 576, 576}));
  EXPECT_FALSE(strategyApplies(s, Strategy::GatherWeight));
}

// rows -> features: only the all_gather of x; with explicit row chunks
// (10 rows at [0, 3, 6, 9, 10]) each rank sends its own rows.
TEST(CostModelTest, RowsToFeatures) {
  EXPECT_EQ(sent(shape(2, 12, 16, 0, {}, Layout::Rows, Layout::Features),
                 Strategy::Activations),
            (std::vector<uint64_t>{384, 384, 384, 384}));
  LinearShape s = shape(3, 12, 16, 0, {}, Layout::Rows, Layout::Features);
  s.rowBounds = {0, 3, 6, 9, 10};
  EXPECT_EQ(sent(s, Strategy::Activations),
            (std::vector<uint64_t>{3 * 3 * 64, 3 * 3 * 64, 3 * 3 * 64,
                                   3 * 1 * 64}));
  EXPECT_EQ(estimateCost(s, Strategy::Activations, MachineModel())
                .bytesReceived[3],
            9u * 64);
}

// A block's bytes do not depend on the chunks of F, explicit or not; its
// peak memory does.
TEST(CostModelTest, FusedBlockWithBounds) {
  BlockShape b;
  b.rows = 3;
  b.k = 8;
  b.f = 10;
  b.n = 8;
  b.placements = {1, 0};
  b.bounds = {0, 0, 10};
  StrategyCost c = estimateFusedBlockCost(b, MachineModel());
  EXPECT_EQ(c.bytesSent, (std::vector<uint64_t>{192, 192}));
  // Rank 1 holds the empty chunk: no block of hidden features.
  EXPECT_LT(c.peakExtraBytes[1], c.peakExtraBytes[0]);
}

} // namespace
