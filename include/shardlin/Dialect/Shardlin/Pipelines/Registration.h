//===- Registration.h - Everything shardlin adds to a tool ------*- C++ -*-===//
//
// What an opt-like driver registers to offer all of shardlin (shardlin-opt
// is one): every pass and pipeline, the dialects they read and write, and
// the pipeline setup that imports upstream-form modules before a lowering.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_DIALECT_SHARDLIN_PIPELINES_REGISTRATION_H
#define SHARDLIN_DIALECT_SHARDLIN_PIPELINES_REGISTRATION_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir {
class DialectRegistry;
class OpPassManager;
class PassManager;

namespace shardlin {

/// The groups of shardlin's command-line passes, for help pages: a title
/// and the registered names (passes or pipelines), in the order to show.
struct PassGroup {
  StringRef title;
  ArrayRef<StringRef> names;
};
ArrayRef<PassGroup> shardlinPassGroups();

/// Registers every shardlin pass and pipeline for command lines (the
/// lowering and its alias, the import, the parameters' externalization, the
/// backward generator, the native path) and upstream's generic transforms
/// (canonicalize, cse, ...).
void registerAllShardlinPasses();

/// Inserts into `registry` every dialect those passes read or write, with
/// the native path's interfaces.
void registerAllShardlinDialects(DialectRegistry &registry);

/// Whether `pm` (a pipeline built from a command line or text) holds the
/// lowering, under either of its names: each pass of its textual form (which
/// names every pass by its registered argument) is looked up in the pass
/// registry and compared with the lowering's entry.
bool lowersLinears(OpPassManager &pm);

/// Builds the command line's pipeline into `pm` with `setup`, first adding
/// --shardlin-import-shard when the pipeline lowers linears and does not
/// import itself, so that a module in the upstream form lowers directly (the
/// import leaves a module without a shard.grid as it is).
LogicalResult
buildImportingPipeline(PassManager &pm,
                       function_ref<LogicalResult(PassManager &)> setup);

} // namespace shardlin
} // namespace mlir

#endif // SHARDLIN_DIALECT_SHARDLIN_PIPELINES_REGISTRATION_H
