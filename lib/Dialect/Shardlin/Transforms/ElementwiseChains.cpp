//===- ElementwiseChains.cpp - Chains of rank-local elementwise ops -------===//

#include "shardlin/Dialect/Shardlin/Transforms/ElementwiseChains.h"
#include "shardlin/Dialect/Shardlin/IR/RowReductions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectRegistry.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::shardlin;

const char *const mlir::shardlin::kSupportedElementwiseOps =
    "arith.addf, subf, mulf, divf, negf, maximumf, minimumf, maxnumf, "
    "minnumf, cmpf, select and splat float constants; math.tanh, erf, exp, "
    "log, sqrt, rsqrt, absf, and fpowi with a constant integer exponent; "
    "linalg ops with parallel iterators, identity "
    "maps, a vector broadcast along the last dim or an R x 1 column along "
    "the rows ((d0, d1) -> (d0, 0)) and a body of those ops "
    "(linalg.elementwise, linalg.generic, linalg.fill); tensor.empty as "
    "their init; arith.extf and truncf between f16 or bf16 and f32";

void mlir::shardlin::registerElementwiseDialects(DialectRegistry &registry) {
  registry.insert<arith::ArithDialect, math::MathDialect, linalg::LinalgDialect,
                  tensor::TensorDialect>();
}

namespace {

/// The arith and math ops that compute one element from elements.
bool isElementOp(Operation *op) {
  static const llvm::StringSet<> names = {
      "arith.addf",    "arith.subf",     "arith.mulf",     "arith.divf",
      "arith.negf",    "arith.maximumf", "arith.minimumf", "arith.maxnumf",
      "arith.minnumf", "arith.cmpf",     "arith.select",   "math.tanh",
      "math.erf",      "math.exp",       "math.log",       "math.sqrt",
      "math.rsqrt",    "math.absf",      "math.fpowi"};
  return names.contains(op->getName().getStringRef());
}

/// An integer arith.constant, scalar or splat tensor: the exponent of a
/// math.fpowi (powerExponent), which reads it itself; no step of a chain.
bool isIntegerConstant(Operation *op) {
  return integerConstantValue(op).has_value();
}

/// arith.extf or arith.truncf between f16 or bf16 and f32 (on tensors or
/// scalars): the mixed-precision idiom of producers (torch-mlir's bf16 GELU
/// computes in f32 between the two).
bool isConversion(Operation *op) {
  if (!isa<arith::ExtFOp, arith::TruncFOp>(op))
    return false;
  Type from = getElementTypeOrSelf(op->getOperand(0).getType());
  Type to = getElementTypeOrSelf(op->getResult(0).getType());
  auto narrow = [](Type t) { return t.isF16() || t.isBF16(); };
  return (narrow(from) && to.isF32()) || (from.isF32() && narrow(to));
}

bool isFloatOrBool(Type t) {
  return t.isF16() || t.isBF16() || t.isF32() || t.isF64() || t.isInteger(1);
}

bool isBoolTensor(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.getElementType().isInteger(1);
}

/// The map of a rank-1 operand broadcast along the last of `numLoops` dims.
bool isLastDimBroadcast(AffineMap map, unsigned numLoops) {
  return map.getNumDims() == numLoops && map.getNumResults() == 1 &&
         map.getResult(0) == getAffineDimExpr(numLoops - 1, map.getContext());
}

/// Why the linalg op cannot be part of a chain, or empty.
std::string linalgProblem(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics())
    return "it works on buffers, not tensors";
  if (op->getNumResults() != 1)
    return "it has " + std::to_string(op->getNumResults()) +
           " results (one is supported)";
  if (!op.isAllParallelLoops())
    return "its iterators are not all parallel (a reduction or a "
           "contraction is not an elementwise op)";
  if (op.hasIndexSemantics())
    return "its body reads linalg.index";
  unsigned loops = op.getNumLoops();
  for (OpOperand &init : op.getDpsInitsMutable())
    if (!op.getMatchingIndexingMap(&init).isIdentity())
      return "its init's indexing map is not the identity";
  for (OpOperand *in : op.getDpsInputOperands()) {
    Type t = in->get().getType();
    AffineMap map = op.getMatchingIndexingMap(in);
    if (!isa<ShapedType>(t)) {
      if (map.getNumResults() != 0)
        return "a scalar input has a non-constant map";
      continue;
    }
    if (map.isIdentity())
      continue;
    if (cast<ShapedType>(t).getRank() == 1 && loops > 1 &&
        isLastDimBroadcast(map, loops))
      continue;
    // A norm's R x 1 statistics along the row (a column operand).
    if (isa<linalg::GenericOp>(op) &&
        isRowBroadcastMap(map, t, loops, /*keepDimOnly=*/true))
      continue;
    return "input #" + std::to_string(in->getOperandNumber()) +
           "'s indexing map is neither the identity nor a vector broadcast "
           "along the last dim";
  }
  for (Operation &body : op.getBlock()->without_terminator()) {
    if (floatConstantValue(&body) ||
        (isa<arith::ConstantOp>(body) && isIntegerConstant(&body)))
      continue;
    if (!isElementOp(&body) && !isConversion(&body))
      return "its body holds '" + body.getName().getStringRef().str() + "'";
    if (isa<math::FPowIOp>(body) && !powerExponent(&body))
      return "its body's math.fpowi has an exponent that is not a constant";
  }
  return {};
}

bool isDialect(Operation &op, StringRef ns) {
  return op.getName().getDialectNamespace() == ns;
}

} // namespace

LogicalResult mlir::shardlin::isChainMember(Operation &op, bool &member,
                                            bool emitErrors) {
  member = false;
  auto fail = [&](auto &&...parts) -> LogicalResult {
    if (emitErrors) {
      InFlightDiagnostic d = op.emitError();
      (d << ... << parts);
    }
    return failure();
  };
  auto unsupported = [&](const std::string &why) {
    return fail("the shardlin runtime cannot execute '",
                op.getName().getStringRef(), "'", why,
                " (elementwise ops it executes: ", kSupportedElementwiseOps,
                ")");
  };
  if (isDialect(op, "arith") || isDialect(op, "math")) {
    if (op.getNumResults() != 1)
      return unsupported("");
    Type type = op.getResult(0).getType();
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (isSizeComputation(op)) {
      // An index or integer scalar (a dim number of tensor.dim, a size of a
      // dynamic shape, an exponent of math.fpowi): not part of a chain; its
      // users say whether they run.
      return success();
    }
    if (isIntegerConstant(&op)) {
      // A splat integer tensor: the exponent of an fpowi on tensors.
      member = true;
      return success();
    }
    if (isa<arith::ConstantOp>(op)) {
      // Float scalars feed linalg bodies and fills; splat tensors feed
      // elementwise ops.
      if (!floatConstantValue(&op) || (tensor && !tensor.hasStaticShape()))
        return fail("the shardlin runtime cannot execute this constant: only "
                    "float scalars and splat float tensors are supported");
      member = true;
      return success();
    }
    if (!isElementOp(&op) && !isConversion(&op))
      return unsupported("");
    if (!tensor)
      return fail("the shardlin runtime executes '",
                  op.getName().getStringRef(), "' on tensors, not on ", type,
                  " (scalars only inside a linalg body)");
    if (isa<math::FPowIOp>(op) && !powerExponent(&op))
      return fail("the shardlin runtime executes 'math.fpowi' only with a "
                  "constant integer exponent (a scalar or splat "
                  "arith.constant)");
    for (Value v : op.getOperands()) {
      if (isa<math::FPowIOp>(op) && v == op.getOperand(1))
        continue;
      auto t = dyn_cast<RankedTensorType>(v.getType());
      if (!t || !isFloatOrBool(t.getElementType()))
        return fail("the shardlin runtime executes '",
                    op.getName().getStringRef(),
                    "' on tensors of f16, bf16, f32 or f64 (and i1 "
                    "conditions), not on ",
                    v.getType());
    }
    member = true;
    return success();
  }
  // Rank-local ops of their own (a GEMM, a strided copy): not elementwise,
  // and no error; their users and the executor say whether they run.
  if (isa<linalg::MatmulOp, linalg::TransposeOp>(op) ||
      matchRowReduction(&op))
    return success();
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    std::string problem = linalgProblem(linalgOp);
    if (!problem.empty())
      return unsupported(": " + problem);
    auto tensor = dyn_cast<RankedTensorType>(op.getResult(0).getType());
    if (!tensor || !isFloatOrBool(tensor.getElementType()))
      return unsupported(" on this type");
    member = true;
    return success();
  }
  if (isa<linalg::LinalgDialect>(op.getDialect()))
    return unsupported("");
  member = isa<tensor::EmptyOp>(op);
  return success();
}

//===----------------------------------------------------------------------===//
// Walking a chain
//===----------------------------------------------------------------------===//

namespace {

class Walker {
public:
  Walker(function_ref<bool(Value)> isLeaf, ChainVisitor &visitor,
         bool emitErrors)
      : isLeaf_(isLeaf), visitor_(visitor), emitErrors_(emitErrors) {}

  /// The handle computing `v`'s element (a tensor value of the chain, or a
  /// scalar of a linalg body).
  FailureOr<int> handle(Value v) {
    auto it = memo_.find(v);
    if (it != memo_.end())
      return it->second;
    FailureOr<int> h = compute(v);
    if (succeeded(h))
      memo_[v] = *h;
    return h;
  }

private:
  FailureOr<int> compute(Value v) {
    Operation *def = v.getDefiningOp();
    if (!isa<ShapedType>(v.getType())) {
      // A scalar from outside the linalg bodies: only constants.
      if (std::optional<double> c = floatConstantValue(def))
        return visitor_.constant(*c, v.getType());
      return fail(v.getLoc(), "the shardlin runtime takes only constants as "
                              "scalars in elementwise ops");
    }
    if (!def || isLeaf_(v))
      return visitor_.input(v, /*vector=*/false);
    if (isa<tensor::EmptyOp>(def))
      return fail(def->getLoc(),
                  "reads a tensor.empty, whose contents are undefined");
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(def))
      return linalg(linalgOp);
    return elementOp(def);
  }

  FailureOr<int> elementOp(Operation *op) {
    if (std::optional<double> c = floatConstantValue(op))
      return visitor_.constant(*c, getElementTypeOrSelf(op->getResult(0)));
    if (isConversion(op)) {
      FailureOr<int> arg = handle(op->getOperand(0));
      if (failed(arg))
        return failure();
      return visitor_.convert(op, *arg);
    }
    if (isa<math::FPowIOp>(op)) {
      std::optional<int64_t> exponent = powerExponent(op);
      if (!exponent)
        return fail(op->getLoc(), "the shardlin runtime executes "
                                  "'math.fpowi' only with a constant "
                                  "integer exponent");
      FailureOr<int> base = handle(op->getOperand(0));
      if (failed(base))
        return failure();
      return visitor_.power(op, *base, *exponent);
    }
    if (!isElementOp(op))
      return fail(op->getLoc(), "the shardlin runtime cannot execute '" +
                                    op->getName().getStringRef().str() +
                                    "' (elementwise ops it executes: " +
                                    kSupportedElementwiseOps + ")");
    SmallVector<int, 3> args;
    for (Value operand : op->getOperands()) {
      FailureOr<int> a = handle(operand);
      if (failed(a))
        return failure();
      args.push_back(*a);
    }
    return visitor_.compute(op, args);
  }

  /// A linalg op: its body, with its block arguments mapped to the handles
  /// of the operands they read.
  FailureOr<int> linalg(linalg::LinalgOp op) {
    for (OpOperand &operand : op->getOpOperands()) {
      if (!op.payloadUsesValueFromOperand(&operand))
        continue;
      Value v = operand.get();
      // An exponent: its fpowi reads it (powerExponent).
      if (isIntegerConstant(v.getDefiningOp()))
        continue;
      if (isa_and_nonnull<tensor::EmptyOp>(v.getDefiningOp()))
        return fail(
            op->getLoc(),
            "reads its tensor.empty init, whose contents are undefined");
      FailureOr<int> h = failure();
      // A row vector (a broadcast along the rows), or a column, which the
      // runtime reads as a full operand of its own shape (R x 1).
      if (isa<ShapedType>(v.getType()) &&
          !op.getMatchingIndexingMap(&operand).isIdentity())
        h = visitor_.input(v, /*vector=*/isLastDimBroadcast(
                                  op.getMatchingIndexingMap(&operand),
                                  op.getNumLoops()));
      else
        h = handle(v);
      if (failed(h))
        return failure();
      memo_[op.getMatchingBlockArgument(&operand)] = *h;
    }
    Block *body = op.getBlock();
    for (Operation &inner : body->without_terminator()) {
      if (isIntegerConstant(&inner))
        continue;
      FailureOr<int> h = elementOp(&inner);
      if (failed(h))
        return failure();
      memo_[inner.getResult(0)] = *h;
    }
    return handle(body->getTerminator()->getOperand(0));
  }

  LogicalResult fail(Location loc, const Twine &message) {
    if (emitErrors_)
      emitError(loc) << message;
    return failure();
  }

  function_ref<bool(Value)> isLeaf_;
  ChainVisitor &visitor_;
  bool emitErrors_;
  llvm::DenseMap<Value, int> memo_;
};

/// The element types a chain reads, how it reads them, and its first
/// conversion. Handles: an input's index, or -1 for any other step.
class TypesVisitor : public ChainVisitor {
public:
  FailureOr<int> input(Value value, bool) override {
    inputTypes.push_back(getElementTypeOrSelf(value.getType()));
    readDirectly.push_back(false);
    convertedTo.push_back(Type());
    return static_cast<int>(inputTypes.size()) - 1;
  }
  FailureOr<int> constant(double, Type) override { return -1; }
  FailureOr<int> compute(Operation *, ArrayRef<int> args) override {
    for (int a : args)
      if (a >= 0)
        readDirectly[a] = true;
    return -1;
  }
  FailureOr<int> power(Operation *, int base, int64_t) override {
    return compute(nullptr, {base});
  }
  FailureOr<int> convert(Operation *op, int arg) override {
    if (!conversion)
      conversion = op;
    if (arg < 0)
      return -1;
    Type to = getElementTypeOrSelf(op->getResult(0).getType());
    if (convertedTo[arg] && convertedTo[arg] != to)
      readDirectly[arg] = true;
    convertedTo[arg] = to;
    return -1;
  }
  /// Whether input `i` is read only through conversions to `type`: a
  /// `convert` instruction of it to `type` is then exactly those
  /// conversions (a widening is exact, a narrowing its one rounding).
  bool onlyConvertedTo(size_t i, Type type) const {
    return !readDirectly[i] && convertedTo[i] == type;
  }
  SmallVector<Type> inputTypes;
  SmallVector<bool> readDirectly;
  SmallVector<Type> convertedTo;
  Operation *conversion = nullptr;
};

} // namespace

FailureOr<int> mlir::shardlin::walkChain(Value root,
                                         function_ref<bool(Value)> isLeaf,
                                         ChainVisitor &visitor,
                                         bool emitErrors) {
  return Walker(isLeaf, visitor, emitErrors).handle(root);
}

//===----------------------------------------------------------------------===//
// The chains of a function
//===----------------------------------------------------------------------===//

bool ElementwiseChains::fusesInto(OpOperand &use) const {
  Operation *user = use.getOwner();
  if (!members_.contains(user))
    return false;
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(user))
    return linalgOp.getMatchingIndexingMap(&use).isIdentity();
  return true;
}

FailureOr<int> ElementwiseChains::walk(Operation *root,
                                       ChainVisitor &visitor) const {
  auto isLeaf = [&](Value v) {
    Operation *def = v.getDefiningOp();
    return def != root && (!members_.contains(def) || stored_.contains(def));
  };
  return walkChain(root->getResult(0), isLeaf, visitor);
}

LogicalResult ElementwiseChains::analyze(Block &body) {
  for (Operation &op : body) {
    bool member = false;
    if (failed(isChainMember(op, member, /*emitErrors=*/true)))
      return failure();
    if (member)
      members_.insert(&op);
  }

  // Stored: a value that something outside the chains reads (or reads by
  // broadcast).
  for (Operation &op : body) {
    if (!members_.contains(&op))
      continue;
    Value v = op.getResult(0);
    // A linalg.transpose writes all of its init and never reads it. A
    // boolean's sizes (tensor.dim: the import sizes an init by the first
    // operand of its op, which may be a select's condition) are its chain's
    // operands' sizes, not a read of the tensor.
    bool boolean = isBoolTensor(v);
    auto outside = llvm::find_if(v.getUses(), [&](OpOperand &u) {
      auto transpose = dyn_cast<linalg::TransposeOp>(u.getOwner());
      return !fusesInto(u) && !(transpose && transpose.isDpsInit(&u)) &&
             !(boolean && isa<tensor::DimOp>(u.getOwner()));
    });
    if (outside == v.getUses().end())
      continue;
    if (isa<tensor::EmptyOp>(op))
      return outside->getOwner()->emitError()
             << "reads a tensor.empty, whose contents are undefined (the "
                "shardlin runtime takes tensor.empty only as the unread init "
                "of an elementwise linalg op)";
    if (!isa<RankedTensorType>(v.getType()))
      continue; // A scalar constant: its user reports what it cannot run.
    if (boolean)
      return op.emitError() << "a boolean tensor cannot be stored: the "
                               "shardlin runtime uses comparisons only as "
                               "the condition of a select in the same chain";
    if (isa<arith::ConstantOp>(op))
      return op.emitError()
             << "a constant tensor is supported only as an operand of "
                "elementwise ops (the runtime folds it into them)";
    stored_.insert(&op);
  }

  // A value that two stored values both compute from is stored too, so that
  // no chain computes it again (booleans, which cannot be stored, and
  // constants, which cost nothing, are recomputed). Users come after their
  // operands, so one walk from the end sees every user's reach first.
  llvm::DenseMap<Operation *, llvm::SmallPtrSet<Operation *, 2>> reach;
  for (Operation &op : llvm::reverse(body)) {
    if (!members_.contains(&op) || isa<tensor::EmptyOp, arith::ConstantOp>(op))
      continue;
    llvm::SmallPtrSet<Operation *, 2> mine;
    if (!stored_.contains(&op))
      for (OpOperand &u : op.getResult(0).getUses())
        if (fusesInto(u))
          for (Operation *r : reach[u.getOwner()])
            mine.insert(r);
    if (stored_.contains(&op) ||
        (mine.size() > 1 && !isBoolTensor(op.getResult(0)))) {
      stored_.insert(&op);
      mine.clear();
      mine.insert(&op);
    }
    reach[&op] = std::move(mine);
  }

  // The runtime computes one instruction in one element type, from inputs
  // of that type to a stored value of it: a conversion is executed inside a
  // chain that converts back (extf, f32 ops, truncf), where it is the
  // rounding of the stored value, and on an input that the chain reads only
  // through conversions to the stored type (a matmul's f32 result that
  // torch-mlir's bf16 form truncates first), which the executor converts
  // before (convertedInput).
  for (Operation &op : body) {
    if (!stored_.contains(&op))
      continue;
    TypesVisitor types;
    if (failed(walk(&op, types)))
      return failure();
    Type stored = getElementTypeOrSelf(op.getResult(0).getType());
    Type unrunnable;
    for (auto [i, t] : llvm::enumerate(types.inputTypes))
      if (t != stored && !types.onlyConvertedTo(i, stored) && !unrunnable)
        unrunnable = t;
    if (!unrunnable)
      continue;
    Operation *at = types.conversion ? types.conversion : &op;
    return at->emitError()
           << "the shardlin runtime cannot execute '" << at->getName()
           << "' (elementwise ops it executes: " << kSupportedElementwiseOps
           << "): here a chain of " << stored << " values would read a "
           << unrunnable
           << " tensor; an instruction reads and stores one element type, so "
              "a conversion runs only between a widening and the narrowing "
              "that stores its value, or on an input that the chain reads "
              "only through conversions to the stored type";
  }

  return success();
}

std::optional<double> mlir::shardlin::floatConstantValue(Operation *op) {
  // A scalar constant narrowed or widened (torch-mlir's f64 epsilon of a
  // LayerNorm, truncated to f32 in a body): that of the result type.
  if (isa_and_nonnull<arith::TruncFOp, arith::ExtFOp>(op) &&
      isa<FloatType>(op->getResult(0).getType())) {
    std::optional<double> v =
        floatConstantValue(op->getOperand(0).getDefiningOp());
    if (!v)
      return std::nullopt;
    APFloat f(*v);
    bool lost = false;
    f.convert(cast<FloatType>(op->getResult(0).getType()).getFloatSemantics(),
              APFloat::rmNearestTiesToEven, &lost);
    return f.convertToDouble();
  }
  auto cst = dyn_cast_or_null<arith::ConstantOp>(op);
  if (!cst)
    return std::nullopt;
  if (auto f = dyn_cast<FloatAttr>(cst.getValue()))
    return f.getValueAsDouble();
  auto dense = dyn_cast<DenseFPElementsAttr>(cst.getValue());
  if (dense && dense.isSplat())
    return dense.getSplatValue<APFloat>().convertToDouble();
  return std::nullopt;
}

/// The value of an integer scalar that size computations (math.ipowi, the
/// index math an importer writes) compute from constants alone: each op
/// folded by its own folder, at most `depth` ops deep.
static std::optional<int64_t> foldedIntegerScalar(Operation *op,
                                                  unsigned depth) {
  if (!op || depth == 0 || isa<arith::ConstantOp>(op) ||
      op->getNumResults() != 1 || !isSizeComputation(*op) ||
      !op->getResult(0).getType().isSignlessInteger())
    return std::nullopt;
  SmallVector<Attribute> operands;
  for (Value v : op->getOperands()) {
    std::optional<int64_t> c = integerConstantValue(v.getDefiningOp());
    if (!c)
      c = foldedIntegerScalar(v.getDefiningOp(), depth - 1);
    if (!c)
      return std::nullopt;
    operands.push_back(IntegerAttr::get(v.getType(), *c));
  }
  SmallVector<OpFoldResult> results;
  if (failed(op->fold(operands, results)) || results.size() != 1)
    return std::nullopt;
  auto folded = dyn_cast_if_present<IntegerAttr>(
      dyn_cast_if_present<Attribute>(results[0]));
  if (!folded || folded.getValue().getSignificantBits() > 64)
    return std::nullopt;
  return folded.getValue().getSExtValue();
}

std::optional<int64_t> mlir::shardlin::integerConstantValue(Operation *op) {
  auto cst = dyn_cast_or_null<arith::ConstantOp>(op);
  if (!cst)
    return foldedIntegerScalar(op, /*depth=*/8);
  Type elt = getElementTypeOrSelf(cst.getType());
  if (!elt.isSignlessInteger() || elt.isInteger(1))
    return std::nullopt;
  APInt value;
  if (auto i = dyn_cast<IntegerAttr>(cst.getValue()))
    value = i.getValue();
  else if (auto dense = dyn_cast<DenseIntElementsAttr>(cst.getValue());
           dense && dense.isSplat())
    value = dense.getSplatValue<APInt>();
  else
    return std::nullopt;
  if (value.getSignificantBits() > 64)
    return std::nullopt;
  return value.getSExtValue();
}

std::optional<int64_t> mlir::shardlin::powerExponent(Operation *fpowi) {
  auto pow = dyn_cast_or_null<math::FPowIOp>(fpowi);
  if (!pow)
    return std::nullopt;
  Value exponent = pow.getRhs();
  // A linalg body's scalar input: the operand it stands for.
  if (auto arg = dyn_cast<BlockArgument>(exponent))
    if (auto linalgOp =
            dyn_cast<linalg::LinalgOp>(arg.getOwner()->getParentOp()))
      if (arg.getOwner() == linalgOp.getBlock())
        exponent = linalgOp.getMatchingOpOperand(arg)->get();
  return integerConstantValue(exponent.getDefiningOp());
}

FailureOr<int> mlir::shardlin::expandPower(
    int base, int64_t exponent, function_ref<FailureOr<int>(int, int)> multiply,
    function_ref<FailureOr<int>(int)> reciprocal,
    function_ref<FailureOr<int>()> one) {
  if (exponent == 0)
    return one();
  // |n| as unsigned, so that INT64_MIN has one too.
  uint64_t bits = exponent < 0 ? 0 - static_cast<uint64_t>(exponent)
                               : static_cast<uint64_t>(exponent);
  std::optional<int> result;
  int square = base;
  while (true) {
    if (bits & 1) {
      if (result) {
        FailureOr<int> p = multiply(*result, square);
        if (failed(p))
          return failure();
        result = *p;
      } else {
        result = square; // 1 * x^(2^i), exact
      }
    }
    bits >>= 1;
    if (bits == 0)
      break;
    FailureOr<int> s = multiply(square, square);
    if (failed(s))
      return failure();
    square = *s;
  }
  return exponent < 0 ? reciprocal(*result) : FailureOr<int>(*result);
}

bool mlir::shardlin::isSizeComputation(Operation &op) {
  if (isa<tensor::DimOp>(op))
    return true;
  if (!isa<arith::ConstantOp, arith::AddIOp, arith::SubIOp, arith::MulIOp,
           arith::DivUIOp, arith::DivSIOp, arith::CeilDivUIOp,
           arith::CeilDivSIOp, arith::FloorDivSIOp, arith::RemUIOp,
           arith::RemSIOp, arith::MinUIOp, arith::MaxUIOp, arith::MinSIOp,
           arith::MaxSIOp, arith::IndexCastOp, arith::IndexCastUIOp,
           math::IPowIOp>(op))
    return false;
  auto scalarInt = [](Type t) {
    return t.isIndex() || (t.isSignlessInteger() && !t.isInteger(1));
  };
  return llvm::all_of(op.getOperandTypes(), scalarInt) &&
         llvm::all_of(op.getResultTypes(), scalarInt);
}
