//===- ShardlinGradOps.cpp - Verifiers of the backward functions' ops -----===//
//
// The ops of ShardlinGradOps.td and sum_rows' buffer form. Kept apart from
// ShardlinOps.cpp: they are what backward functions add (docs/training.md).
//
//===----------------------------------------------------------------------===//

#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::shardlin;

/// The rules of sum_rows and its buffer form, `result` being the output.
static LogicalResult verifySumRows(Operation *op, ShapedType in,
                                   ShapedType res) {
  if (in.getRank() != 2 || res.getRank() != 1)
    return op->emitOpError() << "expects a rank-2 input and a rank-1 result, "
                                "got "
                             << in << " and " << res;
  int64_t cols = in.getShape()[1], n = res.getShape()[0];
  if (!ShapedType::isDynamic(cols) && !ShapedType::isDynamic(n) && cols != n)
    return op->emitOpError() << "result size " << n
                             << " differs from the input's " << cols
                             << " columns";
  Type elt = in.getElementType(), resElt = res.getElementType();
  const bool f32OfNarrow = resElt.isF32() && (elt.isF16() || elt.isBF16());
  if (resElt != elt && !f32OfNarrow)
    return op->emitOpError() << "result element type " << resElt
                             << " must be the input's (" << elt
                             << "), or f32 when the input is f16 or bf16";
  return success();
}

LogicalResult SumRowsOp::verify() {
  return verifySumRows(*this, getInput().getType(), getResult().getType());
}

LogicalResult BufferSumRowsOp::verify() {
  return verifySumRows(*this, getInput().getType(), getOutput().getType());
}
