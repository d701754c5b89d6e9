//===- ShardlinDialect.cpp - The shardlin dialect -------------------------===//

#include "shardlin/Dialect/Shardlin/IR/ShardlinDialect.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinAttrs.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinTypes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::shardlin;

#include "shardlin/Dialect/Shardlin/IR/ShardlinDialect.cpp.inc"

void ShardlinDialect::initialize() {
  // Attribute and type storage classes are complete only in their own files,
  // which therefore register them.
  registerAttributes();
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.cpp.inc"
      >();
}

Operation *ShardlinDialect::materializeConstant(OpBuilder &builder,
                                                Attribute value, Type type,
                                                Location loc) {
  return arith::ConstantOp::materialize(builder, value, type, loc);
}
