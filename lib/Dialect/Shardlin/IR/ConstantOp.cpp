//===- ConstantOp.cpp - shardlin.constant ---------------------------------===//
//
// A constant tensor of the global view (a frontend's weight or bias): its
// verifier, and its elements as bytes, which the executors read (the plan
// executor's constants table, the native path's arith.constant).
//
//===----------------------------------------------------------------------===//

#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;
using namespace mlir::shardlin;

ChunkAttr ConstantOp::getSharding() {
  auto sharded = dyn_cast<ShardedType>(getResult().getType());
  return sharded ? sharded.getSharding() : ChunkAttr();
}

namespace {

/// The bytes of `type`'s elements: 2, 4 or 8 per element.
int64_t byteCount(RankedTensorType type) {
  return type.getNumElements() *
         static_cast<int64_t>(type.getElementTypeBitWidth() / 8);
}

} // namespace

LogicalResult ConstantOp::verify() {
  auto type = dyn_cast<RankedTensorType>(getValue().getType());
  if (!type || !type.hasStaticShape() || type.getEncoding() ||
      !isSupportedElementType(type.getElementType()))
    return emitOpError() << "expects a value of a static tensor type of f16, "
                            "bf16, f32 or f64 (no encoding), got "
                         << getValue().getType();
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(getValue())) {
    // The blob may be absent while a module is parsed piecewise; where it
    // is present it must hold the elements.
    if (AsmResourceBlob *blob = resource.getRawHandle().getBlob();
        blob && static_cast<int64_t>(blob->getData().size()) != byteCount(type))
      return emitOpError()
             << "dense_resource<" << resource.getRawHandle().getKey()
             << "> holds " << blob->getData().size() << " bytes but "
             << type << " needs " << byteCount(type);
  } else if (!isa<DenseElementsAttr>(getValue())) {
    return emitOpError() << "expects a dense<...> or dense_resource<...> "
                            "value, got "
                         << getValue();
  }
  Type result = getResult().getType();
  if (auto sharded = dyn_cast<ShardedType>(result)) {
    if (sharded.getTensorType() != type)
      return emitOpError() << "result " << result
                           << " is not a sharded type of the value's type "
                           << type;
    return success();
  }
  if (result != type)
    return emitOpError() << "result type " << result
                         << " differs from the value's type " << type;
  return success();
}

FailureOr<std::vector<char>> ConstantOp::getBytes() {
  RankedTensorType type = getGlobalType();
  const size_t bytes = static_cast<size_t>(byteCount(type));
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(getValue())) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return emitOpError() << "dense_resource<"
                           << resource.getRawHandle().getKey()
                           << "> has no data: the module's dialect_resources "
                              "do not define it";
    ArrayRef<char> data = blob->getData();
    if (data.size() != bytes)
      return emitOpError() << "dense_resource<"
                           << resource.getRawHandle().getKey() << "> holds "
                           << data.size() << " bytes, not " << bytes;
    return std::vector<char>(data.begin(), data.end());
  }
  auto dense = cast<DenseElementsAttr>(getValue());
  ArrayRef<char> raw = dense.getRawData();
  if (!dense.isSplat())
    return std::vector<char>(raw.begin(), raw.end());
  // A splat stores one element.
  std::vector<char> out;
  out.reserve(bytes);
  const size_t elt = static_cast<size_t>(type.getElementTypeBitWidth() / 8);
  for (size_t i = 0; i < bytes; i += elt)
    out.insert(out.end(), raw.begin(), raw.begin() + elt);
  return out;
}
