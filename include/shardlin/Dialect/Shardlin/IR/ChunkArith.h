//===- ChunkArith.h - The chunk rule as IR ----------------------*- C++ -*-===//
//
// The chunk rule of ChunkLayout.h (runtime/include/shardlin/runtime), built
// as `arith` ops on a rank value: what the bufferization emits for sizes and
// offsets that differ by rank (`?` in types). ChunkLayout.h stays the one
// definition of the rule; the unit test ChunkArithTest checks these ops,
// folded for constant ranks, against it for every rank of many specs.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_DIALECT_SHARDLIN_IR_CHUNKARITH_H
#define SHARDLIN_DIALECT_SHARDLIN_IR_CHUNKARITH_H

#include "shardlin/Dialect/Shardlin/IR/ShardlinAttrs.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

namespace mlir::shardlin {

/// The range [offset, offset + size) that a rank holds of one dim.
struct ChunkRangeValues {
  /// Always a Value (index), so that the types built from it do not depend
  /// on folding: a view at this offset has a dynamic offset.
  Value offset;
  /// An IntegerAttr when every chunk has the same size (then it is static in
  /// the types), otherwise an index Value.
  OpFoldResult size;
};

/// The chunk `rank` holds under `chunk`: the c with placements[c] == rank, as
/// an index value (W for a rank outside [0, W), whose range is then empty).
Value buildChunkOfRank(OpBuilder &b, Location loc, ChunkAttr chunk,
                       Value rank);

/// The range `rank` (an index value) holds of a dim of static size `n` >= 0
/// under `chunk`. Ops are folded as they are built (constants for a constant
/// rank). A rank outside [0, W) (which the entry's world-size assertion
/// keeps out at run time) gets an in-bounds range: empty when the chunks are
/// uneven, the last chunk when they are even (the size is static then).
ChunkRangeValues buildChunkRange(OpBuilder &b, Location loc, ChunkAttr chunk,
                                 int64_t n, Value rank);

/// The same for the calling rank: emits `shardlin.rank` for the spec's world
/// size.
ChunkRangeValues buildLocalChunkRange(OpBuilder &b, Location loc,
                                      ChunkAttr chunk, int64_t n);

/// The range [b_r, e_r) of `ranges` (W pairs, shardlin.local_slice's) for
/// `rank` (an index value): one compare and select per rank; the size is
/// static when every range has one size. A rank outside [0, W) gets the
/// empty range at 0 (or the first range, when the size is static).
ChunkRangeValues buildRankTableRange(OpBuilder &b, Location loc,
                                     ArrayRef<int64_t> ranges, Value rank);

} // namespace mlir::shardlin

#endif
