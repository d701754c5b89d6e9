//===- LocalizeSharded.cpp - Sharded values to the rank's local tensors ---===//
//
// One-Shot Bufferize's function-boundary bufferization knows tensor types
// only, and a `!shardlin.sharded` value is, on each rank, nothing but that
// rank's chunk: the value `shardlin.local_shard` returns. So the native path
// gives every sharded value that local type, in function signatures, calls,
// returns and branches, and drops the local_shard ops and their inverse,
// from_local (a sharded result, e.g. a weight's gradient, is the rank's
// chunk it is made of). A split shardlin.constant becomes the local_chunk of
// its value: the rank's slice. What a launcher passes for a sharded argument is
// then the rank's chunk, as shardlin-run already does (README, "Sharded
// arguments"), and what it gets for a sharded result the rank's chunk.
//
//===----------------------------------------------------------------------===//

#include "shardlin/Dialect/Shardlin/IR/ChunkArith.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"
#include "shardlin/Dialect/Shardlin/Native/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::shardlin {
#define GEN_PASS_DEF_LOCALIZESHARDED
#include "shardlin/Dialect/Shardlin/Native/Passes.h.inc"
} // namespace mlir::shardlin

using namespace mlir;
using namespace mlir::shardlin;

namespace {

bool isSharded(Type t) { return isa<ShardedType>(t); }

bool mentionsSharded(Operation *op) {
  if (llvm::any_of(op->getOperandTypes(), isSharded) ||
      llvm::any_of(op->getResultTypes(), isSharded))
    return true;
  for (Region &region : op->getRegions())
    for (Block &block : region)
      if (llvm::any_of(block.getArgumentTypes(), isSharded))
        return true;
  return false;
}

/// A sharded argument of a public function whose local size is `?`.
struct CheckedArgument {
  func::FuncOp func;
  unsigned index;
  ShardedType type;
};

/// At the entry of the argument's function: its chunked dim must be the
/// calling rank's chunk size, else a cf.assert fails naming it.
void emitSizeCheck(CheckedArgument arg) {
  Block &entry = arg.func.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  Location loc = arg.func.getLoc();
  ChunkAttr spec = arg.type.getSharding();
  int64_t dim = spec.getDim();
  Value actual =
      tensor::DimOp::create(b, loc, entry.getArgument(arg.index), dim);
  ChunkRangeValues range =
      buildLocalChunkRange(b, loc, spec, arg.type.getShape()[dim]);
  Value ok = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq, actual,
      getValueOrCreateConstantIndexOp(b, loc, range.size));
  std::string message;
  llvm::raw_string_ostream os(message);
  os << "shardlin: argument " << arg.index << " of @"
     << arg.func.getSymName() << " must be the calling rank's chunk of "
     << arg.type.getTensorType() << " under " << spec << ": its dim " << dim
     << " has another size";
  cf::AssertOp::create(b, loc, ok, message);
}

/// Each shardlin.constant as the value the rank holds: an arith.constant
/// of all of it, and for a split one its local_chunk (the rank's slice,
/// sized and placed from the rank as the bufferized local_chunk does). The
/// split constant's users (local_shard, which this pass drops) then read
/// that slice.
LogicalResult materializeConstants(ModuleOp module) {
  SmallVector<ConstantOp> constants;
  module.walk([&](ConstantOp op) { constants.push_back(op); });
  for (ConstantOp op : constants) {
    FailureOr<std::vector<char>> bytes = op.getBytes();
    if (failed(bytes))
      return failure();
    RankedTensorType global = op.getGlobalType();
    // Dense elements, whatever the form (a dense_resource's blob too):
    // what the native pipeline turns into a global.
    auto dense = DenseElementsAttr::getFromRawBuffer(global, *bytes);
    OpBuilder b(op);
    Value value = arith::ConstantOp::create(b, op.getLoc(), global, dense);
    if (ChunkAttr chunk = op.getSharding())
      value = LocalChunkOp::create(
          b, op.getLoc(),
          cast<ShardedType>(op.getResult().getType()).getLocalType(), value,
          chunk);
    op.getResult().replaceAllUsesWith(value);
    op.erase();
  }
  return success();
}

struct LocalizeShardedPass
    : public mlir::shardlin::impl::LocalizeShardedBase<LocalizeShardedPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    if (failed(materializeConstants(module)))
      return signalPassFailure();

    // Say precisely what cannot be localized before converting anything.
    WalkResult walk = module.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<LinearOp>(op)) {
        op->emitOpError("must be lowered first (run --lower-sharded-linear)");
        return WalkResult::interrupt();
      }
      if (auto func = dyn_cast<FunctionOpInterface>(op);
          func && !isa<func::FuncOp>(op) &&
          (llvm::any_of(func.getArgumentTypes(), isSharded) ||
           llvm::any_of(func.getResultTypes(), isSharded))) {
        op->emitOpError() << "has sharded arguments or results; the native "
                             "path supports them on func.func only";
        return WalkResult::interrupt();
      }
      if (isa<LocalShardOp, FromLocalOp, func::FuncOp, func::CallOp,
              func::ReturnOp, BranchOpInterface>(op) ||
          !mentionsSharded(op))
        return WalkResult::advance();
      op->emitOpError()
          << "takes or yields a sharded value; the native path supports "
             "sharded values only as function arguments and results, call "
             "and branch operands, local_shard operands and from_local "
             "results";
      return WalkResult::interrupt();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();

    SmallVector<CheckedArgument> checked;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || !func.isPublic())
        continue;
      for (auto [i, type] : llvm::enumerate(func.getArgumentTypes()))
        if (auto sharded = dyn_cast<ShardedType>(type))
          if (sharded.getLocalType().getNumDynamicDims() > 0)
            checked.push_back({func, static_cast<unsigned>(i), sharded});
    }

    // The rewrite is a retyping: a sharded value *is* the rank's chunk, so
    // every value of a sharded type gets the local type in place (block
    // arguments of every block, call results, function types), and each
    // local_shard and from_local is replaced by its operand. The check above
    // allows no op whose semantics the new types could change.
    auto localize = [](Type type) -> Type {
      if (auto sharded = dyn_cast<ShardedType>(type))
        return sharded.getLocalType();
      return type;
    };
    auto localizeAll = [&](TypeRange types) {
      return llvm::map_to_vector(types, localize);
    };
    SmallVector<Operation *> views;
    module.walk([&](Operation *op) {
      if (isa<LocalShardOp, FromLocalOp>(op)) {
        views.push_back(op);
        return;
      }
      for (OpResult result : op->getResults())
        result.setType(localize(result.getType()));
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            arg.setType(localize(arg.getType()));
      if (auto func = dyn_cast<func::FuncOp>(op))
        func.setFunctionType(
            FunctionType::get(ctx, localizeAll(func.getArgumentTypes()),
                              localizeAll(func.getResultTypes())));
    });
    for (Operation *view : views) {
      view->getResult(0).replaceAllUsesWith(view->getOperand(0));
      view->erase();
    }

    for (CheckedArgument arg : checked)
      emitSizeCheck(arg);
  }
};

} // namespace
