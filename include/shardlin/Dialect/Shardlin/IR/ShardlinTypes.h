//===- ShardlinTypes.h - shardlin types -------------------------*- C++ -*-===//
#ifndef SHARDLIN_DIALECT_SHARDLIN_IR_SHARDLINTYPES_H
#define SHARDLIN_DIALECT_SHARDLIN_IR_SHARDLINTYPES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Types.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinAttrs.h"

#define GET_TYPEDEF_CLASSES
#include "shardlin/Dialect/Shardlin/IR/ShardlinTypes.h.inc"

namespace mlir::shardlin {
/// isSupportedElementType(Type): the predicate of Shardlin_ElementType
/// (ShardlinTypes.td), true for f16, bf16, f32 and f64.
#include "shardlin/Dialect/Shardlin/IR/ShardlinTypeConstraints.h.inc"
} // namespace mlir::shardlin

#endif
