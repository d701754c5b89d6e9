//===- SimplifyCollectives.h - Exact rewrites of lowered collectives -*- C++ -*-===//
//
// Internal to the Transforms library; see SimplifyCollectives.cpp and
// docs/lowering.md, "Simplifying the collectives".
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_LIB_TRANSFORMS_SIMPLIFYCOLLECTIVES_H
#define SHARDLIN_LIB_TRANSFORMS_SIMPLIFYCOLLECTIVES_H

#include "mlir/IR/Operation.h"

namespace mlir::shardlin::detail {

/// What simplifyCollectives did, for the pass's statistics.
struct SimplifiedCollectives {
  /// all_reduce + local_chunk of the rank's part -> reduce_scatter.
  uint64_t reduceScatters = 0;
  /// local_chunk of an all_gather of the same chunks, all_gather of a
  /// local_chunk of a replicated value: the round trip removed.
  uint64_t roundTrips = 0;
  /// A collective (or local_chunk / local_shard) identical to an earlier one
  /// of the same block.
  uint64_t duplicates = 0;
};

/// Rewrites the collectives of every block under `root` (lowered ops) into
/// fewer or cheaper ones that give every rank the same values, uneven and
/// empty chunks included; see the file comment of SimplifyCollectives.cpp.
SimplifiedCollectives simplifyCollectives(Operation *root);

/// Reports, with `explain`, each all_gather under `root` that the import
/// built only for a stated layout (kStatedReshardAttrName) and that the
/// simplifications left, and removes that attribute from all of them.
void reportStatedReshards(Operation *root, bool explain);

} // namespace mlir::shardlin::detail

#endif
