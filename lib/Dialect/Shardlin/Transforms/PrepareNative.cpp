//===- PrepareNative.cpp - Before One-Shot Bufferize on the native path ---===//

#include "shardlin/Dialect/Shardlin/Transforms/NativePasses.h"

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
    if (failed(decomposeAggregates(getOperation())))
      return signalPassFailure();
    markEntries(getOperation());
  }
};

} // namespace
