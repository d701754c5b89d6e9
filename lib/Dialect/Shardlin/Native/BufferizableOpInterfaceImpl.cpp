//===- BufferizableOpInterfaceImpl.cpp - Bufferizing the shardlin ops -----===//
//
// One-Shot Bufferize models of the shardlin tensor ops (docs/native.md):
//
// - all_gather, all_to_all, reduce_scatter, all_reduce, gemm, convert,
//   sum_rows and gather_bounds write a new buffer: bufferize allocates it
//   (identity layout, its `?` sizes from the input buffers' dims and, for a
//   rank's chunk, from shardlin.rank and the chunk spec, or from the bounds
//   of a dim known only at run time) and emits the op's `shardlin.buffer.*`
//   form writing into it.
//   The collective or GEMM writes its result there directly: no copy.
// - bias_add writes into its input's buffer (the runtime's bias_add may work
//   in place), so a lowered linear adds its bias into the reduce_scatter's
//   buffer; the analysis copies first only where the input is read later or
//   not writable.
// - attention, attention_grad and rope write a new buffer through their
//   buffer forms (shardlin_attention(_grad), shardlin_rope: the plan
//   executor's kernels).
// - local_chunk and local_slice are memref.subviews of their source: no
//   data moves. local_place (local_slice's adjoint) writes a new buffer:
//   a linalg.fill of zero, then a linalg.copy of its source into the
//   subview of the rank's range (loops, no runtime call).
// - local_shard and linear cannot be bufferized: shardlin-localize-sharded and
//   --lower-sharded-linear remove them first, and bufferizing one says so.
//
//===----------------------------------------------------------------------===//

#include "shardlin/Dialect/Shardlin/IR/ChunkArith.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinDialect.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"
#include "shardlin/Dialect/Shardlin/Native/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace mlir::shardlin;

namespace {

/// The size of dim `d` of `buffer` as an index value.
Value dimValue(OpBuilder &b, Location loc, Value buffer, int64_t d) {
  return getValueOrCreateConstantIndexOp(
      b, loc, memref::getMixedSize(b, loc, buffer, d));
}

/// The identity-layout type of a new buffer for `value` (a tensor result).
FailureOr<BufferLikeType> newBufferType(Value value,
                                        const BufferizationOptions &options) {
  auto tensorType = cast<RankedTensorType>(value.getType());
  std::optional<Attribute> memorySpace =
      options.defaultMemorySpaceFn(tensorType);
  if (!memorySpace)
    return getOwnerOfValue(value)->emitError(
        "could not infer the memory space of its result buffer");
  return cast<BufferLikeType>(
      getMemRefTypeWithStaticIdentityLayout(tensorType, *memorySpace));
}

/// The model of an op that reads its tensor operands and writes its one
/// result into a new buffer. `Derived` provides
///   SmallVector<Value> dynamicSizes(OpTy, OpBuilder &, ArrayRef<Value>)
///     the result's `?` sizes, given the operands' buffers in order;
///   void build(OpTy, OpBuilder &, ArrayRef<Value> buffers, Value output)
///     the op's buffer form writing into `output`.
/// The analysis queries of an op that reads its tensor operands, writes none
/// of them and whose results alias none of them.
template <typename Derived, typename OpTy>
struct ReadsOperandsModel
    : public BufferizableOpInterface::ExternalModel<Derived, OpTy> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }

  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }

  AliasingValueList getAliasingValues(Operation *, OpOperand &,
                                      const AnalysisState &) const {
    return {};
  }
};

template <typename Derived, typename OpTy>
struct WritesNewBufferModel : public ReadsOperandsModel<Derived, OpTy> {
  bool bufferizesToAllocation(Operation *, Value) const { return true; }

  /// What the buffer form cannot do for this op, as an error (a Derived
  /// with limits hides this).
  static LogicalResult checkSupported(OpTy) { return success(); }

  FailureOr<BufferLikeType>
  getBufferType(Operation *, Value value, const BufferizationOptions &options,
                const BufferizationState &, SmallVector<Value> &) const {
    return newBufferType(value, options);
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto concrete = cast<OpTy>(op);
    if (failed(Derived::checkSupported(concrete)))
      return failure();
    Location loc = op->getLoc();
    SmallVector<Value> buffers;
    for (Value operand : op->getOperands()) {
      FailureOr<Value> buffer = getBuffer(rewriter, operand, options, state);
      if (failed(buffer))
        return failure();
      buffers.push_back(*buffer);
    }
    FailureOr<BufferLikeType> type =
        newBufferType(op->getResult(0), options);
    if (failed(type))
      return failure();
    SmallVector<Value> sizes =
        Derived::dynamicSizes(concrete, rewriter, buffers);
    FailureOr<Value> output =
        options.createAlloc(rewriter, loc, cast<MemRefType>(*type), sizes);
    if (failed(output))
      return failure();
    Derived::build(concrete, rewriter, buffers, *output);
    replaceOpWithBufferizedValues(rewriter, op, *output);
    return success();
  }
};

/// `bounds[i]` (a buffer of shardlin.gather_bounds) as an index.
Value loadBound(OpBuilder &b, Location loc, Value bounds, Value i) {
  Value v = memref::LoadOp::create(b, loc, bounds, ValueRange{i});
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
}

/// The size of a dim stacked from every rank's block under `bounds`: the
/// last bound.
Value stackedSize(OpBuilder &b, Location loc, ChunkAttr chunk, Value bounds) {
  return loadBound(
      b, loc, bounds,
      arith::ConstantIndexOp::create(b, loc, chunk.getNumChunks()));
}

/// The size of the calling rank's chunk under `bounds`: bounds[c + 1] -
/// bounds[c] for its chunk c (the entry's world-size check keeps c < W).
Value boundedChunkSize(OpBuilder &b, Location loc, ChunkAttr chunk,
                       Value bounds) {
  Value rank = b.createOrFold<RankOp>(
      loc, b.getIndexType(), static_cast<uint64_t>(chunk.getNumChunks()));
  Value c = buildChunkOfRank(b, loc, chunk, rank);
  Value next = arith::AddIOp::create(b, loc, c,
                                     arith::ConstantIndexOp::create(b, loc, 1));
  return arith::SubIOp::create(b, loc, loadBound(b, loc, bounds, next),
                               loadBound(b, loc, bounds, c));
}

/// The buffer of `op`'s operand `v` (null for null), given the buffers of
/// its operands in order.
Value bufferOf(Operation *op, ArrayRef<Value> buffers, Value v) {
  if (!v)
    return Value();
  for (auto [operand, buffer] : llvm::zip(op->getOperands(), buffers))
    if (operand == v)
      return buffer;
  return Value();
}

/// The `?` dims of `result`: input dim `chunked` (>= 0) is split by `split`
/// and the rank gets its chunk (from `splitBounds` if given, else by the
/// chunk rule); dim `stacked` (>= 0) is every rank's block under
/// `stackBounds`; every other dim is the input buffer's own (collectives
/// keep it). A dim gathered whole and static needs nothing.
SmallVector<Value> collectiveSizes(OpBuilder &b, Location loc, Value input,
                                   RankedTensorType result, int64_t chunked,
                                   ChunkAttr split, Value splitBounds,
                                   int64_t stacked, ChunkAttr stack,
                                   Value stackBounds) {
  auto inType = cast<MemRefType>(input.getType());
  SmallVector<Value> sizes;
  for (int64_t d = 0, e = result.getRank(); d < e; ++d) {
    if (!result.isDynamicDim(d))
      continue;
    if (d == chunked && splitBounds) {
      sizes.push_back(boundedChunkSize(b, loc, split, splitBounds));
      continue;
    }
    if (d == chunked) {
      ChunkRangeValues range =
          buildLocalChunkRange(b, loc, split, inType.getDimSize(d));
      sizes.push_back(getValueOrCreateConstantIndexOp(b, loc, range.size));
      continue;
    }
    if (d == stacked) {
      sizes.push_back(stackedSize(b, loc, stack, stackBounds));
      continue;
    }
    sizes.push_back(dimValue(b, loc, input, d));
  }
  return sizes;
}

/// A collective that stacks a dim from every rank's blocks (all_gather's
/// along dim, all_to_all's concat dim) sizes its buffer from this rank's
/// values alone: a dynamic one needs the bounds that shardlin-prepare-native
/// exchanges.
LogicalResult checkStackedDim(Operation *op, Type type, int64_t dim,
                              Value bounds) {
  if (bounds || !cast<ShapedType>(type).isDynamicDim(dim))
    return success();
  return op->emitError()
         << "stacks every rank's blocks along dim " << dim
         << " of its result " << type
         << ", whose size is known only at run time, and has no bounds "
            "operand: run shardlin-prepare-native first (or the whole "
            "--shardlin-lower-to-llvm pipeline), which exchanges the ranks' "
            "sizes";
}

/// A collective that splits a dynamic dim into the ranks' chunks
/// (reduce_scatter, all_to_all's split dim) must know the blocks it was
/// stacked from: shardlin-prepare-native finds them where a collective of the same
/// function stacked those rows.
LogicalResult checkSplitDim(Operation *op, Type type, int64_t dim,
                            Value bounds) {
  if (bounds || !cast<ShapedType>(type).isDynamicDim(dim))
    return success();
  return op->emitError()
         << "splits dim " << dim << " of its input " << type
         << ", whose size is known only at run time, into the ranks' "
            "chunks, but those rows were not stacked by a collective of this "
            "function (shardlin-prepare-native gives the bounds of stacked rows, "
            "carried through gemm, bias_add, convert and elementwise ops): "
            "the native path does not split a run-time size by the chunk "
            "rule; run it with the plan executor (shardlin-run without "
            "--jit)";
}

struct AllGatherModel : WritesNewBufferModel<AllGatherModel, AllGatherOp> {
  static LogicalResult checkSupported(AllGatherOp op) {
    return checkStackedDim(op, op.getType(), op.getAlong().getDim(),
                           op.getBounds());
  }
  static SmallVector<Value> dynamicSizes(AllGatherOp op, OpBuilder &b,
                                         ArrayRef<Value> buffers) {
    // The gathered dim is whole: static, or the last of the bounds.
    return collectiveSizes(b, op.getLoc(), buffers[0], op.getType(),
                           /*chunked=*/-1, op.getAlong(), Value(),
                           op.getAlong().getDim(), op.getAlong(),
                           bufferOf(op, buffers, op.getBounds()));
  }
  static void build(AllGatherOp op, OpBuilder &b, ArrayRef<Value> buffers,
                    Value output) {
    BufferAllGatherOp::create(b, op.getLoc(), buffers[0], output,
                              bufferOf(op, buffers, op.getBounds()),
                              op.getAlong());
  }
};

struct AllToAllModel : WritesNewBufferModel<AllToAllModel, AllToAllOp> {
  static LogicalResult checkSupported(AllToAllOp op) {
    if (failed(checkStackedDim(op, op.getType(), op.getConcat().getDim(),
                               op.getConcatBounds())))
      return failure();
    return checkSplitDim(op, op->getOperand(0).getType(),
                         op.getSplit().getDim(), op.getSplitBounds());
  }
  static SmallVector<Value> dynamicSizes(AllToAllOp op, OpBuilder &b,
                                         ArrayRef<Value> buffers) {
    // The split dim is the rank's chunk of the input's; the concat dim is
    // whole.
    return collectiveSizes(b, op.getLoc(), buffers[0], op.getType(),
                           op.getSplit().getDim(), op.getSplit(),
                           bufferOf(op, buffers, op.getSplitBounds()),
                           op.getConcat().getDim(), op.getConcat(),
                           bufferOf(op, buffers, op.getConcatBounds()));
  }
  static void build(AllToAllOp op, OpBuilder &b, ArrayRef<Value> buffers,
                    Value output) {
    BufferAllToAllOp::create(b, op.getLoc(), buffers[0], output,
                             bufferOf(op, buffers, op.getSplitBounds()),
                             bufferOf(op, buffers, op.getConcatBounds()),
                             op.getSplit(), op.getConcat());
  }
};

struct ReduceScatterModel
    : WritesNewBufferModel<ReduceScatterModel, ReduceScatterOp> {
  static LogicalResult checkSupported(ReduceScatterOp op) {
    return checkSplitDim(op, op->getOperand(0).getType(),
                         op.getAlong().getDim(), op.getBounds());
  }
  static SmallVector<Value> dynamicSizes(ReduceScatterOp op, OpBuilder &b,
                                         ArrayRef<Value> buffers) {
    return collectiveSizes(b, op.getLoc(), buffers[0], op.getType(),
                           op.getAlong().getDim(), op.getAlong(),
                           bufferOf(op, buffers, op.getBounds()),
                           /*stacked=*/-1, op.getAlong(), Value());
  }
  static void build(ReduceScatterOp op, OpBuilder &b, ArrayRef<Value> buffers,
                    Value output) {
    BufferReduceScatterOp::create(b, op.getLoc(), buffers[0], output,
                                  bufferOf(op, buffers, op.getBounds()),
                                  op.getAlong());
  }
};

/// gather_bounds: its W + 1 bounds into a new buffer.
struct GatherBoundsModel
    : WritesNewBufferModel<GatherBoundsModel, GatherBoundsOp> {
  static SmallVector<Value> dynamicSizes(GatherBoundsOp, OpBuilder &,
                                         ArrayRef<Value>) {
    return {};
  }
  static void build(GatherBoundsOp op, OpBuilder &b, ArrayRef<Value> buffers,
                    Value output) {
    BufferGatherBoundsOp::create(b, op.getLoc(), buffers[0], output,
                                 op.getAlong());
  }
};

struct GemmModel : WritesNewBufferModel<GemmModel, GemmOp> {
  static SmallVector<Value> dynamicSizes(GemmOp op, OpBuilder &b,
                                         ArrayRef<Value> buffers) {
    // m from lhs, n from rhs, each through its transpose flag.
    RankedTensorType result = op.getType();
    SmallVector<Value> sizes;
    if (result.isDynamicDim(0))
      sizes.push_back(
          dimValue(b, op.getLoc(), buffers[0], op.getTransposeLhs() ? 1 : 0));
    if (result.isDynamicDim(1))
      sizes.push_back(
          dimValue(b, op.getLoc(), buffers[1], op.getTransposeRhs() ? 0 : 1));
    return sizes;
  }
  static void build(GemmOp op, OpBuilder &b, ArrayRef<Value> buffers,
                    Value output) {
    Value bias = op.getBias() ? buffers[2] : Value();
    BufferGemmOp::create(b, op.getLoc(), buffers[0], buffers[1], bias, output,
                         op.getTransposeLhs(), op.getTransposeRhs());
  }
};

/// The `?` dims of a result of its input's shape, from the input buffer.
SmallVector<Value> inputShapeSizes(OpBuilder &b, Location loc,
                                   RankedTensorType result, Value input) {
  SmallVector<Value> sizes;
  for (int64_t d = 0, e = result.getRank(); d < e; ++d)
    if (result.isDynamicDim(d))
      sizes.push_back(dimValue(b, loc, input, d));
  return sizes;
}

struct AllReduceModel : WritesNewBufferModel<AllReduceModel, AllReduceOp> {
  static SmallVector<Value> dynamicSizes(AllReduceOp op, OpBuilder &b,
                                         ArrayRef<Value> buffers) {
    return inputShapeSizes(b, op.getLoc(),
                           cast<RankedTensorType>(op.getType()), buffers[0]);
  }
  static void build(AllReduceOp op, OpBuilder &b, ArrayRef<Value> buffers,
                    Value output) {
    BufferAllReduceOp::create(b, op.getLoc(), buffers[0], output,
                              op.getWorldSize());
  }
};

struct ConvertModel : WritesNewBufferModel<ConvertModel, ConvertOp> {
  static SmallVector<Value> dynamicSizes(ConvertOp op, OpBuilder &b,
                                         ArrayRef<Value> buffers) {
    return inputShapeSizes(b, op.getLoc(), op.getType(), buffers[0]);
  }
  static void build(ConvertOp op, OpBuilder &b, ArrayRef<Value> buffers,
                    Value output) {
    BufferConvertOp::create(b, op.getLoc(), buffers[0], output);
  }
};

struct SumRowsModel : WritesNewBufferModel<SumRowsModel, SumRowsOp> {
  static SmallVector<Value> dynamicSizes(SumRowsOp op, OpBuilder &b,
                                         ArrayRef<Value> buffers) {
    if (!op.getType().isDynamicDim(0))
      return {};
    return {dimValue(b, op.getLoc(), buffers[0], 1)};
  }
  static void build(SumRowsOp op, OpBuilder &b, ArrayRef<Value> buffers,
                    Value output) {
    BufferSumRowsOp::create(b, op.getLoc(), buffers[0], output);
  }
};

/// attention and attention_grad: their buffer forms, the attributes as
/// they are.
struct AttentionModel : WritesNewBufferModel<AttentionModel, AttentionOp> {
  static SmallVector<Value> dynamicSizes(AttentionOp op, OpBuilder &b,
                                         ArrayRef<Value> buffers) {
    return inputShapeSizes(b, op.getLoc(), op.getType(), buffers[0]);
  }
  static void build(AttentionOp op, OpBuilder &b, ArrayRef<Value> buffers,
                    Value output) {
    BufferAttentionOp::create(b, op.getLoc(), buffers[0], buffers[1],
                              buffers[2], bufferOf(op, buffers, op.getMask()),
                              output, op.getHeadDimAttr(), op.getScaleAttr(),
                              op.getCausalAttr(), op.getGroupAttr(),
                              op.getQHeadsAttr(), op.getKvHeadsAttr());
  }
};

struct AttentionGradModel
    : WritesNewBufferModel<AttentionGradModel, AttentionGradOp> {
  static SmallVector<Value> dynamicSizes(AttentionGradOp op, OpBuilder &b,
                                         ArrayRef<Value> buffers) {
    // dq has q's shape, dk and dv k's.
    return inputShapeSizes(b, op.getLoc(), op.getType(),
                           buffers[op.getWrt() == "q" ? 0 : 1]);
  }
  static void build(AttentionGradOp op, OpBuilder &b, ArrayRef<Value> buffers,
                    Value output) {
    BufferAttentionGradOp::create(
        b, op.getLoc(), buffers[0], buffers[1], buffers[2], buffers[3],
        bufferOf(op, buffers, op.getMask()), output, op.getWrtAttr(),
        op.getHeadDimAttr(), op.getScaleAttr(), op.getCausalAttr(),
        op.getGroupAttr(), op.getQHeadsAttr(), op.getKvHeadsAttr());
  }
};

struct RopeModel : WritesNewBufferModel<RopeModel, RopeOp> {
  static SmallVector<Value> dynamicSizes(RopeOp op, OpBuilder &b,
                                         ArrayRef<Value> buffers) {
    return inputShapeSizes(b, op.getLoc(), op.getType(), buffers[0]);
  }
  static void build(RopeOp op, OpBuilder &b, ArrayRef<Value> buffers,
                    Value output) {
    BufferRopeOp::create(b, op.getLoc(), buffers[0], buffers[1], buffers[2],
                         output, op.getHeadDimAttr(), op.getInverseAttr());
  }
};

/// bias_add: in place, into its input's buffer.
struct BiasAddModel
    : public BufferizableOpInterface::ExternalModel<BiasAddModel, BiasAddOp> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }

  bool bufferizesToMemoryWrite(Operation *op, OpOperand &operand,
                               const AnalysisState &) const {
    return operand.get() == cast<BiasAddOp>(op).getInput();
  }

  AliasingValueList getAliasingValues(Operation *op, OpOperand &operand,
                                      const AnalysisState &) const {
    if (operand.get() != cast<BiasAddOp>(op).getInput())
      return {};
    return {{op->getResult(0), BufferRelation::Equivalent}};
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto biasAdd = cast<BiasAddOp>(op);
    Location loc = op->getLoc();
    FailureOr<Value> input =
        getBuffer(rewriter, biasAdd.getInput(), options, state);
    FailureOr<Value> bias =
        getBuffer(rewriter, biasAdd.getBias(), options, state);
    if (failed(input) || failed(bias))
      return failure();
    FailureOr<RowsView> rows = rowsView(rewriter, loc, *input, options);
    if (failed(rows))
      return failure();
    BufferBiasAddOp::create(rewriter, loc, rows->rows, *bias, rows->rows);
    if (rows->copy)
      memref::CopyOp::create(rewriter, loc, rows->copy, *input);
    replaceOpWithBufferizedValues(rewriter, op, *input);
    return success();
  }

private:
  struct RowsView {
    Value rows;
    /// The contiguous copy `rows` views, to copy back; null if `rows` views
    /// the buffer itself.
    Value copy;
  };

  /// `buffer` as rows x cols (the C ABI's bias_add is 2-D): itself when
  /// 2-D, 1 x n for a vector, leading dims collapsed for N-D. A strided N-D
  /// buffer whose leading dims cannot be collapsed into one is copied into a
  /// new buffer, which bufferize copies back after the add.
  static FailureOr<RowsView> rowsView(OpBuilder &b, Location loc,
                                      Value buffer,
                                      const BufferizationOptions &options) {
    auto type = cast<MemRefType>(buffer.getType());
    int64_t rank = type.getRank();
    if (rank == 2)
      return RowsView{buffer, Value()};
    if (rank == 1) {
      SmallVector<int64_t> shape = {1, type.getDimSize(0)};
      FailureOr<MemRefType> expanded = memref::ExpandShapeOp::computeExpandedType(
          type, shape, {ReassociationIndices{0, 1}});
      if (failed(expanded))
        return failure();
      SmallVector<OpFoldResult> outputShape = {
          b.getIndexAttr(1), memref::getMixedSize(b, loc, buffer, 0)};
      Value rows = memref::ExpandShapeOp::create(
          b, loc, *expanded, buffer, {ReassociationIndices{0, 1}}, outputShape);
      return RowsView{rows, Value()};
    }
    ReassociationIndices leading;
    for (int64_t d = 0; d + 1 < rank; ++d)
      leading.push_back(d);
    SmallVector<ReassociationIndices> groups = {leading, {rank - 1}};
    Value source = buffer, copy;
    if (!memref::CollapseShapeOp::isGuaranteedCollapsible(type, groups)) {
      SmallVector<Value> sizes;
      for (int64_t d = 0; d < rank; ++d)
        if (type.isDynamicDim(d))
          sizes.push_back(dimValue(b, loc, buffer, d));
      auto contiguous = MemRefType::get(type.getShape(), type.getElementType(),
                                        MemRefLayoutAttrInterface(),
                                        type.getMemorySpace());
      FailureOr<Value> alloc = options.createAlloc(b, loc, contiguous, sizes);
      if (failed(alloc))
        return failure();
      memref::CopyOp::create(b, loc, buffer, *alloc);
      source = copy = *alloc;
    }
    Value rows = memref::CollapseShapeOp::create(b, loc, source, groups);
    return RowsView{rows, copy};
  }
};

/// A view of the op's source at the rank's range along one dim (no copy):
/// Derived says which source, which dim and the range (offset and size as
/// values of the rank).
template <typename Derived, typename OpT>
struct RankSubviewModel
    : public BufferizableOpInterface::ExternalModel<Derived, OpT> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return false;
  }

  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }

  AliasingValueList getAliasingValues(Operation *op, OpOperand &,
                                      const AnalysisState &) const {
    // Part of the source, as tensor.extract_slice.
    return {{op->getResult(0), BufferRelation::Unknown}};
  }

  FailureOr<BufferLikeType>
  getBufferType(Operation *op, Value, const BufferizationOptions &options,
                const BufferizationState &state,
                SmallVector<Value> &invocationStack) const {
    auto viewOp = cast<OpT>(op);
    FailureOr<BufferLikeType> source = bufferization::getBufferType(
        viewOp.getSource(), options, state, invocationStack);
    if (failed(source))
      return failure();
    auto sourceType = dyn_cast<MemRefType>(*source);
    if (!sourceType)
      return op->emitError("expected a ranked memref source");
    // The same static pattern as bufferize builds: a dynamic offset on the
    // viewed dim, the result's sizes.
    int64_t rank = sourceType.getRank();
    SmallVector<int64_t> offsets(rank, 0), strides(rank, 1);
    offsets[Derived::dim(viewOp)] = ShapedType::kDynamic;
    return cast<BufferLikeType>(memref::SubViewOp::inferResultType(
        sourceType, offsets, viewOp.getType().getShape(), strides));
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto viewOp = cast<OpT>(op);
    Location loc = op->getLoc();
    FailureOr<Value> source =
        getBuffer(rewriter, viewOp.getSource(), options, state);
    if (failed(source))
      return failure();
    auto sourceType = cast<MemRefType>(source->getType());
    int64_t rank = sourceType.getRank();
    int64_t dim = Derived::dim(viewOp);
    ChunkRangeValues range =
        Derived::range(viewOp, rewriter, loc, sourceType.getDimSize(dim));
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
    SmallVector<OpFoldResult> sizes;
    for (int64_t d = 0; d < rank; ++d)
      sizes.push_back(d == dim
                          ? range.size
                          : memref::getMixedSize(rewriter, loc, *source, d));
    offsets[dim] = range.offset;
    auto type =
        memref::SubViewOp::inferResultType(sourceType, offsets, sizes, strides);
    Value view = memref::SubViewOp::create(rewriter, loc, type, *source,
                                           offsets, sizes, strides);
    replaceOpWithBufferizedValues(rewriter, op, view);
    return success();
  }
};

/// local_chunk: a subview of its source at the rank's chunk.
struct LocalChunkModel : RankSubviewModel<LocalChunkModel, LocalChunkOp> {
  static int64_t dim(LocalChunkOp op) { return op.getAlong().getDim(); }
  static ChunkRangeValues range(LocalChunkOp op, RewriterBase &rewriter,
                                Location loc, int64_t dimSize) {
    return buildLocalChunkRange(rewriter, loc, op.getAlong(), dimSize);
  }
};

/// local_slice: a subview of its source at the rank's range (the ranges
/// may overlap: each rank reads its own view of a replicated buffer).
struct LocalSliceModel : RankSubviewModel<LocalSliceModel, LocalSliceOp> {
  static int64_t dim(LocalSliceOp op) { return op.getDim(); }
  static ChunkRangeValues range(LocalSliceOp op, RewriterBase &rewriter,
                                Location loc, int64_t) {
    Value rankValue = rewriter.createOrFold<RankOp>(
        loc, rewriter.getIndexType(),
        static_cast<uint64_t>(op.getNumRanks()));
    return buildRankTableRange(rewriter, loc, op.getRanges(), rankValue);
  }
};

/// local_place: a new buffer of the result's type (its `?` dims are the
/// source's: only the placed dim differs, and it is static), zero-filled,
/// and the source copied into the subview at the rank's range.
struct LocalPlaceModel : WritesNewBufferModel<LocalPlaceModel, LocalPlaceOp> {
  static SmallVector<Value> dynamicSizes(LocalPlaceOp op, OpBuilder &b,
                                         ArrayRef<Value> buffers) {
    SmallVector<Value> sizes;
    for (int64_t d = 0, e = op.getType().getRank(); d < e; ++d)
      if (op.getType().isDynamicDim(d))
        sizes.push_back(dimValue(b, op.getLoc(), buffers[0], d));
    return sizes;
  }
  static void build(LocalPlaceOp op, OpBuilder &b, ArrayRef<Value> buffers,
                    Value output) {
    Location loc = op.getLoc();
    auto outType = cast<MemRefType>(output.getType());
    Value zero = arith::ConstantOp::create(
        b, loc, b.getZeroAttr(outType.getElementType()));
    linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{output});
    Value rankValue = b.createOrFold<RankOp>(
        loc, b.getIndexType(), static_cast<uint64_t>(op.getNumRanks()));
    ChunkRangeValues range =
        buildRankTableRange(b, loc, op.getRanges(), rankValue);
    const int64_t rank = outType.getRank(), dim = op.getDim();
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
    SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
    SmallVector<OpFoldResult> sizes;
    for (int64_t d = 0; d < rank; ++d)
      sizes.push_back(d == dim ? range.size
                               : memref::getMixedSize(b, loc, output, d));
    offsets[dim] = range.offset;
    auto type =
        memref::SubViewOp::inferResultType(outType, offsets, sizes, strides);
    Value view = memref::SubViewOp::create(b, loc, type, output, offsets,
                                           sizes, strides);
    // A linalg.copy, not memref.copy: the view is strided, and
    // convert-linalg-to-loops makes loops of it (memref.copy of a strided
    // view would call the runner utils' memrefCopy).
    linalg::CopyOp::create(b, loc, ValueRange{buffers[0]}, ValueRange{view});
  }
};

/// local_shard and linear: removed before bufferization by the pass named in
/// the error.
template <typename OpTy>
struct NotBufferizableModel
    : public ReadsOperandsModel<NotBufferizableModel<OpTy>, OpTy> {
  LogicalResult bufferize(Operation *op, RewriterBase &,
                          const BufferizationOptions &,
                          BufferizationState &) const {
    if (isa<LinearOp>(op))
      return op->emitOpError(
          "cannot be bufferized: lower it first (run --lower-sharded-linear)");
    return op->emitOpError("cannot be bufferized: its sharded operand must "
                           "first become the rank's local tensor (run "
                           "--shardlin-localize-sharded)");
  }
};

} // namespace

void mlir::shardlin::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, ShardlinDialect *) {
    AllGatherOp::attachInterface<AllGatherModel>(*ctx);
    AllToAllOp::attachInterface<AllToAllModel>(*ctx);
    ReduceScatterOp::attachInterface<ReduceScatterModel>(*ctx);
    GatherBoundsOp::attachInterface<GatherBoundsModel>(*ctx);
    AllReduceOp::attachInterface<AllReduceModel>(*ctx);
    GemmOp::attachInterface<GemmModel>(*ctx);
    ConvertOp::attachInterface<ConvertModel>(*ctx);
    SumRowsOp::attachInterface<SumRowsModel>(*ctx);
    BiasAddOp::attachInterface<BiasAddModel>(*ctx);
    LocalChunkOp::attachInterface<LocalChunkModel>(*ctx);
    AttentionOp::attachInterface<AttentionModel>(*ctx);
    AttentionGradOp::attachInterface<AttentionGradModel>(*ctx);
    RopeOp::attachInterface<RopeModel>(*ctx);
    LocalSliceOp::attachInterface<LocalSliceModel>(*ctx);
    LocalPlaceOp::attachInterface<LocalPlaceModel>(*ctx);
    LocalShardOp::attachInterface<NotBufferizableModel<LocalShardOp>>(*ctx);
    LinearOp::attachInterface<NotBufferizableModel<LinearOp>>(*ctx);
    // The ops the bufferization creates.
    ctx->loadDialect<memref::MemRefDialect, arith::ArithDialect,
                     linalg::LinalgDialect>();
  });
}
