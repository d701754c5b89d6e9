//===- CollectiveSizesTest.cpp - A collective's sizes on one rank ---------===//
//
// exec/CollectiveSizes.h sizes the plan's collectives and the C ABI's: the
// pieces of the chunk rule and of stacked blocks, the check of a rank's
// piece with its message, and the communicator's tables (counts and
// displacements, staged when the dim is not the outermost).
//
//===----------------------------------------------------------------------===//

#include "exec/CollectiveSizes.h"

#include <gtest/gtest.h>

namespace shardlin::rt {
namespace {

const CollectiveNames kNames = {"in", "out", "dim", "split_dim", "concat_dim"};

/// The ceil rule's pieces (no bounds), which these tests assume valid.
DimPieces chunkPieces(int64_t n, std::vector<int64_t> placements) {
  DimPieces p;
  EXPECT_TRUE(rt::chunkPieces(n, std::move(placements), {}, p));
  return p;
}

std::vector<int64_t> offsets(const DimPieces &p) {
  std::vector<int64_t> v;
  for (const Range &r : p.ranges)
    v.push_back(r.offset);
  return v;
}

std::vector<int64_t> sizes(const DimPieces &p) {
  std::vector<int64_t> v;
  for (const Range &r : p.ranges)
    v.push_back(r.size);
  return v;
}

TEST(CollectiveSizes, ChunkPiecesByRank) {
  // 5 over 3 chunks, split 2: chunk 0 = [0, 2) to rank 2, chunk 1 = [2, 4)
  // to rank 0, chunk 2 = [4, 5) to rank 1.
  const DimPieces p = chunkPieces(5, {2, 0, 1});
  EXPECT_EQ(p.n, 5);
  EXPECT_FALSE(p.blocks);
  EXPECT_EQ(offsets(p), (std::vector<int64_t>{2, 4, 0}));
  EXPECT_EQ(sizes(p), (std::vector<int64_t>{2, 1, 2}));
  EXPECT_EQ(p.describe(1), "rank 1's chunk of 5 (chunk 2 of 3, split 2) has 1");
  EXPECT_EQ(pieceShape({5, 7}, 0, p, 0), (std::vector<int64_t>{2, 7}));
}

TEST(CollectiveSizes, ChunkPiecesOfExplicitBounds) {
  // 7 over 3 chunks at [0, 4, 4, 7]: chunk 1 (rank 0) is empty.
  DimPieces p;
  ASSERT_TRUE(rt::chunkPieces(7, {2, 0, 1}, {0, 4, 4, 7}, p));
  EXPECT_EQ(offsets(p), (std::vector<int64_t>{4, 4, 0}));
  EXPECT_EQ(sizes(p), (std::vector<int64_t>{0, 3, 4}));
  EXPECT_EQ(p.describe(0),
            "rank 0's chunk of 7 (chunk 1 of 3, bounds [0, 4, 4, 7]) has 0");
  CollectiveSizes s;
  ASSERT_TRUE(sizeAllGather({0, 2}, {7, 2}, 0, p, 0, kNames, s));
  EXPECT_EQ(s.recv.counts, (std::vector<int64_t>{0, 6, 8}));
  EXPECT_EQ(s.recv.displs, (std::vector<int64_t>{8, 8, 0}));
  // Bounds that end elsewhere than the dim are refused.
  Status st = rt::chunkPieces(8, {0, 1, 2}, {0, 4, 4, 7}, p);
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument);
  EXPECT_EQ(st.message(), "the chunk bounds do not split a dim of 8: bounds "
                          "end at 7 but the dim has 8 elements");
}

TEST(CollectiveSizes, BlockPiecesEndToEnd) {
  // Blocks by chunk: chunk 0 (rank 1) has 3 rows, chunk 1 (rank 0) has 0.
  const DimPieces p = blockPieces({3, 0}, {1, 0});
  EXPECT_EQ(p.n, 3);
  EXPECT_TRUE(p.blocks);
  EXPECT_EQ(offsets(p), (std::vector<int64_t>{3, 0}));
  EXPECT_EQ(sizes(p), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(p.describe(0), "rank 0's block of 3 (chunk 1 of 2) has 0");
}

TEST(CollectiveSizes, AllGatherAlongTheOutermostDimIsNotStaged) {
  CollectiveSizes s;
  ASSERT_TRUE(
      sizeAllGather({2, 4}, {5, 4}, 0, chunkPieces(5, {1, 0}), 0, kNames, s));
  // Rank 0 holds chunk 1, rows [3, 5).
  EXPECT_FALSE(s.recv.staged);
  EXPECT_EQ(s.recv.counts, (std::vector<int64_t>{8, 12}));
  EXPECT_EQ(s.recv.displs, (std::vector<int64_t>{12, 0}));
  EXPECT_EQ(s.sendCount, 8);
}

TEST(CollectiveSizes, AllGatherAlongAnInnerDimIsStaged) {
  CollectiveSizes s;
  ASSERT_TRUE(
      sizeAllGather({3, 2}, {3, 5}, 1, chunkPieces(5, {0, 1}), 1, kNames, s));
  EXPECT_TRUE(s.recv.staged);
  EXPECT_EQ(s.recv.counts, (std::vector<int64_t>{9, 6}));
  EXPECT_EQ(s.recv.displs, (std::vector<int64_t>{0, 9}));
  EXPECT_EQ(s.sendCount, 6);
}

TEST(CollectiveSizes, AWrongPieceNamesBothShapesAndTheChunk) {
  CollectiveSizes s;
  Status st =
      sizeAllGather({3, 2}, {5, 2}, 0, chunkPieces(5, {0, 1}), 1, kNames, s);
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument);
  EXPECT_EQ(st.message(), "in [3, 2] has 3 along dim 0 but rank 1's chunk of "
                          "5 (chunk 1 of 2, split 3) has 2 (out is [5, 2])");
  st = sizeReduceScatter({6, 2}, {2, 2}, 0, chunkPieces(6, {0, 1}), 0, kNames,
                         s);
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument);
  EXPECT_EQ(st.message(), "out [2, 2] has 2 along dim 0 but rank 0's chunk of "
                          "6 (chunk 0 of 2, split 3) has 3 (in is [6, 2])");
}

TEST(CollectiveSizes, ReduceScatterSendsEachRankItsPiece) {
  CollectiveSizes s;
  ASSERT_TRUE(sizeReduceScatter({2, 5}, {2, 2}, 1, chunkPieces(5, {0, 1}), 1,
                                kNames, s));
  EXPECT_TRUE(s.send.staged);
  EXPECT_EQ(s.send.counts, (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(s.send.displs, (std::vector<int64_t>{0, 6}));
}

TEST(CollectiveSizes, AllToAllChecksBothDims) {
  // in [4, 3]: split dim 0 (4 over 2: 2 each), concat dim 1 (out's 5: rank
  // 0 holds 3). out [2, 5].
  CollectiveSizes s;
  ASSERT_TRUE(sizeAllToAll({4, 3}, {2, 5}, 0, chunkPieces(4, {0, 1}), 1,
                           chunkPieces(5, {0, 1}), 0, kNames, s));
  EXPECT_EQ(s.send.counts, (std::vector<int64_t>{6, 6}));
  EXPECT_EQ(s.send.displs, (std::vector<int64_t>{0, 6}));
  EXPECT_EQ(s.recv.counts, (std::vector<int64_t>{6, 4}));
  EXPECT_TRUE(s.recv.staged);
  Status st = sizeAllToAll({4, 2}, {2, 5}, 0, chunkPieces(4, {0, 1}), 1,
                           chunkPieces(5, {0, 1}), 0, kNames, s);
  EXPECT_EQ(st.message(), "in [4, 2] has 2 along concat_dim 1 but rank 0's "
                          "chunk of 5 (chunk 0 of 2, split 3) has 3 (out is "
                          "[2, 5])");
  st = sizeAllToAll({4, 3}, {3, 5}, 0, chunkPieces(4, {0, 1}), 1,
                    chunkPieces(5, {0, 1}), 0, kNames, s);
  EXPECT_EQ(st.message(), "out [3, 5] has 3 along split_dim 0 but rank 0's "
                          "chunk of 4 (chunk 0 of 2, split 2) has 2 (in is "
                          "[4, 3])");
}

} // namespace
} // namespace shardlin::rt
