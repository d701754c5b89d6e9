//===- Verification.h - Pieces the op verifiers share -----------*- C++ -*-===//
//
// Internal to the dialect library: the formatting and checks that the
// verifiers of ShardlinOps.cpp and LinearOp.cpp both use.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_LIB_DIALECT_IR_VERIFICATION_H
#define SHARDLIN_LIB_DIALECT_IR_VERIFICATION_H

#include "shardlin/Dialect/Shardlin/IR/ShardlinAttrs.h"

#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/Operation.h"

#include <string>

namespace mlir::shardlin::detail {

/// A dim as users read it: its size, or `?`.
std::string formatDim(int64_t d);
/// `[d0, d1, ...]` with formatDim.
std::string formatShape(ArrayRef<int64_t> shape);
/// The runtime and the GEMM backends work on plain dense tensors; an
/// encoding would be silently dropped by the lowering, so it is an error.
LogicalResult checkNoEncoding(Operation *op, Type t, StringRef what);

} // namespace mlir::shardlin::detail

namespace mlir::shardlin {
class LinearOp;
/// The custom<LinearLayouts> directive of shardlin.linear (LinearOp.cpp):
/// `layouts IN -> OUT [along <chunk>]`, absent for rows -> rows.
ParseResult parseLinearLayouts(OpAsmParser &parser, LayoutAttr &input,
                               LayoutAttr &result, ChunkAttr &resultRows);
void printLinearLayouts(OpAsmPrinter &printer, LinearOp op, LayoutAttr input,
                        LayoutAttr result, ChunkAttr resultRows);
} // namespace mlir::shardlin

#endif
