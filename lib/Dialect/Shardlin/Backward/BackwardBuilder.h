//===- BackwardBuilder.h - The backward of a lowered function ---*- C++ -*-===//
//
// Internal to the Transforms library: reverse mode over a lowered forward
// function (collectives, GEMMs, reshapes, elementwise ops), which
// --shardlin-generate-backward runs on a lowered copy of each function. Each
// collective's adjoint is its dual with the same chunk specs, so the backward
// is exact for every chunk spec the forward's lowering handles. See
// BackwardBuilder.cpp and docs/training.md.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_LIB_TRANSFORMS_BACKWARDBUILDER_H
#define SHARDLIN_LIB_TRANSFORMS_BACKWARDBUILDER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallBitVector.h"

namespace mlir::shardlin::detail {

/// Whether `op`'s result is costly to recompute: a collective's (bytes on
/// the wire) or a GEMM's. The backward saves or recomputes these; every
/// other forward value it needs is recomputed from them (views, reshapes,
/// converts and elementwise chains).
bool isCostly(Operation *op);

struct BackwardRequest {
  /// The lowered forward function (no shardlin.linear).
  func::FuncOp forward;
  /// The function to fill: an entry block whose arguments are the
  /// forward's, then the gradient of each forward result. The builder adds
  /// the saved values as further arguments, the body and the return, and
  /// sets the function type.
  func::FuncOp backward;
  /// The forward's arguments that every rank holds alike (a linear's bias,
  /// and what only computes biases): their gradient is summed over ranks.
  llvm::SmallBitVector replicatedArgs;
  /// Whether a costly forward value (isCostly) that the backward needs is
  /// passed in (saved by the forward) rather than recomputed.
  function_ref<bool(Value)> save;
  /// Set, where given, to the forward's results that every rank holds
  /// alike (a replicated result): their gradient is one tensor, every
  /// rank's alike, not each rank's own.
  llvm::SmallBitVector *replicatedResults = nullptr;
};

/// Fills `request.backward`. Returns the forward values it takes as saved
/// arguments, in the order of those arguments; fails, with a located
/// error, on an op it cannot differentiate.
FailureOr<SmallVector<Value>> buildBackward(const BackwardRequest &request);

} // namespace mlir::shardlin::detail

#endif
