//===- RuntimeCalls.h - C ABI calls of the buffer ops ---------*- C++ -*-===//
//
// What the pass (ShardlinToLLVM.cpp) prepares and the patterns
// (RuntimeCalls.cpp) read: the C ABI's functions as LLVM signatures, which
// one an op calls, the constant globals of its chunk specs and each
// function's context and rank.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_LIB_CONVERSION_SHARDLINTOLLVM_RUNTIMECALLS_H
#define SHARDLIN_LIB_CONVERSION_SHARDLINTOLLVM_RUNTIMECALLS_H

#include "shardlin/Dialect/Shardlin/IR/ShardlinAttrs.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::shardlin {

/// A function of shardlin-c/Runtime.h.
struct AbiFunction {
  const char *name;
  /// 'p' ptr, 'i' i32 (int and the enums), 'l' i64, 'd' double; the result
  /// is the first letter.
  const char *signature;
};

extern const AbiFunction kThreadContext;
extern const AbiFunction kContextRank;
extern const AbiFunction kContextWorldSize;

/// True for the ops the patterns lower: the buffer ops and shardlin.rank.
bool isRuntimeCallOp(Operation *op);

/// The ABI function `op` (isRuntimeCallOp) calls: a collective whose chunk
/// specs have explicit bounds other than the ceil rule's calls the *_bounds
/// form, shardlin.rank reads the rank.
const AbiFunction &abiFunctionOf(Operation *op);

/// The head tables of a rank-local buffer.attention or attention_grad (none
/// for other ops and the global form).
std::optional<ArrayRef<int64_t>> qHeadsOf(Operation *op);
std::optional<ArrayRef<int64_t>> kvHeadsOf(Operation *op);

/// The chunk specs among `op`'s attributes.
SmallVector<ChunkAttr> chunksOf(Operation *op);

/// True when `chunk` has explicit bounds that are not the ceil rule's: the
/// call passes them (a null pointer stands for the ceil rule).
bool needsBounds(ChunkAttr chunk);

/// Whether the op's call is a *_bounds one: a chunk spec of its own needs
/// bounds, or it has a bounds operand (buffers of shardlin.gather_bounds).
bool hasBounds(Operation *op);

/// The world size `op` is compiled for, if it names one (its chunk specs'
/// chunk count, the world_size of shardlin.rank and all_reduce, the pairs
/// of a rank-local attention's head tables); more than one for an op whose
/// specs differ.
SmallVector<int64_t, 2> worldSizesOf(Operation *op);

/// Per function: the thread's context and (if used) rank, read at its entry.
struct FunctionState {
  Value context;
  Value rank; // i64, or null
};

struct ConversionState {
  llvm::DenseMap<Operation *, FunctionState> functions;
  /// Placement list -> the name of its constant global.
  llvm::DenseMap<Attribute, StringAttr> placementGlobals;
  /// Explicit bounds (needsBounds) -> the name of their constant global.
  llvm::DenseMap<Attribute, StringAttr> boundsGlobals;
  /// An attention's head table (q_heads, kv_heads) -> its constant global.
  llvm::DenseMap<Attribute, StringAttr> headTableGlobals;
};

/// One pattern per buffer op and shardlin.rank, reading `state`.
void populateRuntimeCallPatterns(const LLVMTypeConverter &converter,
                                 const ConversionState &state,
                                 RewritePatternSet &patterns);

} // namespace mlir::shardlin

#endif
