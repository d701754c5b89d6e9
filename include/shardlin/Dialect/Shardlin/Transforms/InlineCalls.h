//===- InlineCalls.h - A function's calls, inlined -------------*- C++ -*-===//
//
// The plan executor's Program is one list of instructions: buildProgram
// inlines the entry's func.call ops (a layer's RMSNorm helper,
// examples/attention/layer.mlir) before translating it; and
// --shardlin-generate-backward inlines them in the copy of a function it
// differentiates (reverse mode runs over one block).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_DIALECT_SHARDLIN_TRANSFORMS_INLINECALLS_H
#define SHARDLIN_DIALECT_SHARDLIN_TRANSFORMS_INLINECALLS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::shardlin {

/// Replaces every func.call in `entry`, and in what it inlines, by a copy of
/// its callee's body: a function of the module with one block ending in
/// func.return. A located error at the call for any other callee, and for
/// calls nested deeper than 64 (recursion); `who` names the tool in them
/// ("the shardlin runtime").
LogicalResult inlineCalls(func::FuncOp entry, StringRef who);

} // namespace mlir::shardlin

#endif // SHARDLIN_DIALECT_SHARDLIN_TRANSFORMS_INLINECALLS_H
