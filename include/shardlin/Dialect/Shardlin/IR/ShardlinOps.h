//===- ShardlinOps.h - shardlin operations ----------------------*- C++ -*-===//
#ifndef SHARDLIN_DIALECT_SHARDLIN_IR_SHARDLINOPS_H
#define SHARDLIN_DIALECT_SHARDLIN_IR_SHARDLINOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinAttrs.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinDialect.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinTypes.h"

#define GET_OP_CLASSES
#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h.inc"

#endif
