//===- LoweringSupport.cpp - Pieces the lowering patterns share -----------===//

#include "shardlin/Dialect/Shardlin/Transforms/LoweringSupport.h"

#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::shardlin;
using namespace mlir::shardlin::detail;
namespace sd = mlir::shardlin::detail;

Value sd::flattenToRows(OpBuilder &b, Location loc, Value x,
                            int64_t &batch) {
  auto xType = cast<RankedTensorType>(x.getType());
  const int64_t rank = xType.getRank();
  const int64_t k = xType.getShape()[rank - 1];
  Type elt = xType.getElementType();
  if (rank == 2) {
    batch = xType.getShape()[0];
    return x;
  }
  if (rank == 1) {
    batch = 1;
    return tensor::ExpandShapeOp::create(b, loc, tensorOf({1, k}, elt), x,
                                         ArrayRef<ReassociationIndices>{{0, 1}});
  }
  // Any dynamic batch dim makes the row count dynamic.
  batch = 1;
  ReassociationIndices batchDims;
  for (int64_t i = 0; i + 1 < rank; ++i) {
    const int64_t d = xType.getShape()[i];
    batch = ShapedType::isDynamic(d) || ShapedType::isDynamic(batch)
                ? ShapedType::kDynamic
                : batch * d;
    batchDims.push_back(i);
  }
  return tensor::CollapseShapeOp::create(
      b, loc, tensorOf({batch, k}, elt), x,
      ArrayRef<ReassociationIndices>{batchDims, {rank - 1}});
}

Value sd::restoreFromRows(OpBuilder &b, Location loc, Value rows,
                          RankedTensorType type, Value input) {
  const int64_t rank = type.getRank();
  if (rank == 2)
    return rows;
  if (rank == 1)
    return tensor::CollapseShapeOp::create(
        b, loc, type, rows, ArrayRef<ReassociationIndices>{{0, 1}});
  ReassociationIndices batchDims;
  for (int64_t i = 0; i + 1 < rank; ++i)
    batchDims.push_back(i);
  SmallVector<ReassociationIndices> groups{batchDims, {rank - 1}};
  if (type.hasStaticShape())
    return tensor::ExpandShapeOp::create(b, loc, type, rows, groups);
  // The batch dims are the input's (the result has its shape but for the
  // last dim): its dynamic ones are read from it with tensor.dim.
  SmallVector<OpFoldResult> sizes;
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t d = type.getShape()[i];
    if (ShapedType::isDynamic(d))
      sizes.push_back(tensor::DimOp::create(b, loc, input, i).getResult());
    else
      sizes.push_back(b.getIndexAttr(d));
  }
  return tensor::ExpandShapeOp::create(b, loc, type, rows, groups, sizes);
}

int64_t sd::stackedRows(int64_t worldSize, int64_t batch) {
  return ShapedType::isDynamic(batch) ? ShapedType::kDynamic
                                      : worldSize * batch;
}

mlir::shardlin::ChunkAttr sd::rankOrderRows(MLIRContext *ctx, int64_t worldSize) {
  SmallVector<int64_t> identity(worldSize);
  for (int64_t i = 0; i < worldSize; ++i)
    identity[i] = i;
  return ChunkAttr::get(ctx, /*dim=*/0, identity);
}

Type sd::partialSumType(Type elt) {
  if (elt.isF16() || elt.isBF16())
    return Float32Type::get(elt.getContext());
  return elt;
}

/// The bias (of `elt`, if any) added once to the reduced partial sums `y`,
/// and the result in `elt` (one rounding for f16 and bf16).
static Value finishPartialSums(OpBuilder &b, Location loc, Value y, Type elt,
                               Value bias) {
  auto type = cast<RankedTensorType>(y.getType());
  Type sumType = type.getElementType();
  if (bias) {
    if (sumType != elt)
      bias = ConvertOp::create(
          b, loc, tensorOf(cast<RankedTensorType>(bias.getType()).getShape(),
                           sumType),
          bias);
    y = BiasAddOp::create(b, loc, y.getType(), y, bias);
  }
  if (sumType != elt)
    y = ConvertOp::create(b, loc, tensorOf(type.getShape(), elt), y);
  return y;
}

Value sd::reduceRowBlocks(OpBuilder &b, Location loc, Value partials,
                          ChunkAttr rowBlocks, int64_t batch, int64_t n,
                          Type elt, Value bias) {
  Type sumType = partialSumType(elt);
  Value y = ReduceScatterOp::create(b, loc, tensorOf({batch, n}, sumType),
                                    partials, rowBlocks);
  return finishPartialSums(b, loc, y, elt, bias);
}

Value sd::allReduceRows(OpBuilder &b, Location loc, Value partials,
                        int64_t worldSize, Type elt, Value bias) {
  Value y = AllReduceOp::create(b, loc, partials.getType(), partials,
                                static_cast<uint64_t>(worldSize));
  return finishPartialSums(b, loc, y, elt, bias);
}

void sd::annotateLowering(Operation *gemm, StringRef strategy,
                          const ::shardlin::StrategyCost *cost,
                          int64_t assumedRows) {
  Builder b(gemm->getContext());
  SmallVector<NamedAttribute> fields;
  auto i64s = [&](const std::vector<uint64_t> &v) {
    SmallVector<int64_t> out(v.begin(), v.end());
    return b.getDenseI64ArrayAttr(out);
  };
  fields.push_back(b.getNamedAttr("strategy", b.getStringAttr(strategy)));
  if (cost) {
    fields.push_back(b.getNamedAttr("bytes_sent", i64s(cost->bytesSent)));
    fields.push_back(
        b.getNamedAttr("bytes_received", i64s(cost->bytesReceived)));
    fields.push_back(
        b.getNamedAttr("peak_extra_bytes", i64s(cost->peakExtraBytes)));
    fields.push_back(
        b.getNamedAttr("estimated_us", b.getF64FloatAttr(cost->estimatedUs)));
    // The batch dims were dynamic: the figures are for this many rows.
    if (assumedRows > 0)
      fields.push_back(
          b.getNamedAttr("assumed_rows", b.getI64IntegerAttr(assumedRows)));
  }
  gemm->setAttr("shardlin.lowering", b.getDictionaryAttr(fields));
}
