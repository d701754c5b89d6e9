//===- ElementwiseAdjoint.h - Derivatives of elementwise ops ----*- C++ -*-===//
//
// Internal to the Transforms library: the backward of one rank-local
// elementwise op (a chain member of ElementwiseChains.h: arith and math ops on
// tensors, linalg ops with parallel iterators) as linalg.generic ops that the
// runtime executes like any other chain. See ElementwiseAdjoint.cpp for the
// derivative of each scalar op and docs/training.md for the conventions.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_LIB_TRANSFORMS_ELEMENTWISEADJOINT_H
#define SHARDLIN_LIB_TRANSFORMS_ELEMENTWISEADJOINT_H

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>

namespace mlir::shardlin::detail {

/// A rank-local elementwise op as its backward reads it.
struct ElementwiseForm {
  Operation *op = nullptr;
  /// The distinct tensors the op reads, other than constants, in order of
  /// first use (boolean tensors included: a select's condition).
  SmallVector<Value> inputs;
  /// Whether inputs[i] is read as a rank-1 vector broadcast along the last
  /// dim (a norm's weight, a bias: its gradient is the sum of the rows).
  SmallVector<bool> vector;
  /// Whether inputs[i] is one value per row, R x 1, broadcast along the row
  /// ((d0, ..., 0): a norm's statistics; its gradient is the sum over the
  /// last dim of each row). Otherwise (neither) it has the result's shape.
  SmallVector<bool> row;
  /// The map the op reads inputs[i] through (the identity for an op that
  /// is not a linalg op).
  SmallVector<AffineMap> maps;
};

/// The value of a constant tensor or scalar the backward may fold into a
/// body: a float `arith.constant` (scalar or splat) or a `linalg.fill` of
/// one.
std::optional<double> constantOf(Value v);

/// The form of `op`, which must be a chain member (isChainMember); fails
/// with a located error for what the backward cannot read (a non-constant
/// scalar).
FailureOr<ElementwiseForm> getElementwiseForm(Operation *op);

/// Emits, as one linalg.generic over the result's shape, the contribution of
/// `grad` (the gradient of the op's result, of element type T) to
/// `form.inputs[j]`: grad times the partial derivative of the result with
/// respect to that input, at every element (summed over the input's uses in
/// the op). `primal(i)` gives the backward's value of `form.inputs[i]`,
/// converted to T if it is a float tensor (booleans as they are); it is
/// called only for the inputs the derivative reads (a sum's reads none). The
/// op's scalar computation is rebuilt in T from them. The result has
/// inputs[j]'s shape, or, for a vector or row input, the op's result shape
/// (the caller sums the rows, or each row). Returns a null Value, and emits
/// nothing, when the contribution is zero by construction (the input only
/// reaches the result through a select's condition).
Value emitInputAdjoint(OpBuilder &b, Location loc, const ElementwiseForm &form,
                       unsigned j, Value grad,
                       function_ref<Value(unsigned)> primal);

} // namespace mlir::shardlin::detail

#endif
