//===- ImportShardFunction.cpp - One function of the global view ----------===//
//
// The walk over one function: its arguments (split ones become sharded
// arguments), the shard.shard annotations, the elementwise ops (computed
// in the layout of their operands), reshapes and transposes, and the
// return (split results become sharded results). Linears are
// ImportShardLinear.cpp's.
//
//===----------------------------------------------------------------------===//

#include "ImportShardInternal.h"
#include "shardlin/Dialect/Shardlin/IR/ArgAttrs.h"
#include "shardlin/Dialect/Shardlin/IR/RowReductions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::shardlin;
using namespace mlir::shardlin::import;

const char *const mlir::shardlin::import::kSupportedImportOps =
    "shard.sharding and shard.shard; linalg.matmul (a linear when its weight "
    "is split); elementwise arith and math ops on tensors; linalg ops with "
    "parallel iterators and identity maps (or a vector broadcast along the "
    "last dim): linalg.generic, linalg.elementwise, linalg.add, ..., "
    "linalg.fill, linalg.broadcast of a vector; reductions over the last "
    "dim (a norm's: linalg.generic or linalg.reduce, addf or maximumf) and "
    "their broadcast along the rows; linalg.transpose; "
    "tensor.empty, tensor.collapse_shape, tensor.expand_shape, tensor.dim; "
    "arith.constant; func.return; tm_tensor.attention (torch-mlir's causal "
    "scaled_dot_product_attention, with its reshapes) and causal attention "
    "written out (q @ k^T, scale, mask, softmax, @ v as batch_matmuls and "
    "generics)";

/// The map of a rank-1 operand broadcast along the last of `loops` dims.
static bool isVectorMap(AffineMap map, unsigned loops) {
  return map.getNumDims() == loops && map.getNumResults() == 1 &&
         map.getResult(0) == getAffineDimExpr(loops - 1, map.getContext());
}

bool mlir::shardlin::import::isElementwise(Operation *op) {
  if (op->getNumResults() != 1 ||
      !isa<RankedTensorType>(op->getResult(0).getType()))
    return false;
  if (isa<arith::ArithDialect, math::MathDialect>(op->getDialect()))
    return op->hasTrait<OpTrait::Elementwise>();
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureTensorSemantics() ||
      !linalgOp.isAllParallelLoops() || linalgOp.hasIndexSemantics())
    return false;
  const unsigned loops = linalgOp.getNumLoops();
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = linalgOp.getMatchingIndexingMap(&operand);
    if (!isa<ShapedType>(operand.get().getType())) {
      if (map.getNumResults() != 0)
        return false;
      continue;
    }
    if (map.isIdentity())
      continue;
    if (linalgOp.isDpsInput(&operand) &&
        cast<ShapedType>(operand.get().getType()).getRank() == 1 &&
        loops > 1 && isVectorMap(map, loops))
      continue;
    if (isRowBroadcastOperand(*op, operand))
      continue;
    return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// The walk
//===----------------------------------------------------------------------===//

LogicalResult FunctionImporter::collectAnnotations() {
  WalkResult walked = func_.walk([&](shard::ShardOp op) {
    if (op.getAnnotateForUsers())
      return WalkResult::advance();
    Value src = op.getSrc();
    FailureOr<ValueLayout> layout =
        parseSharding(op.getSharding(), op.getResult().getType(), grid_, op);
    if (failed(layout))
      return WalkResult::interrupt();
    for (Value v : {src, Value(op.getResult())}) {
      if (std::optional<ValueLayout> before = declared(v);
          before && *before != *layout) {
        op.emitError() << "conflicting shardings of one value: "
                       << describe(*layout) << " here, " << describe(*before)
                       << " before";
        return WalkResult::interrupt();
      }
      declared_[v] = *layout;
    }
    return WalkResult::advance();
  });
  return failure(walked.wasInterrupted());
}

LogicalResult FunctionImporter::importArguments(Block &newBlock) {
  Block &old = func_.getBody().front();
  b_.setInsertionPointToEnd(&newBlock);
  for (BlockArgument arg : old.getArguments()) {
    Location loc = arg.getLoc();
    auto tensor = dyn_cast<RankedTensorType>(arg.getType());
    std::optional<ValueLayout> layout = declared(arg);
    if (!tensor || !layout || layout->isReplicated()) {
      // Replicated (every rank passes the same tensor) or not a tensor.
      Value local = newBlock.addArgument(arg.getType(), loc);
      if (!tensor) {
        locals_[arg] = local;
        continue;
      }
      layouts_[arg] = ValueLayout::replicated();
      locals_[arg] = local;
      continue;
    }
    auto sharded = ShardedType::getChecked(
        [&]() -> InFlightDiagnostic {
          return func_.emitError()
                 << "argument #" << arg.getArgNumber() << " (" << tensor
                 << ", " << describe(*layout) << "): ";
        },
        tensor.getContext(), tensor, layout->chunks);
    if (!sharded)
      return failure();
    Value shardedArg = newBlock.addArgument(sharded, loc);
    shardedArgs_[arg] = shardedArg;
    layouts_[arg] = *layout;
    locals_[arg] = LocalShardOp::create(b_, loc, sharded.getLocalType(),
                                        shardedArg);
  }
  return success();
}

LogicalResult FunctionImporter::importOp(Operation &op) {
  if (absorbed_.contains(&op) || isa<shard::ShardingOp>(op))
    return success();
  if (auto cst = dyn_cast<arith::ConstantOp>(op);
      cst && isa<RankedTensorType>(cst.getType()))
    return importConstant(cst);
  // Built where a user needs them, in its layout; but an annotation of a
  // splat constant that importConstant split is that constant's.
  auto shardOfSplit = [&] {
    auto shardOp = dyn_cast<shard::ShardOp>(op);
    return shardOp && layouts_.count(shardOp.getSrc());
  };
  if (op.getNumResults() == 1 && isBuildableAnywhere(op.getResult(0)) &&
      !shardOfSplit())
    return success();
  if (auto shardOp = dyn_cast<shard::ShardOp>(op)) {
    Value src = shardOp.getSrc();
    std::optional<ValueLayout> layout = declared(shardOp.getResult());
    if (shardOp.getAnnotateForUsers()) {
      FailureOr<ValueLayout> wanted = parseSharding(
          shardOp.getSharding(), shardOp.getResult().getType(), grid_, &op);
      if (failed(wanted))
        return failure();
      layout = *wanted;
    }
    if (!layout) {
      FailureOr<std::optional<ValueLayout>> have = layoutOf(src);
      if (failed(have))
        return failure();
      layout = have->value_or(ValueLayout::replicated());
    }
    Operation *last = b_.getBlock()->empty() ? nullptr : &b_.getBlock()->back();
    FailureOr<Value> local = get(src, *layout);
    if (failed(local))
      return failure();
    if (layouts_.count(src) && layouts_[src] != *layout)
      markStatedReshards(last, src, layouts_[src], *layout,
                         shardOp.getAnnotateForUsers());
    return define(shardOp.getResult(), *local, *layout);
  }
  if (auto matmul = dyn_cast<linalg::MatmulOp>(op))
    return importMatmul(matmul);
  // A matched attention (tm_tensor.attention, or the last batch_matmul of
  // one written out).
  if (attentions_.count(&op))
    return importAttention(&op);
  if (auto batch = dyn_cast<linalg::BatchMatmulOp>(op))
    return importBatchMatmul(batch);
  if (auto ret = dyn_cast<func::ReturnOp>(op))
    return importReturn(ret);
  // Scalars: built where used.
  if (isa<arith::ConstantOp, tensor::DimOp>(op) ||
      (isa<arith::ArithDialect>(op.getDialect()) &&
       llvm::none_of(op.getResultTypes(),
                     [](Type t) { return isa<ShapedType>(t); })))
    return success();
  if (isa<linalg::TransposeOp, tensor::CollapseShapeOp, linalg::GenericOp>(
          op) &&
      feedsLinearsOnly(&op)) {
    deferred_.insert(&op);
    return success();
  }
  if (auto transpose = dyn_cast<linalg::TransposeOp>(op))
    return importTranspose(transpose);
  if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op))
    return importReshape(op);
  if (isElementwise(&op))
    return importElementwise(op);
  if (matchRowReduction(&op))
    return importRowReduction(op);
  if (isa<linalg::LinalgOp>(op))
    return op.emitError()
           << "'" << op.getName()
           << "' is not supported by the import: a linalg op is imported as "
              "a linear (linalg.matmul), as an elementwise op (parallel "
              "iterators, identity maps or a vector broadcast along the last "
              "dim, tensors) or as a reduction over the last dim (addf, "
              "maximumf or maxnumf)";
  return op.emitError() << "'" << op.getName()
                        << "' is not supported by the import (supported: "
                        << kSupportedImportOps << ")";
}

LogicalResult FunctionImporter::importElementwise(Operation &op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(&op);
  auto resultType = cast<RankedTensorType>(op.getResult(0).getType());
  const int64_t rank = resultType.getRank();
  // A vector operand: a rank-1 linalg input broadcast along the last dim.
  auto isVector = [&](OpOperand &operand) {
    return linalgOp && linalgOp.isDpsInput(&operand) && rank > 1 &&
           !linalgOp.getMatchingIndexingMap(&operand).isIdentity() &&
           isa<ShapedType>(operand.get().getType()) &&
           !isRowBroadcastOperand(op, operand);
  };
  // The layout: that of the operands that are split (all the same), else
  // replicated.
  std::optional<ValueLayout> layout;
  OpOperand *from = nullptr;
  for (OpOperand &operand : op.getOpOperands()) {
    if (!isa<RankedTensorType>(operand.get().getType()) || isVector(operand))
      continue;
    FailureOr<std::optional<ValueLayout>> l = layoutOf(operand.get());
    if (failed(l))
      return failure();
    if (!*l || (*l)->isReplicated())
      continue;
    if (layout && *layout != **l)
      return op.emitError()
             << "operands #" << from->getOperandNumber() << " and #"
             << operand.getOperandNumber()
             << " have conflicting shardings: " << describe(*layout)
             << " and " << describe(**l)
             << "; an elementwise op keeps the sharding of its operands";
    layout = **l;
    from = &operand;
  }
  // Any split dim: the op is rank-local (a vector operand runs along the
  // last dim, whole where it is split elsewhere).
  ValueLayout l = layout.value_or(ValueLayout::replicated());

  // The operands in that layout; full tensors first, so that the first
  // one sizes what is built for the others.
  IRMapping mapping;
  Value donor;
  if (failed(mapRowBroadcastOperands(op, l, mapping, donor)))
    return failure();
  for (bool fullPass : {true, false}) {
    for (OpOperand &operand : op.getOpOperands()) {
      Value v = operand.get();
      if (mapping.contains(v))
        continue;
      if (!isa<RankedTensorType>(v.getType())) {
        FailureOr<Value> s = getScalar(v);
        if (failed(s))
          return failure();
        mapping.map(v, *s);
        continue;
      }
      if (isVector(operand)) {
        if (fullPass)
          continue;
        FailureOr<Value> vec = get(v, ValueLayout::replicated());
        if (failed(vec))
          return failure();
        Value local = *vec;
        if (l.dim == rank - 1) {
          // Split along the features: each rank its chunk of the vector.
          auto vType = cast<RankedTensorType>(local.getType());
          local = LocalChunkOp::create(
              b_, op.getLoc(),
              RankedTensorType::get({l.chunks.getLocalSize(vType.getShape()[0])},
                                    vType.getElementType()),
              local, l.chunks.withDim(0));
        }
        mapping.map(v, local);
        continue;
      }
      if (fullPass && isBuildableAnywhere(v))
        continue;
      FailureOr<Value> local = get(v, l, donor);
      if (failed(local))
        return failure();
      if (!donor)
        donor = *local;
      mapping.map(v, *local);
    }
  }
  // Scalars the regions capture from the function body.
  for (Region &region : op.getRegions()) {
    WalkResult walked = region.walk([&](Operation *inner) {
      for (Value v : inner->getOperands()) {
        if (mapping.contains(v) ||
            op.isAncestor(v.getParentRegion()->getParentOp()))
          continue;
        // A tensor read inside the body would be the rank's part of it, not
        // the tensor the body means.
        if (isa<ShapedType>(v.getType())) {
          inner->emitError()
              << "reads a tensor defined outside its elementwise op; the "
                 "import takes tensors as the op's operands only";
          return WalkResult::interrupt();
        }
        FailureOr<Value> s = getScalar(v);
        if (failed(s))
          return WalkResult::interrupt();
        mapping.map(v, *s);
      }
      return WalkResult::advance();
    });
    if (walked.wasInterrupted())
      return failure();
  }
  Operation *local = b_.clone(op, mapping);
  keepDimRowMaps(local);
  RankedTensorType type = localType(resultType, l);
  if (linalgOp)
    type = cast<RankedTensorType>(
        cast<linalg::LinalgOp>(local).getDpsInitOperand(0)->get().getType());
  local->getResult(0).setType(type);
  return define(op.getResult(0), local->getResult(0), l);
}

LogicalResult FunctionImporter::importReturn(func::ReturnOp op) {
  SmallVector<Value> results;
  for (Value v : op.getOperands()) {
    auto tensor = dyn_cast<RankedTensorType>(v.getType());
    if (!tensor) {
      FailureOr<Value> s = getScalar(v);
      if (failed(s))
        return failure();
      results.push_back(*s);
      continue;
    }
    FailureOr<std::optional<ValueLayout>> layout = layoutOf(v);
    if (failed(layout))
      return failure();
    ValueLayout l = layout->value_or(ValueLayout::replicated());
    FailureOr<Value> local = get(v, l);
    if (failed(local))
      return failure();
    if (l.isReplicated()) {
      results.push_back(*local);
      continue;
    }
    // A split result: the global tensor of which each rank returns its
    // chunk, so that the signature says which.
    auto sharded = ShardedType::getChecked(
        [&]() -> InFlightDiagnostic {
          return op.emitError() << "result #" << results.size() << " ("
                                << tensor << ", " << describe(l) << "): ";
        },
        tensor.getContext(), tensor, l.chunks);
    if (!sharded)
      return failure();
    results.push_back(
        FromLocalOp::create(b_, op.getLoc(), sharded, *local).getResult());
  }
  func::ReturnOp::create(b_, op.getLoc(), results);
  return success();
}

LogicalResult FunctionImporter::run() {
  if (func_.isExternal())
    return success();
  if (!func_.getBody().hasOneBlock())
    return func_.emitError()
           << "the import takes functions of one block (structured control "
              "flow such as scf.for is not supported)";
  if (failed(collectAnnotations()))
    return failure();
  propagateBackward();
  if (failed(prepareAttentions()))
    return failure();
  Block &old = func_.getBody().front();
  auto newBlock = std::make_unique<Block>();
  LogicalResult ok = importArguments(*newBlock);
  for (Operation &op : old) {
    if (failed(ok))
      break;
    ok = importOp(op);
  }
  // Every operand of the new body must be defined in it: anything else is a
  // bug of the import, reported rather than left to crash the verifier.
  if (succeeded(ok)) {
    WalkResult walked = newBlock->walk([&](Operation *op) {
      for (Value v : op->getOperands()) {
        Region *region = v.getParentRegion();
        if (region && (region->getParentOp() == func_.getOperation() ||
                       func_->isAncestor(region->getParentOp())) &&
            v.getParentBlock() == &old) {
          op->emitError() << "internal: the import left a use of the "
                             "original body";
          return WalkResult::interrupt();
        }
      }
      return WalkResult::advance();
    });
    if (walked.wasInterrupted())
      ok = failure();
  }
  if (failed(ok)) {
    newBlock->dropAllDefinedValueUses();
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*newBlock)))
      op.erase();
    return failure();
  }
  // Swap the bodies.
  old.dropAllDefinedValueUses();
  old.erase();
  func_.getBody().push_back(newBlock.release());
  Block &body = func_.getBody().front();
  // What was built but is not needed after all (the parts a linear
  // absorbed, unused local shards).
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
    if (isOpTriviallyDead(&op))
      op.erase();
  func_.setFunctionType(FunctionType::get(
      func_.getContext(), body.getArgumentTypes(),
      body.getTerminator()->getOperandTypes()));
  // Every rank must pass the same value for a replicated tensor argument:
  // say so, for the runtime's check (kReplicatedArgAttrName).
  for (BlockArgument arg : body.getArguments())
    if (isa<RankedTensorType>(arg.getType()))
      func_.setArgAttr(arg.getArgNumber(), kReplicatedArgAttrName,
                       UnitAttr::get(func_.getContext()));
  return success();
}
