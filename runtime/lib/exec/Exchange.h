//===- Exchange.h - Collective tables and the packing of pieces -*- C++ -*-===//
//
// Internal to the runtime. A collective along one dim of a row-major tensor
// moves one piece per rank: the rank's range along that dim. The
// communicator wants each piece contiguous, at a displacement in the buffer
// it is handed; a piece is contiguous in the tensor only when the dim is the
// outermost non-unit one. This file computes the counts and displacements
// from the ranks' ranges, and packs the pieces into (or unpacks them from) a
// staging buffer when they are not contiguous, with the device's strided row
// copies. The plan's kernels (exec/ops/CollectiveOps.cpp) and the C ABI
// (capi/Collectives.cpp) both move pieces through it; the pieces' ranges come
// from exec/CollectiveSizes.h.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_EXCHANGE_H
#define SHARDLIN_RUNTIME_LIB_EXCHANGE_H

#include "shardlin/runtime/base/ChunkLayout.h"
#include "shardlin/runtime/exec/LocalOps.h"
#include "shardlin/runtime/base/Status.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace shardlin::rt {

inline int64_t product(const std::vector<int64_t> &shape, size_t begin,
                       size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i)
    p *= shape[i];
  return p;
}

/// A tensor viewed as [outer, n, inner] around one dim.
struct DimSplit {
  int64_t outer, n, inner;
};

inline DimSplit splitAround(const std::vector<int64_t> &shape, int64_t dim) {
  return {product(shape, 0, dim), shape[dim],
          product(shape, dim + 1, shape.size())};
}

/// For one collective: per-rank element counts and displacements in the
/// buffer handed to the communicator, plus, when the data is not contiguous
/// per rank, how to pack into / unpack from a staging buffer.
struct Exchange {
  std::vector<int64_t> counts, displs;
  bool staged = false;
  // For staging: per-rank range along the dim of the [outer, n, inner] view.
  std::vector<Range> ranges;
  DimSplit view{1, 0, 1};

  int64_t totalCount() const;
};

/// Builds the exchange tables for pieces that are the ranges `ranges[p]`
/// (indexed by rank) along the middle dim of `view`.
Exchange makeExchange(const DimSplit &view, std::vector<Range> ranges);

enum class Direction { Pack, Unpack };

/// Packs the ranges of `tensor` ([outer, n, inner]) into consecutive blocks
/// of `staging` in rank order, or unpacks them back: Pack reads the tensor
/// at `from` and writes the staging buffer at `to`, Unpack the other way.
Status movePieces(LocalOps &ops, const Exchange &ex, Direction direction,
                  const char *from, char *to, size_t elt);

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_LIB_EXCHANGE_H
