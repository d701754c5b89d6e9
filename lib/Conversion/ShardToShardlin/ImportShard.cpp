//===- ImportShard.cpp - The --shardlin-import-shard pass -----------------===//
//
// Finds the module's grid, imports every function (ImportShardFunction.cpp)
// and erases the grid. A 2-D grid is first split into its data-parallel
// replicas (ImportShardGrid.cpp): the module becomes one replica's, on a
// 1-D grid of its tensor-parallel axis. More axes are rejected with a
// diagnostic naming the grid.
//
//===----------------------------------------------------------------------===//

#include "shardlin/Conversion/ShardToShardlin/ShardToShardlin.h"
#include "shardlin/Conversion/ShardToShardlin/Passes.h"

#include "ImportShardInternal.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

namespace mlir::shardlin {
#define GEN_PASS_DEF_IMPORTSHARD
#include "shardlin/Conversion/ShardToShardlin/Passes.h.inc"
} // namespace mlir::shardlin

using namespace mlir;
using namespace mlir::shardlin;
using namespace mlir::shardlin::import;

void mlir::shardlin::registerImportShardDialects(DialectRegistry &registry) {
  registry.insert<ShardlinDialect, shard::ShardDialect, func::FuncDialect,
                  linalg::LinalgDialect, tensor::TensorDialect,
                  arith::ArithDialect, math::MathDialect,
                  tmtensor::TMTensorDialect>();
}

bool mlir::shardlin::hasShardGrid(ModuleOp module) {
  return !module.getOps<shard::GridOp>().empty();
}

/// The module's one 1-D grid of static size.
static FailureOr<Grid> findGrid(ModuleOp module) {
  Grid grid;
  for (shard::GridOp op : module.getOps<shard::GridOp>()) {
    if (grid.op)
      return op.emitError()
             << "a second shard.grid (@" << op.getSymName() << " after @"
             << grid.name
             << "): the import takes one grid per module";
    grid.op = op;
    grid.name = op.getSymName();
  }
  if (!grid.op)
    return failure();
  ArrayRef<int64_t> shape = grid.op.getShape();
  if (shape.size() != 1)
    return grid.op.emitError()
           << "shard.grid @" << grid.name << " has " << shape.size()
           << " axes (shape "
           << llvm::join(llvm::map_range(shape,
                                         [](int64_t d) {
                                           return ShapedType::isDynamic(d)
                                                      ? std::string("?")
                                                      : std::to_string(d);
                                         }),
                         "x")
           << "): shardlin imports 1-D grids (tensor parallelism over one "
              "axis) and 2-D ones (data-parallel axis 0, tensor-parallel "
              "axis 1)";
  if (ShapedType::isDynamic(shape[0]) || shape[0] < 1)
    return grid.op.emitError()
           << "shard.grid @" << grid.name
           << " has a dynamic or empty shape: the import needs the number of "
              "devices (shardlin's world size) statically";
  grid.worldSize = shape[0];
  return grid;
}

/// A `linalg.generic` that only copies its input through a permutation map
/// (what StableHLO's legalization to linalg writes for `stablehlo.transpose`)
/// becomes the `linalg.transpose` it is, so that the linears that absorb a
/// transposed weight, and the import of a transpose, see one form.
static void namedTransposes(func::FuncOp func) {
  SmallVector<linalg::GenericOp> generics;
  func.walk([&](linalg::GenericOp op) { generics.push_back(op); });
  IRRewriter rewriter(func.getContext());
  for (linalg::GenericOp op : generics) {
    if (!op.hasPureTensorSemantics())
      continue;
    std::optional<SmallVector<int64_t>> perm =
        linalg::isaTransposeOpInterface(op);
    if (!perm)
      continue;
    rewriter.setInsertionPoint(op);
    rewriter.replaceOpWithNewOp<linalg::TransposeOp>(
        op, op.getDpsInputs()[0], op.getDpsInits()[0], *perm);
  }
}

/// The constant exponent of a `math.powf` on scalars: an `arith.constant`
/// float, captured by a linalg body or in it.
static std::optional<double> constantExponent(math::PowFOp op) {
  FloatAttr value;
  if (!isa<FloatType>(op.getRhs().getType()) ||
      !matchPattern(op.getRhs(), m_Constant(&value)))
    return std::nullopt;
  return value.getValueAsDouble();
}

/// `math.powf %x, c` with a constant c (what torch-mlir writes for
/// `torch.pow(x, 0.5)` or `x ** 1.5`) as the ops the runtime, the JIT and the
/// backward take: an integer c is `math.fpowi` (products), 0.5 `math.sqrt`,
/// -0.5 `math.rsqrt`, any other exp(c * log(x)) (NaN for x < 0 as powf; 0 and
/// inf at x = 0 as powf). A powf whose exponent is not a constant is left
/// for the import to report.
static void expandConstantPowers(func::FuncOp func) {
  SmallVector<math::PowFOp> pows;
  func.walk([&](math::PowFOp op) { pows.push_back(op); });
  IRRewriter rewriter(func.getContext());
  for (math::PowFOp op : pows) {
    std::optional<double> c = constantExponent(op);
    if (!c)
      continue;
    rewriter.setInsertionPoint(op);
    Location loc = op.getLoc();
    Value x = op.getLhs();
    Value result;
    if (*c == std::nearbyint(*c) && std::abs(*c) <= 64) {
      Value n = arith::ConstantOp::create(
          rewriter, loc, rewriter.getI64IntegerAttr(static_cast<int64_t>(*c)));
      result = math::FPowIOp::create(rewriter, loc, x, n);
    } else if (*c == 0.5) {
      result = math::SqrtOp::create(rewriter, loc, x);
    } else if (*c == -0.5) {
      result = math::RsqrtOp::create(rewriter, loc, x);
    } else {
      Value log = math::LogOp::create(rewriter, loc, x);
      Value scaled = arith::MulFOp::create(rewriter, loc, log, op.getRhs());
      result = math::ExpOp::create(rewriter, loc, scaled);
    }
    rewriter.replaceOp(op, result);
  }
}

LogicalResult mlir::shardlin::importShard(ModuleOp module) {
  if (!hasShardGrid(module))
    return success();
  for (auto func : module.getOps<func::FuncOp>()) {
    namedTransposes(func);
    expandConstantPowers(func);
  }
  if (failed(splitDataParallelGrid(module)))
    return failure();
  FailureOr<Grid> grid = findGrid(module);
  if (failed(grid))
    return failure();
  // Fused q/k/v weights into three linears, before any function's walk.
  for (auto func : module.getOps<func::FuncOp>())
    if (failed(splitFusedProjections(func, *grid)))
      return failure();
  bool ok = true;
  // Only functions: anything else that refers to the grid keeps it alive,
  // and is reported below.
  for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
    if (failed(FunctionImporter(func, *grid).run()))
      ok = false;
  if (!ok)
    return failure();
  // Everything that named the grid is gone with the functions' bodies.
  if (std::optional<SymbolTable::UseRange> uses =
          SymbolTable::getSymbolUses(grid->op.getSymNameAttr(),
                                     module.getOperation());
      uses && !uses->empty())
    return uses->begin()->getUser()->emitError()
           << "refers to the grid @" << grid->op.getSymName()
           << " outside the functions the import rewrites";
  grid->op.erase();
  return success();
}

namespace {
struct ImportShardPass
    : mlir::shardlin::impl::ImportShardBase<ImportShardPass> {
  void runOnOperation() override {
    if (failed(importShard(getOperation())))
      signalPassFailure();
  }
};
} // namespace
