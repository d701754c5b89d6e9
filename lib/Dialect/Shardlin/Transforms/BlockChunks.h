//===- BlockChunks.h - Chunks of whole blocks as explicit bounds -*- C++
//-*-===//
//
// Internal to the Transforms library; see BlockChunks.cpp and
// docs/attention.md, "Head-aligned chunks".
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_LIB_TRANSFORMS_BLOCKCHUNKS_H
#define SHARDLIN_LIB_TRANSFORMS_BLOCKCHUNKS_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"

namespace mlir::shardlin::detail {

/// Replaces, in `root` and every op under it (types, block arguments and
/// attributes), each `#shardlin.chunk<..., block = D>` without bounds by the
/// same chunks with explicit bounds (ChunkAttr::withBoundsFor), so that the
/// lowering and everything after it (the runtime's chunk specs included)
/// read plain explicit boundaries. Fails, with a diagnostic on the op, where
/// the size of the split dim is not known statically.
LogicalResult materializeBlockChunks(Operation *root);

} // namespace mlir::shardlin::detail

#endif
