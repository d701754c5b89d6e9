//===- main.cpp - Embedding the shardlin dialect and pass -----------------===//
//
// Builds, in C++, a function with one row-wise sharded linear layer (K = 19
// over 4 ranks, placements [2, 3, 0, 1]) and lowers it with the pass from a
// PassManager, as a compiler pipeline that embeds shardlin would, forcing
// the activation-moving strategy through the pass's options.
//
//===----------------------------------------------------------------------===//

#include "shardlin/Dialect/Shardlin/IR/ShardlinDialect.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"
#include "shardlin/Dialect/Shardlin/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
// The dialect lives in mlir::shardlin (the runtime in ::shardlin::rt).
namespace sl = mlir::shardlin;

int main() {
  MLIRContext context;
  context.loadDialect<sl::ShardlinDialect, func::FuncDialect>();
  OpBuilder b(&context);
  Location loc = b.getUnknownLoc();

  Type f32 = b.getF32Type();
  auto spec = sl::ChunkAttr::get(&context, /*dim=*/1, {2, 3, 0, 1});
  auto xType = RankedTensorType::get({5, 19}, f32);
  auto wType = sl::ShardedType::get(
      &context, RankedTensorType::get({11, 19}, f32), spec);
  auto bType = RankedTensorType::get({11}, f32);
  auto yType = RankedTensorType::get({5, 11}, f32);

  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(
      b, loc, "layer", b.getFunctionType({xType, wType, bType}, {yType}));
  Block *body = func.addEntryBlock();
  b.setInsertionPointToEnd(body);
  Value y = sl::LinearOp::create(b, loc, yType, body->getArgument(0),
                                       body->getArgument(1),
                                       body->getArgument(2));
  func::ReturnOp::create(b, loc, y);

  if (failed(verify(*module)))
    return 1;
  // Force the reference algorithm (moving activations); by default the
  // pass's cost model picks per linear.
  sl::LowerShardedLinearOptions options;
  options.strategy = sl::StrategyOption::Activations;
  PassManager pm(&context);
  pm.addNestedPass<func::FuncOp>(sl::createLowerShardedLinear(options));
  if (failed(pm.run(*module)))
    return 1;
  module->print(llvm::outs());
  return 0;
}

// CHECK-LABEL: func.func @layer
// CHECK: shardlin.local_shard
// CHECK: shardlin.all_to_all %{{.*}} split <dim = 1, placements = [2, 3, 0, 1]> concat <dim = 0, placements = [0, 1, 2, 3]>
// CHECK: shardlin.gemm {{.*}}strategy = "activations"
// CHECK: shardlin.reduce_scatter
// CHECK: shardlin.bias_add
