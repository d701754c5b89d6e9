//===- ImportShardLayouts.cpp - shard.sharding to layouts -----------------===//
//
// What a `shard.sharding` means for one tensor, in shardlin's terms: a dim
// split over the grid's W devices, device i holding chunk i, with the
// boundaries the sharding gives (`sharded_dims_offsets`) or, without them,
// the equal split the shard dialect's types describe (dimSize / W per
// shard; LLVM 22's ShardOps.cpp has no rule for a size W does not divide,
// so such a split needs offsets).
//
//===----------------------------------------------------------------------===//

#include "ImportShardInternal.h"

#include "shardlin/runtime/base/ChunkLayout.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::shardlin;
using namespace mlir::shardlin::import;

std::string mlir::shardlin::import::describe(const ValueLayout &layout) {
  if (layout.isReplicated())
    return "replicated";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "split along dim " << layout.dim << " over "
     << layout.chunks.getNumChunks() << " devices";
  if (layout.chunks.hasExplicitBounds()) {
    os << " at offsets [";
    llvm::interleaveComma(layout.chunks.getBounds(), os);
    os << "]";
  }
  return text;
}

RankedTensorType mlir::shardlin::import::localType(RankedTensorType global,
                                                   const ValueLayout &layout) {
  if (layout.isReplicated())
    return global;
  SmallVector<int64_t> shape(global.getShape());
  shape[layout.dim] = layout.chunks.getLocalSize(shape[layout.dim]);
  return RankedTensorType::get(shape, global.getElementType());
}

ValueLayout mlir::shardlin::import::splitLayout(MLIRContext *ctx, const Grid &grid,
                                           int64_t dim, int64_t size,
                                           ArrayRef<int64_t> bounds) {
  SmallVector<int64_t> identity(grid.worldSize);
  for (int64_t i = 0; i < grid.worldSize; ++i)
    identity[i] = i;
  // Boundaries that are the ceil rule's are left out: the canonical form
  // compares equal to the even split of the same dim.
  std::vector<int64_t> ceil = ::shardlin::rt::ceilBounds(size, grid.worldSize);
  if (!bounds.empty() && llvm::equal(bounds, ceil))
    bounds = {};
  ValueLayout layout;
  layout.dim = dim;
  layout.chunks = ChunkAttr::get(ctx, dim, identity, bounds);
  return layout;
}

FailureOr<ValueLayout>
mlir::shardlin::import::parseSharding(Value sharding, RankedTensorType type,
                                      const Grid &grid, Operation *at) {
  auto op = sharding.getDefiningOp<shard::ShardingOp>();
  if (!op)
    return at->emitError()
           << "the sharding must be a shard.sharding op of this function "
              "(block arguments and other producers of !shard.sharding are "
              "not supported)";
  if (op.getGrid() != grid.name)
    return at->emitError() << "the sharding is on grid @" << op.getGrid()
                           << ", but the module's grid is @"
                           << grid.name;
  if (!op.getStaticHaloSizes().empty() || !op.getDynamicHaloSizes().empty())
    return op.emitError()
           << "halo_sizes are not supported: shardlin splits tensors into "
              "disjoint chunks";
  if (!op.getDynamicShardedDimsOffsets().empty())
    return op.emitError()
           << "dynamic sharded_dims_offsets are not supported: give them as "
              "constants";
  ArrayRef<shard::GridAxesAttr> axes = op.getSplitAxes().getAxes();
  if (static_cast<int64_t>(axes.size()) > type.getRank())
    return at->emitError() << "the sharding's split_axes have " << axes.size()
                           << " entries for a rank-" << type.getRank()
                           << " tensor " << type;
  int64_t dim = -1;
  for (auto [d, dimAxes] : llvm::enumerate(axes)) {
    if (dimAxes.empty())
      continue;
    if (dimAxes.size() != 1 || dimAxes.asArrayRef()[0] != 0)
      return op.emitError() << "tensor dim " << d
                            << " is split over grid axes [" << dimAxes.asArrayRef()
                            << "]; the 1-D grid @" << grid.name
                            << " has only axis 0";
    if (dim >= 0)
      return op.emitError() << "tensor dims " << dim << " and " << d
                            << " are both split over grid axis 0; shardlin "
                               "splits one dim per tensor";
    dim = static_cast<int64_t>(d);
  }
  ArrayRef<int64_t> offsets = op.getStaticShardedDimsOffsets();
  if (dim < 0) {
    if (!offsets.empty())
      return op.emitError() << "sharded_dims_offsets given for a sharding "
                               "that splits no dim";
    return ValueLayout::replicated();
  }
  const int64_t size = type.getShape()[dim];
  const int64_t w = grid.worldSize;
  if (ShapedType::isDynamic(size))
    return at->emitError() << "tensor dim " << dim << " of " << type
                           << " is split over the grid but is dynamic; "
                              "shardlin splits static dims";
  if (offsets.empty()) {
    if (size % w != 0)
      return at->emitError()
             << "tensor dim " << dim << " of " << type << " (" << size
             << " elements) is split over the " << w << " devices of grid @"
             << grid.name
             << " without sharded_dims_offsets, but " << w
             << " does not divide " << size
             << ": the shard dialect sizes every shard " << size << " / "
             << w << " = " << size / w
             << ", which is no split of the dim; give the chunk boundaries "
                "as sharded_dims_offsets (W + 1 values from 0 to "
             << size << ")";
    return splitLayout(op.getContext(), grid, dim, size);
  }
  std::vector<int64_t> bounds(offsets.begin(), offsets.end());
  std::string problem = ::shardlin::rt::checkBounds(bounds, w, size);
  if (!problem.empty()) {
    // Reported where the offsets meet the tensor they must fit.
    InFlightDiagnostic diag = at->emitError()
                              << "sharded_dims_offsets [" << offsets
                              << "] are not the boundaries of " << w
                              << " chunks of tensor dim " << dim << " of "
                              << type << ": " << problem;
    if (at != op.getOperation())
      diag.attachNote(op.getLoc()) << "the sharding";
    return diag;
  }
  return splitLayout(op.getContext(), grid, dim, size, offsets);
}
