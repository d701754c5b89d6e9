//===- ShardlinToLLVM.cpp - shardlin buffer ops to C ABI calls ------------===//
//
// One call of shardlin-c/Runtime.h per `shardlin.buffer.*` op, in the manner
// of upstream's runtime-library lowerings (sparse_tensor's calls into
// mlir_c_runner_utils, gpu's mgpu* wrappers). The pass first walks the
// module: it rejects what is not bufferized, declares the ABI functions it
// needs, creates one constant global per placement list, and gives each
// function that uses the ops a prologue that reads the thread's context
// (and rank) once. The patterns then only build calls.
//
//===----------------------------------------------------------------------===//

#include "shardlin/Conversion/Passes.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinDialect.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"
#include "shardlin-c/Runtime.h"

#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/LLVMIR/FunctionCallUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"

#include <string>

namespace mlir::shardlin {
#define GEN_PASS_DEF_CONVERTSHARDLINTOLLVM
#include "shardlin/Conversion/Passes.h.inc"
} // namespace mlir::shardlin

using namespace mlir;
using namespace mlir::shardlin;

namespace {

//===----------------------------------------------------------------------===//
// The C ABI: names and LLVM signatures (int and the enums are i32).
//===----------------------------------------------------------------------===//

struct AbiFunction {
  const char *name;
  /// 'p' ptr, 'i' i32, 'l' i64; the result is the first letter.
  const char *signature;
};

constexpr AbiFunction kThreadContext = {"shardlin_thread_context", "p"};
constexpr AbiFunction kContextRank = {"shardlin_context_rank", "ip"};
constexpr AbiFunction kContextWorldSize = {"shardlin_context_world_size",
                                           "ip"};
constexpr AbiFunction kAllGather = {"shardlin_all_gather", "ipipplp"};
constexpr AbiFunction kAllToAll = {"shardlin_all_to_all", "ipipplplp"};
constexpr AbiFunction kReduceScatter = {"shardlin_reduce_scatter",
                                        "ipipplp"};
constexpr AbiFunction kGemm = {"shardlin_gemm", "ipipppipii"};
constexpr AbiFunction kBiasAdd = {"shardlin_bias_add", "ipippp"};
constexpr AbiFunction kConvert = {"shardlin_convert", "ippipi"};
constexpr AbiFunction kSumRows = {"shardlin_sum_rows", "ipipip"};

Type abiType(MLIRContext *ctx, char c) {
  switch (c) {
  case 'p':
    return LLVM::LLVMPointerType::get(ctx);
  case 'i':
    return IntegerType::get(ctx, 32);
  default:
    return IntegerType::get(ctx, 64);
  }
}

/// Declares `fn` in `module` (or checks an existing declaration's type).
LogicalResult declare(OpBuilder &b, ModuleOp module, const AbiFunction &fn,
                      SymbolTableCollection &symbols) {
  MLIRContext *ctx = module.getContext();
  StringRef sig(fn.signature);
  SmallVector<Type> params;
  for (char c : sig.drop_front())
    params.push_back(abiType(ctx, c));
  return LLVM::lookupOrCreateFn(b, module, fn.name, params,
                                abiType(ctx, sig.front()),
                                /*isVarArg=*/false, /*isReserved=*/false,
                                &symbols);
}

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

//===----------------------------------------------------------------------===//
// What the pass prepares for the patterns.
//===----------------------------------------------------------------------===//

/// Per function: the thread's context and (if used) rank, read at its entry.
struct FunctionState {
  Value context;
  Value rank; // i64, or null
};

struct ConversionState {
  llvm::DenseMap<Operation *, FunctionState> functions;
  /// Placement list -> name of its global.
  llvm::DenseMap<Attribute, StringAttr> placementGlobals;
};

bool isBufferOp(Operation *op) {
  return isa<BufferAllGatherOp, BufferAllToAllOp, BufferReduceScatterOp,
             BufferGemmOp, BufferBiasAddOp, BufferConvertOp,
             BufferSumRowsOp>(op);
}

SmallVector<ChunkAttr> chunksOf(Operation *op) {
  SmallVector<ChunkAttr> chunks;
  for (NamedAttribute attr : op->getAttrs())
    if (auto chunk = dyn_cast<ChunkAttr>(attr.getValue()))
      chunks.push_back(chunk);
  return chunks;
}

/// Rejects shardlin ops on tensors, with the pass that handles them.
LogicalResult checkBufferized(ModuleOp module) {
  WalkResult walk = module.walk([](Operation *op) {
    if (!isa<ShardlinDialect>(op->getDialect()) || isBufferOp(op) ||
        isa<RankOp>(op))
      return WalkResult::advance();
    if (isa<LinearOp>(op))
      op->emitOpError("must be lowered first (run --lower-sharded-linear, or "
                      "the whole --shardlin-lower-to-llvm pipeline)");
    else if (isa<LocalShardOp>(op))
      op->emitOpError("must be removed first (run --localize-sharded, or the "
                      "whole --shardlin-lower-to-llvm pipeline)");
    else
      op->emitOpError("operates on tensors: bufferize it first (run "
                      "one-shot-bufferize, or the whole "
                      "--shardlin-lower-to-llvm pipeline)");
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}

/// Adds the prologue of `func`: reads the thread's context, asserts it is
/// set and has `worldSize` ranks (if known), and reads the rank if needed.
FunctionState buildPrologue(FunctionOpInterface func,
                            std::optional<int64_t> worldSize, bool needsRank) {
  MLIRContext *ctx = func->getContext();
  Block &entry = func.getFunctionBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  Location loc = func.getLoc();
  auto ptrType = LLVM::LLVMPointerType::get(ctx);
  auto i32 = IntegerType::get(ctx, 32);
  std::string name = "@" + SymbolTable::getSymbolName(func).str();

  FunctionState state;
  state.context = LLVM::CallOp::create(b, loc, TypeRange{ptrType},
                                       kThreadContext.name, ValueRange{})
                      .getResult();
  Value null = LLVM::ZeroOp::create(b, loc, ptrType);
  Value isSet = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne,
                                     state.context, null);
  cf::AssertOp::create(b, loc, isSet,
                       "shardlin: " + name +
                           " needs the calling thread's context: call "
                           "shardlin_set_thread_context before the entry");
  if (worldSize) {
    Value size = LLVM::CallOp::create(b, loc, TypeRange{i32},
                                      kContextWorldSize.name, state.context)
                     .getResult();
    Value expected = LLVM::ConstantOp::create(
        b, loc, i32, b.getI32IntegerAttr(static_cast<int32_t>(*worldSize)));
    Value same = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, size,
                                      expected);
    cf::AssertOp::create(b, loc, same,
                         "shardlin: " + name + " was compiled for " +
                             std::to_string(*worldSize) +
                             " ranks but the calling thread's context has "
                             "another world size");
  }
  if (needsRank) {
    Value rank = LLVM::CallOp::create(b, loc, TypeRange{i32},
                                      kContextRank.name, state.context)
                     .getResult();
    state.rank = LLVM::SExtOp::create(b, loc, b.getI64Type(), rank);
  }
  return state;
}

/// The private constant global holding `placements`, created on first use.
StringAttr placementGlobal(OpBuilder &b, ModuleOp module, ChunkAttr chunk,
                           ConversionState &state,
                           SymbolTableCollection &symbols) {
  auto key = DenseI64ArrayAttr::get(module.getContext(), chunk.getPlacements());
  auto it = state.placementGlobals.find(key);
  if (it != state.placementGlobals.end())
    return it->second;
  SymbolTable &table = symbols.getSymbolTable(module);
  std::string name;
  for (size_t k = state.placementGlobals.size();; ++k) {
    name = "__shardlin_placements_" + std::to_string(k);
    if (!table.lookup(name))
      break;
  }
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  int64_t w = chunk.getNumChunks();
  auto values = DenseElementsAttr::get(
      RankedTensorType::get({w}, b.getI64Type()), chunk.getPlacements());
  auto global = LLVM::GlobalOp::create(
      b, module.getLoc(), LLVM::LLVMArrayType::get(b.getI64Type(), w),
      /*isConstant=*/true, LLVM::Linkage::Private, name, values);
  table.insert(global);
  StringAttr symbol = global.getSymNameAttr();
  state.placementGlobals[key] = symbol;
  return symbol;
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

/// The shared pieces of the patterns: the values every call passes.
template <typename OpTy>
struct RuntimeCallPattern : public ConvertOpToLLVMPattern<OpTy> {
  RuntimeCallPattern(const LLVMTypeConverter &converter,
                     const ConversionState &state)
      : ConvertOpToLLVMPattern<OpTy>(converter), state(state) {}

protected:
  const FunctionState &function(Operation *op) const {
    auto func = op->getParentOfType<FunctionOpInterface>();
    return state.functions.find(func)->second;
  }

  Value i32(OpBuilder &b, Location loc, int64_t v) const {
    return LLVM::ConstantOp::create(b, loc, b.getI32Type(),
                                    b.getI32IntegerAttr(v));
  }

  Value i64(OpBuilder &b, Location loc, int64_t v) const {
    return LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                                    b.getI64IntegerAttr(v));
  }

  Value dtype(OpBuilder &b, Location loc, Value memref) const {
    return i32(b, loc,
               dtypeOf(cast<MemRefType>(memref.getType()).getElementType()));
  }

  Value placements(OpBuilder &b, Location loc, ChunkAttr chunk) const {
    auto key = DenseI64ArrayAttr::get(b.getContext(), chunk.getPlacements());
    return LLVM::AddressOfOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext()),
        FlatSymbolRefAttr::get(state.placementGlobals.find(key)->second));
  }

  /// A pointer to an unranked descriptor {rank, ptr to the ranked
  /// descriptor} of `memref` (whose converted value is `descriptor`), on the
  /// stack.
  Value view(OpBuilder &b, Location loc, Value memref,
             Value descriptor) const {
    MLIRContext *ctx = b.getContext();
    auto ptrType = LLVM::LLVMPointerType::get(ctx);
    Value ranked =
        this->getTypeConverter()->promoteOneMemRefDescriptor(loc, descriptor,
                                                             b);
    auto unrankedType =
        LLVM::LLVMStructType::getLiteral(ctx, {b.getI64Type(), ptrType});
    Value unranked = LLVM::PoisonOp::create(b, loc, unrankedType);
    unranked = LLVM::InsertValueOp::create(
        b, loc, unranked,
        i64(b, loc, cast<MemRefType>(memref.getType()).getRank()),
        ArrayRef<int64_t>{0});
    unranked = LLVM::InsertValueOp::create(b, loc, unranked, ranked,
                                           ArrayRef<int64_t>{1});
    Value slot = LLVM::AllocaOp::create(b, loc, ptrType, unrankedType,
                                        i64(b, loc, 1));
    LLVM::StoreOp::create(b, loc, unranked, slot);
    return slot;
  }

  /// Calls `fn` between a stack save and restore (the views live on the
  /// stack for the call only), then erases `op`.
  template <typename BuildArgs>
  LogicalResult callAndErase(Operation *op, ConversionPatternRewriter &b,
                             const AbiFunction &fn, BuildArgs buildArgs) const {
    Location loc = op->getLoc();
    auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
    Value stack = LLVM::StackSaveOp::create(b, loc, ptrType);
    SmallVector<Value> args = {function(op).context};
    buildArgs(args);
    LLVM::CallOp::create(b, loc, TypeRange{b.getI32Type()}, fn.name, args);
    LLVM::StackRestoreOp::create(b, loc, stack);
    b.eraseOp(op);
    return success();
  }

  const ConversionState &state;
};

// Each pattern builds the scalar arguments first (element types, dims,
// placements), then the views, in the order of the call's parameters.

/// all_gather and reduce_scatter: one chunk spec, `along`; `fn` is the call.
template <typename OpTy>
struct AlongCollectiveLowering : RuntimeCallPattern<OpTy> {
  AlongCollectiveLowering(const LLVMTypeConverter &converter,
                          const ConversionState &state, const AbiFunction &fn)
      : RuntimeCallPattern<OpTy>(converter, state), fn(fn) {}
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    return this->callAndErase(op, b, fn, [&](SmallVector<Value> &args) {
      Value dt = this->dtype(b, loc, op.getInput());
      Value dim = this->i64(b, loc, op.getAlong().getDim());
      Value along = this->placements(b, loc, op.getAlong());
      Value in = this->view(b, loc, op.getInput(), adaptor.getInput());
      Value out = this->view(b, loc, op.getOutput(), adaptor.getOutput());
      args.append({dt, in, out, dim, along});
    });
  }
  const AbiFunction &fn;
};

struct AllToAllLowering : RuntimeCallPattern<BufferAllToAllOp> {
  using RuntimeCallPattern::RuntimeCallPattern;
  LogicalResult
  matchAndRewrite(BufferAllToAllOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    return callAndErase(op, b, kAllToAll, [&](SmallVector<Value> &args) {
      Value dt = dtype(b, loc, op.getInput());
      Value splitDim = i64(b, loc, op.getSplit().getDim());
      Value split = placements(b, loc, op.getSplit());
      Value concatDim = i64(b, loc, op.getConcat().getDim());
      Value concat = placements(b, loc, op.getConcat());
      Value in = view(b, loc, op.getInput(), adaptor.getInput());
      Value out = view(b, loc, op.getOutput(), adaptor.getOutput());
      args.append({dt, in, out, splitDim, split, concatDim, concat});
    });
  }
};

struct GemmLowering : RuntimeCallPattern<BufferGemmOp> {
  using RuntimeCallPattern::RuntimeCallPattern;
  LogicalResult
  matchAndRewrite(BufferGemmOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    return callAndErase(op, b, kGemm, [&](SmallVector<Value> &args) {
      Value dt = dtype(b, loc, op.getLhs());
      Value outDt = dtype(b, loc, op.getOutput());
      Value transposeLhs = i32(b, loc, op.getTransposeLhs() ? 1 : 0);
      Value transposeRhs = i32(b, loc, op.getTransposeRhs() ? 1 : 0);
      Value lhs = view(b, loc, op.getLhs(), adaptor.getLhs());
      Value rhs = view(b, loc, op.getRhs(), adaptor.getRhs());
      // No bias: a null pointer.
      Value bias =
          op.getBias()
              ? view(b, loc, op.getBias(), adaptor.getBias())
              : LLVM::ZeroOp::create(b, loc,
                                     LLVM::LLVMPointerType::get(getContext()))
                    .getResult();
      Value out = view(b, loc, op.getOutput(), adaptor.getOutput());
      args.append({dt, lhs, rhs, bias, outDt, out, transposeLhs, transposeRhs});
    });
  }
};

struct BiasAddLowering : RuntimeCallPattern<BufferBiasAddOp> {
  using RuntimeCallPattern::RuntimeCallPattern;
  LogicalResult
  matchAndRewrite(BufferBiasAddOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    return callAndErase(op, b, kBiasAdd, [&](SmallVector<Value> &args) {
      Value dt = dtype(b, loc, op.getInput());
      Value in = view(b, loc, op.getInput(), adaptor.getInput());
      Value bias = view(b, loc, op.getBias(), adaptor.getBias());
      // In place (the usual case): one view for both.
      Value out = op.getOutput() == op.getInput()
                      ? in
                      : view(b, loc, op.getOutput(), adaptor.getOutput());
      args.append({dt, in, bias, out});
    });
  }
};

struct ConvertLowering : RuntimeCallPattern<BufferConvertOp> {
  using RuntimeCallPattern::RuntimeCallPattern;
  LogicalResult
  matchAndRewrite(BufferConvertOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    return callAndErase(op, b, kConvert, [&](SmallVector<Value> &args) {
      Value from = dtype(b, loc, op.getInput());
      Value to = dtype(b, loc, op.getOutput());
      Value in = view(b, loc, op.getInput(), adaptor.getInput());
      Value out = view(b, loc, op.getOutput(), adaptor.getOutput());
      args.append({in, from, out, to});
    });
  }
};

struct SumRowsLowering : RuntimeCallPattern<BufferSumRowsOp> {
  using RuntimeCallPattern::RuntimeCallPattern;
  LogicalResult
  matchAndRewrite(BufferSumRowsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    return callAndErase(op, b, kSumRows, [&](SmallVector<Value> &args) {
      Value dt = dtype(b, loc, op.getInput());
      Value outDt = dtype(b, loc, op.getOutput());
      Value in = view(b, loc, op.getInput(), adaptor.getInput());
      Value out = view(b, loc, op.getOutput(), adaptor.getOutput());
      args.append({dt, in, outDt, out});
    });
  }
};

/// shardlin.rank: the rank the prologue read.
struct RankLowering : RuntimeCallPattern<RankOp> {
  using RuntimeCallPattern::RuntimeCallPattern;
  LogicalResult
  matchAndRewrite(RankOp op, OpAdaptor,
                  ConversionPatternRewriter &b) const override {
    b.replaceOp(op, function(op).rank);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

struct ConvertShardlinToLLVMPass
    : public mlir::shardlin::impl::ConvertShardlinToLLVMBase<
          ConvertShardlinToLLVMPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(checkBufferized(module)))
      return signalPassFailure();

    // The functions that use the ops, with their world size and whether
    // they need the rank.
    struct Uses {
      llvm::SmallSetVector<int64_t, 2> worldSizes;
      bool rank = false;
    };
    llvm::MapVector<Operation *, Uses> uses;
    llvm::SetVector<const AbiFunction *> needed;
    SmallVector<ChunkAttr> chunks;
    WalkResult walk = module.walk([&](Operation *op) {
      bool isRank = isa<RankOp>(op);
      if (!isRank && !isBufferOp(op))
        return WalkResult::advance();
      auto func = op->getParentOfType<FunctionOpInterface>();
      if (!func) {
        op->emitOpError("must be inside a function (its code reads the "
                        "thread's context at the function's entry)");
        return WalkResult::interrupt();
      }
      Uses &u = uses[func];
      if (auto rank = dyn_cast<RankOp>(op)) {
        u.rank = true;
        u.worldSizes.insert(static_cast<int64_t>(rank.getWorldSize()));
      }
      for (ChunkAttr chunk : chunksOf(op)) {
        u.worldSizes.insert(chunk.getNumChunks());
        chunks.push_back(chunk);
      }
      needed.insert(llvm::TypeSwitch<Operation *, const AbiFunction *>(op)
                        .Case([](RankOp) { return &kContextRank; })
                        .Case([](BufferAllGatherOp) { return &kAllGather; })
                        .Case([](BufferAllToAllOp) { return &kAllToAll; })
                        .Case([](BufferReduceScatterOp) {
                          return &kReduceScatter;
                        })
                        .Case([](BufferGemmOp) { return &kGemm; })
                        .Case([](BufferBiasAddOp) { return &kBiasAdd; })
                        .Case([](BufferSumRowsOp) { return &kSumRows; })
                        .Default([](Operation *) { return &kConvert; }));
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    if (uses.empty())
      return;

    OpBuilder b(module.getContext());
    b.setInsertionPointToEnd(module.getBody());
    SymbolTableCollection symbols;
    needed.insert(&kThreadContext);
    for (auto &[func, u] : uses)
      if (!u.worldSizes.empty())
        needed.insert(&kContextWorldSize);
    for (const AbiFunction *fn : needed)
      if (failed(declare(b, module, *fn, symbols)))
        return signalPassFailure();

    ConversionState state;
    for (ChunkAttr chunk : chunks)
      placementGlobal(b, module, chunk, state, symbols);
    for (auto &[op, u] : uses) {
      auto func = cast<FunctionOpInterface>(op);
      if (u.worldSizes.size() > 1) {
        func.emitError() << "mixes world sizes (" << u.worldSizes.getArrayRef()
                         << ") in one function; its code checks the calling "
                            "thread's context against one";
        return signalPassFailure();
      }
      std::optional<int64_t> worldSize;
      if (!u.worldSizes.empty())
        worldSize = u.worldSizes.front();
      state.functions[op] = buildPrologue(func, worldSize, u.rank);
    }

    LLVMTypeConverter converter(module.getContext());
    RewritePatternSet patterns(module.getContext());
    patterns.add<AllToAllLowering, GemmLowering, BiasAddLowering,
                 ConvertLowering, SumRowsLowering, RankLowering>(converter,
                                                                 state);
    patterns.add<AlongCollectiveLowering<BufferAllGatherOp>>(converter, state,
                                                             kAllGather);
    patterns.add<AlongCollectiveLowering<BufferReduceScatterOp>>(
        converter, state, kReduceScatter);
    ConversionTarget target(getContext());
    target.addLegalDialect<LLVM::LLVMDialect>();
    target.addIllegalDialect<ShardlinDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
