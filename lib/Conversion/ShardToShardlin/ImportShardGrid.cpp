//===- ImportShardGrid.cpp - A 2-D grid's data-parallel axis --------------===//
//
// splitDataParallelGrid (ImportShard.h): a module on a 2-D `shard.grid`
// of shape DP x TP, whose axis 0 splits only the batch (dim 0 of the
// activations, as the first of its axes) and axis 1 is the tensor
// parallelism, rewritten into one replica's module on a 1-D grid of TP
// devices, which the importer then takes as any other; the module records
// DP (kDataParallelAttrName) for the runner, which runs DP replicas of it
// (RunOptions::replicas, docs/training.md, "Grids").
//
// Device (d, t) of the grid is rank t of replica d: the world rank d * TP +
// t of shardlin's grids, which is also the grid's own linear index. A dim
// split over axes [0, 1] holds chunk d * TP + t on device (d, t), so
// replica d holds a contiguous block of its rows; over [0] alone, replica
// d's block is split no further. Every replica must hold as many rows, and
// (with sharded_dims_offsets) split them the same way over its TP ranks:
// the replicas run one program.
//
// The rewrite: the values that carry the batch split ("tagged": the
// arguments a data-parallel sharding annotates, and what is computed from
// them row by row) get dim 0 divided by DP; the values built in place
// (tensor.empty, splat constants, fills and vector broadcasts of them) that
// meet tagged ones are rebuilt at the replica's size; every sharding drops
// axis 0 (axis 1 becomes axis 0, offsets become replica 0's, relative);
// the grid becomes [TP].
//
//===----------------------------------------------------------------------===//

#include "shardlin/Conversion/ShardToShardlin/ShardToShardlin.h"

#include "ImportShardInternal.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::shardlin;
using namespace mlir::shardlin::import;

namespace {

/// A sharding op, read against the 2-D grid: whether it splits the batch
/// over the replicas, and its one-replica form.
struct ReplicaSharding {
  bool dataParallel = false;
  SmallVector<shard::GridAxesAttr> axes;
  SmallVector<int64_t> offsets;
};

class GridSplitter {
public:
  GridSplitter(ModuleOp module, shard::GridOp grid)
      : module_(module), grid_(grid), b_(module.getContext()) {}

  LogicalResult run();

private:
  LogicalResult readSharding(shard::ShardingOp op);
  LogicalResult tagFunction(func::FuncOp func);
  LogicalResult tagOp(Operation &op);
  /// `v` (untagged) rebuilt before `user` at the replica's batch, if it is
  /// built in place; else an error naming `what`.
  FailureOr<Value> shrunkBuildable(Value v, Operation *user,
                                   const char *what);
  FailureOr<RankedTensorType> shrunkType(RankedTensorType t, Operation *at);
  LogicalResult retype(func::FuncOp func);
  bool isTagged(Value v) const { return tagged_.contains(v); }
  bool isDataParallel(Value sharding) const {
    auto op = sharding.getDefiningOp<shard::ShardingOp>();
    auto it = op ? shardings_.find(op) : shardings_.end();
    return it != shardings_.end() && it->second.dataParallel;
  }

  ModuleOp module_;
  shard::GridOp grid_;
  OpBuilder b_;
  int64_t dp_ = 1, tp_ = 1;
  llvm::DenseMap<Operation *, ReplicaSharding> shardings_;
  llvm::SetVector<Value> tagged_;
};

LogicalResult GridSplitter::readSharding(shard::ShardingOp op) {
  ArrayRef<shard::GridAxesAttr> axes = op.getSplitAxes().getAxes();
  ArrayRef<int64_t> offsets = op.getStaticShardedDimsOffsets();
  ReplicaSharding out;
  size_t pos = 0;
  auto sizeOf = [&](ArrayRef<int16_t> list) {
    int64_t n = 1;
    for (int16_t a : list)
      n *= a == 0 ? dp_ : tp_;
    return n;
  };
  for (auto [d, dimAxes] : llvm::enumerate(axes)) {
    ArrayRef<int16_t> list = dimAxes.asArrayRef();
    for (auto [p, a] : llvm::enumerate(list))
      if (a == 0 && (d != 0 || p != 0))
        return op.emitError()
               << "axis 0 of the 2-D grid @" << grid_.getSymName()
               << " is its data-parallel axis: it may split only dim 0 of a "
                  "tensor (the batch), as the first of that dim's axes "
                  "([[0]] or [[0, 1]]); here tensor dim "
               << d << " is split over grid axes [" << list << "]";
    const bool splitsDp = !list.empty() && list.front() == 0;
    SmallVector<int16_t> kept;
    for (int16_t a : list)
      if (a != 0)
        kept.push_back(0); // axis 1 becomes the 1-D grid's axis 0
    out.axes.push_back(b_.getDenseI16ArrayAttr(kept));
    if (list.empty())
      continue;
    if (d == 0 && splitsDp)
      out.dataParallel = true;
    if (offsets.empty())
      continue;
    const int64_t count = sizeOf(list);
    if (pos + count + 1 > offsets.size())
      return op.emitError() << "sharded_dims_offsets has " << offsets.size()
                            << " values, too few for the " << count
                            << " shards of tensor dim " << d;
    ArrayRef<int64_t> mine = offsets.slice(pos, count + 1);
    pos += count + 1;
    if (!splitsDp) {
      out.offsets.append(mine.begin(), mine.end());
      continue;
    }
    // Replica r holds [mine[r * per], mine[(r + 1) * per]).
    const int64_t per = count / dp_;
    for (int64_t r = 0; r < dp_; ++r)
      for (int64_t t = 0; t <= per; ++t)
        if (mine[r * per + t] - mine[r * per] != mine[t] - mine[0])
          return op.emitError()
                 << "sharded_dims_offsets [" << mine
                 << "] give the data-parallel replicas of grid @"
                 << grid_.getSymName()
                 << " different rows or a different split of them (replica "
                 << r << " against replica 0): every replica runs the same "
                    "program, so each must hold as many rows, split the same "
                    "way";
    if (per > 1)
      for (int64_t t = 0; t <= per; ++t)
        out.offsets.push_back(mine[t] - mine[0]);
  }
  if (!offsets.empty() && pos != offsets.size())
    return op.emitError() << "sharded_dims_offsets has " << offsets.size()
                          << " values; the split dims' shards need " << pos;
  shardings_[op] = std::move(out);
  return success();
}

FailureOr<RankedTensorType> GridSplitter::shrunkType(RankedTensorType t,
                                                     Operation *at) {
  if (t.getRank() == 0)
    return at->emitError() << "a scalar tensor " << t
                           << " cannot carry the data-parallel split of the "
                              "batch";
  SmallVector<int64_t> shape(t.getShape());
  if (!ShapedType::isDynamic(shape[0])) {
    if (shape[0] % dp_ != 0)
      return at->emitError()
             << "dim 0 of " << t << " is split over the " << dp_
             << " data-parallel replicas of grid @" << grid_.getSymName()
             << ", but " << dp_ << " does not divide " << shape[0]
             << ": every replica runs the same program on as many rows";
    shape[0] /= dp_;
  }
  return RankedTensorType::get(shape, t.getElementType(), t.getEncoding());
}

FailureOr<Value> GridSplitter::shrunkBuildable(Value v, Operation *user,
                                               const char *what) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  Operation *def = v.getDefiningOp();
  auto refuse = [&]() -> FailureOr<Value> {
    return user->emitError()
           << "its " << what << " (" << v.getType()
           << ") is not split over the data-parallel replicas like the "
              "batch it is combined with; only values built in place "
              "(tensor.empty, splat constants, fills, vector broadcasts) "
              "are rebuilt at one replica's rows";
  };
  if (!type || !def || !isBuildableAnywhere(v))
    return refuse();
  FailureOr<RankedTensorType> small = shrunkType(type, user);
  if (failed(small))
    return failure();
  OpBuilder::InsertionGuard guard(b_);
  b_.setInsertionPoint(user);
  const Location loc = def->getLoc();
  if (auto empty = dyn_cast<tensor::EmptyOp>(def))
    return tensor::EmptyOp::create(b_, loc, *small, empty.getDynamicSizes())
        .getResult();
  if (auto cst = dyn_cast<arith::ConstantOp>(def))
    return arith::ConstantOp::create(
               b_, loc,
               DenseElementsAttr::get(
                   *small, cast<DenseElementsAttr>(cst.getValue())
                               .getSplatValue<Attribute>()))
        .getResult();
  if (auto fill = dyn_cast<linalg::FillOp>(def)) {
    FailureOr<Value> init = shrunkBuildable(fill.getOutputs()[0], user, what);
    if (failed(init))
      return failure();
    return linalg::FillOp::create(b_, loc, fill.getInputs()[0], *init)
        .getResult(0);
  }
  if (auto bcast = dyn_cast<linalg::BroadcastOp>(def)) {
    FailureOr<Value> init = shrunkBuildable(bcast.getInit(), user, what);
    if (failed(init))
      return failure();
    return linalg::BroadcastOp::create(b_, loc, bcast.getInput(), *init,
                                       bcast.getDimensions())
        .getResult()[0];
  }
  if (auto shardOp = dyn_cast<shard::ShardOp>(def)) {
    FailureOr<Value> src = shrunkBuildable(shardOp.getSrc(), user, what);
    if (failed(src))
      return failure();
    return shard::ShardOp::create(b_, loc, *src, shardOp.getSharding(),
                                  shardOp.getAnnotateForUsers())
        .getResult();
  }
  return refuse();
}

LogicalResult GridSplitter::tagOp(Operation &op) {
  if (isa<shard::ShardingOp, tensor::DimOp>(op))
    return success();
  if (auto shardOp = dyn_cast<shard::ShardOp>(op)) {
    const bool dataParallel = isDataParallel(shardOp.getSharding());
    const bool carries = isTagged(shardOp.getSrc());
    if (dataParallel && !carries)
      return op.emitError()
             << "splits over the data-parallel axis of grid @"
             << grid_.getSymName()
             << " a value that is not the batch of an argument split that "
                "way: the batch is split over the replicas where it enters "
                "(an argument's sharding), and each replica's rows stay its "
                "own";
    if (!dataParallel && carries)
      return op.emitError()
             << "gives a value split over the data-parallel axis of grid @"
             << grid_.getSymName()
             << " a sharding without that axis: that would gather the batch "
                "across the replicas, which run independently (keep axis 0 "
                "on dim 0 of every sharding of the batch)";
    if (carries)
      tagged_.insert(shardOp.getResult());
    return success();
  }
  if (llvm::none_of(op.getOperands(),
                    [&](Value v) { return isTagged(v); }))
    return success();
  // From here on, the op reads the batch of a replica.
  auto tagResults = [&] {
    for (Value r : op.getResults())
      if (isa<RankedTensorType>(r.getType()))
        tagged_.insert(r);
  };
  auto shrinkInit = [&](OpOperand &init) -> LogicalResult {
    if (isTagged(init.get()))
      return success();
    FailureOr<Value> small = shrunkBuildable(init.get(), &op, "init");
    if (failed(small))
      return failure();
    init.set(*small);
    return success();
  };
  if (isa<func::ReturnOp>(op))
    return success();
  if (auto matmul = dyn_cast<linalg::MatmulOp>(op)) {
    if (isTagged(matmul.getInputs()[1]))
      return op.emitError()
             << "multiplies by a value split over the data-parallel axis of "
                "grid @"
             << grid_.getSymName()
             << " as its right-hand operand (a weight): the batch is the "
                "left-hand operand's rows";
    if (!isTagged(matmul.getInputs()[0]))
      return op.emitError() << "has an operand split over the data-parallel "
                               "axis where the batch cannot be";
    if (failed(shrinkInit(matmul.getDpsInitsMutable()[0])))
      return failure();
    tagResults();
    return success();
  }
  if (auto transpose = dyn_cast<linalg::TransposeOp>(op)) {
    if (transpose.getPermutation().empty() ||
        transpose.getPermutation()[0] != 0)
      return op.emitError()
             << "moves dim 0 of a value split over the data-parallel axis "
                "of grid @"
             << grid_.getSymName() << ": the batch must stay dim 0";
    if (failed(shrinkInit(transpose.getInitMutable())))
      return failure();
    tagResults();
    return success();
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    tagResults();
    return success();
  }
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    tagResults();
    return success();
  }
  if (isElementwise(&op)) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(&op);
    const int64_t rank =
        cast<RankedTensorType>(op.getResult(0).getType()).getRank();
    for (OpOperand &operand : op.getOpOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand.get().getType());
      if (!type || isTagged(operand.get()))
        continue;
      // A vector broadcast along the last dim (a bias) is every row's.
      if (type.getRank() == 1 && rank > 1)
        continue;
      const bool init = linalgOp && linalgOp.isDpsInit(&operand);
      FailureOr<Value> small =
          shrunkBuildable(operand.get(), &op, init ? "init" : "operand");
      if (failed(small))
        return failure();
      operand.set(*small);
    }
    tagResults();
    return success();
  }
  return op.emitError()
         << "'" << op.getName()
         << "' is not supported on a value split over the data-parallel axis "
            "of grid @"
         << grid_.getSymName()
         << " (the replicas' rows go through linalg.matmul as its left-hand "
            "operand, elementwise ops, transposes that keep dim 0, reshapes "
            "and func.return)";
}

LogicalResult GridSplitter::tagFunction(func::FuncOp func) {
  if (func.isExternal())
    return success();
  if (!func.getBody().hasOneBlock())
    return func.emitError() << "the import takes functions of one block";
  Block &body = func.getBody().front();
  // The arguments whose sharding splits the batch over the replicas.
  for (shard::ShardOp op : body.getOps<shard::ShardOp>())
    if (auto arg = dyn_cast<BlockArgument>(op.getSrc()))
      if (arg.getOwner() == &body && isDataParallel(op.getSharding()))
        tagged_.insert(arg);
  for (Operation &op : llvm::make_early_inc_range(body))
    if (failed(tagOp(op)))
      return failure();
  return success();
}

LogicalResult GridSplitter::retype(func::FuncOp func) {
  for (Value v : tagged_) {
    Operation *at = v.getDefiningOp();
    if (!at) { // an argument: reported at the sharding that splits it
      at = cast<BlockArgument>(v).getOwner()->getParentOp();
      for (Operation *user : v.getUsers())
        if (isa<shard::ShardOp>(user))
          at = user;
    }
    if (at->getParentOfType<func::FuncOp>() != func && at != func)
      continue;
    FailureOr<RankedTensorType> small =
        shrunkType(cast<RankedTensorType>(v.getType()), at);
    if (failed(small))
      return failure();
    v.setType(*small);
    if (auto expand = v.getDefiningOp<tensor::ExpandShapeOp>()) {
      SmallVector<int64_t> shape(expand.getStaticOutputShape());
      if (!shape.empty() && !ShapedType::isDynamic(shape[0])) {
        shape[0] = small->getShape()[0];
        expand.setStaticOutputShape(shape);
      }
    }
  }
  if (func.isExternal())
    return success();
  Block &body = func.getBody().front();
  func.setType(FunctionType::get(
      func.getContext(), body.getArgumentTypes(),
      body.getTerminator()->getOperandTypes()));
  return success();
}

LogicalResult GridSplitter::run() {
  ArrayRef<int64_t> shape = grid_.getShape();
  if (llvm::any_of(shape, [](int64_t d) {
        return ShapedType::isDynamic(d) || d < 1;
      }))
    return grid_.emitError()
           << "shard.grid @" << grid_.getSymName()
           << " has a dynamic or empty shape: the import needs the number "
              "of devices on each axis statically";
  dp_ = shape[0];
  tp_ = shape[1];
  WalkResult read = module_.walk([&](shard::ShardingOp op) {
    return failed(readSharding(op)) ? WalkResult::interrupt()
                                    : WalkResult::advance();
  });
  if (read.wasInterrupted())
    return failure();
  SmallVector<func::FuncOp> funcs(module_.getOps<func::FuncOp>());
  for (func::FuncOp func : funcs) {
    tagged_.clear();
    if (failed(tagFunction(func)) || failed(retype(func)))
      return failure();
  }
  for (auto &[op, sharding] : shardings_) {
    auto s = cast<shard::ShardingOp>(op);
    s.setSplitAxesAttr(
        shard::GridAxesArrayAttr::get(module_.getContext(), sharding.axes));
    s.setStaticShardedDimsOffsetsAttr(
        b_.getDenseI64ArrayAttr(sharding.offsets));
  }
  grid_.setShape(ArrayRef<int64_t>{tp_});
  module_->setAttr(kDataParallelAttrName, b_.getI64IntegerAttr(dp_));
  if (failed(verify(module_)))
    return grid_.emitError()
           << "internal error: the one-replica form of the module does not "
              "verify (the diagnostics above say where)";
  return success();
}

} // namespace

LogicalResult mlir::shardlin::splitDataParallelGrid(ModuleOp module) {
  SmallVector<shard::GridOp> grids(module.getOps<shard::GridOp>());
  if (grids.size() != 1 || grids[0].getShape().size() != 2)
    return success();
  // On a copy, so that a module the rewrite refuses is left as it was.
  OwningOpRef<ModuleOp> copy(module.clone());
  SmallVector<shard::GridOp> copied(copy->getOps<shard::GridOp>());
  if (failed(GridSplitter(*copy, copied[0]).run()))
    return failure();
  module.getBodyRegion().takeBody(copy->getBodyRegion());
  module->setAttrs(copy->getOperation()->getAttrDictionary());
  return success();
}
