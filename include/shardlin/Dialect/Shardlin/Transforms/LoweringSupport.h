//===- LoweringSupport.h - Pieces the lowering patterns share ---*- C++ -*-===//
//
// Internal to the Transforms library: the reshaping of N-D activations to
// rows and back, the row layout of stacked activations, the reduction of a
// K split's partial products and the record of a lowering decision, for the
// per-linear patterns (LowerShardedLinear.cpp) and the block fusion
// (BlockFusion.cpp).
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
/// receives B, dynamic if any batch dim is. The batch dims' product must
/// have been checked.
Value flattenToRows(OpBuilder &b, Location loc, Value x, int64_t &batch);

/// `rows` (B x N) reshaped to `type` (batch..., N); its dynamic batch dims
/// are those of `input` (batch..., K), read with tensor.dim.
Value restoreFromRows(OpBuilder &b, Location loc, Value rows,
                      RankedTensorType type, Value input);

/// The W*B rows of every rank's B rows stacked (dynamic if B is).
int64_t stackedRows(int64_t worldSize, int64_t batch);

/// Equal blocks of rows per rank, in rank order: the layout of stacked
/// per-rank activations.
ChunkAttr rankOrderRows(MLIRContext *ctx, int64_t worldSize);

inline RankedTensorType tensorOf(ArrayRef<int64_t> shape, Type elt) {
  return RankedTensorType::get(shape, elt);
}

/// The element type in which a K split's partial products are produced,
/// reduce-scattered and biased: f32 for f16 and bf16 (each rank's partial
/// sum rounded to them would overflow f16 or lose bf16's few bits before
/// the reduction), `elt` itself otherwise.
Type partialSumType(Type elt);

/// The end of a K split: `partials` ((W*B) x N, of partialSumType(elt))
/// reduce-scattered so that this rank keeps its B rows (`rowBlocks`), the
/// bias (of `elt`, if any) added once, and the result in `elt`. For f16 and
/// bf16 the bias is widened to f32 and the biased sum rounded once
/// (shardlin.convert); other types need no conversion and get none.
Value reduceRowBlocks(OpBuilder &b, Location loc, Value partials,
                      ChunkAttr rowBlocks, int64_t batch, int64_t n, Type elt,
                      Value bias);

/// The end of a K split whose every rank holds partial sums of the same
/// rows: `partials` (rows x N, of partialSumType(elt)) summed over the
/// `worldSize` ranks (all_reduce), the bias added once and the result in
/// `elt`, as in reduceRowBlocks.
Value allReduceRows(OpBuilder &b, Location loc, Value partials,
                    int64_t worldSize, Type elt, Value bias);

/// Records on `gemm` (a `shardlin.lowering` dictionary) the strategy that
/// produced it and, if given, what it was predicted to cost, and for
/// dynamic batch dims (`assumedRows` > 0) the rows that cost assumed.
void annotateLowering(Operation *gemm, StringRef strategy,
                      const ::shardlin::StrategyCost *cost,
                      int64_t assumedRows = 0);

} // namespace mlir::shardlin::detail

#endif
