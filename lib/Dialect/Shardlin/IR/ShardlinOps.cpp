//===- ShardlinOps.cpp - shardlin operations ------------------------------===//
//
// Verifiers. Every message names the values involved, because users read them
// against IR that a tool generated. Element types are checked before these
// run, by the ODS constraints (Shardlin_Tensor, and the sharded type's own
// verifier); the verifiers here check only that they agree.
//
//===----------------------------------------------------------------------===//

#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"

#include "Verification.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"

#include <string>

using namespace mlir;
using namespace mlir::shardlin;
using namespace mlir::shardlin::detail;

std::string mlir::shardlin::detail::formatDim(int64_t d) {
  return ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d);
}

std::string mlir::shardlin::detail::formatShape(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (i)
      s += ", ";
    s += formatDim(d);
  }
  return s + "]";
}

LogicalResult mlir::shardlin::detail::checkNoEncoding(Operation *op, Type t,
                                                      StringRef what) {
  auto ranked = dyn_cast<RankedTensorType>(t);
  if (!ranked || !ranked.getEncoding())
    return success();
  return op->emitOpError() << what << " type " << t
                           << " has an encoding, which is not supported";
}

namespace {

/// Two dims are compatible if either is dynamic or they are equal.
bool compatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

LogicalResult checkChunkDim(Operation *op, ChunkAttr chunk, int64_t rank,
                            StringRef what) {
  if (chunk.getDim() < rank)
    return success();
  return op->emitOpError() << what << " chunk dim " << chunk.getDim()
                           << " is out of range for rank " << rank;
}

/// Checks that `local[dim]` is the local chunk size of `full[dim]` under
/// `chunk`. For a collective (`collective`), a dynamic `full[dim]` is
/// accepted with any `local[dim]`: rows of run-time sizes, stacked from
/// every rank's block, are split into those blocks (or, if they were not
/// stacked, by the chunk rule over the run-time size); the runtime checks
/// a static `local[dim]`. Otherwise `full[dim]` must be static.
/// `fullName`/`localName` say which operand is which.
LogicalResult checkChunkedShapes(Operation *op, ChunkAttr chunk,
                                 ArrayRef<int64_t> full,
                                 ArrayRef<int64_t> local, StringRef fullName,
                                 StringRef localName, int64_t dim,
                                 bool collective = true) {
  // Explicit chunk bounds split a static dim of exactly their extent.
  if (failed(chunk.verifyDimSize([&] { return op->emitOpError(); }, full[dim],
                                 (fullName + " dim " + Twine(dim)).str())))
    return failure();
  if (ShapedType::isDynamic(full[dim]) && collective)
    return success();
  if (ShapedType::isDynamic(full[dim]))
    return op->emitOpError()
           << fullName << " dim " << dim << " must be static (it is split by "
           << chunk << ")";
  int64_t expected = chunk.getLocalSize(full[dim]);
  if (local[dim] != expected)
    return op->emitOpError()
           << localName << " dim " << dim << " is " << formatDim(local[dim])
           << " but the local chunk of " << full[dim] << " over "
           << chunk.getNumChunks() << " ranks is " << formatDim(expected)
           << (ShapedType::isDynamic(expected) ? " (chunks are uneven)" : "");
  return success();
}

/// A `bounds` operand (`bounds` may be null: none) of a spec that splits
/// dim `dim` of `full`: the W + 1 i64 of shardlin.gather_bounds (a buffer of
/// identity layout), for a dynamic dim of a spec without bounds of its own.
LogicalResult checkBoundsOperand(Operation *op, ChunkAttr chunk, Value bounds,
                                 ArrayRef<int64_t> full, int64_t dim,
                                 StringRef what) {
  if (!bounds)
    return success();
  auto type = cast<ShapedType>(bounds.getType());
  int64_t expected = chunk.getNumChunks() + 1;
  auto memref = dyn_cast<MemRefType>(type);
  if (!type.hasStaticShape() || type.getDimSize(0) != expected ||
      (memref && !memref.getLayout().isIdentity()))
    return op->emitOpError()
           << what << " bounds " << type << " must be " << expected
           << " i64 (one more than the spec's " << chunk.getNumChunks()
           << " chunks" << (memref ? ", identity layout" : "") << ")";
  if (chunk.hasExplicitBounds())
    return op->emitOpError()
           << what << " spec " << chunk
           << " has bounds of its own and a bounds operand; give one";
  if (!ShapedType::isDynamic(full[dim]))
    return op->emitOpError()
           << what << " bounds operand is for a dim known only at run time, "
           << "but dim " << dim << " is " << full[dim];
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// LocalShardOp / LocalChunkOp
//===----------------------------------------------------------------------===//

LogicalResult FromLocalOp::verify() {
  RankedTensorType expected = getResult().getType().getLocalType();
  if (getSource().getType() != expected)
    return emitOpError() << "source type " << getSource().getType()
                         << " is not the local chunk type " << expected
                         << " of the result";
  return success();
}

LogicalResult LocalShardOp::verify() {
  RankedTensorType expected = getSource().getType().getLocalType();
  if (getResult().getType() != expected)
    return emitOpError() << "result type " << getResult().getType()
                         << " does not match the local chunk type "
                         << expected;
  return success();
}

OpFoldResult LocalShardOp::fold(FoldAdaptor) {
  if (auto from = getSource().getDefiningOp<FromLocalOp>())
    return from.getSource();
  return {};
}

LogicalResult LocalChunkOp::verify() {
  RankedTensorType src = getSource().getType();
  RankedTensorType res = getResult().getType();
  if (failed(checkChunkDim(*this, getAlong(), src.getRank(), "along")))
    return failure();
  if (src.getRank() != res.getRank())
    return emitOpError() << "source and result ranks differ ("
                         << src.getRank() << " vs " << res.getRank() << ")";
  int64_t d = getAlong().getDim();
  for (int64_t i = 0; i < src.getRank(); ++i)
    if (i != d && src.getShape()[i] != res.getShape()[i])
      return emitOpError() << "result dim " << i << " ("
                           << formatDim(res.getShape()[i])
                           << ") differs from source dim " << i << " ("
                           << formatDim(src.getShape()[i]) << ")";
  return checkChunkedShapes(*this, getAlong(), src.getShape(),
                            res.getShape(), "source", "result", d,
                            /*collective=*/false);
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// All dims except `skip` (one or two of them) must be equal. `out` names
/// the output: "result" for the tensor ops, "output" for their buffer forms.
static LogicalResult checkOtherDimsEqual(Operation *op, ArrayRef<int64_t> in,
                                         ArrayRef<int64_t> outShape,
                                         ArrayRef<int64_t> skip,
                                         StringRef out) {
  for (int64_t i = 0, e = in.size(); i < e; ++i) {
    if (llvm::is_contained(skip, i))
      continue;
    if (in[i] != outShape[i])
      return op->emitOpError()
             << "input dim " << i << " (" << formatDim(in[i]) << ") and "
             << out << " dim " << i << " (" << formatDim(outShape[i])
             << ") must be equal";
  }
  return success();
}

/// all_gather (`gathers`: the input is the rank's chunk of the output along
/// `along`) and reduce_scatter (the output is the rank's chunk of the
/// input): every other dim is equal.
static LogicalResult verifyAlongCollective(Operation *op, ChunkAttr along,
                                           Value bounds, ShapedType in,
                                           ShapedType outType, bool gathers,
                                           StringRef out) {
  if (failed(checkChunkDim(op, along, in.getRank(), "along")))
    return failure();
  int64_t d = along.getDim();
  if (failed(checkBoundsOperand(op, along, bounds,
                                (gathers ? outType : in).getShape(), d,
                                "along")))
    return failure();
  if (failed(checkOtherDimsEqual(op, in.getShape(), outType.getShape(), {d},
                                 out)))
    return failure();
  if (gathers)
    return checkChunkedShapes(op, along, outType.getShape(), in.getShape(),
                              out, "input", d);
  return checkChunkedShapes(op, along, in.getShape(), outType.getShape(),
                            "input", out, d);
}

static LogicalResult verifyAllToAll(Operation *op, ChunkAttr split,
                                    ChunkAttr concat, Value splitBounds,
                                    Value concatBounds, ShapedType in,
                                    ShapedType outType, StringRef out) {
  if (failed(checkChunkDim(op, split, in.getRank(), "split")) ||
      failed(checkChunkDim(op, concat, in.getRank(), "concat")))
    return failure();
  int64_t sd = split.getDim(), cd = concat.getDim();
  if (failed(checkBoundsOperand(op, split, splitBounds, in.getShape(), sd,
                                "split")) ||
      failed(checkBoundsOperand(op, concat, concatBounds, outType.getShape(),
                                cd, "concat")))
    return failure();
  if (sd == cd)
    return op->emitOpError()
           << "split and concat dims must differ, both are " << sd;
  if (split.getNumChunks() != concat.getNumChunks())
    return op->emitOpError()
           << "split has " << split.getNumChunks()
           << " chunks but concat has " << concat.getNumChunks();
  if (failed(checkOtherDimsEqual(op, in.getShape(), outType.getShape(),
                                 {sd, cd}, out)))
    return failure();
  if (failed(checkChunkedShapes(op, split, in.getShape(), outType.getShape(),
                                "input", out, sd)))
    return failure();
  return checkChunkedShapes(op, concat, outType.getShape(), in.getShape(), out,
                            "input", cd);
}

LogicalResult AllGatherOp::verify() {
  return verifyAlongCollective(*this, getAlong(), getBounds(),
                               getInput().getType(),
                               getResult().getType(), /*gathers=*/true,
                               "result");
}

LogicalResult AllToAllOp::verify() {
  return verifyAllToAll(*this, getSplit(), getConcat(), getSplitBounds(),
                        getConcatBounds(), getInput().getType(),
                        getResult().getType(), "result");
}

LogicalResult ReduceScatterOp::verify() {
  return verifyAlongCollective(*this, getAlong(), getBounds(),
                               getInput().getType(),
                               getResult().getType(), /*gathers=*/false,
                               "result");
}

/// gather_bounds and its buffer form: `output` holds W + 1 i64.
static LogicalResult verifyGatherBounds(Operation *op, ChunkAttr along,
                                        ShapedType in, ShapedType out) {
  if (failed(checkChunkDim(op, along, in.getRank(), "along")))
    return failure();
  int64_t expected = along.getNumChunks() + 1;
  auto memref = dyn_cast<MemRefType>(out);
  if (!out.hasStaticShape() || out.getDimSize(0) != expected ||
      (memref && !memref.getLayout().isIdentity()))
    return op->emitOpError()
           << "bounds " << out << " must be " << expected
           << " i64 (one more than the spec's " << along.getNumChunks()
           << " chunks" << (memref ? ", identity layout" : "") << ")";
  return success();
}

LogicalResult GatherBoundsOp::verify() {
  return verifyGatherBounds(*this, getAlong(), getInput().getType(),
                            getBounds().getType());
}

LogicalResult BufferGatherBoundsOp::verify() {
  return verifyGatherBounds(*this, getAlong(), getInput().getType(),
                            getOutput().getType());
}

//===----------------------------------------------------------------------===//
// GemmOp / BiasAddOp
//===----------------------------------------------------------------------===//

/// The rules of a gemm on the types of its operands (`bias` null if none);
/// `out` names the output.
static LogicalResult verifyGemm(Operation *op, ShapedType lhs, ShapedType rhs,
                                ShapedType bias, ShapedType res, bool tl,
                                bool tr, StringRef out) {
  if (lhs.getRank() != 2 || rhs.getRank() != 2 || res.getRank() != 2)
    return op->emitOpError()
           << "expects rank-2 lhs, rhs and " << out << ", got ranks "
           << lhs.getRank() << ", " << rhs.getRank() << " and "
           << res.getRank();
  Type elt = lhs.getElementType();
  Type resElt = res.getElementType();
  // The f32 result of f16/bf16 operands: a K split's partial products.
  const bool f32Result = resElt != elt && resElt.isF32() &&
                         (elt.isF16() || elt.isBF16());
  if (rhs.getElementType() != elt || (resElt != elt && !f32Result))
    return op->emitOpError()
           << "lhs and rhs must share one element type and the " << out
           << " must have it too, or be f32 when it is f16 or bf16; got "
           << elt << ", " << rhs.getElementType() << " and " << resElt;
  if (f32Result && bias)
    return op->emitOpError() << "an f32 " << out << " of " << elt
                             << " operands takes no bias (the bias of a K "
                                "split is added once, after the reduction)";
  int64_t m = lhs.getShape()[tl ? 1 : 0], kl = lhs.getShape()[tl ? 0 : 1];
  int64_t kr = rhs.getShape()[tr ? 1 : 0], n = rhs.getShape()[tr ? 0 : 1];
  if (!compatible(kl, kr))
    return op->emitOpError() << "contraction dims differ: lhs has "
                             << formatDim(kl) << ", rhs has " << formatDim(kr);
  if (!compatible(res.getShape()[0], m) || !compatible(res.getShape()[1], n))
    return op->emitOpError()
           << out << " shape " << formatShape(res.getShape())
           << " does not match [" << formatDim(m) << ", " << formatDim(n)
           << "]";
  if (bias) {
    if (bias.getRank() != 1)
      return op->emitOpError() << "expects a rank-1 bias, got " << bias;
    if (bias.getElementType() != elt)
      return op->emitOpError() << "bias element type "
                               << bias.getElementType() << " differs from "
                               << elt;
    if (!compatible(bias.getShape()[0], res.getShape()[1]))
      return op->emitOpError()
             << "bias size " << formatDim(bias.getShape()[0])
             << " does not match the " << out << "'s "
             << formatDim(res.getShape()[1]) << " columns";
  }
  return success();
}

LogicalResult GemmOp::verify() {
  Value bias = getBias();
  return verifyGemm(*this, getLhs().getType(), getRhs().getType(),
                    bias ? cast<ShapedType>(bias.getType()) : ShapedType(),
                    getResult().getType(), getTransposeLhs(),
                    getTransposeRhs(), "result");
}

static LogicalResult verifyBiasAdd(Operation *op, ShapedType in,
                                   ShapedType b) {
  if (in.getRank() < 1)
    return op->emitOpError() << "expects an input of rank >= 1, got " << in;
  if (b.getRank() != 1)
    return op->emitOpError() << "expects a rank-1 bias, got " << b;
  if (b.getElementType() != in.getElementType())
    return op->emitOpError()
           << "bias element type " << b.getElementType()
           << " differs from input element type " << in.getElementType();
  if (!compatible(b.getShape()[0], in.getShape().back()))
    return op->emitOpError()
           << "bias size " << formatDim(b.getShape()[0])
           << " does not match the input's last dim "
           << formatDim(in.getShape().back());
  return success();
}

LogicalResult BiasAddOp::verify() {
  return verifyBiasAdd(*this, getInput().getType(), getBias().getType());
}

//===----------------------------------------------------------------------===//
// ConvertOp
//===----------------------------------------------------------------------===//

static LogicalResult verifyConvert(Operation *op, Type from, Type to) {
  auto narrow = [](Type t) { return t.isF16() || t.isBF16(); };
  if (!(from.isF32() && narrow(to)) && !(narrow(from) && to.isF32()))
    return op->emitOpError() << "converts f32 to f16 or bf16, or f16 or bf16 "
                                "to f32; got "
                             << from << " to " << to;
  return success();
}

LogicalResult ConvertOp::verify() {
  return verifyConvert(*this, getInput().getType().getElementType(),
                       getResult().getType().getElementType());
}

//===----------------------------------------------------------------------===//
// RankOp
//===----------------------------------------------------------------------===//

OpFoldResult RankOp::fold(FoldAdaptor) {
  // The only rank of a group of one.
  if (getWorldSize() == 1)
    return IntegerAttr::get(IndexType::get(getContext()), 0);
  return {};
}

//===----------------------------------------------------------------------===//
// Buffer forms: the verifiers of the tensor ops, on the output buffer.
//===----------------------------------------------------------------------===//

LogicalResult BufferAllGatherOp::verify() {
  return verifyAlongCollective(*this, getAlong(), getBounds(),
                               getInput().getType(),
                               getOutput().getType(), /*gathers=*/true,
                               "output");
}

LogicalResult BufferAllToAllOp::verify() {
  return verifyAllToAll(*this, getSplit(), getConcat(), getSplitBounds(),
                        getConcatBounds(), getInput().getType(),
                        getOutput().getType(), "output");
}

LogicalResult BufferReduceScatterOp::verify() {
  return verifyAlongCollective(*this, getAlong(), getBounds(),
                               getInput().getType(),
                               getOutput().getType(), /*gathers=*/false,
                               "output");
}

LogicalResult BufferAllReduceOp::verify() {
  // Every rank sums whole buffers: the output has the input's shape.
  if (failed(verifyCompatibleShape(getInput().getType(),
                                   getOutput().getType())))
    return emitOpError() << "expects an output of the input's shape, got "
                         << getInput().getType() << " into "
                         << getOutput().getType();
  return success();
}

LogicalResult BufferGemmOp::verify() {
  Value bias = getBias();
  return verifyGemm(*this, getLhs().getType(), getRhs().getType(),
                    bias ? cast<ShapedType>(bias.getType()) : ShapedType(),
                    getOutput().getType(), getTransposeLhs(),
                    getTransposeRhs(), "output");
}

LogicalResult BufferBiasAddOp::verify() {
  // The C ABI's bias_add takes rows x cols; the bufferization reshapes.
  if (getInput().getType().getRank() != 2)
    return emitOpError() << "expects a rank-2 input and output, got "
                         << getInput().getType();
  return verifyBiasAdd(*this, getInput().getType(), getBias().getType());
}

LogicalResult BufferConvertOp::verify() {
  return verifyConvert(*this, getInput().getType().getElementType(),
                       getOutput().getType().getElementType());
}

#define GET_OP_CLASSES
#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.cpp.inc"
