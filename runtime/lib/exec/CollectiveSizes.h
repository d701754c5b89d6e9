//===- CollectiveSizes.h - A collective's sizes on one rank -----*- C++ -*-===//
//
// Internal to the runtime. The one place a collective is sized: the piece
// each rank holds of the dim it gathers, scatters or exchanges (the chunk
// rule's chunks, or the blocks of run-time sizes a value was stacked from),
// the check that this rank's piece has its size, and the communicator's
// tables (exec/Exchange.h). Pure: no communicator, no memory.
//
// Two callers size the same collectives with it: the plan's kernels
// (exec/ops/CollectiveOps.cpp), which derive the result's shape from the
// operand's and pass it in, and the C ABI (capi/Collectives.cpp), which is
// handed both views and has the check refuse a caller's wrong one. Dims
// other than the collective's are not checked here: the op table's verify
// and the C ABI's view checks own them.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_EXEC_COLLECTIVESIZES_H
#define SHARDLIN_RUNTIME_LIB_EXEC_COLLECTIVESIZES_H

#include "exec/Exchange.h"
#include "shardlin/runtime/base/ChunkLayout.h"
#include "shardlin/runtime/base/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace shardlin::rt {

/// How the ranks' pieces tile one dim of a collective's whole tensor
/// (all_gather's result, reduce_scatter's operand, either side of
/// all_to_all).
struct DimPieces {
  /// The whole dim's size.
  int64_t n = 0;
  /// Chunk c is rank placements[c]'s piece.
  std::vector<int64_t> placements;
  /// The chunks' explicit boundaries, or empty for the ceil rule (chunk
  /// pieces only).
  std::vector<int64_t> bounds;
  /// The pieces are blocks of run-time sizes (a dim stacked from each
  /// rank's rows), not the chunk rule's chunks of n.
  bool blocks = false;
  /// Each rank's piece, indexed by rank.
  std::vector<Range> ranges;

  /// What `rank` must hold, for messages: "rank 1's chunk of 5 (chunk 1 of
  /// 2, split 3) has 2", or for blocks "rank 1's block of 5 (chunk 1 of 2)
  /// has 2".
  std::string describe(int rank) const;
};

/// The chunks of a dim of size `n` under `placements` (which passed
/// checkPlacements) and `bounds` (empty: the ceil rule). InvalidArgument
/// if the bounds are not W + 1 non-decreasing values from 0 to n.
Status chunkPieces(int64_t n, std::vector<int64_t> placements,
                   std::vector<int64_t> bounds, DimPieces &out);

/// Pieces that are blocks of `sizes` (by chunk) laid end to end; whoever
/// stacked them checked that their sum fits in int64.
DimPieces blockPieces(const std::vector<int64_t> &sizes,
                      std::vector<int64_t> placements);

/// What a collective's messages call its tensors and dims: the C ABI uses
/// its arguments' names ("in", "split_dim"), the plan its operand's and
/// result's.
struct CollectiveNames {
  std::string in, out;
  /// all_gather's and reduce_scatter's dim, all_to_all's two.
  std::string along, split, concat;
};

/// A collective sized for one rank: the tables of what it sends
/// (reduce_scatter, all_to_all) and receives (all_gather, all_to_all), and
/// all_gather's own count.
struct CollectiveSizes {
  Exchange send, recv;
  int64_t sendCount = 0;
};

/// `whole` with `dim` the size of `rank`'s piece: the shape of that piece.
std::vector<int64_t> pieceShape(std::vector<int64_t> whole, int64_t dim,
                                const DimPieces &pieces, int rank);

/// all_gather along `dim`: `in` is `rank`'s piece of `out`, whose `dim` is
/// pieces.n. InvalidArgument, naming both shapes and the piece, if in's dim
/// is not its piece's size.
Status sizeAllGather(const std::vector<int64_t> &in,
                     const std::vector<int64_t> &out, int64_t dim,
                     DimPieces pieces, int rank, const CollectiveNames &names,
                     CollectiveSizes &sizes);

/// reduce_scatter along `dim`: `out` is `rank`'s piece of `in`, whose `dim`
/// is pieces.n. InvalidArgument if out's dim is not the piece's size.
Status sizeReduceScatter(const std::vector<int64_t> &in,
                         const std::vector<int64_t> &out, int64_t dim,
                         DimPieces pieces, int rank,
                         const CollectiveNames &names, CollectiveSizes &sizes);

/// all_to_all: `in` is split along `splitDim` into `split`'s pieces (of
/// in's size there) and `out` concatenates what arrives along `concatDim`
/// as `concat`'s pieces (of out's size there). InvalidArgument if in's
/// concat dim is not `rank`'s concat piece, or out's split dim not its
/// split piece.
Status sizeAllToAll(const std::vector<int64_t> &in,
                    const std::vector<int64_t> &out, int64_t splitDim,
                    DimPieces split, int64_t concatDim, DimPieces concat,
                    int rank, const CollectiveNames &names,
                    CollectiveSizes &sizes);

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_LIB_EXEC_COLLECTIVESIZES_H
