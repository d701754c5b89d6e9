//===- shardlin-opt.cpp - The shardlin optimizer driver -------------------===//
//
// MlirOptMain with the shardlin dialect and passes, plus the upstream dialects
// and generic passes (canonicalize, cse, ...) that shardlin programs use.
//
//===----------------------------------------------------------------------===//

#include "shardlin/Dialect/Shardlin/IR/ShardlinDialect.h"
#include "shardlin/Dialect/Shardlin/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  mlir::shardlin::registerShardlinPasses();

  mlir::DialectRegistry registry;
  registry.insert<mlir::shardlin::ShardlinDialect, mlir::arith::ArithDialect,
                  mlir::func::FuncDialect, mlir::tensor::TensorDialect>();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "shardlin optimizer driver\n", registry));
}
