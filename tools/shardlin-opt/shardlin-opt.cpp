//===- shardlin-opt.cpp - The shardlin optimizer driver -------------------===//
//
// MlirOptMain with the shardlin dialect and passes, plus the upstream dialects
// and generic passes (canonicalize, cse, ...) that shardlin programs use.
//
//===----------------------------------------------------------------------===//

#include "shardlin/Dialect/Shardlin/IR/ShardlinDialect.h"
#include "shardlin/Dialect/Shardlin/Transforms/ElementwiseChains.h"
#include "shardlin/Dialect/Shardlin/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  // --version: shardlin's version after LLVM's.
  llvm::cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "shardlin-opt " SHARDLIN_VERSION "\n";
  });
  mlir::registerTransformsPasses();
  mlir::shardlin::registerShardlinPasses();

  mlir::DialectRegistry registry;
  registry.insert<mlir::shardlin::ShardlinDialect, mlir::func::FuncDialect>();
  // The elementwise ops of blocks (arith, math, linalg) and tensor reshapes.
  mlir::shardlin::registerElementwiseDialects(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "shardlin optimizer driver\n", registry));
}
