//===- AttentionBlock.h - Lowering an attention sub-block -------*- C++ -*-===//
//
// Internal to the Transforms library; see AttentionBlock.cpp and
// docs/attention.md.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_LIB_TRANSFORMS_ATTENTIONBLOCK_H
#define SHARDLIN_LIB_TRANSFORMS_ATTENTIONBLOCK_H

#include "mlir/IR/Operation.h"

#include <cstdint>

namespace mlir::shardlin::detail {

/// Lowers every attention block under `root` ({q, k, v} projections,
/// optional rope, shardlin.attention, the row-wise O linear) as one unit:
/// one all_gather of x, the projections' GEMMs on the rank's heads, the
/// rank-local rope and attention (head tables q_heads / kv_heads), O's GEMM
/// and one reduce_scatter (x replicated: no all_gather, one all_reduce). With `explain`, a remark on each O linear fed by
/// an attention says what was done or why the block was not fused (its ops
/// are then lowered one by one, which is correct but gathers q, k and v).
/// `numFused` counts the blocks.
void fuseAttentionBlocks(Operation *root, bool explain, uint64_t &numFused);

} // namespace mlir::shardlin::detail

#endif
