//===- ExternalizeParameters.cpp - Constants into a safetensors file ------===//
//
// --shardlin-externalize-parameters (Passes.td): each large tensor constant
// of a public function becomes a function argument named by
// `shardlin.parameter`, and its value a tensor of a safetensors file,
// written by the runtime's one safetensors writer (tooling/Safetensors.h).
//
// Three phases, so that a failure leaves the module as it was: collect the
// constants and check them (types, blobs, callers), name the values, then
// write the file and rewrite the functions.
//
//===----------------------------------------------------------------------===//

#include "shardlin/Transforms/Passes.h"

#include "shardlin/Dialect/Shardlin/IR/ArgAttrs.h"
#include "shardlin/runtime/base/Status.h"
#include "shardlin/runtime/tooling/Safetensors.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringSet.h"

#include <cctype>
#include <string>
#include <vector>

namespace mlir::shardlin {
#define GEN_PASS_DEF_EXTERNALIZEPARAMETERS
#include "shardlin/Transforms/Passes.h.inc"
} // namespace mlir::shardlin

using namespace mlir;
using namespace mlir::shardlin;
namespace rt = ::shardlin::rt;

namespace {

/// One value to write: the attribute (each distinct attribute is one
/// tensor), its name, and its bytes as the file holds them.
struct Parameter {
  ElementsAttr value;
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<char> bytes;
};

/// The safetensors dtype of `type`'s elements, or "" for one the format
/// has no name for.
std::string safetensorsDtype(Type element) {
  if (element.isF16())
    return "F16";
  if (element.isBF16())
    return "BF16";
  if (element.isF32())
    return "F32";
  if (element.isF64())
    return "F64";
  auto integer = dyn_cast<IntegerType>(element);
  if (!integer)
    return "";
  const unsigned width = integer.getWidth();
  if (width == 1)
    return integer.isUnsigned() ? "" : "BOOL";
  if (width != 8 && width != 16 && width != 32 && width != 64)
    return "";
  return (integer.isUnsigned() ? "U" : "I") + std::to_string(width);
}

/// The bytes of `value` as a safetensors tensor of `elementBytes` bytes per
/// element (a splat expanded; an i1 one byte, 0 or 1).
LogicalResult elementBytes(Operation *op, ElementsAttr value,
                           size_t elementBytes, std::vector<char> &out) {
  auto type = cast<ShapedType>(value.getType());
  const int64_t n = type.getNumElements();
  const size_t bytes = size_t(n) * elementBytes;
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    if (type.getElementType().isInteger(1)) {
      for (bool b : dense.getValues<bool>())
        out.push_back(b ? 1 : 0);
      return success();
    }
    ArrayRef<char> raw = dense.getRawData();
    if (dense.isSplat()) {
      if (raw.size() != elementBytes)
        return op->emitError("the splat's storage has ")
               << raw.size() << " bytes where " << elementBytes
               << " were expected";
      out.reserve(bytes);
      for (int64_t i = 0; i < n; ++i)
        out.insert(out.end(), raw.begin(), raw.end());
      return success();
    }
    if (raw.size() != bytes)
      return op->emitError("the constant's storage has ")
             << raw.size() << " bytes where " << bytes << " were expected";
    out.assign(raw.begin(), raw.end());
    return success();
  }
  auto resource = cast<DenseResourceElementsAttr>(value);
  DenseResourceElementsHandle handle = resource.getRawHandle();
  const AsmResourceBlob *blob = handle.getBlob();
  if (!blob)
    return op->emitError("dense_resource<")
           << handle.getKey()
           << "> has no data in the module (its blob is missing from "
              "dialect_resources)";
  ArrayRef<char> data = blob->getData();
  if (data.size() != bytes)
    return op->emitError("dense_resource<")
           << handle.getKey() << "> holds " << data.size() << " bytes, but "
           << type << " needs " << bytes;
  out.assign(data.begin(), data.end());
  return success();
}

/// Whether `name` can be a parameter's name: shardlin's program text holds
/// it as one word.
bool isWord(StringRef name) {
  return !name.empty() && llvm::none_of(name, [](char c) {
    return std::isspace(static_cast<unsigned char>(c)) ||
           std::iscntrl(static_cast<unsigned char>(c));
  });
}

struct ExternalizeParametersPass
    : mlir::shardlin::impl::ExternalizeParametersBase<
          ExternalizeParametersPass> {
  using ExternalizeParametersBase::ExternalizeParametersBase;

  void runOnOperation() override;

private:
  /// The constants of `func` to move, in order.
  LogicalResult collect(func::FuncOp func,
                        SmallVectorImpl<arith::ConstantOp> &out);
  /// Checks `op`'s value and adds it to `params_` if it is new.
  LogicalResult addParameter(arith::ConstantOp op);
  /// Names every parameter that has no resource key.
  void nameGenerated(ArrayRef<std::pair<func::FuncOp,
                                        SmallVector<arith::ConstantOp>>>
                         funcs);
  /// Replaces `func`'s constants with arguments. The blobs of the
  /// resources they held stay in the context (another module of it may use
  /// them), but a module is written with the resources it references only,
  /// so they leave its dialect_resources.
  void rewrite(func::FuncOp func, ArrayRef<arith::ConstantOp> constants);

  llvm::MapVector<Attribute, Parameter> params_;
  /// Each resource key's type, to refuse one key used with two types.
  llvm::StringMap<Type> resourceTypes_;
  llvm::StringSet<> taken_;
};

LogicalResult ExternalizeParametersPass::addParameter(arith::ConstantOp op) {
  auto value = cast<ElementsAttr>(op.getValue());
  if (params_.count(value))
    return success();
  auto type = cast<RankedTensorType>(value.getType());
  Parameter p;
  p.value = value;
  p.dtype = safetensorsDtype(type.getElementType());
  if (p.dtype.empty())
    return op.emitError("cannot externalize a constant of element type ")
           << type.getElementType()
           << ": safetensors holds f16, bf16, f32, f64, i1, i8-i64 and "
              "ui8-ui64 (raise min-elements above "
           << type.getNumElements() << " to leave it in the module)";
  p.shape.assign(type.getShape().begin(), type.getShape().end());
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    StringRef key = resource.getRawHandle().getKey();
    auto [it, inserted] = resourceTypes_.try_emplace(key, type);
    if (!inserted && it->second != type)
      return op.emitError("dense_resource<")
             << key << "> is used as " << it->second << " and as " << type
             << "; one parameter has one type";
    if (!isWord(key))
      return op.emitError("dense_resource<")
             << key << ">: a parameter's name cannot hold spaces or control "
                       "characters";
    p.name = key.str();
    taken_.insert(key);
  }
  if (failed(elementBytes(op, value, rt::safetensorsElementBytes(p.dtype),
                          p.bytes)))
    return failure();
  params_.insert({value, std::move(p)});
  return success();
}

LogicalResult
ExternalizeParametersPass::collect(func::FuncOp func,
                                   SmallVectorImpl<arith::ConstantOp> &out) {
  WalkResult walk = func.walk([&](arith::ConstantOp op) {
    auto type = dyn_cast<RankedTensorType>(op.getType());
    if (!type || type.getNumElements() < minElements ||
        op->getParentWithTrait<OpTrait::IsIsolatedFromAbove>() != func)
      return WalkResult::advance();
    if (!isa<DenseElementsAttr, DenseResourceElementsAttr>(op.getValue()))
      return WalkResult::advance();
    if (failed(addParameter(op)))
      return WalkResult::interrupt();
    out.push_back(op);
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

void ExternalizeParametersPass::nameGenerated(
    ArrayRef<std::pair<func::FuncOp, SmallVector<arith::ConstantOp>>> funcs) {
  for (auto [func, constants] : funcs) {
    unsigned next = 0;
    for (arith::ConstantOp op : constants) {
      Parameter &p = params_.find(op.getValue())->second;
      if (!p.name.empty())
        continue;
      std::string name;
      do
        name = (func.getSymName() + ".cst" + Twine(next++)).str();
      while (taken_.contains(name));
      taken_.insert(name);
      p.name = name;
    }
  }
}

void ExternalizeParametersPass::rewrite(func::FuncOp func,
                                        ArrayRef<arith::ConstantOp> constants) {
  MLIRContext *ctx = func.getContext();
  llvm::DenseMap<Attribute, BlockArgument> args;
  for (arith::ConstantOp op : constants) {
    Attribute value = op.getValue();
    auto it = args.find(value);
    if (it == args.end()) {
      const Parameter &p = params_.find(value)->second;
      const unsigned index = func.getNumArguments();
      NamedAttribute name(StringAttr::get(ctx, kParameterArgAttrName),
                          StringAttr::get(ctx, p.name));
      // Only fails for a function that has no body, which has no
      // constants.
      (void)func.insertArgument(index, op.getType(),
                                DictionaryAttr::get(ctx, {name}), op.getLoc());
      it = args.try_emplace(value, func.getArgument(index)).first;
      ++numArguments;
    }
    op.getResult().replaceAllUsesWith(it->second);
    op.erase();
  }
}

void ExternalizeParametersPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (file.empty()) {
    module.emitError("--shardlin-externalize-parameters needs "
                     "file=PATH.safetensors, the file to write");
    return signalPassFailure();
  }
  if (minElements < 1) {
    module.emitError("min-elements must be at least 1, got ")
        << static_cast<int64_t>(minElements);
    return signalPassFailure();
  }
  // 1. The constants, checked, and the functions they change.
  SmallVector<std::pair<func::FuncOp, SmallVector<arith::ConstantOp>>> funcs;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!func.isPublic() || func.isExternal())
      continue;
    SmallVector<arith::ConstantOp> constants;
    if (failed(collect(func, constants)))
      return signalPassFailure();
    if (constants.empty())
      continue;
    if (std::optional<SymbolTable::UseRange> uses =
            SymbolTable::getSymbolUses(func, module);
        !uses || !uses->empty()) {
      Operation *user = uses && !uses->empty() ? uses->begin()->getUser()
                                               : module.getOperation();
      user->emitError("cannot externalize the constants of @")
          << func.getSymName()
          << ": this op refers to it, and its signature would change";
      return signalPassFailure();
    }
    funcs.emplace_back(func, std::move(constants));
  }
  if (params_.empty())
    return;
  // 2. The names.
  nameGenerated(funcs);
  // 3. The file, then the functions.
  std::vector<rt::SafetensorsRawOutput> tensors;
  for (auto &entry : params_) {
    const Parameter &p = entry.second;
    tensors.push_back({p.name, p.dtype, p.shape, p.bytes.data()});
  }
  rt::Status written = rt::writeSafetensors(file, tensors);
  if (!written.isOk()) {
    module.emitError("cannot write the parameters to '")
        << file << "': " << written.message();
    return signalPassFailure();
  }
  numParameters += params_.size();
  for (auto &[func, constants] : funcs)
    rewrite(func, constants);
}

} // namespace
