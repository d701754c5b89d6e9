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

#include "shardlin/runtime/Status.h"

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

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_EXPR_H
