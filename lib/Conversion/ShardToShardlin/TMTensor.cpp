//===- TMTensor.cpp - torch-mlir's tm_tensor.attention, parsed ------------===//

#include "TMTensor.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::shardlin::tmtensor;

MLIR_DEFINE_EXPLICIT_TYPE_ID(mlir::shardlin::tmtensor::TMTensorDialect)
MLIR_DEFINE_EXPLICIT_TYPE_ID(mlir::shardlin::tmtensor::AttentionOp)

TMTensorDialect::TMTensorDialect(MLIRContext *ctx)
    : Dialect(getDialectNamespace(), ctx, TypeID::get<TMTensorDialect>()) {
  addOperations<AttentionOp>();
}

OperandRange AttentionOp::getIns() {
  auto n = (*this)->getAttrOfType<IntegerAttr>("num_ins");
  return getOperation()->getOperands().take_front(n.getInt());
}

ParseResult AttentionOp::parse(OpAsmParser &parser, OperationState &result) {
  SmallVector<OpAsmParser::UnresolvedOperand> ins, outs;
  SmallVector<Type> inTypes, outTypes;
  llvm::SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword("ins") || parser.parseLParen() ||
      parser.parseOperandList(ins) || parser.parseColonTypeList(inTypes) ||
      parser.parseRParen() || parser.parseKeyword("outs") ||
      parser.parseLParen() || parser.parseOperandList(outs) ||
      parser.parseColonTypeList(outTypes) || parser.parseRParen() ||
      parser.parseOptionalArrowTypeList(result.types) ||
      parser.parseOptionalAttrDict(result.attributes))
    return failure();
  if (parser.resolveOperands(ins, inTypes, loc, result.operands) ||
      parser.resolveOperands(outs, outTypes, loc, result.operands))
    return failure();
  result.addAttribute("num_ins", parser.getBuilder().getI64IntegerAttr(
                                     static_cast<int64_t>(ins.size())));
  return success();
}

void AttentionOp::print(OpAsmPrinter &p) {
  OperandRange ins = getIns();
  p << " ins(" << ins << " : " << ins.getTypes() << ") outs(" << getInit()
    << " : " << getInit().getType() << ") -> " << getType();
  p.printOptionalAttrDict((*this)->getAttrs(), {"num_ins"});
}

LogicalResult AttentionOp::verify() {
  auto n = (*this)->getAttrOfType<IntegerAttr>("num_ins");
  if (!n)
    return emitOpError("needs its number of ins ('num_ins')");
  const int64_t ins = n.getInt();
  if (ins < 3 || ins > 4 ||
      static_cast<int64_t>(getOperation()->getNumOperands()) != ins + 1)
    return emitOpError("takes ins(q, k, v[, mask]) and outs(init)");
  for (Value v : getOperation()->getOperands())
    if (!isa<RankedTensorType>(v.getType()))
      return emitOpError("takes ranked tensors");
  if (getInit().getType() != getType())
    return emitOpError("'s result type must be its init's");
  return success();
}
