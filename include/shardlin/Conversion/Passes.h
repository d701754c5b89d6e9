//===- Passes.h - shardlin conversion passes --------------------*- C++ -*-===//
#ifndef SHARDLIN_CONVERSION_PASSES_H
#define SHARDLIN_CONVERSION_PASSES_H

#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::shardlin {

/// createConvertShardlinToLLVM() and registerShardlinConversionPasses().
#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "shardlin/Conversion/Passes.h.inc"

} // namespace mlir::shardlin

#endif
