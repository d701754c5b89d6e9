//===- NativePasses.h - Passes of the native path ---------------*- C++ -*-===//
//
// localize-sharded and prepare-native (NativePasses.td), and the
// bufferization of the shardlin ops; see docs/native.md.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_DIALECT_SHARDLIN_TRANSFORMS_NATIVEPASSES_H
#define SHARDLIN_DIALECT_SHARDLIN_TRANSFORMS_NATIVEPASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class DialectRegistry;
namespace shardlin {

/// createLocalizeSharded(), createPrepareNative(),
/// createExpandShapeToReinterpretCast(): module passes.
#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "shardlin/Dialect/Shardlin/Transforms/NativePasses.h.inc"

/// Attaches BufferizableOpInterface to the shardlin ops: the collectives,
/// gemm, bias_add and convert bufferize to their `shardlin.buffer.*` forms
/// writing into a new buffer (bias_add into its input where the analysis
/// allows), local_chunk to a memref.subview; local_shard and linear report
/// which pass must run first.
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);

} // namespace shardlin
} // namespace mlir

#endif
