//===- RowReductions.h - Reductions over the last dim, recognized -*- C++
//-*-===//
//
// A norm as producers export it (torch-mlir's RMSNorm and LayerNorm): the
// sum (or maximum) of each row of a tensor, a `linalg.generic` with
// iterators [parallel, ..., reduction] into a keep-dim `R x 1` init
// ((d0, d1) -> (d0, 0)) or a `linalg.reduce` over the last dim into `R`,
// and the broadcast of such a per-row value along the row by the operand
// map (d0, d1) -> (d0, 0) (or (d0) of a rank-reduced one). The import
// (ImportShardReductions.cpp), the elementwise chains and the translator
// (TranslateReductions.cpp) recognize them here, in one place. Header-only:
// its users link the linalg dialect.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_DIALECT_SHARDLIN_IR_ROWREDUCTIONS_H
#define SHARDLIN_DIALECT_SHARDLIN_IR_ROWREDUCTIONS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineMap.h"

#include <optional>

namespace mlir::shardlin {

/// How a row reduction combines an element with its accumulator.
enum class RowCombine { Add, Maximum, MaxNum };

struct RowReduction {
  /// The reduced tensor (rank >= 1) and the init (its leading dims, with
  /// or without a last dim of 1).
  Value input, init;
  RowCombine combine = RowCombine::Add;
  /// The init keeps the reduced dim as 1 (a linalg.generic's R x 1).
  bool keepDim = true;
};

namespace detail {

/// (d0, ..., d{n-2}) followed by the constant 0 when `keepDim`.
inline bool isLeadingDimsMap(AffineMap map, unsigned loops, bool keepDim) {
  if (map.getNumDims() != loops || map.getNumSymbols() != 0 ||
      map.getNumResults() != (keepDim ? loops : loops - 1))
    return false;
  for (unsigned d = 0; d + 1 < loops; ++d)
    if (map.getResult(d) != getAffineDimExpr(d, map.getContext()))
      return false;
  if (!keepDim)
    return true;
  auto zero = dyn_cast<AffineConstantExpr>(map.getResult(loops - 1));
  return zero && zero.getValue() == 0;
}

/// The body `yield(combine(element, acc))` of a reduction, either order.
inline std::optional<RowCombine> combineOf(Block &body) {
  if (body.getNumArguments() != 2 ||
      !llvm::hasSingleElement(body.without_terminator()))
    return std::nullopt;
  Operation &op = body.front();
  Operation *yield = body.getTerminator();
  if (yield->getNumOperands() != 1 || op.getNumResults() != 1 ||
      yield->getOperand(0) != op.getResult(0) || op.getNumOperands() != 2)
    return std::nullopt;
  Value a = op.getOperand(0), b = op.getOperand(1);
  Value in = body.getArgument(0), acc = body.getArgument(1);
  if (!((a == in && b == acc) || (a == acc && b == in)))
    return std::nullopt;
  if (isa<arith::AddFOp>(op))
    return RowCombine::Add;
  if (isa<arith::MaximumFOp>(op))
    return RowCombine::Maximum;
  if (isa<arith::MaxNumFOp>(op))
    return RowCombine::MaxNum;
  return std::nullopt;
}

} // namespace detail

/// `op` as a reduction over the last dim of one tensor into one init: a
/// linalg.generic (identity input map, keep-dim or rank-reduced init map,
/// iterators all parallel but the last) or a linalg.reduce over the last
/// dim, on tensors, whose body combines by arith.addf, maximumf or maxnumf.
inline std::optional<RowReduction> matchRowReduction(Operation *op) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureTensorSemantics() ||
      linalgOp.getNumDpsInputs() != 1 || linalgOp.getNumDpsInits() != 1 ||
      op->getNumResults() != 1 || linalgOp.hasIndexSemantics())
    return std::nullopt;
  RowReduction r;
  r.input = linalgOp.getDpsInputOperand(0)->get();
  r.init = linalgOp.getDpsInitOperand(0)->get();
  auto in = dyn_cast<RankedTensorType>(r.input.getType());
  auto init = dyn_cast<RankedTensorType>(r.init.getType());
  if (!in || !init || in.getRank() < 1 ||
      in.getElementType() != init.getElementType())
    return std::nullopt;
  const unsigned loops = static_cast<unsigned>(in.getRank());
  if (init.getRank() == in.getRank())
    r.keepDim = true;
  else if (init.getRank() + 1 == in.getRank())
    r.keepDim = false;
  else
    return std::nullopt;
  if (r.keepDim && init.getShape().back() != 1)
    return std::nullopt;
  if (auto reduce = dyn_cast<linalg::ReduceOp>(op)) {
    if (r.keepDim || reduce.getDimensions().size() != 1 ||
        reduce.getDimensions()[0] != static_cast<int64_t>(loops) - 1)
      return std::nullopt;
  } else if (isa<linalg::GenericOp>(op)) {
    if (linalgOp.getNumLoops() != loops ||
        linalgOp.getNumReductionLoops() != 1 ||
        linalgOp.getIteratorTypesArray()[loops - 1] !=
            utils::IteratorType::reduction ||
        !linalgOp.getMatchingIndexingMap(linalgOp.getDpsInputOperand(0))
             .isIdentity() ||
        !detail::isLeadingDimsMap(
            linalgOp.getMatchingIndexingMap(linalgOp.getDpsInitOperand(0)),
            loops, r.keepDim))
      return std::nullopt;
  } else {
    return std::nullopt;
  }
  std::optional<RowCombine> combine = detail::combineOf(*linalgOp.getBlock());
  if (!combine)
    return std::nullopt;
  r.combine = *combine;
  return r;
}

/// Whether an input of `type` read through `map` in a linalg op of `loops`
/// dims is one value per row broadcast along the row: (d0, ..., d{n-2}, 0)
/// of a keep-dim operand (last dim 1), or, unless `keepDimOnly`,
/// (d0, ..., d{n-2}) of a rank-reduced one.
inline bool isRowBroadcastMap(AffineMap map, Type type, unsigned loops,
                              bool keepDimOnly = false) {
  auto t = dyn_cast<RankedTensorType>(type);
  if (!t || loops < 2)
    return false;
  if (t.getRank() == loops)
    return t.getShape().back() == 1 &&
           detail::isLeadingDimsMap(map, loops, /*keepDim=*/true);
  return !keepDimOnly && t.getRank() + 1 == loops &&
         detail::isLeadingDimsMap(map, loops, /*keepDim=*/false);
}

} // namespace mlir::shardlin

#endif // SHARDLIN_DIALECT_SHARDLIN_IR_ROWREDUCTIONS_H
