//===- BlockFusion.h - Fusing col-wise -> elementwise -> row-wise -*- C++ -*-===//
//
// Internal to the Transforms library; see BlockFusion.cpp and
// docs/lowering.md, "Blocks".
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_LIB_TRANSFORMS_BLOCKFUSION_H
#define SHARDLIN_LIB_TRANSFORMS_BLOCKFUSION_H

#include "shardlin/Dialect/Shardlin/Transforms/LowerShardedLinear.h"

namespace mlir::shardlin::detail {

/// Lowers every fusable block under `root` (a row-wise linear fed, through
/// rank-local elementwise ops only, by col-wise linears with the same chunk
/// spec on one input) to one all_gather, the GEMMs, one linalg.generic for
/// the elementwise ops and one reduce_scatter, when the options force
/// moving activations or the cost model finds it cheapest. With `explain`,
/// a remark on each row-wise linear that such a chain reaches says what was
/// chosen, or why the chain was not fused. `numFused` counts the blocks.
void fuseBlocks(Operation *root, const LoweringOptions &options, bool explain,
                uint64_t &numFused);

} // namespace mlir::shardlin::detail

#endif
