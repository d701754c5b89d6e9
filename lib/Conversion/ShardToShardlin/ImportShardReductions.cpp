//===- ImportShardReductions.cpp - A norm's reductions and row broadcasts -===//
//
// RMSNorm and LayerNorm as torch-mlir exports them: a reduction over the
// last dim into R x 1 (or R), elementwise ops on it, and its broadcast
// along the rows ((d0, d1) -> (d0, 0), or (d0) of a collapsed one). Where
// the last dim is whole on every rank (x replicated, or split along its
// rows: sequence parallel) all of it is rank-local: the reduction runs on
// the rank's rows, and its R x 1 result is split as those rows are. A
// reduction over a dim split across the ranks would need an all_reduce of
// the partial sums, which the import does not emit: a located error.
//
//===----------------------------------------------------------------------===//

#include "ImportShardInternal.h"
#include "shardlin/Dialect/Shardlin/IR/RowReductions.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::shardlin;
using namespace mlir::shardlin::import;

bool mlir::shardlin::import::isRowBroadcastOperand(Operation &op,
                                                   OpOperand &operand) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  return generic && generic.isDpsInput(&operand) &&
         isRowBroadcastMap(generic.getMatchingIndexingMap(&operand),
                           operand.get().getType(), generic.getNumLoops());
}

LogicalResult FunctionImporter::importRowReduction(Operation &op) {
  std::optional<RowReduction> red = matchRowReduction(&op);
  FailureOr<std::optional<ValueLayout>> in = layoutOf(red->input);
  if (failed(in))
    return failure();
  ValueLayout l = in->value_or(ValueLayout::replicated());
  const int64_t rank = cast<RankedTensorType>(red->input.getType()).getRank();
  if (!l.isReplicated() && l.dim == rank - 1)
    return op.emitError()
           << "reduces the last dim of a value " << describe(l)
           << ": each rank holds part of every row, so the result would "
              "need an all_reduce of the ranks' partial results, which the "
              "import does not emit (a norm is imported where its input's "
              "last dim is whole on every rank: replicated, or split along "
              "its rows)";
  if (!l.isReplicated() && l.dim != 0)
    return op.emitError() << "reduces a value " << describe(l)
                          << "; shardlin splits activations along their first "
                             "(rows) or last (features) dim";
  FailureOr<Value> x = get(red->input, l);
  if (failed(x))
    return failure();
  // The init has x's leading dims: split as x's rows are (dim 0), sized
  // by x's (a rank-reduced init through an empty tensor of its shape whose
  // dims are then read from x).
  Value donor = *x;
  if (!red->keepDim) {
    RankedTensorType type =
        localType(cast<RankedTensorType>(red->init.getType()), l);
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        sizes.push_back(tensor::DimOp::create(b_, op.getLoc(), *x, d));
    donor = tensor::EmptyOp::create(b_, op.getLoc(), type, sizes);
  }
  FailureOr<Value> init = get(red->init, l, donor);
  if (failed(init))
    return failure();
  if (donor != *x) {
    // Its dims are x's.
    for (Operation *user : llvm::make_early_inc_range(donor.getUsers()))
      if (auto dim = dyn_cast<tensor::DimOp>(user))
        dim.getSourceMutable().assign(*x);
    if (donor.use_empty())
      donor.getDefiningOp()->erase();
  }
  IRMapping mapping;
  mapping.map(red->input, *x);
  mapping.map(red->init, *init);
  Operation *local = b_.clone(op, mapping);
  local->getResult(0).setType(init->getType());
  return define(op.getResult(0), local->getResult(0), l);
}

LogicalResult FunctionImporter::mapRowBroadcastOperands(Operation &op,
                                                        const ValueLayout &l,
                                                        IRMapping &mapping,
                                                        Value &donor) {
  const int64_t rank =
      cast<RankedTensorType>(op.getResult(0).getType()).getRank();
  for (OpOperand &operand : op.getOpOperands()) {
    if (!isRowBroadcastOperand(op, operand) || mapping.contains(operand.get()))
      continue;
    // Split along the features, each rank still needs every row's value.
    const bool features = !l.isReplicated() && l.dim == rank - 1;
    FailureOr<Value> column = getRowBroadcastOperand(
        operand.get(), features ? ValueLayout::replicated() : l, rank);
    if (failed(column))
      return failure();
    if (!donor && !features)
      donor = *column;
    mapping.map(operand.get(), *column);
  }
  return success();
}

FailureOr<Value>
FunctionImporter::getRowBroadcastOperand(Value v, const ValueLayout &want,
                                         int64_t rank) {
  FailureOr<Value> local = get(v, want);
  if (failed(local))
    return failure();
  auto type = cast<RankedTensorType>(local->getType());
  if (type.getRank() == rank)
    return *local;
  // A rank-reduced R: expanded to R x 1, the form the runtime takes.
  SmallVector<int64_t> shape(type.getShape());
  shape.push_back(1);
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d + 1 < type.getRank(); ++d)
    groups.push_back({d});
  groups.push_back({type.getRank() - 1, type.getRank()});
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
    sizes.push_back(
        d < type.getRank() && type.isDynamicDim(d)
            ? OpFoldResult(
                  tensor::DimOp::create(b_, v.getLoc(), *local, d).getResult())
            : OpFoldResult(b_.getIndexAttr(shape[d])));
  return tensor::ExpandShapeOp::create(
             b_, v.getLoc(),
             RankedTensorType::get(shape, type.getElementType()), *local,
             groups, sizes)
      .getResult();
}

void mlir::shardlin::import::keepDimRowMaps(Operation *local) {
  auto generic = dyn_cast<linalg::GenericOp>(local);
  if (!generic)
    return;
  const unsigned loops = generic.getNumLoops();
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  bool changed = false;
  for (OpOperand *in : generic.getDpsInputOperands()) {
    AffineMap &map = maps[in->getOperandNumber()];
    auto t = dyn_cast<RankedTensorType>(in->get().getType());
    if (!t || t.getRank() != loops || map.getNumResults() + 1 != loops)
      continue;
    SmallVector<AffineExpr> results(map.getResults());
    results.push_back(getAffineConstantExpr(0, local->getContext()));
    map = AffineMap::get(loops, 0, results, local->getContext());
    changed = true;
  }
  if (changed)
    generic.setIndexingMapsAttr(
        Builder(local->getContext()).getAffineMapArrayAttr(maps));
}
