//===- Passes.h - Passes of the native path ---------------------*- C++ -*-===//
//
// shardlin-localize-sharded and shardlin-prepare-native (Passes.td), and the
// bufferization of the shardlin ops; see docs/native.md.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_DIALECT_SHARDLIN_NATIVE_PASSES_H
#define SHARDLIN_DIALECT_SHARDLIN_NATIVE_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class DialectRegistry;
namespace shardlin {

/// createLocalizeSharded(), createPrepareNative(),
/// createExpandShapeToReinterpretCast(): module passes.
#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "shardlin/Dialect/Shardlin/Native/Passes.h.inc"

/// Attaches BufferizableOpInterface to the shardlin ops: the collectives,
/// gemm, bias_add and convert bufferize to their `shardlin.buffer.*` forms
/// writing into a new buffer (bias_add into its input where the analysis
/// allows), local_chunk to a memref.subview; local_shard and linear report
/// which pass must run first.
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);

} // namespace shardlin
} // namespace mlir

#endif
