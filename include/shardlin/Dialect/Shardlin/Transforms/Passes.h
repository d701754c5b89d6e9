//===- Passes.h - shardlin passes -------------------------------*- C++ -*-===//
#ifndef SHARDLIN_DIALECT_SHARDLIN_TRANSFORMS_PASSES_H
#define SHARDLIN_DIALECT_SHARDLIN_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"
#include "shardlin/Dialect/Shardlin/Transforms/LowerShardedLinear.h"

namespace mlir::shardlin {

#define GEN_PASS_DECL
#include "shardlin/Dialect/Shardlin/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "shardlin/Dialect/Shardlin/Transforms/Passes.h.inc"

} // namespace mlir::shardlin

#endif
