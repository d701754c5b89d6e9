//===- ExpandShapeToReinterpretCast.cpp - Around an upstream crash --------===//
//
// MLIR 22's --expand-strided-metadata crashes on a memref.expand_shape that
// splits one dim into several dynamic ones (Native/Passes.td says which). The
// expansion is a view with computable strides, so it is written here as the
// reinterpret_cast that the upstream pattern would have built.
//
//===----------------------------------------------------------------------===//

#include "shardlin/Dialect/Shardlin/Native/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::shardlin {
#define GEN_PASS_DEF_EXPANDSHAPETOREINTERPRETCAST
#include "shardlin/Dialect/Shardlin/Native/Passes.h.inc"
} // namespace mlir::shardlin

using namespace mlir;
using namespace mlir::shardlin;

namespace {

/// Whether a group of `op` has two or more dynamic output sizes: the form
/// upstream's pattern crashes on.
bool splitsIntoSeveralDynamicDims(memref::ExpandShapeOp op) {
  ArrayRef<int64_t> shape = op.getResultType().getShape();
  for (const ReassociationIndices &group : op.getReassociationIndices())
    if (llvm::count_if(group, [&](int64_t d) {
          return ShapedType::isDynamic(shape[d]);
        }) > 1)
      return true;
  return false;
}

/// a * b, folded when both are constants.
OpFoldResult multiply(OpBuilder &b, Location loc, OpFoldResult x,
                      OpFoldResult y) {
  std::optional<int64_t> cx = getConstantIntValue(x);
  std::optional<int64_t> cy = getConstantIntValue(y);
  if (cx && cy)
    return b.getIndexAttr(*cx * *cy);
  if (cx == 1)
    return y;
  if (cy == 1)
    return x;
  Value vx = getValueOrCreateConstantIndexOp(b, loc, x);
  Value vy = getValueOrCreateConstantIndexOp(b, loc, y);
  return arith::MulIOp::create(b, loc, vx, vy).getResult();
}

/// `value` where the type says `fixed` is dynamic, else `fixed`: a
/// reinterpret_cast must give the static offsets and strides of its result
/// type as such.
OpFoldResult staticOr(Builder &b, int64_t fixed, OpFoldResult value) {
  return ShapedType::isDynamic(fixed) ? value : b.getIndexAttr(fixed);
}

struct ExpandShapeAsCast : OpRewritePattern<memref::ExpandShapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(memref::ExpandShapeOp op,
                                PatternRewriter &rewriter) const override {
    if (!splitsIntoSeveralDynamicDims(op))
      return failure();
    MemRefType source = op.getSrcType();
    MemRefType result = op.getResultType();
    auto [sourceStrides, sourceOffset] = source.getStridesAndOffset();
    auto [resultStrides, resultOffset] = result.getStridesAndOffset();
    Location loc = op.getLoc();
    auto meta =
        memref::ExtractStridedMetadataOp::create(rewriter, loc, op.getSrc());
    SmallVector<OpFoldResult> sizes = op.getMixedOutputShape();
    SmallVector<OpFoldResult> strides(sizes.size());
    for (auto [sourceDim, group] :
         llvm::enumerate(op.getReassociationIndices())) {
      OpFoldResult stride =
          staticOr(rewriter, sourceStrides[sourceDim],
                   meta.getStrides()[sourceDim]);
      for (int64_t d : llvm::reverse(group)) {
        strides[d] = staticOr(rewriter, resultStrides[d], stride);
        stride = multiply(rewriter, loc, stride, sizes[d]);
      }
    }
    OpFoldResult offset = staticOr(
        rewriter, resultOffset, staticOr(rewriter, sourceOffset,
                                         meta.getOffset()));
    rewriter.replaceOpWithNewOp<memref::ReinterpretCastOp>(
        op, result, meta.getBaseBuffer(), offset, sizes, strides);
    return success();
  }
};

struct ExpandShapeToReinterpretCastPass
    : public mlir::shardlin::impl::ExpandShapeToReinterpretCastBase<
          ExpandShapeToReinterpretCastPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandShapeAsCast>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
