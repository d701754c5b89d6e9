//===- ShardlinTypes.h - shardlin types -------------------------*- C++ -*-===//
#ifndef SHARDLIN_DIALECT_SHARDLIN_IR_SHARDLINTYPES_H
#define SHARDLIN_DIALECT_SHARDLIN_IR_SHARDLINTYPES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Types.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinAttrs.h"

#define GET_TYPEDEF_CLASSES
#include "shardlin/Dialect/Shardlin/IR/ShardlinTypes.h.inc"

#endif
