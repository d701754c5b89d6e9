//===- Passes.h - shardlin's ops to calls of the runtime's C ABI -*- C++ -*-===//
//
// --shardlin-convert-to-llvm (Passes.td, docs/native.md).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_CONVERSION_SHARDLINTOLLVM_PASSES_H
#define SHARDLIN_CONVERSION_SHARDLINTOLLVM_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::shardlin {

/// createConvertShardlinToLLVM() and registerShardlinConversionPasses().
#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "shardlin/Conversion/ShardlinToLLVM/Passes.h.inc"

} // namespace mlir::shardlin

#endif
