//===- ExprTestSupport.h - Expressions for the elementwise tests -*- C++ -*-===//
//
// Building expression programs (Expr.h) in tests, and the activations of a
// transformer block, shared by ElementwiseTest.cpp (host) and
// GpuLocalOpsTest.cpp (CUDA).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_TEST_EXPRTESTSUPPORT_H
#define SHARDLIN_RUNTIME_TEST_EXPRTESTSUPPORT_H

#include "shardlin/runtime/Expr.h"

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

/// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
inline ExprProgram geluTanh() {
  Builder b;
  const int x = b.input(0);
  const int x3 = b.op(ExprOp::Mul, b.op(ExprOp::Mul, x, x), x);
  const int inner = b.op(ExprOp::Add, x,
                         b.op(ExprOp::Mul, b.constant(0.044715), x3));
  const int t = b.op(ExprOp::Tanh,
                     b.op(ExprOp::Mul, b.constant(0.7978845608028654), inner));
  b.op(ExprOp::Mul, b.op(ExprOp::Mul, b.constant(0.5), x),
       b.op(ExprOp::Add, b.constant(1), t));
  return b.p;
}

/// 0.5 x (1 + erf(x / sqrt(2))).
inline ExprProgram geluErf() {
  Builder b;
  const int x = b.input(0);
  const int e = b.op(ExprOp::Erf,
                     b.op(ExprOp::Mul, x, b.constant(0.7071067811865476)));
  b.op(ExprOp::Mul, b.op(ExprOp::Mul, b.constant(0.5), x),
       b.op(ExprOp::Add, b.constant(1), e));
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

} // namespace shardlin::rt::testing

#endif // SHARDLIN_RUNTIME_TEST_EXPRTESTSUPPORT_H
