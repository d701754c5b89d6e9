//===- ShardToShardlin.h - Upstream shard + linalg to shardlin --*- C++ -*-===//
//
// The entry points of the importer for embedders (docs/interop.md): a module
// in the upstream global view (linalg / arith / math on whole tensors, the
// tensor parallelism stated by `shard.grid`, `shard.sharding` and
// `shard.shard`) rewritten into shardlin IR (shardlin.linear on sharded
// weights, rank-local tensors for the rest).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_CONVERSION_SHARDTOSHARDLIN_SHARDTOSHARDLIN_H
#define SHARDLIN_CONVERSION_SHARDTOSHARDLIN_SHARDTOSHARDLIN_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBufferRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <optional>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::shardlin {

/// Registers what an upstream-form module holds and the importer emits:
/// the shard, func, linalg, tensor, arith and math dialects and shardlin.
void registerImportShardDialects(DialectRegistry &registry);

/// The pass is createImportShard(); registerShardToShardlinPasses()
/// registers `--shardlin-import-shard` for command lines (Passes.h beside
/// this header).

/// Whether `module` holds a `shard.grid` (then it is in the upstream form
/// and needs the import before it can be lowered).
bool hasShardGrid(ModuleOp module);

/// The module attribute (an i64) that records the number of data-parallel
/// replicas of an imported module whose `shard.grid` had two axes
/// (splitDataParallelGrid): shardlin-run runs that many replicas of it
/// (`--grid=DPxTP`), unless told otherwise.
constexpr llvm::StringLiteral kDataParallelAttrName = "shardlin.data_parallel";

/// For a module whose one `shard.grid` has two axes, DP x TP: axis 0 is
/// data-parallel (it may split only dim 0, the batch, of the arguments and
/// what is computed from them row by row, as the first of that dim's axes)
/// and axis 1 tensor-parallel. Rewrites the module into one replica's: the
/// batch's dim 0 divided by DP, every sharding without axis 0, a 1-D grid of
/// TP devices, and kDataParallelAttrName = DP. Every replica must hold as
/// many rows and split them over its TP ranks the same way. Fails with a
/// located diagnostic otherwise. Any other module is left unchanged.
/// importShard calls it first.
LogicalResult splitDataParallelGrid(ModuleOp module);

/// Imports every function of `module` and erases its `shard.grid`. Fails,
/// with one located diagnostic per function that cannot be imported, and
/// leaves such a function as it was. A module without a grid is left
/// unchanged.
LogicalResult importShard(ModuleOp module);

/// Where MLIR 22's own parser would crash on `text`: the offset of the first
/// `dimensions` (linalg.broadcast, linalg.reduce) or `permutation`
/// (linalg.transpose) keyword of a custom form whose `=` is not followed by
/// a well-formed integer list. Those parsers store the result of
/// DenseI64ArrayAttr::parse without checking it, so `dimensions = [1 x]`
/// dereferences a null attribute (`mlir-opt-22` exits 139). Comments and
/// strings are skipped; the generic form (`{dimensions = ...}`) is parsed
/// safely and never flagged. std::nullopt if there is none.
std::optional<size_t> findUpstreamParserCrash(llvm::StringRef text);

/// Fails, with "<file>:<line>:<col>: error: ..." on `os`, where `buffer`
/// holds text findUpstreamParserCrash finds: what the tools run before they
/// parse their input.
LogicalResult refuseUpstreamParserCrash(llvm::MemoryBufferRef buffer,
                                        llvm::raw_ostream &os);

} // namespace mlir::shardlin

#endif
