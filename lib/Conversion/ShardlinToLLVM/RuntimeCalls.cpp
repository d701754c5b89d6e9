//===- RuntimeCalls.cpp - shardlin buffer ops as C ABI calls --------------===//
//
// One pattern, CallLowering, builds every call: the stack save and restore
// around it, the context, and the call of the op's ABI function. What
// differs per op is only the list of its arguments, which a small builder
// function per op states in the order of the call's parameters (scalars
// first, then the views, so that the views' stack slots sit right before
// the call).
//
//===----------------------------------------------------------------------===//

#include "RuntimeCalls.h"

#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"
#include "shardlin/runtime/base/ChunkLayout.h"
#include "shardlin-c/Runtime.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::shardlin;

namespace mlir::shardlin {
const AbiFunction kThreadContext = {"shardlin_thread_context", "p"};
const AbiFunction kContextRank = {"shardlin_context_rank", "ip"};
const AbiFunction kContextWorldSize = {"shardlin_context_world_size", "ip"};
} // namespace mlir::shardlin

namespace {

constexpr AbiFunction kAllGather = {"shardlin_all_gather", "ipipplp"};
constexpr AbiFunction kAllGatherBounds = {"shardlin_all_gather_bounds",
                                          "ipipplpp"};
constexpr AbiFunction kAllToAll = {"shardlin_all_to_all", "ipipplplp"};
constexpr AbiFunction kAllToAllBounds = {"shardlin_all_to_all_bounds",
                                         "ipipplpplpp"};
constexpr AbiFunction kReduceScatter = {"shardlin_reduce_scatter",
                                        "ipipplp"};
constexpr AbiFunction kReduceScatterBounds = {
    "shardlin_reduce_scatter_bounds", "ipipplpp"};
constexpr AbiFunction kGatherBounds = {"shardlin_gather_bounds", "iplpp"};
constexpr AbiFunction kAllReduce = {"shardlin_all_reduce", "ipipp"};
constexpr AbiFunction kGemm = {"shardlin_gemm", "ipipppipii"};
constexpr AbiFunction kBiasAdd = {"shardlin_bias_add", "ipippp"};
constexpr AbiFunction kConvert = {"shardlin_convert", "ippipi"};
constexpr AbiFunction kSumRows = {"shardlin_sum_rows", "ipipip"};
constexpr AbiFunction kAttention = {"shardlin_attention", "ipipppppllppdi"};
constexpr AbiFunction kAttentionGrad = {"shardlin_attention_grad",
                                        "ipippppppillppdi"};
constexpr AbiFunction kRope = {"shardlin_rope", "ipipipppli"};

/// The ABI's shardlin_dtype of an element type (the op verifiers admit only
/// these four).
int32_t dtypeOf(Type t) {
  if (t.isF16())
    return SHARDLIN_F16;
  if (t.isBF16())
    return SHARDLIN_BF16;
  if (t.isF32())
    return SHARDLIN_F32;
  return SHARDLIN_F64;
}

/// The arguments of one call, built at the rewriter's insertion point.
class CallArgs {
public:
  CallArgs(const LLVMTypeConverter &converter, const ConversionState &state,
           OpBuilder &b, Location loc)
      : converter(converter), state(state), b(b), loc(loc),
        ptrType(LLVM::LLVMPointerType::get(b.getContext())) {}

  Value i32(int64_t v) {
    return LLVM::ConstantOp::create(b, loc, b.getI32Type(),
                                    b.getI32IntegerAttr(v));
  }

  Value i64(int64_t v) {
    return LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                                    b.getI64IntegerAttr(v));
  }

  Value f64(double v) {
    return LLVM::ConstantOp::create(b, loc, b.getF64Type(),
                                    b.getF64FloatAttr(v));
  }

  Value null() { return LLVM::ZeroOp::create(b, loc, ptrType); }

  /// The constant global of an attention head table, or a null pointer for
  /// none.
  Value headTable(std::optional<ArrayRef<int64_t>> table) {
    return table ? global(state.headTableGlobals, *table) : null();
  }

  /// The shardlin_dtype of `memref`'s element type.
  Value dtype(Value memref) {
    return i32(dtypeOf(cast<MemRefType>(memref.getType()).getElementType()));
  }

  /// A chunk spec: its dim, its placements and, for a *_bounds call
  /// (`withBounds`), its bounds: the buffer `bounds` (whose converted
  /// value is `descriptor`) where the op has one, else its own explicit
  /// bounds or a null pointer for the ceil rule.
  SmallVector<Value, 3> chunk(ChunkAttr chunk, bool withBounds,
                              Value bounds = Value(),
                              Value descriptor = Value()) {
    SmallVector<Value, 3> values = {i64(chunk.getDim()), placements(chunk)};
    if (!withBounds)
      return values;
    if (bounds)
      values.push_back(pointer(bounds, descriptor));
    else
      values.push_back(needsBounds(chunk)
                           ? global(state.boundsGlobals, chunk.getBounds())
                           : null());
    return values;
  }

  /// The constant global of a chunk spec's placements.
  Value placements(ChunkAttr chunk) {
    return global(state.placementGlobals, chunk.getPlacements());
  }

  /// The address of the first element of `memref` (whose converted value is
  /// `descriptor`).
  Value pointer(Value memref, Value descriptor) {
    return MemRefDescriptor(descriptor).bufferPtr(
        b, loc, converter, cast<MemRefType>(memref.getType()));
  }

  /// The size of dim `d` of `memref`'s descriptor, as i64.
  Value size(Value descriptor, unsigned d) {
    return MemRefDescriptor(descriptor).size(b, loc, d);
  }

  /// A pointer to an unranked descriptor {rank, ptr to the ranked
  /// descriptor} of `memref` (whose converted value is `descriptor`), on the
  /// stack.
  Value view(Value memref, Value descriptor) {
    MLIRContext *ctx = b.getContext();
    Value ranked = converter.promoteOneMemRefDescriptor(loc, descriptor, b);
    auto unrankedType =
        LLVM::LLVMStructType::getLiteral(ctx, {b.getI64Type(), ptrType});
    Value unranked = LLVM::PoisonOp::create(b, loc, unrankedType);
    unranked = LLVM::InsertValueOp::create(
        b, loc, unranked, i64(cast<MemRefType>(memref.getType()).getRank()),
        ArrayRef<int64_t>{0});
    unranked = LLVM::InsertValueOp::create(b, loc, unranked, ranked,
                                           ArrayRef<int64_t>{1});
    Value slot =
        LLVM::AllocaOp::create(b, loc, ptrType, unrankedType, i64(1));
    LLVM::StoreOp::create(b, loc, unranked, slot);
    return slot;
  }

private:
  Value global(const llvm::DenseMap<Attribute, StringAttr> &globals,
               ArrayRef<int64_t> values) {
    auto key = DenseI64ArrayAttr::get(b.getContext(), values);
    return LLVM::AddressOfOp::create(
        b, loc, ptrType, FlatSymbolRefAttr::get(globals.find(key)->second));
  }

  const LLVMTypeConverter &converter;
  const ConversionState &state;
  OpBuilder &b;
  Location loc;
  Type ptrType;
};

/// Lowers an OpTy to one call of abiFunctionOf(op), between a stack save and
/// restore (the views live on the stack for the call only); `build` appends
/// the arguments after the context.
template <typename OpTy>
struct CallLowering : public ConvertOpToLLVMPattern<OpTy> {
  using Adaptor = typename OpTy::Adaptor;
  using BuildArgs = void (*)(OpTy, Adaptor, CallArgs &,
                             SmallVectorImpl<Value> &);

  CallLowering(const LLVMTypeConverter &converter,
               const ConversionState &state, BuildArgs build)
      : ConvertOpToLLVMPattern<OpTy>(converter), state(state), build(build) {}

  LogicalResult
  matchAndRewrite(OpTy op, Adaptor adaptor,
                  ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
    auto func = op->template getParentOfType<FunctionOpInterface>();
    Value stack = LLVM::StackSaveOp::create(b, loc, ptrType);
    SmallVector<Value> args = {state.functions.find(func)->second.context};
    CallArgs builder(*this->getTypeConverter(), state, b, loc);
    build(op, adaptor, builder, args);
    LLVM::CallOp::create(b, loc, TypeRange{b.getI32Type()},
                         abiFunctionOf(op).name, args);
    LLVM::StackRestoreOp::create(b, loc, stack);
    b.eraseOp(op);
    return success();
  }

  const ConversionState &state;
  BuildArgs build;
};

// The argument lists, one per op, in the order of the call's parameters.

/// all_gather and reduce_scatter: (dtype, in, out, dim, placements[,
/// bounds]).
template <typename OpTy>
void alongArgs(OpTy op, typename OpTy::Adaptor a, CallArgs &c,
               SmallVectorImpl<Value> &args) {
  Value dt = c.dtype(op.getInput());
  SmallVector<Value, 3> along =
      c.chunk(op.getAlong(), hasBounds(op), op.getBounds(), a.getBounds());
  Value in = c.view(op.getInput(), a.getInput());
  Value out = c.view(op.getOutput(), a.getOutput());
  args.append({dt, in, out});
  args.append(along);
}

void allToAllArgs(BufferAllToAllOp op, BufferAllToAllOp::Adaptor a,
                  CallArgs &c, SmallVectorImpl<Value> &args) {
  bool bounded = hasBounds(op);
  Value dt = c.dtype(op.getInput());
  SmallVector<Value, 3> split = c.chunk(op.getSplit(), bounded,
                                        op.getSplitBounds(),
                                        a.getSplitBounds());
  SmallVector<Value, 3> concat = c.chunk(op.getConcat(), bounded,
                                         op.getConcatBounds(),
                                         a.getConcatBounds());
  Value in = c.view(op.getInput(), a.getInput());
  Value out = c.view(op.getOutput(), a.getOutput());
  args.append({dt, in, out});
  args.append(split);
  args.append(concat);
}

/// gather_bounds: (size, placements, bounds): the size of input's dim.
void gatherBoundsArgs(BufferGatherBoundsOp op, BufferGatherBoundsOp::Adaptor a,
                      CallArgs &c, SmallVectorImpl<Value> &args) {
  args.append({c.size(a.getInput(), op.getAlong().getDim()),
               c.placements(op.getAlong()),
               c.pointer(op.getOutput(), a.getOutput())});
}

void allReduceArgs(BufferAllReduceOp op, BufferAllReduceOp::Adaptor a,
                   CallArgs &c, SmallVectorImpl<Value> &args) {
  Value dt = c.dtype(op.getInput());
  Value in = c.view(op.getInput(), a.getInput());
  Value out = c.view(op.getOutput(), a.getOutput());
  args.append({dt, in, out});
}

void gemmArgs(BufferGemmOp op, BufferGemmOp::Adaptor a, CallArgs &c,
              SmallVectorImpl<Value> &args) {
  Value dt = c.dtype(op.getLhs());
  Value outDt = c.dtype(op.getOutput());
  Value transposeLhs = c.i32(op.getTransposeLhs() ? 1 : 0);
  Value transposeRhs = c.i32(op.getTransposeRhs() ? 1 : 0);
  Value lhs = c.view(op.getLhs(), a.getLhs());
  Value rhs = c.view(op.getRhs(), a.getRhs());
  // No bias: a null pointer.
  Value bias = op.getBias() ? c.view(op.getBias(), a.getBias()) : c.null();
  Value out = c.view(op.getOutput(), a.getOutput());
  args.append({dt, lhs, rhs, bias, outDt, out, transposeLhs, transposeRhs});
}

void biasAddArgs(BufferBiasAddOp op, BufferBiasAddOp::Adaptor a, CallArgs &c,
                 SmallVectorImpl<Value> &args) {
  Value dt = c.dtype(op.getInput());
  Value in = c.view(op.getInput(), a.getInput());
  Value bias = c.view(op.getBias(), a.getBias());
  // In place (the usual case): one view for both.
  Value out = op.getOutput() == op.getInput()
                  ? in
                  : c.view(op.getOutput(), a.getOutput());
  args.append({dt, in, bias, out});
}

/// convert (in, from, out, to) and sum_rows (dtype, in, out_dtype, out):
/// each view with its element type, before or after it.
template <typename OpTy, bool DtypeFirst>
void typedViewArgs(OpTy op, typename OpTy::Adaptor a, CallArgs &c,
                   SmallVectorImpl<Value> &args) {
  Value inDt = c.dtype(op.getInput());
  Value outDt = c.dtype(op.getOutput());
  Value in = c.view(op.getInput(), a.getInput());
  Value out = c.view(op.getOutput(), a.getOutput());
  if (DtypeFirst)
    args.append({inDt, in, outDt, out});
  else
    args.append({in, inDt, out, outDt});
}

/// The trailing arguments of attention and attention_grad: (head_dim,
/// group, q_heads, kv_heads (NULL, NULL for the global form), scale,
/// causal).
template <typename OpTy>
SmallVector<Value, 6> attentionAttrArgs(OpTy op, CallArgs &c) {
  return {c.i64(op.getHeadDim()),        c.i64(op.getGroupOrDefault()),
          c.headTable(op.getQHeads()),   c.headTable(op.getKvHeads()),
          c.f64(op.getScaleOrDefault()), c.i32(op.getCausal() ? 1 : 0)};
}

/// attention: (dtype, q, k, v, mask or NULL, out, the attributes).
void attentionArgs(BufferAttentionOp op, BufferAttentionOp::Adaptor a,
                   CallArgs &c, SmallVectorImpl<Value> &args) {
  Value dt = c.dtype(op.getQ());
  SmallVector<Value, 6> attrs = attentionAttrArgs(op, c);
  Value q = c.view(op.getQ(), a.getQ());
  Value k = c.view(op.getK(), a.getK());
  Value v = c.view(op.getV(), a.getV());
  Value mask = op.getMask() ? c.view(op.getMask(), a.getMask()) : c.null();
  Value out = c.view(op.getOutput(), a.getOutput());
  args.append({dt, q, k, v, mask, out});
  args.append(attrs);
}

/// attention_grad: (dtype, q, k, v, dout, mask or NULL, out, wrt, the
/// attributes).
void attentionGradArgs(BufferAttentionGradOp op,
                       BufferAttentionGradOp::Adaptor a, CallArgs &c,
                       SmallVectorImpl<Value> &args) {
  Value dt = c.dtype(op.getQ());
  Value wrt = c.i32(op.getWrtIndex());
  SmallVector<Value, 6> attrs = attentionAttrArgs(op, c);
  Value q = c.view(op.getQ(), a.getQ());
  Value k = c.view(op.getK(), a.getK());
  Value v = c.view(op.getV(), a.getV());
  Value dout = c.view(op.getDout(), a.getDout());
  Value mask = op.getMask() ? c.view(op.getMask(), a.getMask()) : c.null();
  Value out = c.view(op.getOutput(), a.getOutput());
  args.append({dt, q, k, v, dout, mask, out, wrt});
  args.append(attrs);
}

/// rope: (dtype, x, table dtype, cos, sin, out, head_dim, inverse).
void ropeArgs(BufferRopeOp op, BufferRopeOp::Adaptor a, CallArgs &c,
              SmallVectorImpl<Value> &args) {
  Value dt = c.dtype(op.getX());
  Value tableDt = c.dtype(op.getCos());
  Value headDim = c.i64(op.getHeadDim());
  Value inverse = c.i32(op.getInverse() ? 1 : 0);
  Value x = c.view(op.getX(), a.getX());
  Value cos = c.view(op.getCos(), a.getCos());
  Value sin = c.view(op.getSin(), a.getSin());
  Value out = c.view(op.getOutput(), a.getOutput());
  args.append({dt, x, tableDt, cos, sin, out, headDim, inverse});
}

/// shardlin.rank: the rank the prologue read.
struct RankLowering : public ConvertOpToLLVMPattern<RankOp> {
  RankLowering(const LLVMTypeConverter &converter,
               const ConversionState &state)
      : ConvertOpToLLVMPattern<RankOp>(converter), state(state) {}
  LogicalResult
  matchAndRewrite(RankOp op, OpAdaptor,
                  ConversionPatternRewriter &b) const override {
    auto func = op->getParentOfType<FunctionOpInterface>();
    b.replaceOp(op, state.functions.find(func)->second.rank);
    return success();
  }
  const ConversionState &state;
};

} // namespace

bool mlir::shardlin::isRuntimeCallOp(Operation *op) {
  return isa<RankOp, BufferAllGatherOp, BufferAllToAllOp, BufferReduceScatterOp,
             BufferGatherBoundsOp, BufferAllReduceOp, BufferGemmOp,
             BufferBiasAddOp, BufferConvertOp, BufferSumRowsOp,
             BufferAttentionOp, BufferAttentionGradOp, BufferRopeOp>(op);
}

std::optional<ArrayRef<int64_t>> mlir::shardlin::qHeadsOf(Operation *op) {
  if (auto att = dyn_cast<BufferAttentionOp>(op))
    return att.getQHeads();
  if (auto grad = dyn_cast<BufferAttentionGradOp>(op))
    return grad.getQHeads();
  return std::nullopt;
}

std::optional<ArrayRef<int64_t>> mlir::shardlin::kvHeadsOf(Operation *op) {
  if (auto att = dyn_cast<BufferAttentionOp>(op))
    return att.getKvHeads();
  if (auto grad = dyn_cast<BufferAttentionGradOp>(op))
    return grad.getKvHeads();
  return std::nullopt;
}

bool mlir::shardlin::hasBounds(Operation *op) {
  if (auto gather = dyn_cast<BufferAllGatherOp>(op); gather && gather.getBounds())
    return true;
  if (auto scatter = dyn_cast<BufferReduceScatterOp>(op);
      scatter && scatter.getBounds())
    return true;
  if (auto a2a = dyn_cast<BufferAllToAllOp>(op);
      a2a && (a2a.getSplitBounds() || a2a.getConcatBounds()))
    return true;
  return llvm::any_of(chunksOf(op), needsBounds);
}

SmallVector<ChunkAttr> mlir::shardlin::chunksOf(Operation *op) {
  SmallVector<ChunkAttr> chunks;
  for (NamedAttribute attr : op->getAttrs())
    if (auto chunk = dyn_cast<ChunkAttr>(attr.getValue()))
      chunks.push_back(chunk);
  return chunks;
}

bool mlir::shardlin::needsBounds(ChunkAttr chunk) {
  if (!chunk.hasExplicitBounds())
    return false;
  ArrayRef<int64_t> bounds = chunk.getBounds();
  return ::shardlin::rt::ceilBounds(bounds.back(), chunk.getNumChunks()) !=
         std::vector<int64_t>(bounds.begin(), bounds.end());
}

SmallVector<int64_t, 2> mlir::shardlin::worldSizesOf(Operation *op) {
  SmallVector<int64_t, 2> sizes;
  if (auto rank = dyn_cast<RankOp>(op))
    sizes.push_back(static_cast<int64_t>(rank.getWorldSize()));
  if (auto sum = dyn_cast<BufferAllReduceOp>(op))
    sizes.push_back(sum.getWorldSize());
  for (ChunkAttr chunk : chunksOf(op))
    sizes.push_back(chunk.getNumChunks());
  // The rank-local attention reads the calling rank's pair of its tables.
  if (std::optional<ArrayRef<int64_t>> table = qHeadsOf(op))
    sizes.push_back(static_cast<int64_t>(table->size() / 2));
  return sizes;
}

const AbiFunction &mlir::shardlin::abiFunctionOf(Operation *op) {
  bool bounded = hasBounds(op);
  return *llvm::TypeSwitch<Operation *, const AbiFunction *>(op)
              .Case([](RankOp) { return &kContextRank; })
              .Case([&](BufferAllGatherOp) {
                return bounded ? &kAllGatherBounds : &kAllGather;
              })
              .Case([&](BufferAllToAllOp) {
                return bounded ? &kAllToAllBounds : &kAllToAll;
              })
              .Case([&](BufferReduceScatterOp) {
                return bounded ? &kReduceScatterBounds : &kReduceScatter;
              })
              .Case([](BufferGatherBoundsOp) { return &kGatherBounds; })
              .Case([](BufferAllReduceOp) { return &kAllReduce; })
              .Case([](BufferGemmOp) { return &kGemm; })
              .Case([](BufferBiasAddOp) { return &kBiasAdd; })
              .Case([](BufferSumRowsOp) { return &kSumRows; })
              .Case([](BufferAttentionOp) { return &kAttention; })
              .Case([](BufferAttentionGradOp) { return &kAttentionGrad; })
              .Case([](BufferRopeOp) { return &kRope; })
              .Default([](Operation *) { return &kConvert; });
}

void mlir::shardlin::populateRuntimeCallPatterns(
    const LLVMTypeConverter &converter, const ConversionState &state,
    RewritePatternSet &patterns) {
  patterns.add<RankLowering>(converter, state);
  patterns.add<CallLowering<BufferAllGatherOp>>(
      converter, state, alongArgs<BufferAllGatherOp>);
  patterns.add<CallLowering<BufferReduceScatterOp>>(
      converter, state, alongArgs<BufferReduceScatterOp>);
  patterns.add<CallLowering<BufferAllToAllOp>>(converter, state,
                                               allToAllArgs);
  patterns.add<CallLowering<BufferGatherBoundsOp>>(converter, state,
                                                   gatherBoundsArgs);
  patterns.add<CallLowering<BufferAllReduceOp>>(converter, state,
                                                allReduceArgs);
  patterns.add<CallLowering<BufferGemmOp>>(converter, state, gemmArgs);
  patterns.add<CallLowering<BufferBiasAddOp>>(converter, state, biasAddArgs);
  patterns.add<CallLowering<BufferConvertOp>>(
      converter, state, typedViewArgs<BufferConvertOp, false>);
  patterns.add<CallLowering<BufferSumRowsOp>>(
      converter, state, typedViewArgs<BufferSumRowsOp, true>);
  patterns.add<CallLowering<BufferAttentionOp>>(converter, state,
                                                attentionArgs);
  patterns.add<CallLowering<BufferAttentionGradOp>>(converter, state,
                                                    attentionGradArgs);
  patterns.add<CallLowering<BufferRopeOp>>(converter, state, ropeArgs);
}
