//===- ExprTestSupport.h - Expressions for the elementwise tests -*- C++ -*-===//
//
// Building expression programs (Expr.h) in tests, and the activations of a
// transformer block, shared by ElementwiseTest.cpp (host) and
// GpuLocalOpsTest.cpp (CUDA).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_TEST_EXPRTESTSUPPORT_H
#define SHARDLIN_RUNTIME_TEST_EXPRTESTSUPPORT_H

#include "shardlin/runtime/base/Expr.h"

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace shardlin::rt::testing {

/// Builds an expression node by node; each call returns the node's index.
struct Builder {
  ExprProgram p;
  int add(ExprNode n) {
    p.nodes.push_back(n);
    return static_cast<int>(p.nodes.size()) - 1;
  }
  int input(int k) {
    ExprNode n;
    n.op = ExprOp::Input;
    n.input = k;
    return add(n);
  }
  int constant(double v) {
    ExprNode n;
    n.op = ExprOp::Const;
    n.value = v;
    return add(n);
  }
  int op(ExprOp o, int a, int b = -1, int c = -1) {
    ExprNode n;
    n.op = o;
    n.args[0] = a;
    n.args[1] = b;
    n.args[2] = c;
    return add(n);
  }
  int cmp(CmpPredicate pred, int a, int b) {
    ExprNode n;
    n.op = ExprOp::Cmp;
    n.predicate = pred;
    n.args[0] = a;
    n.args[1] = b;
    return add(n);
  }
};

/// The float64 reference of the ops, written independently of the kernels.
inline double refMaximum(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  if (a == 0 && b == 0)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
inline double refMinimum(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  if (a == 0 && b == 0)
    return std::signbit(a) ? a : b;
  return a < b ? a : b;
}
inline bool refCmp(CmpPredicate p, double a, double b) {
  const bool uno = std::isnan(a) || std::isnan(b);
  switch (p) {
  case CmpPredicate::False: return false;
  case CmpPredicate::OEQ: return !uno && a == b;
  case CmpPredicate::OGT: return !uno && a > b;
  case CmpPredicate::OGE: return !uno && a >= b;
  case CmpPredicate::OLT: return !uno && a < b;
  case CmpPredicate::OLE: return !uno && a <= b;
  case CmpPredicate::ONE: return !uno && a != b;
  case CmpPredicate::ORD: return !uno;
  case CmpPredicate::UEQ: return uno || a == b;
  case CmpPredicate::UGT: return uno || a > b;
  case CmpPredicate::UGE: return uno || a >= b;
  case CmpPredicate::ULT: return uno || a < b;
  case CmpPredicate::ULE: return uno || a <= b;
  case CmpPredicate::UNE: return uno || a != b;
  case CmpPredicate::UNO: return uno;
  case CmpPredicate::True: return true;
  }
  return false;
}

/// Evaluates `e` in float64 at one element, operand k being `operands[k]`
/// there.
inline double referenceAt(const ExprProgram &e,
                          const std::vector<double> &operands) {
  std::vector<double> v(e.nodes.size());
  for (size_t n = 0; n < e.nodes.size(); ++n) {
    const ExprNode &node = e.nodes[n];
    const double a = node.args[0] >= 0 ? v[node.args[0]] : 0;
    const double b = node.args[1] >= 0 ? v[node.args[1]] : 0;
    double r = 0;
    switch (node.op) {
    case ExprOp::Input: r = operands[node.input]; break;
    case ExprOp::Const: r = node.value; break;
    case ExprOp::Neg: r = -a; break;
    case ExprOp::Abs: r = std::fabs(a); break;
    case ExprOp::Exp: r = std::exp(a); break;
    case ExprOp::Log: r = std::log(a); break;
    case ExprOp::Sqrt: r = std::sqrt(a); break;
    case ExprOp::Rsqrt: r = 1 / std::sqrt(a); break;
    case ExprOp::Tanh: r = std::tanh(a); break;
    case ExprOp::Erf: r = std::erf(a); break;
    case ExprOp::Add: r = a + b; break;
    case ExprOp::Sub: r = a - b; break;
    case ExprOp::Mul: r = a * b; break;
    case ExprOp::Div: r = a / b; break;
    case ExprOp::Maximum: r = refMaximum(a, b); break;
    case ExprOp::Minimum: r = refMinimum(a, b); break;
    case ExprOp::MaxNum:
      r = std::isnan(a) ? b : std::isnan(b) ? a : refMaximum(a, b);
      break;
    case ExprOp::MinNum:
      r = std::isnan(a) ? b : std::isnan(b) ? a : refMinimum(a, b);
      break;
    case ExprOp::Cmp: r = refCmp(node.predicate, a, b) ? 1 : 0; break;
    case ExprOp::Select: r = a != 0 ? b : v[node.args[2]]; break;
    }
    v[n] = r;
  }
  return v.back();
}

/// 0.5 x (1 + t): the outer form of both GELUs.
inline int halfXTimesOnePlus(Builder &b, int x, int t) {
  return b.op(ExprOp::Mul, b.op(ExprOp::Mul, b.constant(0.5), x),
              b.op(ExprOp::Add, b.constant(1), t));
}

/// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
inline ExprProgram geluTanh() {
  Builder b;
  const int x = b.input(0);
  const int x3 = b.op(ExprOp::Mul, b.op(ExprOp::Mul, x, x), x);
  const int inner = b.op(ExprOp::Add, x,
                         b.op(ExprOp::Mul, b.constant(0.044715), x3));
  halfXTimesOnePlus(
      b, x,
      b.op(ExprOp::Tanh,
           b.op(ExprOp::Mul, b.constant(0.7978845608028654), inner)));
  return b.p;
}

/// 0.5 x (1 + erf(x / sqrt(2))).
inline ExprProgram geluErf() {
  Builder b;
  const int x = b.input(0);
  halfXTimesOnePlus(
      b, x,
      b.op(ExprOp::Erf, b.op(ExprOp::Mul, x, b.constant(0.7071067811865476))));
  return b.p;
}

/// x * 1 / (1 + exp(-x)).
inline ExprProgram silu() {
  Builder b;
  const int x = b.input(0);
  const int d = b.op(ExprOp::Add, b.constant(1),
                     b.op(ExprOp::Exp, b.op(ExprOp::Neg, x)));
  b.op(ExprOp::Mul, x, b.op(ExprOp::Div, b.constant(1), d));
  return b.p;
}

/// maximum(x, +0).
inline ExprProgram relu() {
  Builder b;
  b.op(ExprOp::Maximum, b.input(0), b.constant(0));
  return b.p;
}

/// `n` values drawn uniformly from [lo, hi] with `seed`, none of magnitude
/// under 1/16 (never zero: a test's inputs must make every term count).
inline std::vector<double> randomValues(size_t n, double lo, double hi,
                                        unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(n);
  for (double &x : v) {
    do
      x = dist(gen);
    while (std::fabs(x) < 1.0 / 16);
  }
  return v;
}

} // namespace shardlin::rt::testing

#endif // SHARDLIN_RUNTIME_TEST_EXPRTESTSUPPORT_H
