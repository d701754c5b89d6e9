//===- LinearOp.cpp - shardlin.linear: verifier and layouts ---------------===//
//
// The verifier of the sharded linear layer (its weight storage, its layouts
// and the shapes they give) and the `layouts IN -> OUT` clause of its
// assembly. Messages name the operand and the rule, because users read them
// against IR that a tool (an importer, a frontend) generated.
//
//===----------------------------------------------------------------------===//

#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"

#include "Verification.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::shardlin;
using namespace mlir::shardlin::detail;

//===----------------------------------------------------------------------===//
// The layouts clause
//===----------------------------------------------------------------------===//

/// `layouts IN -> OUT [along <chunk>]`, absent for the default rows -> rows.
ParseResult mlir::shardlin::parseLinearLayouts(OpAsmParser &parser,
                                               LayoutAttr &input,
                                               LayoutAttr &result,
                                               ChunkAttr &rowChunks) {
  if (failed(parser.parseOptionalKeyword("layouts")))
    return success();
  auto parseLayout = [&](LayoutAttr &attr) -> ParseResult {
    SMLoc loc = parser.getCurrentLocation();
    StringRef keyword;
    if (parser.parseKeyword(&keyword))
      return failure();
    std::optional<Layout> layout = symbolizeLayout(keyword);
    if (!layout)
      return parser.emitError(loc)
             << "expected a layout (rows, replicated or features), got '"
             << keyword << "'";
    attr = LayoutAttr::get(parser.getContext(), *layout);
    return success();
  };
  if (parseLayout(input) || parser.parseArrow() || parseLayout(result))
    return failure();
  // The row split of a rows result: a chunk spec, as the collectives write
  // theirs.
  if (succeeded(parser.parseOptionalKeyword("along")) &&
      parser.parseCustomAttributeWithFallback(rowChunks))
    return failure();
  return success();
}

void mlir::shardlin::printLinearLayouts(OpAsmPrinter &printer, LinearOp op,
                                        LayoutAttr input, LayoutAttr result,
                                        ChunkAttr rowChunks) {
  if (op.hasDefaultLayouts() && !rowChunks)
    return;
  printer << "layouts " << stringifyLayout(op.getInputLayout()) << " -> "
          << stringifyLayout(op.getResultLayout());
  if (rowChunks) {
    printer << " along ";
    printer.printStrippedAttrOrType(rowChunks);
  }
}

//===----------------------------------------------------------------------===//
// LinearOp
//===----------------------------------------------------------------------===//

ChunkAttr LinearOp::getRowSplit() {
  if (ChunkAttr rows = getRowChunksAttr())
    return rows;
  const int64_t w = getWeightType().getNumRanks();
  SmallVector<int64_t> identity(w);
  for (int64_t r = 0; r < w; ++r)
    identity[r] = r;
  return ChunkAttr::get(getContext(), /*dim=*/0, identity);
}

/// The name of a weight dim for messages: "dim 1 (K)".
static std::string weightDimName(LinearOp op, int64_t dim) {
  return "dim " + std::to_string(dim) +
         (dim == op.getKDim() ? " (K)" : " (N)");
}

/// Checks that the layouts are one of the supported pairs with the weight
/// split it needs.
static LogicalResult verifyLayoutPair(LinearOp op) {
  Layout in = op.getInputLayout(), out = op.getResultLayout();
  auto pair = [&] {
    return (Twine("layouts ") + stringifyLayout(in) + " -> " +
            stringifyLayout(out))
        .str();
  };
  auto needSplit = [&](bool k) -> LogicalResult {
    if (op.splitsK() == k)
      return success();
    return op.emitOpError()
           << pair() << " need the weight split along "
           << weightDimName(op, k ? op.getKDim() : op.getNDim())
           << ", but it is split along "
           << weightDimName(op, op.getWeightType().getSharding().getDim());
  };
  if (in == Layout::Rows && out == Layout::Replicated)
    return op.emitOpError()
           << pair()
           << " is not a linear's layout pair: lower rows -> rows and "
              "all_gather the rows";
  if (in == Layout::Features && out == Layout::Features)
    return op.emitOpError()
           << pair()
           << " is not a linear's layout pair: a features input needs a K "
              "split, a features result an N split";
  if (in == Layout::Features)
    return needSplit(/*k=*/true);
  if (out == Layout::Features)
    return needSplit(/*k=*/false);
  return success();
}

/// The result shape the layouts give, for an input of `in` (2-D unless the
/// layouts are the default).
static FailureOr<SmallVector<int64_t>> expectedResultShape(LinearOp op) {
  ArrayRef<int64_t> in = op.getInput().getType().getShape();
  ChunkAttr chunks = op.getWeightType().getSharding();
  const int64_t n = op.getN();
  const int64_t w = chunks.getNumChunks();
  Layout inLayout = op.getInputLayout(), outLayout = op.getResultLayout();
  SmallVector<int64_t> shape(in);
  shape.back() = n;
  if (op.hasDefaultLayouts())
    return shape;
  const int64_t rows = in[0];
  switch (outLayout) {
  case Layout::Replicated:
    return shape;
  case Layout::Features:
    shape.back() = chunks.getLocalSize(n);
    if (inLayout == Layout::Rows) {
      // Every rank's rows, stacked by row_chunks: a static total whose
      // chunks the input's rows fit, or `?`.
      ChunkAttr rowChunks = op.getRowSplit();
      const int64_t total = op.getResult().getType().getShape()[0];
      if (ShapedType::isStatic(total)) {
        if (failed(rowChunks.verifyDimSize([&] { return op.emitOpError(); },
                                           total, "the result's rows")))
          return failure();
        const int64_t local = rowChunks.getLocalSize(total);
        if (ShapedType::isStatic(rows) && rows != local)
          return op.emitOpError()
                 << "the input's " << rows
                 << " rows are not the rank's chunk of the result's " << total
                 << " rows (" << formatDim(local) << ")";
        shape[0] = total;
      } else {
        const bool plainRule =
            !rowChunks.hasExplicitBounds() && !rowChunks.hasBlock();
        shape[0] = ShapedType::isDynamic(rows) || !plainRule
                       ? ShapedType::kDynamic
                       : w * rows;
      }
    }
    return shape;
  case Layout::Rows: {
    ChunkAttr rowChunks = op.getRowSplit();
    if (failed(rowChunks.verifyDimSize([&] { return op.emitOpError(); }, rows,
                                       "the input's rows")))
      return failure();
    shape[0] = rowChunks.getLocalSize(rows);
    return shape;
  }
  }
  return shape;
}

LogicalResult LinearOp::verify() {
  ShardedType wType = getWeightType();
  RankedTensorType inType = getInput().getType();
  RankedTensorType resType = getResult().getType();

  for (auto [v, what] : {std::pair<Value, StringRef>{getInput(), "input"},
                         {getBias(), "bias"},
                         {getResult(), "result"}})
    if (v && failed(checkNoEncoding(*this, v.getType(), what)))
      return failure();
  if (wType.getShape().size() != 2)
    return emitOpError() << "expects a rank-2 weight ("
                         << (getWeightKn() ? "K x N" : "N x K") << "), got rank "
                         << wType.getShape().size() << " ("
                         << wType.getTensorType() << ")";
  int64_t dim = wType.getSharding().getDim();
  if (dim != 0 && dim != 1)
    return emitOpError() << "weight sharding dim must be 0 or 1, got " << dim;
  const int64_t n = getN(), k = getK();
  ChunkAttr chunks = wType.getSharding();

  const bool rowsSplit =
      (getResultLayout() == Layout::Rows && getInputLayout() != Layout::Rows) ||
      (getInputLayout() == Layout::Rows && getResultLayout() == Layout::Features);
  if (getRowChunksAttr() && !rowsSplit)
    return emitOpError() << "row_chunks applies only where one side holds all "
                            "rows and the other the rank's chunk (a rows "
                            "result of a replicated or features input, or "
                            "rows -> features)";
  if (rowsSplit) {
    ChunkAttr rowChunks = getRowSplit();
    if (rowChunks.getDim() != 0)
      return emitOpError() << "row_chunks must split dim 0 (the rows), got dim "
                           << rowChunks.getDim();
    if (rowChunks.getNumChunks() != chunks.getNumChunks())
      return emitOpError() << "row_chunks has " << rowChunks.getNumChunks()
                           << " chunks but the weight is split over "
                           << chunks.getNumChunks() << " ranks";
  }
  if (!hasDefaultLayouts()) {
    if (failed(verifyLayoutPair(*this)))
      return failure();
    if (inType.getRank() != 2 || resType.getRank() != 2)
      return emitOpError() << "layouts " << stringifyLayout(getInputLayout())
                           << " -> " << stringifyLayout(getResultLayout())
                           << " take a 2-D input (rows x K) and give a 2-D "
                              "result, got "
                           << inType << " and " << resType;
  }

  if (inType.getRank() < 1)
    return emitOpError() << "expects an input of rank >= 1, got " << inType;
  const std::string kName =
      "the weight's dim " + std::to_string(getKDim()) + " (K = " +
      std::to_string(k) + ")";
  if (getInputLayout() == Layout::Features) {
    // The rank's chunk of K: `?` when the chunks differ in size.
    const int64_t local = chunks.getLocalSize(k);
    if (inType.getShape().back() != local)
      return emitOpError() << "a features input's last dim ("
                           << formatDim(inType.getShape().back())
                           << ") must be the rank's chunk of "
                           << kName << ": " << formatDim(local);
  } else {
    // Batch dims may be dynamic (sizes known at run time, possibly
    // different on each rank); K is the contraction dim and must be static.
    if (ShapedType::isDynamic(inType.getShape().back()))
      return emitOpError() << "expects the input's last dim (K) to be static "
                              "(only the leading batch dims may be dynamic), "
                              "got "
                           << inType;
    if (inType.getShape().back() != k)
      return emitOpError() << "input's last dim (" << inType.getShape().back()
                           << ") must equal " << kName;
  }

  Type elt = inType.getElementType();
  if (wType.getElementType() != elt)
    return emitOpError() << "weight element type " << wType.getElementType()
                         << " differs from input element type " << elt;

  if (Value bias = getBias()) {
    auto bType = cast<RankedTensorType>(bias.getType());
    if (bType.getRank() != 1)
      return emitOpError() << "expects a rank-1 bias, got " << bType;
    if (bType.getShape()[0] != n)
      return emitOpError() << "bias size (" << formatDim(bType.getShape()[0])
                           << ") must equal the weight's dim " << getNDim()
                           << " (N = " << n << ")";
    if (bType.getElementType() != elt)
      return emitOpError() << "bias element type " << bType.getElementType()
                           << " differs from input element type " << elt;
  }

  FailureOr<SmallVector<int64_t>> expected = expectedResultShape(*this);
  if (failed(expected))
    return failure();
  if (resType.getShape() != ArrayRef<int64_t>(*expected)) {
    InFlightDiagnostic diag = emitOpError()
                              << "result shape "
                              << formatShape(resType.getShape())
                              << " does not match the expected "
                              << formatShape(*expected);
    if (hasDefaultLayouts())
      diag << " (input shape with the last dim replaced by N = " << n << ")";
    else
      diag << " (of layouts " << stringifyLayout(getInputLayout()) << " -> "
           << stringifyLayout(getResultLayout()) << ")";
    return diag;
  }
  if (resType.getElementType() != elt)
    return emitOpError() << "result element type " << resType.getElementType()
                         << " differs from input element type " << elt;
  return success();
}
