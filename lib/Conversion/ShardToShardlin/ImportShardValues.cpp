//===- ImportShardValues.cpp - Old values, their layouts and local parts --===//
//
// How the importer finds the rank's part of a value of the global view in
// the layout a user needs: the value as it was imported, resharded
// (local_chunk and all_gather only; no program the importer emits moves
// more than that), or built on the spot when it can be built in any layout
// for free.
//
//===----------------------------------------------------------------------===//

#include "ImportShardInternal.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace mlir::shardlin;
using namespace mlir::shardlin::import;

namespace {

/// The dims of `old` that are the broadcast of a rank-1 vector along the
/// last dim: linalg.broadcast with `dimensions` all but the last.
bool isLastDimBroadcast(linalg::BroadcastOp op) {
  auto in = dyn_cast<RankedTensorType>(op.getInput().getType());
  auto out = dyn_cast<RankedTensorType>(op.getInit().getType());
  if (!in || !out || in.getRank() != 1 || out.getRank() < 2)
    return false;
  ArrayRef<int64_t> dims = op.getDimensions();
  if (static_cast<int64_t>(dims.size()) != out.getRank() - 1)
    return false;
  for (auto [i, d] : llvm::enumerate(dims))
    if (d != static_cast<int64_t>(i))
      return false;
  return true;
}

/// Whether `user` is a linalg.broadcast of the value of `use`.
bool isBroadcastOf(Operation *user, OpOperand &use) {
  auto bcast = dyn_cast<linalg::BroadcastOp>(user);
  return bcast && bcast.getInput() == use.get() &&
         bcast.hasPureTensorSemantics();
}

/// The input dim of broadcast `bcast` that its result dim `dim` comes from,
/// or nullopt for a dim the broadcast adds.
std::optional<int64_t> broadcastInputDim(linalg::BroadcastOp bcast,
                                         int64_t dim) {
  ArrayRef<int64_t> added = bcast.getDimensions();
  if (llvm::is_contained(added, dim))
    return std::nullopt;
  return dim - llvm::count_if(added, [&](int64_t a) { return a < dim; });
}

} // namespace

bool mlir::shardlin::import::isBuildableAnywhere(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def || !isa<RankedTensorType>(v.getType()))
    return false;
  // An annotation says how the value is distributed; built anywhere, it is
  // the same value.
  if (auto shardOp = dyn_cast<shard::ShardOp>(def))
    return isBuildableAnywhere(shardOp.getSrc());
  if (isa<tensor::EmptyOp>(def))
    return true;
  if (auto cst = dyn_cast<arith::ConstantOp>(def)) {
    auto dense = dyn_cast<DenseElementsAttr>(cst.getValue());
    return dense && dense.isSplat();
  }
  if (auto fill = dyn_cast<linalg::FillOp>(def))
    return fill.hasPureTensorSemantics() &&
           isBuildableAnywhere(fill.getOutputs()[0]);
  if (auto bcast = dyn_cast<linalg::BroadcastOp>(def))
    return bcast.hasPureTensorSemantics() && isLastDimBroadcast(bcast) &&
           isBuildableAnywhere(bcast.getInit());
  return false;
}

std::optional<ValueLayout> FunctionImporter::declared(Value v) const {
  auto it = declared_.find(v);
  if (it == declared_.end()) {
    // Backward propagation's (ImportShardPropagation.cpp).
    if (auto p = preferred_.find(v); p != preferred_.end())
      return p->second;
    return std::nullopt;
  }
  return it->second;
}

FailureOr<std::optional<ValueLayout>> FunctionImporter::layoutOf(Value v) {
  auto it = layouts_.find(v);
  if (it != layouts_.end())
    return std::optional<ValueLayout>(it->second);
  if (isBuildableAnywhere(v))
    return std::optional<ValueLayout>();
  Operation *def = v.getDefiningOp();
  if (def && deferred_.contains(def)) {
    // A reshape or transpose that a linear did not absorb after all: it is
    // built now, in the layout its input gives it.
    deferred_.erase(def);
    LogicalResult built =
        isa<linalg::TransposeOp>(def)
            ? importTranspose(cast<linalg::TransposeOp>(def))
            : importReshape(*def);
    if (failed(built))
      return failure();
    return layoutOf(v);
  }
  return emitError(v.getLoc())
         << "internal: the import has no layout for this value";
}

FailureOr<Value> FunctionImporter::get(Value v) {
  FailureOr<std::optional<ValueLayout>> layout = layoutOf(v);
  if (failed(layout))
    return failure();
  return get(v, layout->value_or(ValueLayout::replicated()));
}

FailureOr<Value> FunctionImporter::get(Value v, const ValueLayout &want,
                                       Value donor) {
  if (layouts_.count(v)) {
    Value local = locals_[v];
    const ValueLayout &have = layouts_[v];
    if (have == want)
      return local;
    // A whole constant that a user needs split: its chunks, not all of it
    // on every rank.
    if (auto cst = v.getDefiningOp<arith::ConstantOp>();
        cst && have.isReplicated() &&
        local.getDefiningOp<shardlin::ConstantOp>())
      return splitConstant(cst, want);
    return reshard(v.getLoc(), local, cast<RankedTensorType>(v.getType()),
                   have, want);
  }
  if (isBuildableAnywhere(v))
    return build(v, want, donor);
  FailureOr<std::optional<ValueLayout>> layout = layoutOf(v);
  if (failed(layout))
    return failure();
  return get(v, want, donor);
}

FailureOr<Value> FunctionImporter::getScalar(Value v) {
  if (Value mapped = locals_.lookup(v))
    return mapped;
  Operation *def = v.getDefiningOp();
  if (!def)
    return emitError(v.getLoc())
           << "internal: the import has no value for this argument";
  Value local;
  if (isa<arith::ConstantOp>(def)) {
    local = b_.clone(*def)->getResult(0);
  } else if (auto dim = dyn_cast<tensor::DimOp>(def)) {
    // The rank's size of the dim: what a user of the rank's part needs.
    FailureOr<Value> source = get(dim.getSource());
    FailureOr<Value> index = getScalar(dim.getIndex());
    if (failed(source) || failed(index))
      return failure();
    local = tensor::DimOp::create(b_, dim.getLoc(), *source, *index);
  } else if (isa<arith::ArithDialect>(def->getDialect()) &&
             def->getNumResults() == 1 && def->getNumRegions() == 0) {
    IRMapping mapping;
    for (Value operand : def->getOperands()) {
      FailureOr<Value> m = getScalar(operand);
      if (failed(m))
        return failure();
      mapping.map(operand, *m);
    }
    local = b_.clone(*def, mapping)->getResult(0);
  } else {
    return def->emitError()
           << "'" << def->getName()
           << "' computes a scalar the import cannot carry over (supported: "
              "constants, tensor.dim and arith ops on them)";
  }
  locals_[v] = local;
  return local;
}

LogicalResult FunctionImporter::define(Value v, Value local,
                                       const ValueLayout &layout) {
  ValueLayout final = layout;
  // A stated layout only: a preferred one is taken where it comes free.
  if (std::optional<ValueLayout> want = statedLayout(v);
      want && *want != layout) {
    Block *block = b_.getInsertionBlock();
    Operation *last = block && !block->empty() ? &block->back() : nullptr;
    FailureOr<Value> moved = reshard(v.getLoc(), local,
                                     cast<RankedTensorType>(v.getType()),
                                     layout, *want);
    if (failed(moved))
      return failure();
    markStatedReshards(last, v, layout, *want);
    local = *moved;
    final = *want;
  }
  layouts_[v] = final;
  locals_[v] = local;
  return success();
}

FailureOr<Value> FunctionImporter::reshard(Location loc, Value local,
                                           RankedTensorType global,
                                           const ValueLayout &from,
                                           const ValueLayout &to) {
  if (from == to)
    return local;
  if (!from.isReplicated()) {
    // All chunks gathered: the whole tensor on every rank. The other dims
    // are the local value's (a dynamic batch dim stays dynamic).
    SmallVector<int64_t> shape(cast<RankedTensorType>(local.getType()).getShape());
    shape[from.dim] = global.getShape()[from.dim];
    local = AllGatherOp::create(
        b_, loc, RankedTensorType::get(shape, global.getElementType()), local,
        from.chunks);
  }
  if (to.isReplicated())
    return local;
  SmallVector<int64_t> shape(cast<RankedTensorType>(local.getType()).getShape());
  shape[to.dim] = to.chunks.getLocalSize(shape[to.dim]);
  return LocalChunkOp::create(
             b_, loc, RankedTensorType::get(shape, global.getElementType()),
             local, to.chunks)
      .getResult();
}

FailureOr<Value> FunctionImporter::build(Value v, const ValueLayout &want,
                                         Value donor) {
  auto global = cast<RankedTensorType>(v.getType());
  RankedTensorType type = localType(global, want);
  Operation *def = v.getDefiningOp();
  Location loc = v.getLoc();
  if (auto shardOp = dyn_cast<shard::ShardOp>(def))
    return build(shardOp.getSrc(), want, donor);
  // The sizes of the `?` dims: the donor's (a value of the same local
  // shape), or for a dim that is not split, the old op's own size.
  auto dynamicSizes = [&](ValueRange oldSizes) -> FailureOr<SmallVector<Value>> {
    SmallVector<Value> sizes;
    unsigned next = 0;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      const bool oldDynamic = global.isDynamicDim(d);
      Value oldSize = oldDynamic && next < oldSizes.size() ? oldSizes[next]
                                                           : Value();
      if (oldDynamic)
        ++next;
      if (!type.isDynamicDim(d))
        continue;
      // A donor's `?` dim at the same place is the same rank-local size
      // (the rows of an operand, or its chunk of a split dim).
      if (auto donorType =
              donor ? cast<RankedTensorType>(donor.getType()) : nullptr;
          donorType && donorType.getRank() == type.getRank() &&
          donorType.isDynamicDim(d)) {
        sizes.push_back(tensor::DimOp::create(b_, loc, donor, d));
        continue;
      }
      if (oldSize && d != want.dim) {
        FailureOr<Value> size = getScalar(oldSize);
        if (failed(size))
          return failure();
        sizes.push_back(*size);
        continue;
      }
      return emitError(loc) << "the import cannot size dim " << d << " of "
                            << type
                            << " here: no value of this shape to take it from";
    }
    return sizes;
  };
  if (auto empty = dyn_cast<tensor::EmptyOp>(def)) {
    FailureOr<SmallVector<Value>> sizes = dynamicSizes(empty.getDynamicSizes());
    if (failed(sizes))
      return failure();
    return tensor::EmptyOp::create(b_, loc, type, *sizes).getResult();
  }
  if (auto cst = dyn_cast<arith::ConstantOp>(def)) {
    auto dense = cast<DenseElementsAttr>(cst.getValue());
    if (type.hasStaticShape())
      return arith::ConstantOp::create(b_, loc, type,
                                       dense.resizeSplat(type))
          .getResult();
    // A dense splat needs a static shape: a fill of the scalar instead.
    FailureOr<SmallVector<Value>> sizes = dynamicSizes({});
    if (failed(sizes))
      return failure();
    Value scalar = arith::ConstantOp::create(
        b_, loc, cast<TypedAttr>(dense.getSplatValue<Attribute>()));
    Value init = tensor::EmptyOp::create(b_, loc, type, *sizes);
    return linalg::FillOp::create(b_, loc, scalar, init).getResult(0);
  }
  if (auto fill = dyn_cast<linalg::FillOp>(def)) {
    FailureOr<Value> scalar = getScalar(fill.getInputs()[0]);
    FailureOr<Value> init = get(fill.getOutputs()[0], want, donor);
    if (failed(scalar) || failed(init))
      return failure();
    return linalg::FillOp::create(b_, loc, *scalar, *init).getResult(0);
  }
  auto bcast = cast<linalg::BroadcastOp>(def);
  // The vector is along the last dim: split there, each rank takes its
  // chunk of it; otherwise all of it.
  // (A vector split the same way, a split constant, is taken as it is.)
  const bool alongSplit = want.dim == global.getRank() - 1;
  FailureOr<Value> vec =
      get(bcast.getInput(), alongSplit ? ValueLayout{0, want.chunks.withDim(0)}
                                       : ValueLayout::replicated());
  FailureOr<Value> init = get(bcast.getInit(), want, donor);
  if (failed(vec) || failed(init))
    return failure();
  return linalg::BroadcastOp::create(b_, loc, *vec, *init,
                                     bcast.getDimensions())
      ->getResult(0);
}

//===----------------------------------------------------------------------===//
// Reshapes and transposes, built when their input is (importOp) or when a
// user needs a deferred one (layoutOf)
//===----------------------------------------------------------------------===//

LogicalResult FunctionImporter::importTranspose(linalg::TransposeOp op) {
  FailureOr<std::optional<ValueLayout>> in = layoutOf(op.getInput());
  if (failed(in))
    return failure();
  ValueLayout l = in->value_or(ValueLayout::replicated());
  FailureOr<Value> input = get(op.getInput(), l);
  if (failed(input))
    return failure();
  // The split dim moves where the permutation puts it.
  ValueLayout out = ValueLayout::replicated();
  if (!l.isReplicated()) {
    ArrayRef<int64_t> perm = op.getPermutation();
    auto it = llvm::find(perm, l.dim);
    out.dim = it - perm.begin();
    out.chunks = l.chunks.withDim(out.dim);
  }
  // The init is not read: where the rank's shape has a `?` (an uneven
  // split), an empty tensor sized by the input's dims it comes from.
  RankedTensorType initType =
      localType(cast<RankedTensorType>(op.getInit().getType()), out);
  FailureOr<Value> init = failure();
  if (initType.hasStaticShape()) {
    init = get(op.getInit(), out, Value());
  } else {
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < initType.getRank(); ++d)
      if (initType.isDynamicDim(d))
        sizes.push_back(tensor::DimOp::create(b_, op.getLoc(), *input,
                                              op.getPermutation()[d]));
    init = tensor::EmptyOp::create(b_, op.getLoc(), initType, sizes).getResult();
  }
  if (failed(init))
    return failure();
  Value local = linalg::TransposeOp::create(b_, op.getLoc(), *input, *init,
                                            op.getPermutation())
                    ->getResult(0);
  return define(op->getResult(0), local, out);
}

LogicalResult FunctionImporter::importReshape(Operation &op) {
  Value src = op.getOperand(0);
  FailureOr<std::optional<ValueLayout>> in = layoutOf(src);
  if (failed(in))
    return failure();
  ValueLayout l = in->value_or(ValueLayout::replicated());
  FailureOr<Value> input = get(src, l);
  if (failed(input))
    return failure();
  auto srcType = cast<RankedTensorType>(src.getType());
  auto resType = cast<RankedTensorType>(op.getResult(0).getType());
  if (l.isReplicated()) {
    IRMapping mapping;
    mapping.map(src, *input);
    for (Value v : op.getOperands().drop_front()) {
      FailureOr<Value> s = getScalar(v);
      if (failed(s))
        return failure();
      mapping.map(v, *s);
    }
    return define(op.getResult(0), b_.clone(op, mapping)->getResult(0), l);
  }
  // A split dim that stays the outermost dim of its group keeps its chunks,
  // scaled by the static dims folded inside it.
  SmallVector<ReassociationIndices> groups =
      isa<tensor::CollapseShapeOp>(op)
          ? cast<tensor::CollapseShapeOp>(op).getReassociationIndices()
          : cast<tensor::ExpandShapeOp>(op).getReassociationIndices();
  const bool collapse = isa<tensor::CollapseShapeOp>(op);
  RankedTensorType wide = collapse ? srcType : resType;
  int64_t groupIndex = -1, inner = 1;
  for (auto [g, group] : llvm::enumerate(groups)) {
    if (collapse ? !llvm::is_contained(group, l.dim) : g != uint64_t(l.dim))
      continue;
    groupIndex = g;
    if (collapse && group.front() != l.dim)
      return op.emitError() << "collapses the split dim " << l.dim
                            << " into dims outside it; shardlin keeps a split "
                               "dim outermost in its group";
    for (int64_t d : ArrayRef<int64_t>(group).drop_front()) {
      if (wide.isDynamicDim(d))
        return op.emitError()
               << "reshapes the split dim with the dynamic dim " << d;
      inner *= wide.getShape()[d];
    }
  }
  const int64_t newDim = collapse ? groupIndex : groups[l.dim].front();
  const int64_t oldSize = srcType.getShape()[l.dim];
  SmallVector<int64_t> bounds = l.chunks.getBoundsFor(oldSize);
  for (int64_t &bound : bounds) {
    if (!collapse && bound % inner != 0)
      return op.emitError()
             << "splits the rows of a chunked dim (chunk boundaries ["
             << ArrayRef<int64_t>(l.chunks.getBoundsFor(oldSize))
             << "]) across its new dims of " << inner << " elements";
    bound = collapse ? bound * inner : bound / inner;
  }
  ValueLayout out = splitLayout(op.getContext(), grid_, newDim,
                           resType.getShape()[newDim], bounds);
  RankedTensorType type = localType(resType, out);
  Value local;
  if (collapse) {
    local = tensor::CollapseShapeOp::create(b_, op.getLoc(), type, *input,
                                            groups);
  } else {
    auto expand = cast<tensor::ExpandShapeOp>(op);
    SmallVector<OpFoldResult> sizes;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d)) {
        sizes.push_back(b_.getIndexAttr(type.getShape()[d]));
        continue;
      }
      if (d == newDim) {
        // The rank's rows over the inner dims.
        Value rows = tensor::DimOp::create(b_, op.getLoc(), *input, l.dim);
        Value p = arith::ConstantIndexOp::create(b_, op.getLoc(), inner);
        sizes.push_back(
            arith::DivUIOp::create(b_, op.getLoc(), rows, p).getResult());
        continue;
      }
      OpFoldResult size = expand.getMixedOutputShape()[d];
      if (auto v = dyn_cast<Value>(size)) {
        FailureOr<Value> s = getScalar(v);
        if (failed(s))
          return failure();
        size = *s;
      }
      sizes.push_back(size);
    }
    local = tensor::ExpandShapeOp::create(b_, op.getLoc(), type, *input, groups,
                                          sizes);
  }
  return define(op.getResult(0), local, out);
}

//===----------------------------------------------------------------------===//
// Constants: a frontend's weights and biases
//===----------------------------------------------------------------------===//

FailureOr<std::optional<ValueLayout>>
FunctionImporter::statedLayout(Value v, unsigned depth) {
  if (std::optional<ValueLayout> l = declared(v))
    return l;
  if (depth > 8)
    return std::optional<ValueLayout>();
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    std::optional<ValueLayout> found;
    if (auto shardOp = dyn_cast<shard::ShardOp>(user)) {
      if (shardOp.getAnnotateForUsers()) {
        FailureOr<ValueLayout> wanted = parseSharding(
            shardOp.getSharding(), shardOp.getResult().getType(), grid_, user);
        if (failed(wanted))
          return failure();
        found = *wanted;
      } else {
        FailureOr<std::optional<ValueLayout>> l =
            statedLayout(shardOp.getResult(), depth + 1);
        if (failed(l))
          return failure();
        found = *l;
      }
    } else if (auto transpose = dyn_cast<linalg::TransposeOp>(user);
               transpose && use.get() == transpose.getInput()) {
      // Result dim i is input dim permutation[i]: a split of the result
      // is a split of the input along the dim it came from.
      FailureOr<std::optional<ValueLayout>> l =
          statedLayout(transpose->getResult(0), depth + 1);
      if (failed(l))
        return failure();
      if (*l && !(*l)->isReplicated()) {
        const int64_t dim = transpose.getPermutation()[(*l)->dim];
        found = ValueLayout{dim, (*l)->chunks.withDim(dim)};
      }
    } else if (isBroadcastOf(user, use)) {
      // A broadcast of it: a split of a dim it came from is a split of
      // that dim of the constant.
      FailureOr<std::optional<ValueLayout>> l =
          statedLayout(user->getResult(0), depth + 1);
      if (failed(l))
        return failure();
      if (*l && !(*l)->isReplicated())
        if (std::optional<int64_t> dim = broadcastInputDim(
                cast<linalg::BroadcastOp>(user), (*l)->dim))
          found = ValueLayout{*dim, (*l)->chunks.withDim(*dim)};
    }
    if (found)
      return found;
  }
  return std::optional<ValueLayout>();
}

LogicalResult FunctionImporter::importConstant(arith::ConstantOp op) {
  auto type = cast<RankedTensorType>(op.getType());
  FailureOr<std::optional<ValueLayout>> stated = statedLayout(op.getResult(), 0);
  if (failed(stated))
    return failure();
  const ValueLayout layout = stated->value_or(ValueLayout::replicated());
  auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
  // A splat that no annotation splits costs nothing to build where a user
  // needs it, in its layout (isBuildableAnywhere).
  if (dense && dense.isSplat() && layout.isReplicated())
    return success();
  if (!isSupportedElementType(type.getElementType()) ||
      !type.hasStaticShape())
    return op.emitError() << "a constant of type " << type
                          << ": the import takes constant tensors of static "
                             "shape of f16, bf16, f32 or f64";
  Location loc = op.getLoc();
  auto value = dyn_cast<ElementsAttr>(op.getValue());
  if (!value)
    return op.emitError() << "a constant tensor that is not dense<...> or "
                             "dense_resource<...>";
  if (layout.isReplicated()) {
    // Every rank holds all of it (a bias, a norm's weight).
    Value whole = shardlin::ConstantOp::create(b_, loc, type, value);
    if (failed(mlir::verify(whole.getDefiningOp())))
      return failure();
    return define(op.getResult(), whole, layout);
  }
  FailureOr<Value> local = splitConstant(op, layout);
  if (failed(local))
    return failure();
  // Linears take the sharded constant itself as their weight.
  shardedArgs_[op.getResult()] =
      local->getDefiningOp<LocalShardOp>().getSource();
  return define(op.getResult(), *local, layout);
}

FailureOr<Value> FunctionImporter::splitConstant(arith::ConstantOp op,
                                                 const ValueLayout &layout) {
  if (Value local = constantChunks_.lookup({op.getResult(), layout.chunks}))
    return local;
  // Each rank holds its chunk, as of a sharded argument.
  auto type = cast<RankedTensorType>(op.getType());
  auto sharded = ShardedType::getChecked(
      [&]() -> InFlightDiagnostic {
        return op.emitError() << "the constant (" << type << ", "
                              << describe(layout) << "): ";
      },
      op.getContext(), type, layout.chunks);
  if (!sharded)
    return failure();
  auto cst = shardlin::ConstantOp::create(b_, op.getLoc(), sharded,
                                          cast<ElementsAttr>(op.getValue()));
  if (failed(mlir::verify(cst)))
    return failure();
  Value local = LocalShardOp::create(b_, op.getLoc(), sharded.getLocalType(),
                                     cst.getResult());
  constantChunks_[{op.getResult(), layout.chunks}] = local;
  return local;
}
