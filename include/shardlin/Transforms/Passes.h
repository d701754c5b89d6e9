//===- Passes.h - shardlin's passes on any module ---------------*- C++ -*-===//
//
// Passes that work on a module whatever its dialects, before any shardlin
// lowering (as upstream's lib/Transforms): --shardlin-externalize-parameters
// (Passes.td, docs/interop.md, "Externalized parameters").
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_TRANSFORMS_PASSES_H
#define SHARDLIN_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::shardlin {

/// createExternalizeParameters(options): a module pass.
/// registerShardlinModulePasses(): its command-line registration.
#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "shardlin/Transforms/Passes.h.inc"

} // namespace mlir::shardlin

#endif // SHARDLIN_TRANSFORMS_PASSES_H
