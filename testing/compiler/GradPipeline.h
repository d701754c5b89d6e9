//===- GradPipeline.h - Generating a module's backward functions -*- C++ -*-===//
//
// The MLIR half of GradTesting.h, shared by its plan and JIT paths
// (GradCompile.cpp, JitTesting.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_TESTING_GRADPIPELINE_H
#define SHARDLIN_TESTING_GRADPIPELINE_H

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace shardlin::testkit {

/// Runs --shardlin-generate-backward{strategy, fuse-blocks, recompute} and
/// --lower-sharded-linear with the same options on `module`.
mlir::LogicalResult generateBackward(mlir::ModuleOp module,
                                     const std::string &strategy, bool fuse,
                                     const std::string &recompute);

} // namespace shardlin::testkit

#endif // SHARDLIN_TESTING_GRADPIPELINE_H
