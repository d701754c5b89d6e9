//===- ExprActivation.cpp - Recognizing activations in expressions --------===//
//
// recognizeActivation (Expr.h): whether an expression program is one
// activation (GELU in its tanh and erf forms, SiLU, ReLU, or none) between
// an optional addition before it and an addition or multiplication after
// it. The host evaluator runs such a program with one fused loop, and the
// cuBLASLt GEMM applies some of them in its epilogue; both need to know the
// form, so it is found here once.
//
// Producers write the same function in many ways: 0.5 * x * (1 + t),
// x * (t + 1) * 0.5, (0.5 * x) * (1 + t) differ only in the order and
// grouping of one product. Products and sums are therefore flattened (a
// tree of muls is the list of its factors) and matched as multisets; a
// subexpression that occurs several times (x in x * x * x) is compared by
// structure, not by node index, so a program that computes it twice matches
// too.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/base/Expr.h"
#include "shardlin/runtime/base/DType.h"

#include <vector>

namespace shardlin::rt {

namespace {

/// The most factors or terms a matched product or sum has (x * x * x * c);
/// flattening stops beyond it, which also bounds the walk over a program
/// whose nodes are shared many times (mul(m, m) repeated).
constexpr size_t kMaxLeaves = 4;

class Matcher {
public:
  explicit Matcher(const ExprProgram &e) : e_(e) {}

  std::optional<ActivationForm> match() {
    const int root = static_cast<int>(e_.nodes.size()) - 1;
    ActivationForm form;
    if (matchActivation(root, form))
      return form;
    // A residual add or a gate after the activation.
    const ExprNode &r = e_.nodes[root];
    if (r.op != ExprOp::Add && r.op != ExprOp::Mul)
      return std::nullopt;
    for (int side = 0; side < 2; ++side) {
      const ExprNode &other = e_.nodes[r.args[side]];
      if (other.op != ExprOp::Input)
        continue;
      ActivationForm inner;
      if (!matchActivation(r.args[1 - side], inner))
        continue;
      inner.post = r.op == ExprOp::Add ? ActivationForm::Post::Add
                                       : ActivationForm::Post::Mul;
      inner.other = other.input;
      return inner;
    }
    return std::nullopt;
  }

private:
  const ExprNode &node(int i) const { return e_.nodes[i]; }

  bool isConst(int i, double &value) const {
    if (node(i).op != ExprOp::Const)
      return false;
    value = node(i).value;
    return true;
  }
  bool isConstEqual(int i, double want) const {
    double v = 0;
    return isConst(i, v) && v == want;
  }
  /// +0 exactly (a -0 would make maximum(-0, -0) differ from ReLU).
  bool isPlusZero(int i) const {
    double v = 0;
    return isConst(i, v) && bitCast<uint64_t>(v) == 0;
  }

  /// Whether nodes i and j compute the same value: the same node, or the
  /// same op on the same arguments (recursively; constants bit for bit).
  bool same(int i, int j, int depth = 0) const {
    if (i == j)
      return true;
    const ExprNode &a = node(i), &b = node(j);
    if (a.op != b.op || depth > 16)
      return false;
    switch (a.op) {
    case ExprOp::Input:
      return a.input == b.input;
    case ExprOp::Const:
      return bitCast<uint64_t>(a.value) == bitCast<uint64_t>(b.value);
    case ExprOp::Cmp:
      if (a.predicate != b.predicate)
        return false;
      break;
    default:
      break;
    }
    for (int k = 0; k < exprOpArity(a.op); ++k)
      if (!same(a.args[k], b.args[k], depth + 1))
        return false;
    return true;
  }

  /// The factors (op Mul) or terms (op Add) of node i: the leaves of the
  /// tree of `op` nodes rooted at i, not descending into nodes that compute
  /// the same as `stop`. False if there are more than kMaxLeaves.
  bool flatten(int i, ExprOp op, int stop, std::vector<int> &out) const {
    if (node(i).op != op || (stop >= 0 && same(i, stop))) {
      out.push_back(i);
      return out.size() <= kMaxLeaves;
    }
    return flatten(node(i).args[0], op, stop, out) &&
           flatten(node(i).args[1], op, stop, out);
  }

  /// Removes one constant from `leaves` into `value`; false if there is
  /// none.
  bool takeConst(std::vector<int> &leaves, double &value) const {
    for (size_t k = 0; k < leaves.size(); ++k)
      if (isConst(leaves[k], value)) {
        leaves.erase(leaves.begin() + k);
        return true;
      }
    return false;
  }

  /// Whether every leaf computes the same as v.
  bool allSame(const std::vector<int> &leaves, int v) const {
    for (int l : leaves)
      if (!same(l, v))
        return false;
    return true;
  }

  /// v = in[x] or in[x] + in[bias].
  bool matchInput(int v, ActivationForm &form) const {
    const ExprNode &n = node(v);
    if (n.op == ExprOp::Input) {
      form.x = n.input;
      form.bias = -1;
      return true;
    }
    if (n.op == ExprOp::Add && node(n.args[0]).op == ExprOp::Input &&
        node(n.args[1]).op == ExprOp::Input) {
      form.x = node(n.args[0]).input;
      form.bias = node(n.args[1]).input;
      return true;
    }
    return false;
  }

  bool matchActivation(int a, ActivationForm &form) const {
    form = ActivationForm{};
    if (matchInput(a, form))
      return true;
    return matchRelu(a, form) || matchSilu(a, form) || matchGelu(a, form);
  }

  bool matchRelu(int a, ActivationForm &form) const {
    const ExprNode &n = node(a);
    form.act = Activation::Relu;
    if (n.op == ExprOp::Maximum) {
      for (int side = 0; side < 2; ++side)
        if (isPlusZero(n.args[1 - side]) && matchInput(n.args[side], form))
          return true;
      return false;
    }
    if (n.op != ExprOp::Select)
      return false;
    // select(v ugt 0, v, +0): v where v > 0 or v is NaN, else +0, which is
    // maximum(v, +0) for every v (-0 included).
    const ExprNode &cond = node(n.args[0]);
    return cond.predicate == CmpPredicate::UGT && isConstEqual(cond.args[1], 0.0) &&
           same(cond.args[0], n.args[1]) && isPlusZero(n.args[2]) &&
           matchInput(n.args[1], form);
  }

  /// 1 + exp(-v).
  bool isSigmoidDenominator(int d, int v) const {
    std::vector<int> terms;
    double one = 0;
    if (!flatten(d, ExprOp::Add, -1, terms) || terms.size() != 2 ||
        !takeConst(terms, one) || one != 1.0)
      return false;
    const ExprNode &e = node(terms[0]);
    return e.op == ExprOp::Exp && node(e.args[0]).op == ExprOp::Neg &&
           same(node(e.args[0]).args[0], v);
  }

  bool matchSilu(int a, ActivationForm &form) const {
    const ExprNode &n = node(a);
    form.act = Activation::Silu;
    if (n.op == ExprOp::Div)
      return isSigmoidDenominator(n.args[1], n.args[0]) &&
             matchInput(n.args[0], form);
    std::vector<int> factors;
    if (n.op != ExprOp::Mul || !flatten(a, ExprOp::Mul, -1, factors) ||
        factors.size() != 2)
      return false;
    for (int side = 0; side < 2; ++side) {
      const int v = factors[side];
      const ExprNode &r = node(factors[1 - side]); // 1 / (1 + exp(-v))
      if (r.op == ExprOp::Div && isConstEqual(r.args[0], 1.0) &&
          isSigmoidDenominator(r.args[1], v) && matchInput(v, form))
        return true;
    }
    return false;
  }

  /// c0 v (c1 + g(u)) with g tanh or erf, then the argument u.
  bool matchGelu(int a, ActivationForm &form) const {
    std::vector<int> factors;
    double c0 = 0;
    if (node(a).op != ExprOp::Mul || !flatten(a, ExprOp::Mul, -1, factors) ||
        factors.size() != 3 || !takeConst(factors, c0))
      return false;
    for (int side = 0; side < 2; ++side) {
      const int v = factors[side];
      std::vector<int> terms;
      double c1 = 0;
      if (!matchInput(v, form) ||
          !flatten(factors[1 - side], ExprOp::Add, -1, terms) ||
          terms.size() != 2 || !takeConst(terms, c1))
        continue;
      const ExprNode &g = node(terms[0]);
      form.c[0] = c0;
      form.c[1] = c1;
      if (g.op == ExprOp::Erf && matchErfArgument(g.args[0], v, form))
        return true;
      if (g.op == ExprOp::Tanh && matchTanhArgument(g.args[0], v, form))
        return true;
    }
    return false;
  }

  /// c2 v.
  bool matchErfArgument(int u, int v, ActivationForm &form) const {
    std::vector<int> factors;
    double c2 = 0;
    if (!flatten(u, ExprOp::Mul, v, factors) || factors.size() != 2 ||
        !takeConst(factors, c2) || !same(factors[0], v))
      return false;
    form.act = Activation::GeluErf;
    form.c[2] = c2;
    return true;
  }

  /// c2 (v + c3 v^3).
  bool matchTanhArgument(int u, int v, ActivationForm &form) const {
    std::vector<int> factors, terms, cube;
    double c2 = 0, c3 = 0;
    if (!flatten(u, ExprOp::Mul, v, factors) || factors.size() != 2 ||
        !takeConst(factors, c2) ||
        !flatten(factors[0], ExprOp::Add, v, terms) || terms.size() != 2)
      return false;
    for (int side = 0; side < 2; ++side) {
      cube.clear();
      if (same(terms[side], v) &&
          flatten(terms[1 - side], ExprOp::Mul, v, cube) && cube.size() == 4 &&
          takeConst(cube, c3) && allSame(cube, v)) {
        form.act = Activation::GeluTanh;
        form.c[2] = c2;
        form.c[3] = c3;
        return true;
      }
    }
    return false;
  }

  const ExprProgram &e_;
};

} // namespace

const char *activationName(Activation act) {
  switch (act) {
  case Activation::Identity:
    return "identity";
  case Activation::Relu:
    return "relu";
  case Activation::GeluTanh:
    return "gelu-tanh";
  case Activation::GeluErf:
    return "gelu-erf";
  case Activation::Silu:
    return "silu";
  }
  return "<invalid activation>";
}

std::optional<ActivationForm> recognizeActivation(const ExprProgram &expr) {
  if (expr.nodes.empty())
    return std::nullopt;
  return Matcher(expr).match();
}

} // namespace shardlin::rt
