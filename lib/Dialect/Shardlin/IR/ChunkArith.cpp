//===- ChunkArith.cpp - The chunk rule as IR ------------------------------===//

#include "shardlin/Dialect/Shardlin/IR/ChunkArith.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"
#include "shardlin/runtime/base/ChunkLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::shardlin;

Value mlir::shardlin::buildChunkOfRank(OpBuilder &b, Location loc,
                                       ChunkAttr chunk, Value rank) {
  ArrayRef<int64_t> placements = chunk.getPlacements();
  const int64_t w = chunk.getNumChunks();
  bool identity = true;
  for (int64_t c = 0; c < w; ++c)
    identity &= placements[c] == c;
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  if (identity) {
    // c = rank, and W for a rank outside [0, W): the range is empty then,
    // as for any other spec.
    Value inRange = b.createOrFold<arith::CmpIOp>(
        loc, arith::CmpIPredicate::ult, rank, cst(w));
    return b.createOrFold<arith::SelectOp>(loc, inRange, rank, cst(w));
  }
  // One compare and select per chunk: placements is a permutation, so at most
  // one matches.
  Value c = cst(w);
  for (int64_t i = 0; i < w; ++i) {
    Value match = b.createOrFold<arith::CmpIOp>(
        loc, arith::CmpIPredicate::eq, rank, cst(placements[i]));
    c = b.createOrFold<arith::SelectOp>(loc, match, cst(i), c);
  }
  return c;
}

ChunkRangeValues mlir::shardlin::buildChunkRange(OpBuilder &b, Location loc,
                                                 ChunkAttr chunk, int64_t n,
                                                 Value rank) {
  const int64_t w = chunk.getNumChunks();
  const int64_t split = ::shardlin::rt::chunkSplit(n, w);
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  // Explicit, uneven boundaries: the rank's offset and size are table
  // lookups, one compare and select per chunk (placements is a permutation,
  // so at most one matches; a rank outside [0, W) gets the empty range at
  // n); so are uneven chunks of whole blocks. Equal chunks are the ceil
  // rule's and take the arithmetic below.
  if (chunk.getLocalSize(n) == ShapedType::kDynamic &&
      (chunk.hasExplicitBounds() || chunk.hasBlock())) {
    ArrayRef<int64_t> placements = chunk.getPlacements();
    Value offset = cst(n), size = cst(0);
    for (int64_t i = 0; i < w; ++i) {
      auto [chunkOffset, chunkSize] = chunk.getChunkRange(n, i);
      Value match = b.createOrFold<arith::CmpIOp>(
          loc, arith::CmpIPredicate::eq, rank, cst(placements[i]));
      offset = b.createOrFold<arith::SelectOp>(loc, match, cst(chunkOffset),
                                               offset);
      size =
          b.createOrFold<arith::SelectOp>(loc, match, cst(chunkSize), size);
    }
    return {offset, size};
  }
  Value c = buildChunkOfRank(b, loc, chunk, rank);
  Value start = b.createOrFold<arith::MulIOp>(loc, c, cst(split));
  ChunkRangeValues range;
  if (::shardlin::rt::chunksUniform(n, w)) {
    // Every chunk has split = n / W elements, a static size; offset =
    // c * split, clamped to n - split so that even a rank outside the group
    // (which the entry's world-size assertion keeps out) stays in bounds.
    range.offset = b.createOrFold<arith::MinSIOp>(loc, start, cst(n - split));
    range.size = b.getIndexAttr(split);
    return range;
  }
  // offset = min(c * split, n); end = min(offset + split, n). c <= W, so
  // c * split <= W * ceil(n / W) < n + W: no overflow.
  Value begin = b.createOrFold<arith::MinSIOp>(loc, start, cst(n));
  Value end = b.createOrFold<arith::MinSIOp>(
      loc, b.createOrFold<arith::AddIOp>(loc, begin, cst(split)), cst(n));
  range.offset = begin;
  range.size = b.createOrFold<arith::SubIOp>(loc, end, begin);
  return range;
}

ChunkRangeValues mlir::shardlin::buildLocalChunkRange(OpBuilder &b,
                                                      Location loc,
                                                      ChunkAttr chunk,
                                                      int64_t n) {
  Value rank = b.createOrFold<RankOp>(
      loc, b.getIndexType(), static_cast<uint64_t>(chunk.getNumChunks()));
  return buildChunkRange(b, loc, chunk, n, rank);
}

ChunkRangeValues mlir::shardlin::buildRankTableRange(OpBuilder &b, Location loc,
                                                     ArrayRef<int64_t> ranges,
                                                     Value rank) {
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  const size_t w = ranges.size() / 2;
  bool uniform = true;
  for (size_t r = 0; r < w; ++r)
    uniform &= ranges[2 * r + 1] - ranges[2 * r] == ranges[1] - ranges[0];
  Value offset = cst(uniform ? ranges[0] : 0), size = cst(0);
  for (size_t r = 0; r < w; ++r) {
    Value match = b.createOrFold<arith::CmpIOp>(
        loc, arith::CmpIPredicate::eq, rank, cst(static_cast<int64_t>(r)));
    offset =
        b.createOrFold<arith::SelectOp>(loc, match, cst(ranges[2 * r]), offset);
    if (!uniform)
      size = b.createOrFold<arith::SelectOp>(
          loc, match, cst(ranges[2 * r + 1] - ranges[2 * r]), size);
  }
  ChunkRangeValues range;
  range.offset = offset;
  if (uniform)
    range.size = b.getIndexAttr(ranges[1] - ranges[0]);
  else
    range.size = size;
  return range;
}
