//===- BackwardGen.h - Reverse mode over a lowered function -----*- C++ -*-===//
//
// Internal to BackwardBuilder.cpp (the values, gradients and the function)
// and BackwardAdjoints.cpp (the adjoint of each op): the state of one
// backward function being built. See BackwardBuilder.cpp for the design.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_LIB_TRANSFORMS_BACKWARDGEN_H
#define SHARDLIN_LIB_TRANSFORMS_BACKWARDGEN_H

#include "BackwardBuilder.h"

#include "shardlin/Dialect/Shardlin/IR/RowReductions.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"
#include "shardlin/Dialect/Shardlin/Transforms/ElementwiseChains.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::shardlin::detail {

inline bool isHalf(Type t) { return t.isF16() || t.isBF16(); }

inline Type elementOf(Value v) {
  if (auto s = dyn_cast<ShardedType>(v.getType()))
    return s.getElementType();
  return cast<ShapedType>(v.getType()).getElementType();
}

inline RankedTensorType withElement(Type shaped, Type elt) {
  return cast<RankedTensorType>(shaped).clone(elt);
}

inline bool isChainOp(Operation *op) {
  bool member = false;
  return succeeded(isChainMember(*op, member, /*emitErrors=*/false)) &&
         member && !isa<tensor::EmptyOp, arith::ConstantOp>(op);
}

/// Whether `spec` is B rows per rank stacked in rank order (dim 0, the
/// identity placements).
inline bool isRankOrderRows(ChunkAttr spec) {
  if (spec.getDim() != 0)
    return false;
  for (auto [i, p] : llvm::enumerate(spec.getPlacements()))
    if (p != static_cast<int64_t>(i))
      return false;
  return true;
}

class BackwardGen {
public:
  explicit BackwardGen(const BackwardRequest &r)
      : req(r), forward(r.forward), backward(r.backward),
        fwdBody(forward.getBody().front()), body(backward.getBody().front()),
        recompute(backward.getContext()), adjoint(backward.getContext()),
        currentLoc(UnknownLoc::get(backward.getContext())) {}

  FailureOr<SmallVector<Value>> run();
  LogicalResult seedResultGradients(unsigned numArgs);
  SmallVector<Value> pruneAndFinish(func::ReturnOp backRet);

private:
  //===--- Forward values in the backward ---------------------------------===//

  /// The backward's value of forward value `v`: an argument, a saved
  /// argument, or recomputed (before every adjoint op).
  Value primal(Value v);
  /// A backward value with the shape of forward value `v` (for sizes only):
  /// an argument or a value already available when elementwise ops, which
  /// keep shapes, lead to one; else `v` itself.
  Value shapeOf(Value v);
  Value findShape(Value v, unsigned depth);
  Operation *withShapeOperand(linalg::GenericOp generic, Operation *def);

  //===--- Gradients ------------------------------------------------------===//

  /// The element type a gradient of `v` is kept in (see the file comment).
  Type accType(Value v);
  /// `c` with element type `elt`: as it is, the narrow value it was widened
  /// from, or converted.
  Value convertTo(Value c, Type elt);
  Value add(Value a, Value b);
  Value sumRows(Value t, Type elt);
  Value asRows(Value t);
  Value zeroLike(Value x);
  Location loc() { return currentLoc; }

  void contribute(Value v, Value c);
  /// The sum over all rows of `rows` (rank 2) contributed to vector `v`.
  void contributeRowSums(Value v, Value rows);
  /// The sum of each row of `t` (over its last dim), keep-dim (... x 1), as
  /// the forward's norms write it (a linalg.generic the runtime runs as
  /// reduce_last).
  Value sumEachRow(Value t);
  /// `r` (... x 1, one value per row) broadcast along the rows to the shape
  /// of forward value `like`.
  Value broadcastRows(Value r, Value like);
  Value gradient(Value v);
  Value finalizeReplicated(Value v);

  LogicalResult visit(Operation *op);
  LogicalResult visitGemm(GemmOp op);
  LogicalResult visitElementwise(Operation *op);
  LogicalResult visitAttention(AttentionOp op);
  LogicalResult visitRope(RopeOp op);
  LogicalResult visitLocalSlice(LocalSliceOp op);
  LogicalResult visitLocalChunk(LocalChunkOp op);
  LogicalResult visitCollected(Operation *op);
  LogicalResult visitRowReduction(Operation *op, const RowReduction &red);
  bool isSame(Value v) const {
    return replicated.contains(v) || collected.contains(v);
  }
  void classify();

  struct Replicated {
    Value summed, local;
    SmallVector<Value> rows;
    llvm::MapVector<Attribute, Value> chunks;
  };

  const BackwardRequest &req;
  func::FuncOp forward, backward;
  Block &fwdBody;
  Block &body;
  OpBuilder recompute, adjoint;
  Location currentLoc;

  llvm::DenseMap<Value, Value> primals;
  SmallVector<Value> saved;
  llvm::DenseSet<Value> active, replicated;
  /// Results of an all_gather or an all_reduce: the same on every rank,
  /// their gradient in two parts, each rank's own (grads, whose sum over
  /// ranks the collective's dual forms) and the one already summed over
  /// ranks (collectedSummed: of a value computed from them alone, such as
  /// a replicated result), which is every rank's alike.
  llvm::DenseSet<Value> collected;
  llvm::DenseMap<Value, Value> collectedSummed;
  /// Forward values computed from a collected value: a replicated one among
  /// them is visited in reverse order with the rank-local ops.
  llvm::DenseSet<Value> afterCollective;
  llvm::DenseMap<Value, Value> grads;
  llvm::MapVector<Value, Replicated> reps;
  llvm::DenseMap<Value, Value> finalized;
  /// A backward tensor -> its all_gather in rank order of rows.
  llvm::DenseMap<Value, Value> gatheredRows;
  /// During the pass over replicated ops: contributions are already sums
  /// over ranks.
  bool summed = false;
  int64_t worldSize = 0;
};

} // namespace mlir::shardlin::detail

#endif
