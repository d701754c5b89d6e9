//===- InlineCalls.cpp - A function's calls, inlined ----------------------===//
//
// A plain clone of each callee's single block at its call, the block's
// arguments mapped to the call's operands and the call's results to the
// func.return's operands (the plan executor translates one block, and the
// backward differentiates one; MLIR's inliner needs every dialect's inliner
// interface, which the runtime's dialects do not all register).
//
//===----------------------------------------------------------------------===//

#include "shardlin/Dialect/Shardlin/Transforms/InlineCalls.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

namespace {

constexpr int kMaxCallDepth = 64;

LogicalResult inlineCall(func::CallOp call, SymbolTable &symbols,
                         StringRef who) {
  auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
  if (!callee || callee.isExternal() || !callee.getBody().hasOneBlock())
    return call.emitError()
           << who
           << " inlines a call only to a function of the module with one "
              "block; '"
           << call.getCallee() << "' is not one";
  Block &body = callee.getBody().front();
  auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
  if (!ret)
    return call.emitError()
           << "'" << call.getCallee() << "' does not end in func.return";
  IRMapping map;
  map.map(body.getArguments(), call.getOperands());
  OpBuilder builder(call);
  for (Operation &op : body.without_terminator())
    builder.clone(op, map);
  for (auto [result, value] : llvm::zip(call.getResults(), ret.getOperands()))
    result.replaceAllUsesWith(map.lookupOrDefault(value));
  call.erase();
  return success();
}

} // namespace

LogicalResult mlir::shardlin::inlineCalls(func::FuncOp entry, StringRef who) {
  auto module = entry->getParentOfType<ModuleOp>();
  if (!module)
    return success();
  SymbolTable symbols(module);
  for (int depth = 0;; ++depth) {
    SmallVector<func::CallOp> calls;
    entry.walk([&](func::CallOp call) { calls.push_back(call); });
    if (calls.empty())
      return success();
    if (depth == kMaxCallDepth)
      return calls.front().emitError()
             << "calls nest deeper than " << kMaxCallDepth
             << " (a recursion?); " << who << " inlines them";
    for (func::CallOp call : calls)
      if (failed(inlineCall(call, symbols, who)))
        return failure();
  }
}
