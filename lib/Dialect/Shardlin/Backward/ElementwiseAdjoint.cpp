//===- ElementwiseAdjoint.cpp - Derivatives of elementwise ops ------------===//
//
// The backward of one elementwise op is, for each tensor it reads, one
// linalg.generic whose body first rebuilds the op's scalar computation from
// the forward values (a linalg body op by op, or the arith/math op itself),
// then runs reverse mode over those scalars, seeded with the result's
// gradient. So GELU, SiLU, ReLU, SwiGLU's product and residual adds, written
// with any of the forms the chains accept, get the exact derivative of the
// expression as written, composed from the rules below; nothing recognizes
// activations by name. The runtime fuses these generics with the chains
// around them and computes f16/bf16 in f32 (one rounding per stored tensor),
// as it does for the forward.
//
// The derivative of each scalar op (r is its result, g the gradient of r):
//   addf a+b: g, g          subf a-b: g, -g        negf: -g
//   mulf a*b: g*b, g*a      divf a/b: g/b, -(g*r)/b
//   tanh: g*(1 - r*r)       erf: g * 2/sqrt(pi) * exp(-a*a)
//   exp: g*r                log: g/a               sqrt: (g*0.5)/r
//   rsqrt: g * -0.5 * r^3   absf: g*sign(a), 0 at a = 0
//   fpowi a^n (n a constant): g * (n * a^(n-1)), a math.fpowi again (so
//     as exact as the forward's: the executor expands it into LLVM's
//     products, ElementwiseChains.h), g for n = 1, none for n = 0
//   select(c, a, b): c ? g : 0, c ? 0 : g (the condition has none)
//   maximumf, minimumf, maxnumf, minnumf: g goes to the operand equal to
//     the result. At a tie (a == b, -0 == +0 included) a constant operand
//     takes it (so ReLU written maximumf(v, 0) or select(v > 0, v, 0) has
//     ReLU'(0) = 0, PyTorch's and JAX's convention); two variables take g/2
//     each (PyTorch's torch.maximum). Where the result is a NaN that neither
//     operand equals, neither gets anything.
//   cmpf, constants: none.
//
//===----------------------------------------------------------------------===//

#include "ElementwiseAdjoint.h"

#include "shardlin/Dialect/Shardlin/IR/RowReductions.h"
#include "shardlin/Dialect/Shardlin/Transforms/ElementwiseChains.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/DenseSet.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::shardlin;
using namespace mlir::shardlin::detail;
namespace sd = mlir::shardlin::detail;

std::optional<double> sd::constantOf(Value v) {
  Operation *def = v.getDefiningOp();
  if (isa_and_nonnull<arith::ConstantOp>(def))
    return floatConstantValue(def);
  // A fill of a constant is a constant whatever its init (dynamic shapes
  // are written this way: a splat cannot have a `?`).
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(def))
    return constantOf(fill.getInputs().front());
  return std::nullopt;
}

FailureOr<ElementwiseForm> sd::getElementwiseForm(Operation *op) {
  ElementwiseForm form;
  form.op = op;
  auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  const unsigned rank = resultType ? resultType.getRank() : 0;
  auto addInput = [&](Value v, AffineMap map) {
    if (llvm::is_contained(form.inputs, v))
      return;
    form.inputs.push_back(v);
    form.maps.push_back(map);
    const bool row = !map.isIdentity() &&
                     isRowBroadcastMap(map, v.getType(), map.getNumDims(),
                                       /*keepDimOnly=*/true);
    form.row.push_back(row);
    form.vector.push_back(!map.isIdentity() && !row);
  };
  // An fpowi's exponent (a scalar or splat integer constant) is part of
  // the op, not an input.
  auto isExponent = [](Value v) {
    return integerConstantValue(v.getDefiningOp()).has_value();
  };
  auto reject = [&](Value v) {
    return op->emitError() << "cannot differentiate: it reads the scalar "
                           << v.getType() << " that is not a constant";
  };
  // The derivative's exponent n - 1 is an i64.
  if (op->walk([](math::FPowIOp pow) {
          return powerExponent(pow) == std::numeric_limits<int64_t>::min()
                     ? WalkResult::interrupt()
                     : WalkResult::advance();
        }).wasInterrupted())
    return op->emitError() << "cannot differentiate math.fpowi with the "
                              "exponent -2^63 (its derivative's exponent "
                              "n - 1 does not fit 64 bits)";
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    for (OpOperand &operand : op->getOpOperands()) {
      if (!linalgOp.payloadUsesValueFromOperand(&operand))
        continue;
      Value v = operand.get();
      if (constantOf(v) || isExponent(v))
        continue;
      if (!isa<ShapedType>(v.getType()))
        return reject(v);
      addInput(v, linalgOp.getMatchingIndexingMap(&operand));
    }
    // Values the body captures from outside: constants only (a chain rule).
    for (Operation &inner : linalgOp.getBlock()->without_terminator())
      for (Value v : inner.getOperands())
        if (!linalgOp->isAncestor(v.getParentRegion()->getParentOp()) &&
            !constantOf(v) && !isExponent(v))
          return reject(v);
    return form;
  }
  for (Value v : op->getOperands()) {
    if (constantOf(v) || isExponent(v))
      continue;
    if (!isa<ShapedType>(v.getType()))
      return reject(v);
    addInput(v, AffineMap::getMultiDimIdentityMap(rank, op->getContext()));
  }
  return form;
}

namespace {

/// Scalar arithmetic in one float type inside a linalg body.
class Scalars {
public:
  Scalars(OpBuilder &b, Location loc, Type t) : b(b), loc(loc), t(t) {}

  Value constant(double v) {
    auto it = constants.find(v);
    if (it != constants.end())
      return it->second;
    Value c = arith::ConstantOp::create(b, loc, b.getFloatAttr(t, v));
    constants.try_emplace(v, c);
    return c;
  }
  /// A constant of the derivative's own (2/sqrt(pi)): in f16 or bf16, the
  /// sum of the type's nearest value and of the nearest value of the rest,
  /// which the runtime adds in f32 (its compute type for them), so that the
  /// constant is not rounded to 11 or 8 bits.
  Value precise(double v) {
    auto ft = cast<FloatType>(t);
    if (!(t.isF16() || t.isBF16()))
      return constant(v);
    APFloat hi(v);
    bool lost = false;
    hi.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    const double h = hi.convertToDouble();
    if (!lost)
      return constant(h);
    return add(constant(h), constant(v - h));
  }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value neg(Value x) { return arith::NegFOp::create(b, loc, x); }
  Value exp(Value x) { return math::ExpOp::create(b, loc, x); }
  Value cmp(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, p, x, y);
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }

  OpBuilder &b;
  Location loc;
  Type t;

private:
  std::map<double, Value> constants;
};

bool isMaxMin(Operation *op) {
  return isa<arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
             arith::MinNumFOp>(op);
}

/// Reverse mode over the scalar ops `ops` (in program order), seeded with
/// `g` at `root`; returns the gradient of `target`, or null if it has none.
Value reverse(Scalars &s, ArrayRef<Operation *> ops, Value root, Value g,
              Value target) {
  // The values that depend on `target`: only they get gradients.
  llvm::DenseSet<Value> active{target};
  for (Operation *op : ops)
    if (llvm::any_of(op->getOperands(),
                     [&](Value v) { return active.contains(v); }))
      active.insert(op->getResult(0));
  if (!active.contains(root))
    return {};

  llvm::DenseMap<Value, Value> grads;
  grads[root] = g;
  auto isActive = [&](Value v) { return active.contains(v); };
  auto accumulate = [&](Value v, Value c) {
    auto [it, inserted] = grads.try_emplace(v, c);
    if (!inserted)
      it->second = s.add(it->second, c);
  };
  for (Operation *op : llvm::reverse(ops)) {
    Value r = op->getResult(0);
    Value gr = grads.lookup(r);
    if (!gr)
      continue;
    Value a = op->getNumOperands() > 0 ? op->getOperand(0) : Value();
    Value b = op->getNumOperands() > 1 ? op->getOperand(1) : Value();
    using P = arith::CmpFPredicate;
    if (isa<arith::AddFOp>(op)) {
      if (isActive(a))
        accumulate(a, gr);
      if (isActive(b))
        accumulate(b, gr);
    } else if (isa<arith::SubFOp>(op)) {
      if (isActive(a))
        accumulate(a, gr);
      if (isActive(b))
        accumulate(b, s.neg(gr));
    } else if (isa<arith::NegFOp>(op)) {
      accumulate(a, s.neg(gr));
    } else if (isa<arith::MulFOp>(op)) {
      if (isActive(a))
        accumulate(a, s.mul(gr, b));
      if (isActive(b))
        accumulate(b, s.mul(gr, a));
    } else if (isa<arith::DivFOp>(op)) {
      if (isActive(a))
        accumulate(a, s.div(gr, b));
      if (isActive(b))
        accumulate(b, s.neg(s.div(s.mul(gr, r), b)));
    } else if (isMaxMin(op)) {
      // g to the operand equal to the result; at a tie, to a constant
      // operand if there is one, else half to each (see the file comment).
      Value isA = s.cmp(P::OEQ, a, r), isB = s.cmp(P::OEQ, b, r);
      Value zero = s.constant(0.0);
      auto isConstant = [](Value v) {
        return isa_and_nonnull<arith::ConstantOp>(v.getDefiningOp());
      };
      if (isActive(a)) {
        Value tie = isConstant(b) ? zero : s.mul(gr, s.constant(0.5));
        accumulate(a, s.select(isA, s.select(isB, tie, gr), zero));
      }
      if (isActive(b)) {
        Value tie = isConstant(a) ? zero : s.mul(gr, s.constant(0.5));
        accumulate(b, s.select(isB, s.select(isA, tie, gr), zero));
      }
    } else if (auto sel = dyn_cast<arith::SelectOp>(op)) {
      Value zero = s.constant(0.0);
      if (isActive(sel.getTrueValue()))
        accumulate(sel.getTrueValue(), s.select(sel.getCondition(), gr, zero));
      if (isActive(sel.getFalseValue()))
        accumulate(sel.getFalseValue(), s.select(sel.getCondition(), zero, gr));
    } else if (isa<math::TanhOp>(op)) {
      accumulate(a, s.mul(gr, s.sub(s.constant(1.0), s.mul(r, r))));
    } else if (isa<math::ErfOp>(op)) {
      // erf'(a) = 2/sqrt(pi) exp(-a^2).
      Value scale = s.precise(2.0 / std::sqrt(M_PI));
      accumulate(a, s.mul(gr, s.mul(scale, s.exp(s.neg(s.mul(a, a))))));
    } else if (isa<math::ExpOp>(op)) {
      accumulate(a, s.mul(gr, r));
    } else if (isa<math::LogOp>(op)) {
      accumulate(a, s.div(gr, a));
    } else if (isa<math::SqrtOp>(op)) {
      accumulate(a, s.div(s.mul(gr, s.constant(0.5)), r));
    } else if (isa<math::RsqrtOp>(op)) {
      // d(a^-1/2)/da = -1/2 a^-3/2 = -1/2 r^3.
      accumulate(a, s.mul(s.mul(gr, s.constant(-0.5)), s.mul(r, s.mul(r, r))));
    } else if (auto pow = dyn_cast<math::FPowIOp>(op)) {
      // d(a^n)/da = n a^(n-1); n - 1 is formed in i64, so n = INT64_MIN
      // (which getElementwiseForm rejects) is the one n it cannot take.
      const int64_t n = *powerExponent(op);
      if (n == 1) {
        accumulate(a, gr);
      } else if (n != 0) {
        Value lower = a;
        if (n != 2) {
          Value m = arith::ConstantOp::create(
              s.b, s.loc, s.b.getI64IntegerAttr(n - 1));
          lower = math::FPowIOp::create(s.b, s.loc, a, m);
          lower.getDefiningOp()->setAttrs(pow->getAttrs());
        }
        accumulate(a, s.mul(gr, s.mul(s.precise(static_cast<double>(n)),
                                      lower)));
      }
    } else if (isa<math::AbsFOp>(op)) {
      Value zero = s.constant(0.0);
      accumulate(a,
                 s.select(s.cmp(P::OGT, a, zero), gr,
                          s.select(s.cmp(P::OLT, a, zero), s.neg(gr), zero)));
    }
    // cmpf and constants have no gradient; every other op was rejected
    // before (isChainMember).
  }
  return grads.lookup(target);
}

/// The scalar integer constant `n` of `v`'s element type (an fpowi's
/// exponent, a scalar or a splat tensor in the forward).
Value integerScalar(Scalars &s, Value v, int64_t n) {
  return arith::ConstantOp::create(
      s.b, s.loc, s.b.getIntegerAttr(getElementTypeOrSelf(v.getType()), n));
}

/// Rebuilds one op of the forward computation on scalars of `s.t` (i1 for
/// a comparison), with `operands` already rebuilt.
Operation *rebuild(Scalars &s, Operation *op, ValueRange operands) {
  if (auto c = constantOf(op->getResult(0)))
    return s.constant(*c).getDefiningOp();
  if (std::optional<int64_t> n = integerConstantValue(op))
    return integerScalar(s, op->getResult(0), *n).getDefiningOp();
  OperationState state(s.loc, op->getName());
  state.addOperands(operands);
  state.addAttributes(op->getAttrs());
  state.addTypes(isa<arith::CmpFOp>(op) ? s.b.getI1Type() : s.t);
  return s.b.create(state);
}

} // namespace

namespace {

/// The generic of emitInputAdjoint over `ins` = [grad, then the form's
/// inputs that `present` marks, in order]; an absent input is one the
/// derivative does not read (a zero stands for it in the forward steps that
/// are dead). Null if the contribution is zero by construction.
linalg::GenericOp buildAdjointGeneric(OpBuilder &b, Location loc,
                                      const ElementwiseForm &form, unsigned j,
                                      ValueRange ins, Value init,
                                      ArrayRef<bool> present) {
  Operation *op = form.op;
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  Type t = cast<RankedTensorType>(ins.front().getType()).getElementType();
  const unsigned rank = resultType.getRank();
  MLIRContext *ctx = b.getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
  SmallVector<AffineMap> maps{identity};
  SmallVector<int> argOf(form.inputs.size(), -1);
  for (auto [i, isPresent] : llvm::enumerate(present))
    if (isPresent) {
      argOf[i] = static_cast<int>(maps.size());
      maps.push_back(form.maps[i]);
    }
  maps.push_back(identity);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  bool zero = false;
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ins, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Scalars s(nb, nloc, t);
        llvm::DenseMap<Value, Value> scalar;
        // An absent input gets a placeholder of its own (the derivative
        // does not read it; the reverse pass finds input j by its value).
        for (auto [i, v] : llvm::enumerate(form.inputs)) {
          if (argOf[i] >= 0) {
            scalar[v] = args[argOf[i]];
            continue;
          }
          bool isBool =
              cast<ShapedType>(v.getType()).getElementType().isInteger(1);
          scalar[v] = arith::ConstantOp::create(
              nb, nloc,
              isBool ? TypedAttr(nb.getBoolAttr(false))
                     : TypedAttr(nb.getFloatAttr(t, 0.0)));
        }
        auto rebuilt = [&](Value v) -> Value {
          if (Value m = scalar.lookup(v))
            return m;
          if (std::optional<int64_t> n =
                  integerConstantValue(v.getDefiningOp()))
            return integerScalar(s, v, *n);
          // A constant (a splat or fill operand, or one the body captures).
          return s.constant(*constantOf(v));
        };
        SmallVector<Operation *> ops;
        Value root;
        if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
          for (OpOperand &operand : op->getOpOperands())
            if (linalgOp.payloadUsesValueFromOperand(&operand))
              scalar[linalgOp.getMatchingBlockArgument(&operand)] =
                  rebuilt(operand.get());
          Block *body = linalgOp.getBlock();
          for (Operation &inner : body->without_terminator()) {
            SmallVector<Value> operands;
            for (Value v : inner.getOperands())
              operands.push_back(rebuilt(v));
            Operation *copy = rebuild(s, &inner, operands);
            scalar[inner.getResult(0)] = copy->getResult(0);
            ops.push_back(copy);
          }
          root = rebuilt(body->getTerminator()->getOperand(0));
        } else {
          SmallVector<Value> operands;
          for (Value v : op->getOperands())
            operands.push_back(rebuilt(v));
          Operation *copy = rebuild(s, op, operands);
          ops.push_back(copy);
          root = copy->getResult(0);
        }
        Value d = reverse(s, ops, root, args[0], scalar.lookup(form.inputs[j]));
        if (!d) {
          zero = true;
          d = s.constant(0.0);
        }
        linalg::YieldOp::create(nb, nloc, d);
      });
  if (zero) {
    generic->erase();
    return {};
  }
  // The forward steps the derivative does not read.
  SmallVector<Operation *> steps;
  for (Operation &inner : generic.getBlock()->without_terminator())
    steps.push_back(&inner);
  for (Operation *inner : llvm::reverse(steps))
    if (inner->use_empty())
      inner->erase();
  return generic;
}

} // namespace

Value sd::emitInputAdjoint(OpBuilder &b, Location loc,
                           const ElementwiseForm &form, unsigned j, Value grad,
                           function_ref<Value(unsigned)> primal) {
  auto gradType = cast<RankedTensorType>(grad.getType());
  Type t = gradType.getElementType();
  auto typeOf = [&](unsigned i) {
    auto type = cast<RankedTensorType>(form.inputs[i].getType());
    return type.getElementType().isInteger(1) ? type : type.clone(t);
  };
  // The init is read by nothing: the gradient's own tensor when it has the
  // input's type (no forward value needed), else the input's value (a
  // vector's contribution has the result's shape, the gradient's).
  const bool initIsGrad =
      form.vector[j] || form.row[j] || typeOf(j) == gradType;

  // Which forward values the derivative reads: built once on placeholders
  // in a scratch block, so that only those are recomputed or saved (a sum's
  // derivative reads none).
  SmallVector<bool> all(form.inputs.size(), true);
  SmallVector<bool> needed(form.inputs.size(), false);
  {
    auto scratch = std::make_unique<Block>();
    SmallVector<Value> ins{scratch->addArgument(gradType, loc)};
    for (unsigned i = 0; i < form.inputs.size(); ++i)
      ins.push_back(scratch->addArgument(typeOf(i), loc));
    OpBuilder sb(b.getContext());
    sb.setInsertionPointToEnd(scratch.get());
    linalg::GenericOp probe = buildAdjointGeneric(
        sb, loc, form, j, ins, initIsGrad ? ins.front() : ins[1 + j], all);
    if (!probe)
      return {};
    Block *body = probe.getBlock();
    for (unsigned i = 0; i < form.inputs.size(); ++i)
      needed[i] = !body->getArgument(1 + i).use_empty();
    // The gradient itself (a sum, a residual): no op at all.
    const bool identity = initIsGrad && body->getTerminator()->getOperand(0) ==
                                            body->getArgument(0);
    probe->erase();
    if (identity)
      return grad;
  }
  if (!initIsGrad)
    needed[j] = true;
  SmallVector<Value> ins{grad};
  Value init = grad;
  for (unsigned i = 0; i < form.inputs.size(); ++i)
    if (needed[i]) {
      ins.push_back(primal(i));
      if (i == j && !initIsGrad)
        init = ins.back();
    }
  return buildAdjointGeneric(b, loc, form, j, ins, init, needed).getResult(0);
}
