//===- ExecutionPipeline.cpp - From a module to a runtime Program --------===//
//
// What the executor does before and around the translation
// (ProgramBuilder.cpp): the dialects it reads, the import of upstream shard
// modules, the lowering, dropping dead ops, choosing the entry, and
// buildProgram, which does all of it.
//
//===----------------------------------------------------------------------===//

#include "shardlin/Execution/ProgramBuilder.h"

#include "shardlin/Dialect/Shardlin/Transforms/InlineCalls.h"

#include "shardlin/Dialect/Shardlin/IR/ShardlinDialect.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"
#include "shardlin/Dialect/Shardlin/Transforms/ElementwiseChains.h"
#include "shardlin/Conversion/ShardToShardlin/ShardToShardlin.h"
#include "shardlin/Dialect/Shardlin/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace mlir::shardlin;
namespace rt = ::shardlin::rt;

void mlir::shardlin::registerExecutionDialects(DialectRegistry &registry) {
  registry.insert<ShardlinDialect, func::FuncDialect>();
  registerElementwiseDialects(registry);
  // Modules in the upstream form (shard + linalg) are imported first.
  registerImportShardDialects(registry);
}

FailureOr<int64_t> mlir::shardlin::importForExecution(ModuleOp module) {
  if (!hasShardGrid(module))
    return 0;
  // The importer checks the grid (one, static; 1-D, or 2-D with its
  // data-parallel axis first) and erases it. W is the tensor-parallel axis.
  int64_t devices = 0;
  module.walk([&](shard::GridOp grid) {
    ArrayRef<int64_t> shape = grid.getShape();
    if ((shape.size() == 1 || shape.size() == 2) &&
        !ShapedType::isDynamic(shape.back()))
      devices = shape.back();
  });
  if (failed(importShard(module)))
    return failure();
  return devices;
}

LogicalResult
mlir::shardlin::lowerForExecution(ModuleOp module,
                                  const LowerShardedLinearOptions &options) {
  if (failed(importForExecution(module)))
    return failure();
  bool hasLinear = false;
  module.walk([&](LinearOp) {
    hasLinear = true;
    return WalkResult::interrupt();
  });
  if (hasLinear) {
    PassManager pm(module.getContext());
    pm.addNestedPass<func::FuncOp>(createLowerShardedLinear(options));
    if (failed(pm.run(module)))
      return failure();
  }
  // Ops whose results nothing reads and that have no effects are dropped
  // (users first): a dead op the runtime cannot execute, such as an unused
  // linalg.transpose, is no reason to refuse the program (issue 27).
  for (auto f : module.getOps<func::FuncOp>())
    for (Block &block : f.getBody())
      for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
        if (isOpTriviallyDead(&op))
          op.erase();
  return verify(module);
}

FailureOr<func::FuncOp> mlir::shardlin::selectEntry(ModuleOp module,
                                                    StringRef name) {
  SmallVector<func::FuncOp> publicFuncs;
  func::FuncOp mainFunc;
  for (auto f : module.getOps<func::FuncOp>()) {
    if (!name.empty() && f.getSymName() == name) {
      if (f.isExternal())
        return f.emitError() << "entry '" << name << "' has no body";
      return f;
    }
    if (f.isPublic() && !f.isExternal())
      publicFuncs.push_back(f);
    if (f.getSymName() == "main")
      mainFunc = f;
  }
  std::string candidates;
  for (auto f : publicFuncs)
    candidates += (candidates.empty() ? "" : ", ") + f.getSymName().str();
  if (!name.empty())
    return module.emitError() << "no function named '" << name
                              << "' (public functions: "
                              << (candidates.empty() ? "none" : candidates)
                              << ")";
  if (publicFuncs.size() == 1)
    return publicFuncs.front();
  if (mainFunc && !mainFunc.isExternal())
    return mainFunc;
  return module.emitError()
         << "cannot choose an entry function: "
         << (publicFuncs.empty() ? std::string("there is no public function")
                                 : "several public functions (" + candidates +
                                       ") and none is named 'main'")
         << "; pass --entry=NAME";
}

FailureOr<rt::Program>
mlir::shardlin::buildProgram(ModuleOp module, StringRef entry,
                             const LowerShardedLinearOptions &options) {
  FailureOr<int64_t> devices = importForExecution(module);
  if (failed(devices) || failed(lowerForExecution(module, options)))
    return failure();
  FailureOr<func::FuncOp> f = selectEntry(module, entry);
  if (failed(f) || failed(inlineCalls(*f, "the shardlin runtime")))
    return failure();
  FailureOr<rt::Program> program = translateToProgram(*f);
  // An upstream module's grid says W even where nothing is split.
  if (succeeded(program) && program->worldSize == 0)
    program->worldSize = *devices;
  return program;
}
