//===- readme_main.cpp - Runs the README's embedding snippet --------------===//
//
// The ctest example.embed extracts the README's C++ snippet (between the
// marker "<!-- readme-snippet" and the end of its code block) into a file
// and builds it with this driver, which parses a module with a sharded
// linear, calls the snippet's lowerShardedLinears and prints the result
// (FileCheck'd by the test): the README's code compiles, links against the
// installed package and does what it says.
//
//===----------------------------------------------------------------------===//

#include "shardlin/Dialect/Shardlin/IR/ShardlinDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

mlir::LogicalResult lowerShardedLinears(mlir::ModuleOp module);

int main(int argc, char **argv) {
  if (argc != 2) {
    llvm::errs() << "usage: readme-snippet FILE.mlir\n";
    return 2;
  }
  mlir::DialectRegistry registry;
  registry.insert<mlir::shardlin::ShardlinDialect, mlir::func::FuncDialect>();
  mlir::MLIRContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(argv[1], &context);
  if (!module)
    return 1;
  if (mlir::failed(lowerShardedLinears(*module)))
    return 1;
  module->print(llvm::outs());
  return 0;
}

// The quickstart's row-wise layer, lowered by the snippet:
// CHECK-LABEL: func.func @main
// CHECK: shardlin.local_shard
// CHECK: shardlin.gemm
// CHECK-NOT: shardlin.linear
