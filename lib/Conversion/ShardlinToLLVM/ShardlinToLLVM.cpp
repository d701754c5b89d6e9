//===- ShardlinToLLVM.cpp - shardlin buffer ops to C ABI calls ------------===//
//
// One call of shardlin-c/Runtime.h per `shardlin.buffer.*` op, in the manner
// of upstream's runtime-library lowerings (sparse_tensor's calls into
// mlir_c_runner_utils, gpu's mgpu* wrappers). The pass first walks the
// module: it rejects what is not bufferized, declares the ABI functions it
// needs, creates one constant global per placement list (and per list of
// explicit bounds), and gives each function that uses the ops a prologue
// that reads the thread's context (and rank) once. The patterns
// (RuntimeCalls.cpp) then only build calls.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCalls.h"

#include "shardlin/Conversion/ShardlinToLLVM/Passes.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinDialect.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"

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

#include <string>

namespace mlir::shardlin {
#define GEN_PASS_DEF_CONVERTSHARDLINTOLLVM
#include "shardlin/Conversion/ShardlinToLLVM/Passes.h.inc"
} // namespace mlir::shardlin

using namespace mlir;
using namespace mlir::shardlin;

namespace {

//===----------------------------------------------------------------------===//
// The C ABI's LLVM signatures (int and the enums are i32).
//===----------------------------------------------------------------------===//

Type abiType(MLIRContext *ctx, char c) {
  switch (c) {
  case 'p':
    return LLVM::LLVMPointerType::get(ctx);
  case 'i':
    return IntegerType::get(ctx, 32);
  case 'd':
    return Float64Type::get(ctx);
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

//===----------------------------------------------------------------------===//
// What the pass prepares for the patterns.
//===----------------------------------------------------------------------===//

/// Rejects shardlin ops on tensors, with the pass that handles them.
LogicalResult checkBufferized(ModuleOp module) {
  WalkResult walk = module.walk([](Operation *op) {
    if (!isa<ShardlinDialect>(op->getDialect()) || isRuntimeCallOp(op))
      return WalkResult::advance();
    if (isa<LinearOp>(op))
      op->emitOpError("must be lowered first (run --lower-sharded-linear, or "
                      "the whole --shardlin-lower-to-llvm pipeline)");
    else if (isa<LocalShardOp>(op))
      op->emitOpError("must be removed first (run --shardlin-localize-sharded, or the "
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
  // A query of the context, as i32.
  auto query = [&](const AbiFunction &fn) -> Value {
    return LLVM::CallOp::create(b, loc, TypeRange{i32}, fn.name, state.context)
        .getResult();
  };
  auto check = [&](LLVM::ICmpPredicate predicate, Value lhs, Value rhs,
                   const std::string &message) {
    Value ok = LLVM::ICmpOp::create(b, loc, predicate, lhs, rhs);
    cf::AssertOp::create(b, loc, ok, message);
  };
  check(LLVM::ICmpPredicate::ne, state.context,
        LLVM::ZeroOp::create(b, loc, ptrType),
        "shardlin: " + name +
            " needs the calling thread's context: call "
            "shardlin_set_thread_context before the entry");
  if (worldSize) {
    Value size = query(kContextWorldSize);
    Value expected = LLVM::ConstantOp::create(
        b, loc, i32, b.getI32IntegerAttr(static_cast<int32_t>(*worldSize)));
    check(LLVM::ICmpPredicate::eq, size, expected,
          "shardlin: " + name + " was compiled for " +
              std::to_string(*worldSize) +
              " ranks but the calling thread's context has another world "
              "size");
  }
  if (needsRank)
    state.rank =
        LLVM::SExtOp::create(b, loc, b.getI64Type(), query(kContextRank));
  return state;
}

/// The private constant global `@<prefix><k>` holding `values` (one per
/// distinct list in `globals`), created on first use.
void int64Global(OpBuilder &b, ModuleOp module, ArrayRef<int64_t> values,
                 StringRef prefix,
                 llvm::DenseMap<Attribute, StringAttr> &globals,
                 SymbolTableCollection &symbols) {
  auto key = DenseI64ArrayAttr::get(module.getContext(), values);
  if (globals.count(key))
    return;
  SymbolTable &table = symbols.getSymbolTable(module);
  std::string name;
  for (size_t k = globals.size();; ++k) {
    name = (prefix + std::to_string(k)).str();
    if (!table.lookup(name))
      break;
  }
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  auto size = static_cast<int64_t>(values.size());
  auto data = DenseElementsAttr::get(
      RankedTensorType::get({size}, b.getI64Type()), values);
  auto global = LLVM::GlobalOp::create(
      b, module.getLoc(), LLVM::LLVMArrayType::get(b.getI64Type(), size),
      /*isConstant=*/true, LLVM::Linkage::Private, name, data);
  table.insert(global);
  globals[key] = global.getSymNameAttr();
}

/// The globals of a chunk spec: its placements, and its bounds where the
/// calls pass them.
void chunkGlobals(OpBuilder &b, ModuleOp module, ChunkAttr chunk,
                  ConversionState &state, SymbolTableCollection &symbols) {
  int64Global(b, module, chunk.getPlacements(), "__shardlin_placements_",
              state.placementGlobals, symbols);
  if (needsBounds(chunk))
    int64Global(b, module, chunk.getBounds(), "__shardlin_bounds_",
                state.boundsGlobals, symbols);
}

/// Drops shardlin's annotations of function arguments and results
/// (`shardlin.saved` on a backward function's saved values): they are for
/// whoever reads the IR, and LLVM IR has no place for them (the translation
/// warns "Unhandled parameter attribute" for each, on every entry).
void dropArgumentAnnotations(ModuleOp module) {
  auto isShardlin = [](NamedAttribute a) {
    return a.getName().getValue().starts_with("shardlin.");
  };
  auto strip = [&](DictionaryAttr attrs) -> DictionaryAttr {
    if (!attrs || llvm::none_of(attrs, isShardlin))
      return attrs;
    SmallVector<NamedAttribute> kept;
    llvm::copy_if(attrs, std::back_inserter(kept),
                  [&](NamedAttribute a) { return !isShardlin(a); });
    return DictionaryAttr::get(attrs.getContext(), kept);
  };
  module.walk([&](FunctionOpInterface func) {
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      if (DictionaryAttr attrs = func.getArgAttrDict(i))
        func.setArgAttrs(i, strip(attrs));
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
      if (DictionaryAttr attrs = func.getResultAttrDict(i))
        func.setResultAttrs(i, strip(attrs));
  });
}

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
    dropArgumentAnnotations(module);

    // The functions that use the ops, with their world size and whether
    // they need the rank.
    struct Uses {
      llvm::SmallSetVector<int64_t, 2> worldSizes;
      bool rank = false;
    };
    llvm::MapVector<Operation *, Uses> uses;
    llvm::SetVector<const AbiFunction *> needed;
    SmallVector<ChunkAttr> chunks;
    SmallVector<ArrayRef<int64_t>> tables;
    WalkResult walk = module.walk([&](Operation *op) {
      if (!isRuntimeCallOp(op))
        return WalkResult::advance();
      auto func = op->getParentOfType<FunctionOpInterface>();
      if (!func) {
        op->emitOpError("must be inside a function (its code reads the "
                        "thread's context at the function's entry)");
        return WalkResult::interrupt();
      }
      Uses &u = uses[func];
      u.rank |= isa<RankOp>(op);
      u.worldSizes.insert_range(worldSizesOf(op));
      llvm::append_range(chunks, chunksOf(op));
      if (std::optional<ArrayRef<int64_t>> qh = qHeadsOf(op)) {
        tables.push_back(*qh);
        tables.push_back(*kvHeadsOf(op));
      }
      needed.insert(&abiFunctionOf(op));
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
      chunkGlobals(b, module, chunk, state, symbols);
    for (ArrayRef<int64_t> table : tables)
      int64Global(b, module, table, "__shardlin_heads_", state.headTableGlobals,
                  symbols);
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
    populateRuntimeCallPatterns(converter, state, patterns);
    ConversionTarget target(getContext());
    target.addLegalDialect<LLVM::LLVMDialect>();
    target.addIllegalDialect<ShardlinDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
