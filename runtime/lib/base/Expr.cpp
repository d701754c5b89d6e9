//===- Expr.cpp - Fused elementwise expressions: names, checks, constants -===//
//
// The parts of an expression program every device shares: the names of its
// ops and predicates (program text, messages), the one set of rules a valid
// program follows (validateExpr) and the exact text form of its constants.
// The evaluators are per device (backends/host/HostElementwise.cpp,
// backends/cuda/Kernels.cu); the argument checks of every device's
// LocalOps::elementwise are exec/LocalOps.cpp's.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/base/Expr.h"
#include "shardlin/runtime/base/Buffer.h"

#include <charconv>
#include <cmath>
#include <cstring>

namespace shardlin::rt {

namespace {

struct OpName {
  ExprOp op;
  const char *name;
  int arity;
};

// In ExprOp order (exprOpName indexes it).
constexpr OpName kOps[] = {
    {ExprOp::Input, "input", 0},     {ExprOp::Const, "const", 0},
    {ExprOp::Neg, "neg", 1},         {ExprOp::Abs, "abs", 1},
    {ExprOp::Exp, "exp", 1},         {ExprOp::Log, "log", 1},
    {ExprOp::Sqrt, "sqrt", 1},       {ExprOp::Rsqrt, "rsqrt", 1},
    {ExprOp::Tanh, "tanh", 1},       {ExprOp::Erf, "erf", 1},
    {ExprOp::Add, "add", 2},         {ExprOp::Sub, "sub", 2},
    {ExprOp::Mul, "mul", 2},         {ExprOp::Div, "div", 2},
    {ExprOp::Maximum, "maximum", 2}, {ExprOp::Minimum, "minimum", 2},
    {ExprOp::MaxNum, "maxnum", 2},   {ExprOp::MinNum, "minnum", 2},
    {ExprOp::Cmp, "cmp", 2},         {ExprOp::Select, "select", 3},
};
static_assert(sizeof(kOps) / sizeof(kOps[0]) == kNumExprOps,
              "one name per ExprOp");

// arith.cmpf's names, in CmpPredicate order.
constexpr const char *kPredicates[] = {
    "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
    "ueq",   "ugt", "uge", "ult", "ule", "une", "uno", "true",
};
static_assert(sizeof(kPredicates) / sizeof(kPredicates[0]) ==
                  kNumCmpPredicates,
              "one name per CmpPredicate");

bool validOp(ExprOp op) { return static_cast<size_t>(op) < kNumExprOps; }

constexpr uint64_t kDefaultNaN = 0x7ff8000000000000ull;
constexpr uint64_t kSignBit = 0x8000000000000000ull;

} // namespace

int exprOpArity(ExprOp op) {
  return validOp(op) ? kOps[static_cast<size_t>(op)].arity : 0;
}

const char *exprOpName(ExprOp op) {
  return validOp(op) ? kOps[static_cast<size_t>(op)].name : "<invalid op>";
}

const char *cmpPredicateName(CmpPredicate predicate) {
  const size_t i = static_cast<size_t>(predicate);
  return i < kNumCmpPredicates ? kPredicates[i] : "<invalid predicate>";
}

std::optional<ExprOp> parseExprOp(const std::string &name) {
  for (const OpName &o : kOps)
    if (name == o.name)
      return o.op;
  return std::nullopt;
}

std::optional<CmpPredicate> parseCmpPredicate(const std::string &name) {
  for (size_t i = 0; i < kNumCmpPredicates; ++i)
    if (name == kPredicates[i])
      return static_cast<CmpPredicate>(i);
  return std::nullopt;
}

std::string formatExprConstant(double value) {
  if (std::isnan(value)) {
    const uint64_t bits = bitCast<uint64_t>(value);
    if (bits == kDefaultNaN)
      return "nan";
    if (bits == (kDefaultNaN | kSignBit))
      return "-nan";
    char hex[32];
    auto [end, ec] = std::to_chars(hex, hex + sizeof(hex), bits, 16);
    (void)ec; // 16 hex digits always fit.
    return "nan(0x" + std::string(hex, end) + ")";
  }
  if (std::isinf(value))
    return value < 0 ? "-inf" : "inf";
  // std::to_chars writes the shortest exact hex form without C's "0x"
  // (and, unlike printf, ignores the locale).
  char buf[64];
  auto [end, ec] =
      std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::hex);
  (void)ec; // A double's hex form is at most 24 characters.
  std::string s(buf, end);
  const size_t digits = s[0] == '-' ? 1 : 0;
  return s.insert(digits, "0x");
}

bool parseExprConstant(const std::string &text, double &value) {
  std::string s = text;
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.erase(0, 1);
  }
  if (s.empty() || s[0] == '-' || s[0] == '+')
    return false;
  const uint64_t sign = negative ? kSignBit : 0;
  if (s == "nan") {
    value = bitCast<double>(kDefaultNaN | sign);
    return true;
  }
  if (s.rfind("nan(0x", 0) == 0 && s.back() == ')') {
    // The whole bit pattern, sign included (a leading '-' is refused so
    // that one NaN has one spelling).
    if (negative)
      return false;
    uint64_t bits = 0;
    const char *first = s.data() + 6, *last = s.data() + s.size() - 1;
    auto [ptr, ec] = std::from_chars(first, last, bits, 16);
    if (ec != std::errc() || ptr != last || first == last ||
        !std::isnan(bitCast<double>(bits)))
      return false;
    value = bitCast<double>(bits);
    return true;
  }
  if (s == "inf") {
    value = negative ? -HUGE_VAL : HUGE_VAL;
    return true;
  }
  const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  const char *first = s.data() + (hex ? 2 : 0), *last = s.data() + s.size();
  double v = 0;
  auto [ptr, ec] = std::from_chars(
      first, last, v, hex ? std::chars_format::hex : std::chars_format::general);
  // from_chars reports out-of-range values (beyond the largest double, or
  // below the smallest subnormal) instead of rounding them to inf or 0:
  // the text form never writes those, so they are refused.
  if (ec != std::errc() || ptr != last || first == last)
    return false;
  // "inf"/"nan" after a "0x", or a decimal "nan", are not numbers here.
  if (!std::isfinite(v))
    return false;
  value = negative ? -v : v;
  return true;
}

Status validateExpr(const ExprProgram &expr, size_t numOperands,
                    const std::string &what) {
  const size_t n = expr.nodes.size();
  if (n == 0)
    return Status::invalidArgument(what + " has an empty expression");
  if (n > kMaxExprNodes)
    return Status::invalidArgument(what + " has an expression of " +
                                   std::to_string(n) + " nodes (at most " +
                                   std::to_string(kMaxExprNodes) + ")");
  auto isBool = [&](int node) { return expr.nodes[node].op == ExprOp::Cmp; };
  for (size_t i = 0; i < n; ++i) {
    const ExprNode &node = expr.nodes[i];
    const std::string where =
        what + ": expression node " + std::to_string(i) + " (";
    if (!validOp(node.op))
      return Status::invalidArgument(
          where + "op " + std::to_string(static_cast<int>(node.op)) +
          "): unknown op");
    const std::string at = where + exprOpName(node.op) + "): ";
    const int arity = exprOpArity(node.op);
    for (int k = 0; k < 3; ++k) {
      const int a = node.args[k];
      if (k >= arity) {
        if (a != -1)
          return Status::invalidArgument(
              at + "arg " + std::to_string(k) + " is " + std::to_string(a) +
              " but the op takes " + std::to_string(arity) +
              " (unused args must be -1)");
        continue;
      }
      if (a < 0 || static_cast<size_t>(a) >= i)
        return Status::invalidArgument(at + "arg " + std::to_string(k) +
                                       " refers to node " + std::to_string(a) +
                                       ", not an earlier node");
      const bool condition = node.op == ExprOp::Select && k == 0;
      if (condition && !isBool(a))
        return Status::invalidArgument(
            at + "the condition (arg 0) is node " + std::to_string(a) + " (" +
            exprOpName(expr.nodes[a].op) + "), not a boolean (a cmp)");
      if (!condition && isBool(a))
        return Status::invalidArgument(
            at + "arg " + std::to_string(k) + " is the boolean node " +
            std::to_string(a) +
            " (only a select's condition may be a boolean)");
    }
    if (node.op == ExprOp::Input &&
        (node.input < 0 || static_cast<size_t>(node.input) >= numOperands))
      return Status::invalidArgument(at + "reads operand " +
                                     std::to_string(node.input) +
                                     " but the op has " +
                                     std::to_string(numOperands) + " operands");
    if (node.op == ExprOp::Cmp &&
        static_cast<size_t>(node.predicate) >= kNumCmpPredicates)
      return Status::invalidArgument(
          at + "unknown predicate " +
          std::to_string(static_cast<int>(node.predicate)));
  }
  if (isBool(static_cast<int>(n - 1)))
    return Status::invalidArgument(what + ": the result (expression node " +
                                   std::to_string(n - 1) +
                                   ") is a boolean; select on it");
  return Status::ok();
}

} // namespace shardlin::rt
