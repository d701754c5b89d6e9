//===- InlineCalls.h - The entry's calls, inlined for the plan -*- C++ -*-===//
//
// Internal to lib/Execution. The plan executor's Program is one list of
// instructions: buildProgram inlines the entry's func.call ops (a layer's
// RMSNorm helper, examples/attention/layer.mlir) before translating it.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_LIB_EXECUTION_INLINECALLS_H
#define SHARDLIN_LIB_EXECUTION_INLINECALLS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::shardlin {

/// Replaces every func.call in `entry`, and in what it inlines, by a copy of
/// its callee's body: a function of the module with one block ending in
/// func.return. A located error at the call for any other callee, and for
/// calls nested deeper than 64 (recursion).
LogicalResult inlineCalls(func::FuncOp entry);

} // namespace mlir::shardlin

#endif // SHARDLIN_LIB_EXECUTION_INLINECALLS_H
