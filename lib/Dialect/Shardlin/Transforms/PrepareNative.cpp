//===- PrepareNative.cpp - Before One-Shot Bufferize on the native path ---===//

#include "shardlin/Dialect/Shardlin/Transforms/NativePasses.h"

#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"
#include "shardlin/runtime/base/ChunkLayout.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::shardlin {
#define GEN_PASS_DEF_PREPARENATIVE
#include "shardlin/Dialect/Shardlin/Transforms/NativePasses.h.inc"
} // namespace mlir::shardlin

using namespace mlir;
using namespace mlir::shardlin;

namespace {

/// Replaces every aggregated linalg op (linalg.softmax, ...) by the ops it is
/// made of, until none is left (a part may be an aggregate too).
LogicalResult decomposeAggregates(ModuleOp module) {
  IRRewriter rewriter(module.getContext());
  // Each round decomposes one level; ten levels is far more than upstream's
  // aggregates nest.
  for (int round = 0; round < 10; ++round) {
    SmallVector<linalg::AggregatedOpInterface> aggregates;
    module.walk(
        [&](linalg::AggregatedOpInterface op) { aggregates.push_back(op); });
    if (aggregates.empty())
      return success();
    for (linalg::AggregatedOpInterface op : aggregates) {
      rewriter.setInsertionPoint(op);
      FailureOr<SmallVector<Value>> parts = op.decomposeOperation(rewriter);
      if (failed(parts) || parts->size() != op->getNumResults())
        return op->emitOpError(
            "could not be decomposed into ops that lower to LLVM (the native "
            "path decomposes aggregated linalg ops on tensors, before "
            "bufferization)");
      rewriter.replaceOp(op, *parts);
    }
  }
  return module.emitError(
      "aggregated linalg ops still decompose into aggregates after 10 rounds");
}

/// The runtime's C ABI takes a chunk spec as its placements alone, so its
/// collectives place chunks by the ceil rule: a spec whose explicit
/// boundaries are another split is refused here, with the op that holds it,
/// rather than run with the wrong chunks. It has no all-reduce either.
LogicalResult checkSupported(ModuleOp module) {
  auto unsupported = [](Attribute attr) {
    auto chunk = dyn_cast<ChunkAttr>(attr);
    if (!chunk || !chunk.hasExplicitBounds())
      return false;
    ArrayRef<int64_t> bounds = chunk.getBounds();
    return ::shardlin::rt::ceilBounds(bounds.back(), chunk.getNumChunks()) !=
           std::vector<int64_t>(bounds.begin(), bounds.end());
  };
  WalkResult walked = module.walk([&](Operation *op) {
    if (isa<AllReduceOp>(op)) {
      op->emitOpError() << "is not supported on the native path yet (the "
                           "runtime's C ABI has no all-reduce)";
      return WalkResult::interrupt();
    }
    Attribute found;
    auto note = [&](Attribute attr) {
      if (unsupported(attr))
        found = attr;
    };
    op->getAttrDictionary().walk(note);
    if (Attribute props = op->getPropertiesAsAttribute())
      props.walk(note);
    for (Type t : op->getResultTypes())
      t.walk(note);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (Type t : block.getArgumentTypes())
          t.walk(note);
    if (!found)
      return WalkResult::advance();
    op->emitOpError() << "uses " << found
                      << ": chunk bounds other than the ceil rule's are not "
                         "supported on the native path yet (the runtime's C "
                         "ABI places chunks by the ceil rule from placements "
                         "alone)";
    return WalkResult::interrupt();
  });
  return failure(walked.wasInterrupted());
}

/// Public function definitions are entries: C interfaces for the launcher,
/// and arguments the bufferization must not write.
void markEntries(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  StringRef cInterface = LLVM::LLVMDialect::getEmitCWrapperAttrName();
  StringRef writable = bufferization::BufferizationDialect::kWritableAttrName;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal() || !func.isPublic())
      continue;
    func->setAttr(cInterface, UnitAttr::get(ctx));
    for (auto [i, type] : llvm::enumerate(func.getArgumentTypes()))
      if (isa<TensorType>(type) && !func.getArgAttr(i, writable))
        func.setArgAttr(i, writable, BoolAttr::get(ctx, false));
  }
}

struct PrepareNativePass
    : public mlir::shardlin::impl::PrepareNativeBase<PrepareNativePass> {
  void runOnOperation() override {
    if (failed(checkSupported(getOperation())) ||
        failed(decomposeAggregates(getOperation())))
      return signalPassFailure();
    markEntries(getOperation());
  }
};

} // namespace
