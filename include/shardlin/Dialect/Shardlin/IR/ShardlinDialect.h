//===- ShardlinDialect.h - The shardlin dialect -----------------*- C++ -*-===//
#ifndef SHARDLIN_DIALECT_SHARDLIN_IR_SHARDLINDIALECT_H
#define SHARDLIN_DIALECT_SHARDLIN_IR_SHARDLINDIALECT_H

#include "mlir/IR/Dialect.h"

#include "shardlin/Dialect/Shardlin/IR/ShardlinDialect.h.inc"

#endif
