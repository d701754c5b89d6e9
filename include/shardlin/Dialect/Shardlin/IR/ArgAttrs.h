//===- ArgAttrs.h - The shardlin argument attributes ------------*- C++ -*-===//
//
// Attributes the shardlin passes put on a function's arguments, named once
// for the passes that set them and the code that reads them.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_DIALECT_SHARDLIN_IR_ARGATTRS_H
#define SHARDLIN_DIALECT_SHARDLIN_IR_ARGATTRS_H

#include "llvm/ADT/StringRef.h"

namespace mlir::shardlin {

/// A unit attribute on a plain tensor argument: every rank must pass the
/// same value. The upstream import (--shardlin-import-shard) puts it on
/// every tensor argument it keeps replicated (no split over the grid), the
/// backward (--shardlin-generate-backward) keeps it on the forward's
/// arguments it takes, and a hand-written module may set it. The runtime
/// Program carries it (Argument::replicated) and the ranks check, before
/// running, that they all hold the same value (docs/robustness.md,
/// "Replicated arguments"). A plain argument without it is rank-local:
/// each rank its own value.
constexpr llvm::StringLiteral kReplicatedArgAttrName = "shardlin.replicated";

/// A string attribute on an argument that holds a parameter (a weight or
/// another constant) kept outside the module: the tensor's name in a
/// safetensors file. --shardlin-externalize-parameters sets it on the
/// arguments it adds; the runtime Program carries it (Argument::parameter)
/// and `shardlin-run --params=FILE` (shardlin-exec, the C ABI) binds the
/// argument to that tensor of FILE, each rank reading its chunk
/// (docs/interop.md, "Externalized parameters").
constexpr llvm::StringLiteral kParameterArgAttrName = "shardlin.parameter";

/// With kParameterArgAttrName: `array<i64: begin, end>`, the rows [begin,
/// end) of dim 0 of the named tensor that the argument holds (one of the
/// three parts of a fused q/k/v weight, which the upstream import splits:
/// docs/attention.md, "Fused QKV"). The runtime Program carries it
/// (Argument::parameterRows, `param NAME rows B E`) and a rank reads only
/// its chunk of those rows from the checkpoint.
constexpr llvm::StringLiteral kParameterRowsArgAttrName =
    "shardlin.parameter_rows";

} // namespace mlir::shardlin

#endif // SHARDLIN_DIALECT_SHARDLIN_IR_ARGATTRS_H
