//===- ProgramBuilder.h - Lowered IR to the runtime's Program ---*- C++ -*-===//
//
// The bridge between the compiler and the runtime: it takes a module, lowers
// any remaining shardlin.linear, picks the entry function and translates it
// into a shardlin::rt::Program, which Plan resolves per rank. It is the only
// place that depends on both MLIR and runtime/.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_EXECUTION_PROGRAMBUILDER_H
#define SHARDLIN_EXECUTION_PROGRAMBUILDER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "shardlin/Dialect/Shardlin/Transforms/Passes.h"
#include "shardlin/runtime/program/Program.h"

namespace mlir::shardlin {

/// Registers the dialects a shardlin program may use.
void registerExecutionDialects(DialectRegistry &registry);

/// If `module` is in the upstream form (it holds a `shard.grid`), imports
/// it (importShard, ImportShard.h) and returns the grid's device count, W
/// (of a 2-D grid: its tensor-parallel axis; the module then records the
/// data-parallel replicas, kDataParallelAttrName); otherwise leaves it and
/// returns 0. Diagnostics go to the context's handler.
FailureOr<int64_t> importForExecution(ModuleOp module);

/// Imports an upstream-form module (importForExecution), runs
/// --lower-sharded-linear (with `options`) on `module` if it holds
/// shardlin.linear ops, then verifies it. Diagnostics go to the context's
/// handler.
LogicalResult lowerForExecution(ModuleOp module,
                                const LowerShardedLinearOptions &options = {});

/// The function named `name`, or, if `name` is empty, the only public
/// function or else the one named "main". Emits an error naming the
/// candidates otherwise.
FailureOr<func::FuncOp> selectEntry(ModuleOp module, StringRef name);

/// Translates a lowered function into a runtime Program. Emits a located
/// error for any op the runtime cannot execute.
FailureOr<::shardlin::rt::Program> translateToProgram(func::FuncOp func);

/// The signature of entry `func` as a compiled program
/// (rt::Program::compiled = `code`, which names the native code that runs
/// it): its arguments as translateToProgram describes them, its results'
/// types (a sharded result as the rank's chunk), and the world size of the
/// chunk specs in it and in the functions it calls. Emits a located error
/// for a type the runtime cannot describe.
FailureOr<::shardlin::rt::Program> translateSignature(func::FuncOp func,
                                                       StringRef code);

/// lowerForExecution + selectEntry + translateToProgram, the entry's
/// func.call ops inlined first (a copy of each callee's one block); the
/// program of an upstream-form module runs on the grid's W ranks.
FailureOr<::shardlin::rt::Program>
buildProgram(ModuleOp module, StringRef entry,
             const LowerShardedLinearOptions &options = {});

} // namespace mlir::shardlin

#endif
