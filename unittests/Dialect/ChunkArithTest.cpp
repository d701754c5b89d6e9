//===- ChunkArithTest.cpp - The chunk rule as IR, against ChunkLayout.h ---===//
//
// buildChunkRange (ChunkArith.h) emits the chunk rule as arith ops on a rank
// value; the native path's sizes and offsets that differ by rank come from
// it. Built with a constant rank, the ops fold to constants, which must be
// the range ChunkLayout.h (the runtime's and the verifiers' rule) gives, for
// every rank of every spec below; a rank outside [0, W) gets an in-bounds
// range.
//
//===----------------------------------------------------------------------===//

#include "shardlin/Dialect/Shardlin/IR/ChunkArith.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinDialect.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"
#include "shardlin/runtime/base/ChunkLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

using namespace mlir;
using namespace mlir::shardlin;
namespace rt = ::shardlin::rt;

namespace {

class ChunkArithTest : public ::testing::Test {
protected:
  ChunkArithTest() {
    context.loadDialect<ShardlinDialect, arith::ArithDialect>();
    module = ModuleOp::create(UnknownLoc::get(&context));
  }

  /// The specs to check for W ranks: every permutation for W <= 4, else
  /// identity, reversed and 20 random ones.
  static std::vector<std::vector<int64_t>> placementsFor(int64_t w) {
    std::vector<int64_t> p(w);
    std::iota(p.begin(), p.end(), 0);
    std::vector<std::vector<int64_t>> all;
    if (w <= 4) {
      do
        all.push_back(p);
      while (std::next_permutation(p.begin(), p.end()));
      return all;
    }
    all.push_back(p);
    all.emplace_back(p.rbegin(), p.rend());
    std::mt19937 gen(static_cast<unsigned>(w));
    for (int i = 0; i < 20; ++i) {
      std::shuffle(p.begin(), p.end(), gen);
      all.push_back(p);
    }
    return all;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(ChunkArithTest, FoldsToChunkLayoutForEveryRank) {
  OpBuilder b(&context);
  b.setInsertionPointToEnd(module->getBody());
  Location loc = b.getUnknownLoc();
  int checked = 0;
  for (int64_t w = 1; w <= 7; ++w)
    for (const std::vector<int64_t> &placements : placementsFor(w))
      for (int64_t n : {0, 1, 2, 3, 5, 7, 8, 11, 12, 13, 64, 1000003}) {
        auto chunk = ChunkAttr::get(&context, /*dim=*/0, placements);
        rt::ChunkLayout layout(n, placements);
        // Ranks 0..W-1, and W (outside the group).
        for (int64_t rank = 0; rank <= w; ++rank) {
          Value r = arith::ConstantIndexOp::create(b, loc, rank);
          ChunkRangeValues range = buildChunkRange(b, loc, chunk, n, r);
          std::optional<int64_t> offset = getConstantIntValue(range.offset);
          std::optional<int64_t> size = getConstantIntValue(range.size);
          ASSERT_TRUE(offset && size) << "did not fold: n = " << n
                                      << ", W = " << w << ", rank " << rank;
          // Outside the group: empty, or the last chunk where the size
          // is static (even chunks); in bounds either way.
          rt::Range expected = layout.ofRank(rank < w ? rank : 0);
          if (rank == w)
            expected = rt::chunksUniform(n, w)
                           ? rt::Range{n - n / w, n / w}
                           : rt::Range{n, 0};
          EXPECT_EQ(*offset, expected.offset)
              << "n = " << n << ", W = " << w << ", rank " << rank;
          EXPECT_EQ(*size, expected.size)
              << "n = " << n << ", W = " << w << ", rank " << rank;
          ++checked;
        }
      }
  EXPECT_GT(checked, 7000); // 7368 ranges
}

/// Every way to cut n elements into w chunks (for small n, w), as bounds.
static void allBounds(int64_t n, int64_t w, std::vector<int64_t> &prefix,
                      std::vector<std::vector<int64_t>> &out) {
  if (static_cast<int64_t>(prefix.size()) == w) {
    std::vector<int64_t> bounds = prefix;
    bounds.push_back(n);
    out.push_back(bounds);
    return;
  }
  for (int64_t b = prefix.back(); b <= n; ++b) {
    prefix.push_back(b);
    allBounds(n, w, prefix, out);
    prefix.pop_back();
  }
}

// Explicit chunk bounds (empty chunks, uneven chunks, bounds equal to the
// ceil rule): the IR folds, for every rank, to what ChunkLayout gives, and
// the attribute's local size is static exactly when the chunks are equal.
TEST_F(ChunkArithTest, FoldsToExplicitBoundsForEveryRank) {
  OpBuilder b(&context);
  b.setInsertionPointToEnd(module->getBody());
  Location loc = b.getUnknownLoc();
  int checked = 0;
  for (int64_t w = 1; w <= 4; ++w)
    for (int64_t n : {0, 1, 3, 4, 6}) {
      std::vector<std::vector<int64_t>> cuts;
      std::vector<int64_t> prefix{0};
      allBounds(n, w, prefix, cuts);
      for (const std::vector<int64_t> &bounds : cuts)
        for (const std::vector<int64_t> &placements : placementsFor(w)) {
          auto chunk = ChunkAttr::get(&context, /*dim=*/0, placements, bounds);
          rt::ChunkLayout layout(n, placements, bounds);
          EXPECT_EQ(ShapedType::isStatic(chunk.getLocalSize(n)),
                    layout.uniform());
          for (int64_t rank = 0; rank < w; ++rank) {
            Value r = arith::ConstantIndexOp::create(b, loc, rank);
            ChunkRangeValues range = buildChunkRange(b, loc, chunk, n, r);
            std::optional<int64_t> offset = getConstantIntValue(range.offset);
            std::optional<int64_t> size = getConstantIntValue(range.size);
            ASSERT_TRUE(offset && size);
            EXPECT_EQ(*offset, layout.ofRank(rank).offset);
            EXPECT_EQ(*size, layout.ofRank(rank).size);
            auto [chunkOffset, chunkSize] = chunk.getChunkRange(
                n, std::find(placements.begin(), placements.end(), rank) -
                       placements.begin());
            EXPECT_EQ(chunkOffset, layout.ofRank(rank).offset);
            EXPECT_EQ(chunkSize, layout.ofRank(rank).size);
            ++checked;
          }
        }
    }
  EXPECT_GT(checked, 2000);
}

// Chunks of whole blocks (`block = D`, heads): the IR folds, for every
// rank, to the ceil rule on the n / D blocks scaled by D, computed here
// independently through ChunkLayout's ceil rule; the attribute's own
// ranges, bounds (withBoundsFor, for blocks > 1) and local size agree.
TEST_F(ChunkArithTest, FoldsToBlockChunksForEveryRank) {
  OpBuilder b(&context);
  b.setInsertionPointToEnd(module->getBody());
  Location loc = b.getUnknownLoc();
  int checked = 0;
  for (int64_t w = 1; w <= 5; ++w)
    for (int64_t block : {1, 2, 3, 4})
      for (int64_t blocks : {0, 1, 3, 4, 5, 7, 12}) {
        const int64_t n = blocks * block;
        for (const std::vector<int64_t> &placements : placementsFor(w)) {
          auto chunk = ChunkAttr::get(&context, /*dim=*/0, placements,
                                      ArrayRef<int64_t>(), block);
          std::vector<int64_t> expected = rt::ceilBounds(blocks, w);
          for (int64_t &v : expected)
            v *= block;
          rt::ChunkLayout layout(n, placements, expected);
          EXPECT_EQ(ShapedType::isStatic(chunk.getLocalSize(n)),
                    layout.uniform());
          SmallVector<int64_t> bounds = chunk.getBoundsFor(n);
          EXPECT_EQ(std::vector<int64_t>(bounds.begin(), bounds.end()),
                    expected);
          // The plain rule (block 1) stays as it is.
          if (block > 1)
            EXPECT_EQ(chunk.withBoundsFor(n).getBounds(), ArrayRef(bounds));
          else
            EXPECT_EQ(chunk.withBoundsFor(n), chunk);
          for (int64_t rank = 0; rank < w; ++rank) {
            Value r = arith::ConstantIndexOp::create(b, loc, rank);
            ChunkRangeValues range = buildChunkRange(b, loc, chunk, n, r);
            std::optional<int64_t> offset = getConstantIntValue(range.offset);
            std::optional<int64_t> size = getConstantIntValue(range.size);
            ASSERT_TRUE(offset && size);
            EXPECT_EQ(*offset, layout.ofRank(rank).offset);
            EXPECT_EQ(*size, layout.ofRank(rank).size);
            EXPECT_EQ(*offset % block, 0);
            EXPECT_EQ(*size % block, 0);
            ++checked;
          }
        }
      }
  EXPECT_GT(checked, 1000);
}

TEST_F(ChunkArithTest, SizeIsStaticExactlyWhenChunksAreEven) {
  OpBuilder b(&context);
  b.setInsertionPointToEnd(module->getBody());
  Location loc = b.getUnknownLoc();
  auto chunk = ChunkAttr::get(&context, /*dim=*/1, {2, 0, 1});
  // 9 over 3: 3 each, an attribute whatever the rank.
  ChunkRangeValues even = buildLocalChunkRange(b, loc, chunk, 9);
  EXPECT_TRUE(isa<Attribute>(even.size));
  EXPECT_EQ(getConstantIntValue(even.size), 3);
  EXPECT_TRUE(even.offset.getDefiningOp() &&
              !getConstantIntValue(even.offset));
  // 10 over 3: computed from shardlin.rank at run time.
  ChunkRangeValues uneven = buildLocalChunkRange(b, loc, chunk, 10);
  EXPECT_TRUE(isa<Value>(uneven.size));
  EXPECT_FALSE(getConstantIntValue(uneven.size));
  bool readsRank = false;
  module->walk([&](RankOp op) {
    readsRank = true;
    EXPECT_EQ(op.getWorldSize(), 3u);
  });
  EXPECT_TRUE(readsRank);
}

TEST_F(ChunkArithTest, OneRankFoldsCompletely) {
  OpBuilder b(&context);
  b.setInsertionPointToEnd(module->getBody());
  auto chunk = ChunkAttr::get(&context, /*dim=*/0, {0});
  ChunkRangeValues range =
      buildLocalChunkRange(b, b.getUnknownLoc(), chunk, 17);
  EXPECT_EQ(getConstantIntValue(range.offset), 0);
  EXPECT_EQ(getConstantIntValue(range.size), 17);
  bool readsRank = false;
  module->walk([&](RankOp) { readsRank = true; });
  EXPECT_FALSE(readsRank);
}

} // namespace
