//===- LoweringSupport.h - Pieces the lowering patterns share ---*- C++ -*-===//
//
// Internal to the Transforms library: the reshaping of N-D activations to
// rows and back, the row layout of stacked activations and the record of a
// lowering decision, for the per-linear patterns (LowerShardedLinear.cpp)
// and the block fusion (BlockFusion.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_LIB_TRANSFORMS_LOWERINGSUPPORT_H
#define SHARDLIN_LIB_TRANSFORMS_LOWERINGSUPPORT_H

#include "shardlin/Analysis/CostModel.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinAttrs.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::shardlin::detail {

/// `x` (batch..., K) as a B x K matrix (a 1-D x is one row); `batch`
/// receives B. The batch dims' product must have been checked.
Value flattenToRows(OpBuilder &b, Location loc, Value x, int64_t &batch);

/// `rows` (B x N) reshaped to `type` (batch..., N).
Value restoreFromRows(OpBuilder &b, Location loc, Value rows,
                      RankedTensorType type);

/// Equal blocks of rows per rank, in rank order: the layout of stacked
/// per-rank activations.
ChunkAttr rankOrderRows(MLIRContext *ctx, int64_t worldSize);

inline RankedTensorType tensorOf(ArrayRef<int64_t> shape, Type elt) {
  return RankedTensorType::get(shape, elt);
}

/// Records on `gemm` (a `shardlin.lowering` dictionary) the strategy that
/// produced it and, if given, what it was predicted to cost.
void annotateLowering(Operation *gemm, StringRef strategy,
                      const ::shardlin::StrategyCost *cost);

} // namespace mlir::shardlin::detail

#endif
