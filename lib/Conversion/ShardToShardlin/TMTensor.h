//===- TMTensor.h - torch-mlir's tm_tensor.attention, parsed ----*- C++ -*-===//
//
// A minimal `tm_tensor` dialect holding the one op of torch-mlir's TMTensor
// dialect that its FX importer writes for F.scaled_dot_product_attention in
// linalg-on-tensors output: `tm_tensor.attention ins(q, k, v[, mask] : ...)
// outs(init : ...) -> type`, on (B*H) x S x D tensors. MLIR 22 has no such
// dialect; registering this one (registerImportShardDialects) lets the tools
// parse exported modules so that --shardlin-import-shard can turn the op
// into shardlin.attention (ImportShardAttention.cpp). It has no semantics
// of its own beyond its operands and form.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_LIB_CONVERSION_SHARDTOSHARDLIN_TMTENSOR_H
#define SHARDLIN_LIB_CONVERSION_SHARDTOSHARDLIN_TMTENSOR_H

#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"

namespace mlir::shardlin::tmtensor {

class TMTensorDialect : public Dialect {
public:
  explicit TMTensorDialect(MLIRContext *ctx);
  static StringRef getDialectNamespace() { return "tm_tensor"; }
};

/// `tm_tensor.attention ins(%q, %k, %v[, %mask] : types) outs(%init : type)
/// -> type`; the number of `ins` is the `num_ins` attribute (not printed).
class AttentionOp
    : public Op<AttentionOp, OpTrait::VariadicOperands, OpTrait::OneResult,
                OpTrait::OneTypedResult<Type>::Impl, OpTrait::ZeroRegions,
                OpTrait::ZeroSuccessors> {
public:
  using Op::Op;
  static StringRef getOperationName() { return "tm_tensor.attention"; }
  static ArrayRef<StringRef> getAttributeNames() {
    static StringRef names[] = {"num_ins"};
    return names;
  }
  /// The ins: q, k, v and the optional additive mask.
  OperandRange getIns();
  Value getQ() { return getIns()[0]; }
  Value getK() { return getIns()[1]; }
  Value getV() { return getIns()[2]; }
  Value getMask() { return getIns().size() > 3 ? getIns()[3] : Value(); }
  Value getInit() { return getOperation()->getOperands().back(); }

  static ParseResult parse(OpAsmParser &parser, OperationState &result);
  void print(OpAsmPrinter &p);
  LogicalResult verify();
};

} // namespace mlir::shardlin::tmtensor

MLIR_DECLARE_EXPLICIT_TYPE_ID(mlir::shardlin::tmtensor::TMTensorDialect)
MLIR_DECLARE_EXPLICIT_TYPE_ID(mlir::shardlin::tmtensor::AttentionOp)

#endif
