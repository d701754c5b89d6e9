//===- OpAttrs.h - Discardable attributes between shardlin passes -*- C++ -*-===//
//
// Attributes one shardlin pass puts on ops for a later one, named once for
// both.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_DIALECT_SHARDLIN_IR_OPATTRS_H
#define SHARDLIN_DIALECT_SHARDLIN_IR_OPATTRS_H

#include "llvm/ADT/StringRef.h"

namespace mlir::shardlin {

/// A string attribute on a `shardlin.all_gather` that the upstream import
/// (--shardlin-import-shard) built only because the module states a layout
/// its producer does not give (a `shard.shard`): the text says which.
/// --lower-sharded-linear reports those its simplifications leave
/// (`explain=true`) and removes the attribute.
constexpr llvm::StringLiteral kStatedReshardAttrName =
    "shardlin.stated_reshard";

} // namespace mlir::shardlin

#endif // SHARDLIN_DIALECT_SHARDLIN_IR_OPATTRS_H
