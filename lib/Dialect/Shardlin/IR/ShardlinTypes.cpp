//===- ShardlinTypes.cpp - shardlin types ---------------------------------===//

#include "shardlin/Dialect/Shardlin/IR/ShardlinTypes.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::shardlin;

#define GET_TYPEDEF_CLASSES
#include "shardlin/Dialect/Shardlin/IR/ShardlinTypes.cpp.inc"

namespace mlir::shardlin {
#include "shardlin/Dialect/Shardlin/IR/ShardlinTypeConstraints.cpp.inc"
} // namespace mlir::shardlin

void ShardlinDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "shardlin/Dialect/Shardlin/IR/ShardlinTypes.cpp.inc"
      >();
}


LogicalResult
ShardedType::verify(function_ref<InFlightDiagnostic()> emitError,
                    RankedTensorType tensorType, ChunkAttr sharding) {
  if (!tensorType)
    return emitError() << "sharded type needs a ranked tensor type";
  if (!sharding)
    return emitError() << "sharded type needs a #shardlin.chunk attribute";
  if (tensorType.getRank() < 1)
    return emitError() << "sharded tensor must have rank >= 1, got "
                       << tensorType;
  if (!tensorType.hasStaticShape())
    return emitError() << "sharded tensor must have a static shape, got "
                       << tensorType;
  // The ops check their tensors with Shardlin_Tensor; a type parameter has
  // no ODS constraint, so the sharded type calls its predicate here.
  if (!isSupportedElementType(tensorType.getElementType()))
    return emitError() << "sharded tensor element type "
                       << tensorType.getElementType()
                       << " is not supported (expected f16, bf16, f32 or f64)";
  if (sharding.getDim() >= tensorType.getRank())
    return emitError() << "chunk dim " << sharding.getDim()
                       << " is out of range for the rank-"
                       << tensorType.getRank() << " tensor " << tensorType;
  std::string what;
  llvm::raw_string_ostream os(what);
  os << "dim " << sharding.getDim() << " of the sharded tensor '" << tensorType
     << "'";
  return sharding.verifyDimSize(
      emitError, tensorType.getShape()[sharding.getDim()], what);
}

RankedTensorType ShardedType::getLocalType() const {
  SmallVector<int64_t> shape(getShape());
  int64_t d = getSharding().getDim();
  shape[d] = getSharding().getLocalSize(shape[d]);
  return RankedTensorType::get(shape, getElementType());
}
