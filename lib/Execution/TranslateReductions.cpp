//===- TranslateReductions.cpp - A norm's row reductions ------------------===//
//
// A reduction over the last dim (RowReductions.h) as the runtime's
// reduce_last: operands x and the init, the combination as a three-node
// expression (input 0 the element, input 1 the accumulator).
//
//===----------------------------------------------------------------------===//

#include "TranslateOps.h"

#include "shardlin/runtime/program/OpTable.h"

using namespace mlir;
using namespace mlir::shardlin;
using namespace mlir::shardlin::translation;
namespace rt = ::shardlin::rt;

LogicalResult translation::translateRowReduction(Operation &op,
                                                 const RowReduction &red,
                                                 InstrSink &sink) {
  Type t = getElementTypeOrSelf(red.input.getType());
  if (!t.isF16() && !t.isBF16() && !t.isF32() && !t.isF64())
    return op.emitError() << "the shardlin runtime reduces tensors of f16, "
                             "bf16, f32 or f64, not "
                          << red.input.getType();
  rt::Instr in;
  in.op = rt::OpCode::ReduceLast;
  for (Value v : {red.input, red.init}) {
    FailureOr<int> id = sink.operand(&op, v);
    if (failed(id))
      return failure();
    in.operands.push_back(*id);
  }
  rt::ExprNode element, acc, combine;
  element.op = acc.op = rt::ExprOp::Input;
  element.input = 0;
  acc.input = 1;
  combine.op = red.combine == RowCombine::Add       ? rt::ExprOp::Add
               : red.combine == RowCombine::Maximum ? rt::ExprOp::Maximum
                                                    : rt::ExprOp::MaxNum;
  combine.args[0] = 0;
  combine.args[1] = 1;
  in.expr.nodes = {element, acc, combine};
  Value out = op.getResult(0);
  FailureOr<int> id = sink.define(op.getLoc(), out, out.getType());
  if (failed(id))
    return failure();
  in.result = *id;
  sink.append(op.getLoc(), std::move(in));
  return success();
}
