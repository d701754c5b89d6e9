//===- ProgramText.cpp - A program's text form: print and parse ----------===//
//
// "shardlin-program v1": one line per value, argument, instruction and
// result, written by serializeProgram and read back by parseProgram with a
// located message for every malformed line. The op table (OpTable.h) gives
// each op's mnemonic and attributes, so no op is listed here.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/program/ProgramText.h"
#include "shardlin/runtime/program/OpTable.h"

#include <algorithm>
#include <optional>
#include <sstream>

namespace shardlin::rt {

namespace {

void writeShape(std::ostream &os, const std::vector<int64_t> &shape) {
  os << shape.size();
  for (int64_t d : shape) {
    os << ' ';
    if (d == kDynamic)
      os << '?';
    else
      os << d;
  }
}

/// `D W p0 ... pW-1`, then ` bounds b0 ... bW` for explicit boundaries
/// (a spec without them reads as before they existed).
void writeSpec(std::ostream &os, const ChunkSpec &spec) {
  os << spec.dim << ' ' << spec.placements.size();
  for (int64_t p : spec.placements)
    os << ' ' << p;
  if (spec.bounds.empty())
    return;
  os << " bounds";
  for (int64_t b : spec.bounds)
    os << ' ' << b;
}

/// `N node...`: each node as its op's name and then `input K`, `const C`,
/// `cmp PREDICATE A B`, or the op's arg node indices.
void writeExpr(std::ostream &os, const ExprProgram &expr) {
  os << expr.nodes.size();
  for (const ExprNode &node : expr.nodes) {
    os << ' ' << exprOpName(node.op);
    if (node.op == ExprOp::Input)
      os << ' ' << node.input;
    else if (node.op == ExprOp::Const)
      os << ' ' << formatExprConstant(node.value);
    else if (node.op == ExprOp::Cmp)
      os << ' ' << cmpPredicateName(node.predicate);
    for (int k = 0; k < exprOpArity(node.op); ++k)
      os << ' ' << node.args[k];
  }
}

/// `data N HEX`: a constant's N bytes as 2N lowercase hex digits (none for
/// N = 0).
void writeBytes(std::ostream &os, const std::vector<char> &bytes) {
  static const char digits[] = "0123456789abcdef";
  os << "data " << bytes.size();
  if (bytes.empty())
    return;
  os << ' ';
  for (char c : bytes) {
    const unsigned char b = static_cast<unsigned char>(c);
    os << digits[b >> 4] << digits[b & 15];
  }
}

int hexDigit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/// A cursor over one line's tokens with bounds-checked reads.
class Tokens {
public:
  Tokens(const std::string &line, int lineNo) : is_(line), lineNo_(lineNo) {}
  bool word(std::string &w) { return static_cast<bool>(is_ >> w); }
  Status expect(const std::string &w) {
    std::string got;
    if (!(is_ >> got) || got != w)
      return err("expected '" + w + "'");
    return Status::ok();
  }
  Status integer(int64_t &v, int64_t lo, int64_t hi) {
    std::string w;
    if (!(is_ >> w))
      return err("expected an integer");
    try {
      size_t used = 0;
      long long x = std::stoll(w, &used);
      if (used != w.size())
        return err("bad integer '" + w + "'");
      if (x < lo || x > hi)
        return err("integer " + w + " out of range");
      v = x;
    } catch (...) {
      return err("bad integer '" + w + "'");
    }
    return Status::ok();
  }
  Status shape(std::vector<int64_t> &shape) {
    int64_t rank = 0;
    SHARDLIN_RETURN_IF_ERROR(integer(rank, 0, 64));
    shape.clear();
    for (int64_t i = 0; i < rank; ++i) {
      std::string w;
      if (!(is_ >> w))
        return err("shape too short");
      if (w == "?") {
        shape.push_back(kDynamic);
        continue;
      }
      is_.seekg(-static_cast<std::streamoff>(w.size()), std::ios::cur);
      int64_t d = 0;
      SHARDLIN_RETURN_IF_ERROR(integer(d, 0, INT64_MAX));
      shape.push_back(d);
    }
    return Status::ok();
  }
  Status spec(ChunkSpec &spec) {
    int64_t n = 0;
    SHARDLIN_RETURN_IF_ERROR(integer(spec.dim, 0, 64));
    SHARDLIN_RETURN_IF_ERROR(integer(n, 1, 1 << 20));
    // Grown as read, so a large count on a short line allocates nothing.
    spec.placements.clear();
    for (int64_t i = 0; i < n; ++i) {
      int64_t p = 0;
      SHARDLIN_RETURN_IF_ERROR(integer(p, 0, n - 1));
      spec.placements.push_back(p);
    }
    // Optional explicit boundaries: W + 1 of them. Their order and last
    // value are Program::validate's (checkBounds).
    spec.bounds.clear();
    if (!peek("bounds"))
      return Status::ok();
    for (int64_t i = 0; i <= n; ++i) {
      int64_t b = 0;
      SHARDLIN_RETURN_IF_ERROR(integer(b, 0, INT64_MAX));
      spec.bounds.push_back(b);
    }
    return Status::ok();
  }
  /// `N v0 ... vN-1`: non-negative integers (a permutation of dims, an
  /// attention's head table of two per rank: at most 2 << 20); the op's
  /// verify checks what they mean. Grown as read, as a spec's placements.
  Status ints(std::vector<int64_t> &out) {
    int64_t n = 0;
    SHARDLIN_RETURN_IF_ERROR(integer(n, 0, int64_t(2) << 20));
    out.clear();
    for (int64_t i = 0; i < n; ++i) {
      int64_t v = 0;
      SHARDLIN_RETURN_IF_ERROR(integer(v, 0, INT64_MAX));
      out.push_back(v);
    }
    return Status::ok();
  }
  /// One double as formatExprConstant writes it (or a decimal number).
  Status real(double &out) {
    std::string w;
    if (!word(w) || !parseExprConstant(w, out))
      return err("bad real number '" + w +
                 "' (expected a hex float such as 0x1p-3, or a decimal)");
    return Status::ok();
  }
  /// What writeBytes writes, after its `data` keyword.
  Status bytes(std::vector<char> &out) {
    int64_t n = 0;
    SHARDLIN_RETURN_IF_ERROR(integer(n, 0, INT64_MAX / 2));
    out.clear();
    if (n == 0)
      return Status::ok();
    std::string hex;
    if (!word(hex) || hex.size() != static_cast<uint64_t>(n) * 2)
      return err("expected " + std::to_string(n) + " bytes as " +
                 std::to_string(2 * static_cast<uint64_t>(n)) +
                 " hex digits");
    out.reserve(static_cast<size_t>(n));
    for (size_t i = 0; i < hex.size(); i += 2) {
      const int hi = hexDigit(hex[i]), lo = hexDigit(hex[i + 1]);
      if (hi < 0 || lo < 0)
        return err("bad hex digit in the constant's data at byte " +
                   std::to_string(i / 2));
      out.push_back(static_cast<char>(hi * 16 + lo));
    }
    return Status::ok();
  }
  /// Reads the next word if it is `w`; otherwise reads nothing.
  bool peek(const std::string &w) {
    is_.clear(); // At the line's end: no word, and tellg must not fail.
    const std::streampos at = is_.tellg();
    std::string got;
    if (is_ >> got && got == w)
      return true;
    is_.clear();
    is_.seekg(at);
    return false;
  }
  /// What writeExpr writes. Node references and operand indices are only
  /// range-checked here (so nothing allocates without bound); the op's
  /// verify checks the program (validateExpr).
  Status expr(ExprProgram &expr) {
    int64_t n = 0;
    SHARDLIN_RETURN_IF_ERROR(integer(n, 1, kMaxExprNodes));
    expr.nodes.clear();
    for (int64_t i = 0; i < n; ++i) {
      std::string name;
      if (!word(name))
        return err("expected expression node " + std::to_string(i));
      std::optional<ExprOp> op = parseExprOp(name);
      if (!op)
        return err("unknown expression op '" + name + "'");
      ExprNode node;
      node.op = *op;
      int64_t v = 0;
      if (node.op == ExprOp::Input) {
        SHARDLIN_RETURN_IF_ERROR(integer(v, 0, kMaxExprNodes - 1));
        node.input = static_cast<int>(v);
      } else if (node.op == ExprOp::Const) {
        std::string c;
        if (!word(c) || !parseExprConstant(c, node.value))
          return err("bad expression constant '" + c +
                     "' (expected a hex float such as 0x1.8p+1, inf or nan)");
      } else if (node.op == ExprOp::Cmp) {
        std::string pred;
        word(pred);
        std::optional<CmpPredicate> parsed = parseCmpPredicate(pred);
        if (!parsed)
          return err("unknown comparison predicate '" + pred + "'");
        node.predicate = *parsed;
      }
      for (int k = 0; k < exprOpArity(node.op); ++k) {
        SHARDLIN_RETURN_IF_ERROR(integer(v, 0, kMaxExprNodes - 1));
        node.args[k] = static_cast<int>(v);
      }
      expr.nodes.push_back(node);
    }
    return Status::ok();
  }
  /// The rest of the line without its leading spaces and trailing white
  /// space (a CRLF file's extra '\r's included), so that what is written
  /// back reads back the same.
  std::string rest() {
    std::string r;
    std::getline(is_, r);
    size_t b = r.find_first_not_of(' ');
    if (b == std::string::npos)
      return std::string();
    size_t e = r.find_last_not_of(" \t\r\v\f");
    return e == std::string::npos || e < b ? std::string()
                                           : r.substr(b, e - b + 1);
  }
  Status err(const std::string &msg) {
    return Status::invalidArgument("program line " + std::to_string(lineNo_) + ": " +
                         msg);
  }

private:
  std::istringstream is_;
  int lineNo_;
};

} // namespace

namespace {

/// `constant ID DTYPE SHAPE [sharded spec SPEC] data N HEX [loc LOC]`, the
/// constants numbered in order.
Status parseConstant(Tokens &t, Program &p) {
  int64_t id = 0;
  SHARDLIN_RETURN_IF_ERROR(t.integer(id, 0, INT32_MAX));
  if (static_cast<size_t>(id) != p.constants.size())
    return t.err("expected constant " + std::to_string(p.constants.size()) +
                 ", got constant " + std::to_string(id) +
                 " (constant lines are numbered in order)");
  Constant c;
  std::string dt;
  t.word(dt);
  std::optional<DType> parsed = parseDType(dt);
  if (!parsed)
    return t.err("unknown element type '" + dt + "'");
  c.dtype = *parsed;
  SHARDLIN_RETURN_IF_ERROR(t.shape(c.shape));
  if (t.peek("sharded")) {
    c.sharded = true;
    SHARDLIN_RETURN_IF_ERROR(t.expect("spec"));
    SHARDLIN_RETURN_IF_ERROR(t.spec(c.sharding));
    if (c.sharding.dim >= static_cast<int64_t>(c.shape.size()))
      return t.err("sharding dim out of range");
  }
  SHARDLIN_RETURN_IF_ERROR(t.expect("data"));
  SHARDLIN_RETURN_IF_ERROR(t.bytes(c.bytes));
  if (t.peek("loc"))
    c.location = t.rest();
  else if (std::string w; t.word(w))
    return t.err("unexpected '" + w + "' after the constant's data");
  p.constants.push_back(std::move(c));
  return Status::ok();
}

} // namespace

std::string serializeProgram(const Program &p) {
  std::ostringstream os;
  os << "shardlin-program v1\n";
  os << "name " << p.name << "\n";
  os << "world_size " << p.worldSize << "\n";
  if (!p.compiled.empty())
    os << "compiled " << p.compiled << "\n";
  os << "values " << p.values.size() << "\n";
  for (size_t i = 0; i < p.values.size(); ++i) {
    os << "value " << i << ' ' << dtypeName(p.values[i].dtype) << ' ';
    writeShape(os, p.values[i].shape);
    os << "\n";
  }
  for (size_t i = 0; i < p.args.size(); ++i) {
    const Argument &a = p.args[i];
    os << "arg " << i;
    if (a.sharded) {
      os << " sharded ";
      writeShape(os, a.globalShape);
      os << " spec ";
      writeSpec(os, a.sharding);
    } else {
      os << " plain";
      if (a.replicated)
        os << " replicated";
    }
    if (!a.parameter.empty())
      os << " param " << a.parameter;
    if (a.hasParameterRows())
      os << " rows " << a.parameterRows.offset << " "
         << a.parameterRows.offset + a.parameterRows.size;
    if (!a.location.empty())
      os << " loc " << a.location;
    os << "\n";
  }
  for (size_t i = 0; i < p.constants.size(); ++i) {
    const Constant &c = p.constants[i];
    os << "constant " << i << ' ' << dtypeName(c.dtype) << ' ';
    writeShape(os, c.shape);
    if (c.sharded) {
      os << " sharded spec ";
      writeSpec(os, c.sharding);
    }
    os << ' ';
    writeBytes(os, c.bytes);
    if (!c.location.empty())
      os << " loc " << c.location;
    os << "\n";
  }
  for (const Instr &in : p.instrs) {
    os << "instr " << opCodeName(in.op) << " result " << in.result
       << " operands " << in.operands.size();
    for (int v : in.operands)
      os << ' ' << v;
    for (const OpAttribute &attr : opInfo(in.op).attributes) {
      os << ' ' << attr.keyword;
      if (attr.kind == OpAttribute::Kind::Chunks) {
        os << ' ';
        writeSpec(os, in.*attr.fields.front().chunks);
      } else if (attr.kind == OpAttribute::Kind::Expr) {
        os << ' ';
        writeExpr(os, in.*attr.fields.front().expr);
      } else if (attr.kind == OpAttribute::Kind::Ints) {
        const std::vector<int64_t> &ints = in.*attr.fields.front().ints;
        os << ' ' << ints.size();
        for (int64_t v : ints)
          os << ' ' << v;
      } else if (attr.kind == OpAttribute::Kind::Real) {
        os << ' ' << formatExprConstant(in.*attr.fields.front().real);
      } else {
        for (const OpAttribute::Field &f : attr.fields)
          os << ' ' << (in.*f.flag ? 1 : 0);
      }
    }
    if (!in.strategy.empty())
      os << " strategy " << in.strategy;
    if (in.overlapChunks != 0)
      os << " overlap " << in.overlapChunks;
    os << " loc " << in.location << "\n";
  }
  os << "results " << p.results.size();
  for (int v : p.results)
    os << ' ' << v;
  os << "\n";
  // Only the sharded ones: a program without them reads as before.
  for (size_t i = 0; i < p.resultLayouts.size(); ++i) {
    const ResultLayout &r = p.resultLayouts[i];
    if (!r.sharded)
      continue;
    os << "result " << i << " sharded ";
    writeShape(os, r.globalShape);
    os << " spec ";
    writeSpec(os, r.sharding);
    os << "\n";
  }
  os << "end\n";
  return os.str();
}

Status parseProgram(const std::string &text, Program &out) {
  Program p;
  std::istringstream is(text);
  std::string line;
  int lineNo = 0;
  auto next = [&]() -> bool {
    while (std::getline(is, line)) {
      ++lineNo;
      // Accept CRLF line endings (a file written or checked out on Windows).
      if (!line.empty() && line.back() == '\r')
        line.pop_back();
      if (!line.empty())
        return true;
    }
    return false;
  };
  if (!next() || line != "shardlin-program v1")
    return Status::invalidArgument("not a shardlin program (expected the header "
                         "'shardlin-program v1')");
  bool sawEnd = false, sawValues = false;
  int64_t declaredValues = 0;
  size_t numArgs = 0;
  while (next()) {
    Tokens t(line, lineNo);
    std::string kw;
    t.word(kw);
    if (kw == "name") {
      p.name = t.rest();
    } else if (kw == "world_size") {
      SHARDLIN_RETURN_IF_ERROR(t.integer(p.worldSize, 0, 1 << 20));
    } else if (kw == "compiled") {
      if (!t.word(p.compiled))
        return t.err("expected the compiled code's name after 'compiled'");
    } else if (kw == "values") {
      SHARDLIN_RETURN_IF_ERROR(t.integer(declaredValues, 0, 1 << 24));
      if (sawValues)
        return t.err("a second 'values' line");
      sawValues = true;
    } else if (kw == "value") {
      // Value lines come in order and each adds one value, so the values
      // grow with the text: a large count on the 'values' line allocates
      // nothing by itself.
      int64_t id = 0;
      SHARDLIN_RETURN_IF_ERROR(t.integer(id, 0, declaredValues - 1));
      if (static_cast<size_t>(id) != p.values.size())
        return t.err("expected value " + std::to_string(p.values.size()) +
                     ", got value " + std::to_string(id) +
                     " (value lines are numbered in order)");
      p.values.emplace_back();
      std::string dt;
      t.word(dt);
      auto parsed = parseDType(dt);
      if (!parsed)
        return t.err("unknown element type '" + dt + "'");
      p.values.back().dtype = *parsed;
      SHARDLIN_RETURN_IF_ERROR(t.shape(p.values.back().shape));
    } else if (kw == "arg") {
      int64_t id = 0;
      SHARDLIN_RETURN_IF_ERROR(t.integer(id, 0, declaredValues - 1));
      if (static_cast<size_t>(id) != numArgs)
        return t.err("arguments must be numbered in order");
      if (static_cast<size_t>(id) >= p.values.size())
        return t.err("argument " + std::to_string(id) +
                     " comes before its 'value' line");
      Argument a;
      a.type = p.values[id];
      std::string kind;
      t.word(kind);
      if (kind == "sharded") {
        a.sharded = true;
        SHARDLIN_RETURN_IF_ERROR(t.shape(a.globalShape));
        SHARDLIN_RETURN_IF_ERROR(t.expect("spec"));
        SHARDLIN_RETURN_IF_ERROR(t.spec(a.sharding));
        if (a.sharding.dim >= static_cast<int64_t>(a.globalShape.size()))
          return t.err("sharding dim out of range");
        for (int64_t d : a.globalShape)
          if (d == kDynamic)
            return t.err("a sharded argument needs a static global shape");
      } else if (kind != "plain") {
        return t.err("expected 'plain' or 'sharded'");
      }
      // Then, in this order and each optional: `replicated` (a plain
      // argument the same on every rank), `param NAME` (the parameter it
      // holds), `loc` and the rest of the line.
      for (std::string w; t.word(w);) {
        if (w == "replicated" && !a.sharded && !a.replicated &&
            a.parameter.empty()) {
          a.replicated = true;
        } else if (w == "param" && a.parameter.empty()) {
          if (!t.word(a.parameter))
            return t.err("'param' needs the parameter's name");
        } else if (w == "rows" && !a.parameter.empty() &&
                   !a.hasParameterRows()) {
          // The rows of the named tensor it holds (a fused q/k/v part).
          int64_t begin = 0, end = 0;
          SHARDLIN_RETURN_IF_ERROR(t.integer(begin, 0, INT64_MAX));
          SHARDLIN_RETURN_IF_ERROR(t.integer(end, begin, INT64_MAX));
          a.parameterRows = Range{begin, end - begin};
        } else if (w == "loc") {
          a.location = t.rest();
          break;
        } else {
          return t.err("unexpected '" + w + "' after the argument's " +
                       (a.sharded ? "spec" : "kind") +
                       " (expected 'replicated' for a plain argument, "
                       "'param NAME', or 'loc')");
        }
      }
      p.args.push_back(a);
      ++numArgs;
    } else if (kw == "constant") {
      SHARDLIN_RETURN_IF_ERROR(parseConstant(t, p));
    } else if (kw == "instr") {
      Instr in;
      std::string op;
      t.word(op);
      const OpInfo *info = findOpByMnemonic(op);
      if (!info)
        return t.err("unknown instruction '" + op + "'");
      in.op = info->op;
      int64_t v = 0, n = 0;
      SHARDLIN_RETURN_IF_ERROR(t.expect("result"));
      SHARDLIN_RETURN_IF_ERROR(t.integer(v, 0, INT32_MAX));
      in.result = static_cast<int>(v);
      SHARDLIN_RETURN_IF_ERROR(t.expect("operands"));
      SHARDLIN_RETURN_IF_ERROR(
          t.integer(n, 0, static_cast<int64_t>(maxOperandsOfAnyOp())));
      for (int64_t i = 0; i < n; ++i) {
        SHARDLIN_RETURN_IF_ERROR(t.integer(v, 0, INT32_MAX));
        in.operands.push_back(static_cast<int>(v));
      }
      std::string w;
      while (t.word(w)) {
        auto attr = std::find_if(
            info->attributes.begin(), info->attributes.end(),
            [&](const OpAttribute &a) { return w == a.keyword; });
        if (attr != info->attributes.end()) {
          if (attr->kind == OpAttribute::Kind::Chunks) {
            SHARDLIN_RETURN_IF_ERROR(t.spec(in.*attr->fields.front().chunks));
          } else if (attr->kind == OpAttribute::Kind::Expr) {
            SHARDLIN_RETURN_IF_ERROR(t.expr(in.*attr->fields.front().expr));
          } else if (attr->kind == OpAttribute::Kind::Ints) {
            SHARDLIN_RETURN_IF_ERROR(t.ints(in.*attr->fields.front().ints));
          } else if (attr->kind == OpAttribute::Kind::Real) {
            SHARDLIN_RETURN_IF_ERROR(t.real(in.*attr->fields.front().real));
          } else {
            for (const OpAttribute::Field &f : attr->fields) {
              int64_t flag = 0;
              SHARDLIN_RETURN_IF_ERROR(t.integer(flag, 0, 1));
              in.*f.flag = flag != 0;
            }
          }
        } else if (w == "strategy") {
          if (!t.word(in.strategy))
            return t.err("expected a strategy name after 'strategy'");
        } else if (w == "overlap") {
          int64_t chunks = 0;
          SHARDLIN_RETURN_IF_ERROR(t.integer(chunks, 1, kMaxOverlapChunks));
          in.overlapChunks = static_cast<int>(chunks);
        } else if (w == "loc") {
          in.location = t.rest();
          break;
        } else {
          return t.err("unexpected '" + w + "'");
        }
      }
      p.instrs.push_back(std::move(in));
    } else if (kw == "results") {
      int64_t n = 0, v = 0;
      SHARDLIN_RETURN_IF_ERROR(t.integer(n, 0, 1 << 20));
      for (int64_t i = 0; i < n; ++i) {
        SHARDLIN_RETURN_IF_ERROR(t.integer(v, 0, INT32_MAX));
        p.results.push_back(static_cast<int>(v));
      }
    } else if (kw == "result") {
      int64_t id = 0;
      if (p.results.empty())
        return t.err("a 'result' line before the 'results' line");
      SHARDLIN_RETURN_IF_ERROR(
          t.integer(id, 0, static_cast<int64_t>(p.results.size()) - 1));
      p.resultLayouts.resize(p.results.size());
      ResultLayout &r = p.resultLayouts[static_cast<size_t>(id)];
      if (r.sharded)
        return t.err("result " + std::to_string(id) +
                     " has a second 'result' line");
      SHARDLIN_RETURN_IF_ERROR(t.expect("sharded"));
      r.sharded = true;
      SHARDLIN_RETURN_IF_ERROR(t.shape(r.globalShape));
      SHARDLIN_RETURN_IF_ERROR(t.expect("spec"));
      SHARDLIN_RETURN_IF_ERROR(t.spec(r.sharding));
    } else if (kw == "end") {
      sawEnd = true;
      break;
    } else {
      return t.err("unknown keyword '" + kw + "'");
    }
  }
  if (!sawEnd)
    return Status::invalidArgument("shardlin program is truncated (no 'end' line)");
  if (p.values.size() != static_cast<size_t>(declaredValues))
    return Status::invalidArgument("shardlin program declares " +
                         std::to_string(declaredValues) + " values but has " +
                         std::to_string(p.values.size()) + " 'value' lines");
  SHARDLIN_RETURN_IF_ERROR(p.validate());
  out = std::move(p);
  return Status::ok();
}

} // namespace shardlin::rt
