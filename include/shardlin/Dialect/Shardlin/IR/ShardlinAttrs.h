//===- ShardlinAttrs.h - shardlin attributes --------------------*- C++ -*-===//
#ifndef SHARDLIN_DIALECT_SHARDLIN_IR_SHARDLINATTRS_H
#define SHARDLIN_DIALECT_SHARDLIN_IR_SHARDLINATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"

#include "shardlin/Dialect/Shardlin/IR/ShardlinEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "shardlin/Dialect/Shardlin/IR/ShardlinAttrs.h.inc"

#endif
