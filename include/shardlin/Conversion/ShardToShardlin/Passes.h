//===- Passes.h - The upstream shard import pass ----------------*- C++ -*-===//
//
// --shardlin-import-shard (Passes.td). The import's entry points for
// embedders that do not run a pass manager are in ShardToShardlin.h.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_CONVERSION_SHARDTOSHARDLIN_PASSES_H
#define SHARDLIN_CONVERSION_SHARDTOSHARDLIN_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::shardlin {

/// createImportShard(): a module pass.
/// registerShardToShardlinPasses(): its command-line registration.
#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "shardlin/Conversion/ShardToShardlin/Passes.h.inc"

} // namespace mlir::shardlin

#endif // SHARDLIN_CONVERSION_SHARDTOSHARDLIN_PASSES_H
