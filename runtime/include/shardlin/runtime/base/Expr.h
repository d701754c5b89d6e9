//===- Expr.h - Fused elementwise expressions ------------------*- C++ -*-===//
//
// The body of the runtime's `elementwise` op: a chain of rank-local
// elementwise ops (arith, math, linalg.elementwise/generic in the IR) as one
// small expression program, evaluated in one pass over memory with no
// intermediate buffers. The translator (lib/Execution/ProgramBuilder.cpp)
// builds it from the IR; the plan checks it (validateExpr) and the devices'
// LocalOps evaluate it.
//
// Semantics. Node i computes one value per element of the result; a node
// refers only to earlier nodes, and the last node is the result. Values are
// computed in the op's compute type (f32 for f16, bf16 and f32; f64 for f64)
// and rounded once, when stored. Comparisons yield a boolean that only
// `select` may consume.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_EXPR_H
#define SHARDLIN_RUNTIME_EXPR_H

#include "shardlin/runtime/base/Status.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardlin::rt {

enum class ExprOp : uint8_t {
  /// The element of operand `input` (at the same index, or, for a rank-1
  /// operand broadcast along the last dim, at the same column).
  Input,
  /// `value`, converted to the compute type.
  Const,
  // Unary, on args[0].
  Neg,
  Abs,
  Exp,
  Log,
  Sqrt,
  Rsqrt,
  Tanh,
  Erf,
  // Binary, on args[0], args[1].
  Add,
  Sub,
  Mul,
  Div,
  /// arith.maximumf / minimumf: NaN if either is NaN; -0 < +0.
  Maximum,
  Minimum,
  /// arith.maxnumf / minnumf: the other operand if one is NaN.
  MaxNum,
  MinNum,
  /// arith.cmpf with `predicate`: a boolean.
  Cmp,
  /// args[0] (a boolean) ? args[1] : args[2].
  Select,
};
/// One past the last ExprOp.
constexpr size_t kNumExprOps = static_cast<size_t>(ExprOp::Select) + 1;

/// arith.cmpf's predicates, with its names: `o*` are false and `u*` true
/// when either operand is NaN.
enum class CmpPredicate : uint8_t {
  False,
  OEQ,
  OGT,
  OGE,
  OLT,
  OLE,
  ONE,
  ORD,
  UEQ,
  UGT,
  UGE,
  ULT,
  ULE,
  UNE,
  UNO,
  True,
};
/// One past the last CmpPredicate.
constexpr size_t kNumCmpPredicates = static_cast<size_t>(CmpPredicate::True) + 1;

struct ExprNode {
  ExprOp op = ExprOp::Const;
  /// Earlier nodes' indices, as many as the op takes; the rest -1.
  int args[3] = {-1, -1, -1};
  /// ExprOp::Input: the operand index.
  int input = -1;
  /// ExprOp::Const.
  double value = 0.0;
  /// ExprOp::Cmp.
  CmpPredicate predicate = CmpPredicate::False;
};

struct ExprProgram {
  std::vector<ExprNode> nodes;
};

/// The most nodes one expression may have (the devices keep one value per
/// node per element in flight).
constexpr size_t kMaxExprNodes = 64;

/// Number of args the op takes (0 for Input and Const).
int exprOpArity(ExprOp op);
/// Names in the program text and in messages ("tanh", "cmp", "maximum").
const char *exprOpName(ExprOp op);
const char *cmpPredicateName(CmpPredicate predicate);
/// The inverses of the names above; nullopt for an unknown name.
std::optional<ExprOp> parseExprOp(const std::string &name);
std::optional<CmpPredicate> parseCmpPredicate(const std::string &name);

/// A constant in the program text: a hex float (C's %a, e.g. `0x1.8p+1`,
/// `-0x0p+0`), `inf`, `-inf`, or a NaN, `nan` / `-nan` for the default quiet
/// NaN and `nan(0x...)` with the bit pattern otherwise, so every double
/// reads back bit for bit. Independent of the C locale.
std::string formatExprConstant(double value);
/// Parses what formatExprConstant writes, and decimal numbers; false on
/// anything else (including trailing characters).
bool parseExprConstant(const std::string &text, double &value);

/// Checks the program for an op with `numOperands` operands: at least one
/// node and at most kMaxExprNodes; args refer to earlier nodes; inputs are
/// in range; booleans go only into select's first arg and select's first arg
/// is one; the result is not a boolean.
/// Errors are InvalidArgument and name the node: "`what`: expression node
/// 3 (add): arg 1 refers to node 5, not an earlier node".
Status validateExpr(const ExprProgram &expr, size_t numOperands,
                    const std::string &what);

/// One instruction's share of an expression too large for one
/// (splitExpr).
struct ExprPiece {
  ExprProgram expr;
  /// What operand k of the piece is: `o` >= 0 for operand o of the whole
  /// expression, `-1 - p` for the result of piece p (an earlier one).
  std::vector<int> operands;
  /// Every input of the piece is a row vector (splitExpr's `rowVectors`, or
  /// a row-vector piece): its result is a row vector too.
  bool rowVector = false;
};

/// Splits `expr`, an expression that validateExpr would accept but for its
/// number of nodes (any number), over operands of which those marked in
/// `rowVectors` are row vectors, into pieces of at most `maxNodes` nodes
/// (>= 8), each a valid expression, in an order in which every piece comes
/// after the pieces it reads; the last piece computes the result. Nodes
/// the result does not read are dropped. A piece's result is a value of the
/// compute type: evaluated in it, the pieces compute what `expr` does (a
/// caller that stores them in a narrower type rounds them). Booleans stay
/// inside the piece that selects on them; constants are copied into every
/// piece that reads them. Fails (InvalidArgument, messages after `what`) on
/// a part of more than `maxNodes` nodes that reads no operand, which no
/// piece can compute.
Status splitExpr(const ExprProgram &expr, const std::vector<bool> &rowVectors,
                 size_t maxNodes, const std::string &what,
                 std::vector<ExprPiece> &pieces);

/// The activations of a transformer block, as recognizeActivation finds them
/// in an expression (each with the constants it was written with).
enum class Activation : uint8_t {
  /// v.
  Identity,
  /// maximum(v, +0), or select(cmp ugt(v, +0), v, +0): the same values,
  /// NaN included.
  Relu,
  /// c0 v (c1 + tanh(c2 (v + c3 v^3))): GELU's tanh form with c0 = 0.5,
  /// c1 = 1, c2 = sqrt(2/pi), c3 = 0.044715.
  GeluTanh,
  /// c0 v (c1 + erf(c2 v)): GELU with c0 = 0.5, c1 = 1, c2 = 1/sqrt(2).
  GeluErf,
  /// v / (1 + exp(-v)), also written v * (1 / (1 + exp(-v))).
  Silu,
};
const char *activationName(Activation act);

/// An expression that is one activation between an optional addition before
/// it and an optional addition or multiplication after it, element by
/// element:
///
///   v = in[x]  or  in[x] + in[bias]      (a bias, or a residual)
///   a = act(v)
///   y = a  or  a + in[other]  or  a * in[other]   (a residual, a gate)
///
/// where in[k] is operand k at the element (full or row vector alike).
/// The devices evaluate these forms with a loop (CPU) or a GEMM epilogue
/// (cuBLASLt) of their own; the generic evaluation of the same program
/// agrees with it within the op's bounds: the form may associate a product
/// or a sum of the program in another order (products and sums of several
/// terms are matched in any order and grouping) and computes SiLU's
/// v * (1 / d) as v / d, each a difference of about one rounding.
struct ActivationForm {
  Activation act = Activation::Identity;
  int x = -1;
  /// The operand added before the activation, or -1.
  int bias = -1;
  enum class Post : uint8_t { None, Add, Mul };
  Post post = Post::None;
  /// The operand of `post`, or -1.
  int other = -1;
  /// The constants of GeluTanh (c0..c3) and GeluErf (c0..c2), as written.
  double c[4] = {0, 0, 0, 0};
};

/// The form of a valid expression (validateExpr) if it is one of the above;
/// nullopt otherwise (the generic evaluation then runs it).
std::optional<ActivationForm> recognizeActivation(const ExprProgram &expr);

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_EXPR_H
