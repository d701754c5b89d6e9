//===- PrepareNative.cpp - Before One-Shot Bufferize on the native path ---===//

#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"
#include "shardlin/Dialect/Shardlin/Native/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::shardlin {
#define GEN_PASS_DEF_PREPARENATIVE
#include "shardlin/Dialect/Shardlin/Native/Passes.h.inc"
} // namespace mlir::shardlin

using namespace mlir;
using namespace mlir::shardlin;

namespace {

/// Replaces every aggregated linalg op (linalg.softmax, ...) by the ops it is
/// made of, until none is left (a part may be an aggregate too).
LogicalResult decomposeAggregates(ModuleOp module) {
  IRRewriter rewriter(module.getContext());
  // Each round decomposes one level; ten levels is far more than upstream's
  // aggregates nest.
  for (int round = 0; round < 10; ++round) {
    SmallVector<linalg::AggregatedOpInterface> aggregates;
    module.walk(
        [&](linalg::AggregatedOpInterface op) { aggregates.push_back(op); });
    if (aggregates.empty())
      return success();
    for (linalg::AggregatedOpInterface op : aggregates) {
      rewriter.setInsertionPoint(op);
      FailureOr<SmallVector<Value>> parts = op.decomposeOperation(rewriter);
      if (failed(parts) || parts->size() != op->getNumResults())
        return op->emitOpError(
            "could not be decomposed into ops that lower to LLVM (the native "
            "path decomposes aggregated linalg ops on tensors, before "
            "bufferization)");
      rewriter.replaceOp(op, *parts);
    }
  }
  return module.emitError(
      "aggregated linalg ops still decompose into aggregates after 10 rounds");
}

/// Rows of a dim stacked from every rank's blocks: the dim and the bounds
/// of those blocks (a shardlin.gather_bounds result).
struct StackedRows {
  int64_t dim = -1;
  Value bounds;
  bool operator==(const StackedRows &o) const {
    return dim == o.dim && bounds == o.bounds;
  }
};

/// A rank's own block of a dim, one of the blocks of a class: values of one
/// class have, on every rank, blocks of the same sizes.
struct OwnBlock {
  int64_t dim = -1;
  unsigned cls = 0;
  bool operator==(const OwnBlock &o) const {
    return dim == o.dim && cls == o.cls;
  }
};

/// Gives the collectives of one function that stack or split a dynamic dim
/// their bounds (Native/Passes.td), following the stacked rows from op to op
/// as the plan executor does (its RowBlocks).
///
/// It follows the rank's own blocks too, in classes of values whose blocks
/// have the same sizes on every rank: the chunks of one sharded type (the
/// type fixes each rank's chunk), the blocks a collective split by some
/// bounds, and what the same ops as for stacked rows carry them to. Every
/// stack of a class shares one exchange of bounds, so rows stacked from two
/// tensors of a class (a backward's x and dy, a residual's x and the block's
/// result) that meet in one op keep their blocks, and the collective that
/// splits them back gets them.
class StackedRowBounds {
public:
  void run(Operation *func) {
    func->walk<WalkOrder::PreOrder>([&](Operation *op) { visit(op); });
  }

private:
  void visit(Operation *op) {
    if (auto shard = dyn_cast<LocalShardOp>(op)) {
      auto type = cast<ShardedType>(shard.getSource().getType());
      int64_t dim = type.getSharding().getDim();
      if (!type.getTensorType().isDynamicDim(dim)) {
        auto [it, inserted] = typeClass.try_emplace(type, classBounds.size());
        if (inserted)
          classBounds.push_back(Value());
        own[shard.getResult()] = {dim, it->second};
      }
      return;
    }
    if (auto gather = dyn_cast<AllGatherOp>(op)) {
      if (!gather.getBounds())
        if (Value b = stackBounds(op, gather.getInput(), gather.getType(),
                                  gather.getAlong()))
          gather.getBoundsMutable().assign(b);
      if (Value b = gather.getBounds())
        rows[gather.getResult()] = {gather.getAlong().getDim(), b};
      return;
    }
    if (auto a2a = dyn_cast<AllToAllOp>(op)) {
      if (!a2a.getSplitBounds())
        if (Value b = splitBounds(a2a.getInput(), a2a.getSplit()))
          a2a.getSplitBoundsMutable().assign(b);
      if (!a2a.getConcatBounds())
        if (Value b = stackBounds(op, a2a.getInput(), a2a.getType(),
                                  a2a.getConcat()))
          a2a.getConcatBoundsMutable().assign(b);
      if (Value b = a2a.getConcatBounds())
        rows[a2a.getResult()] = {a2a.getConcat().getDim(), b};
      noteSplit(a2a.getResult(), a2a.getSplit().getDim(), a2a.getSplitBounds());
      return;
    }
    if (auto scatter = dyn_cast<ReduceScatterOp>(op)) {
      if (!scatter.getBounds())
        if (Value b = splitBounds(scatter.getInput(), scatter.getAlong()))
          scatter.getBoundsMutable().assign(b);
      noteSplit(scatter.getResult(), scatter.getAlong().getDim(),
                scatter.getBounds());
      return;
    }
    if (auto gemm = dyn_cast<GemmOp>(op)) {
      // The result's rows are op(lhs)'s.
      const int64_t lhsRows = gemm.getTransposeLhs() ? 1 : 0;
      auto it = rows.find(gemm.getLhs());
      if (it != rows.end() && it->second.dim == lhsRows)
        rows[gemm.getResult()] = {0, it->second.bounds};
      auto mine = own.find(gemm.getLhs());
      if (mine != own.end() && mine->second.dim == lhsRows)
        own[gemm.getResult()] = {0, mine->second.cls};
      return;
    }
    if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
      noteCollapse(collapse);
      return;
    }
    if (isa<BiasAddOp, ConvertOp>(op)) {
      carry(op->getResult(0), {op->getOperand(0)});
      return;
    }
    if (op->hasTrait<OpTrait::Elementwise>()) {
      for (Value result : op->getResults())
        carry(result, op->getOperands());
      return;
    }
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      // Only where the maps of the operands that carry rows and of the
      // result are identities: then row i of the result is row i of each.
      SmallVector<Value> same;
      for (OpOperand &operand : op->getOpOperands())
        if ((rows.count(operand.get()) || own.count(operand.get())) &&
            linalgOp.getMatchingIndexingMap(&operand).isIdentity())
          same.push_back(operand.get());
      for (OpResult result : op->getResults()) {
        OpOperand *init = linalgOp.getDpsInitOperand(result.getResultNumber());
        if (linalgOp.getMatchingIndexingMap(init).isIdentity() &&
            linalgOp.getNumParallelLoops() == linalgOp.getNumLoops())
          carry(result, same);
      }
    }
  }

  /// The bounds of the blocks a collective stacks along `chunk.dim` of its
  /// `result` from every rank's `input`: those of the input's class where a
  /// stack of it has them already, else a new shardlin.gather_bounds; null
  /// where that dim is static or the spec has bounds of its own.
  Value stackBounds(Operation *op, Value input, RankedTensorType result,
                    ChunkAttr chunk) {
    if (!result.isDynamicDim(chunk.getDim()) || chunk.hasExplicitBounds())
      return Value();
    std::optional<unsigned> cls;
    if (auto it = own.find(input);
        it != own.end() && it->second.dim == chunk.getDim())
      cls = it->second.cls;
    if (cls)
      if (Value known = classBounds[*cls])
        if (cast<RankedTensorType>(known.getType()).getDimSize(0) ==
                chunk.getNumChunks() + 1 &&
            boundsSpec.lookup(known) == chunk &&
            dominance.properlyDominates(known, op))
          return known;
    OpBuilder b(op);
    auto type = RankedTensorType::get({chunk.getNumChunks() + 1},
                                      b.getI64Type());
    Value bounds = GatherBoundsOp::create(b, op->getLoc(), type, input, chunk);
    if (!cls) {
      cls = classBounds.size();
      classBounds.push_back(Value());
      own[input] = {chunk.getDim(), *cls};
    }
    if (!classBounds[*cls])
      classBounds[*cls] = bounds;
    boundsClass[bounds] = *cls;
    boundsSpec[bounds] = chunk;
    return bounds;
  }

  /// The bounds in which a collective splits dim `chunk.dim` of `input`
  /// back into the blocks it was stacked from, or null if it was not.
  Value splitBounds(Value input, ChunkAttr chunk) {
    auto type = cast<RankedTensorType>(input.getType());
    auto it = rows.find(input);
    if (!type.isDynamicDim(chunk.getDim()) || chunk.hasExplicitBounds() ||
        it == rows.end() || it->second.dim != chunk.getDim())
      return Value();
    auto boundsType = cast<RankedTensorType>(it->second.bounds.getType());
    if (boundsType.getDimSize(0) != chunk.getNumChunks() + 1)
      return Value();
    return it->second.bounds;
  }

  /// `result` is the rank's block, along `dim`, of the blocks `bounds`
  /// (null: unknown) split its input into: of their class.
  void noteSplit(Value result, int64_t dim, Value bounds) {
    if (!bounds)
      return;
    if (auto it = boundsClass.find(bounds); it != boundsClass.end())
      own[result] = {dim, it->second};
  }

  /// A collapse of the rank's own blocks along dim 0 with static dims
  /// after it (an N-D x's rows and batch into rows): the result's blocks
  /// are the source's times that product on every rank, a class of their
  /// own, the same for every value of the source's class collapsed alike.
  void noteCollapse(tensor::CollapseShapeOp collapse) {
    auto it = own.find(collapse.getSrc());
    if (it == own.end() || it->second.dim != 0)
      return;
    ArrayRef<int64_t> shape = collapse.getSrcType().getShape();
    ReassociationIndices first = collapse.getReassociationIndices().front();
    int64_t factor = 1;
    for (int64_t d : ArrayRef<int64_t>(first).drop_front()) {
      if (ShapedType::isDynamic(shape[d]))
        return;
      factor *= shape[d];
    }
    if (factor == 1) {
      own[collapse.getResult()] = it->second;
      return;
    }
    auto [cls, inserted] = scaledClass.try_emplace(
        {it->second.cls, factor}, static_cast<unsigned>(classBounds.size()));
    if (inserted)
      classBounds.push_back(Value());
    own[collapse.getResult()] = {0, cls->second};
  }

  /// `result` carries the stacked rows (the own blocks) of `operands` where
  /// all that carry any carry the same and the result has their shape.
  void carry(Value result, ValueRange operands) {
    carryIn(rows, result, operands);
    carryIn(own, result, operands);
  }
  template <typename T>
  static void carryIn(llvm::DenseMap<Value, T> &map, Value result,
                      ValueRange operands) {
    std::optional<T> same;
    for (Value v : operands) {
      auto it = map.find(v);
      if (it == map.end())
        continue;
      if (same && !(*same == it->second))
        return;
      same = it->second;
    }
    if (!same)
      return;
    auto type = dyn_cast<RankedTensorType>(result.getType());
    if (!type || same->dim >= type.getRank() || !type.isDynamicDim(same->dim))
      return;
    map[result] = *same;
  }

  llvm::DenseMap<Value, StackedRows> rows;
  llvm::DenseMap<Value, OwnBlock> own;
  /// Per class: the bounds of its first stack (null before one).
  SmallVector<Value> classBounds;
  llvm::DenseMap<Type, unsigned> typeClass;
  /// (a class, a factor) -> the class of its blocks collapsed by it.
  llvm::DenseMap<std::pair<unsigned, int64_t>, unsigned> scaledClass;
  llvm::DenseMap<Value, unsigned> boundsClass;
  llvm::DenseMap<Value, ChunkAttr> boundsSpec;
  DominanceInfo dominance;
};

/// Public function definitions are entries: C interfaces for the launcher,
/// and arguments the bufferization must not write.
void markEntries(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  StringRef cInterface = LLVM::LLVMDialect::getEmitCWrapperAttrName();
  StringRef writable = bufferization::BufferizationDialect::kWritableAttrName;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal() || !func.isPublic())
      continue;
    func->setAttr(cInterface, UnitAttr::get(ctx));
    // A sharded argument is the rank's chunk: a tensor once localized.
    for (auto [i, type] : llvm::enumerate(func.getArgumentTypes()))
      if (isa<TensorType, ShardedType>(type) && !func.getArgAttr(i, writable))
        func.setArgAttr(i, writable, BoolAttr::get(ctx, false));
  }
}

struct PrepareNativePass
    : public mlir::shardlin::impl::PrepareNativeBase<PrepareNativePass> {
  void runOnOperation() override {
    if (failed(decomposeAggregates(getOperation())))
      return signalPassFailure();
    for (auto func : getOperation().getOps<FunctionOpInterface>())
      StackedRowBounds().run(func);
    markEntries(getOperation());
  }
};

} // namespace
