//===- Program.cpp - Program validation -----------------------------------===//

#include "shardlin/runtime/program/Program.h"
#include "shardlin/runtime/program/OpTable.h"
#include "shardlin/runtime/base/Buffer.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <sstream>

namespace shardlin::rt {

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += shape[i] == kDynamic ? std::string("?") : std::to_string(shape[i]);
  }
  return s + "]";
}

bool hasDynamicDim(const std::vector<int64_t> &shape) {
  return std::find(shape.begin(), shape.end(), kDynamic) != shape.end();
}

std::string describeArgument(const Program &program, size_t i) {
  std::string s = "argument " + std::to_string(i);
  if (i < program.args.size() && !program.args[i].location.empty())
    s += " (" + program.args[i].location + ")";
  return s;
}

/// An argument's parameter rows: only on a parameter, a range of dim 0
/// whose size is the argument's dim 0 (its global one if sharded).
Status checkParameterRows(const Program &program, size_t i) {
  const Argument &a = program.args[i];
  if (!a.hasParameterRows())
    return Status::ok();
  const std::vector<int64_t> &shape = a.sharded ? a.globalShape : a.type.shape;
  const Range r = a.parameterRows;
  if (a.parameter.empty() || shape.empty() || r.offset < 0 ||
      (shape[0] != kDynamic && r.size != shape[0]))
    return Status::invalidArgument(
        describeArgument(program, i) + " holds rows [" +
        std::to_string(r.offset) + ", " + std::to_string(r.offset + r.size) +
        ") of " + (a.parameter.empty() ? "no parameter" : a.parameter) +
        ", which must be a parameter's rows as many as the argument's dim 0 " +
        "(" + formatShape(shape) + ")");
  return Status::ok();
}

Status checkChunkSpec(const Program &program, const ChunkSpec &spec,
                      size_t rankOf, const std::string &what) {
  std::string problem = checkPlacements(spec.placements);
  if (!problem.empty())
    return Status::invalidArgument(what + ": " + problem);
  // A program with chunk specs is compiled for one world size; world_size
  // 0 ("any") would let a plan index the chunk tables with ranks they do
  // not have.
  if (program.worldSize == 0)
    return Status::invalidArgument(
        what + " has a chunk spec of " + std::to_string(spec.numChunks()) +
        " chunks but the program's world size is 0 (only a program without "
        "chunk specs runs on any number of ranks)");
  if (spec.numChunks() != program.worldSize)
    return Status::invalidArgument(
        what + " has " + std::to_string(spec.numChunks()) +
        " chunks but the program runs on " +
        std::to_string(program.worldSize) + " ranks");
  if (spec.dim < 0 || static_cast<size_t>(spec.dim) >= rankOf)
    return Status::invalidArgument(what + ": chunk dim " +
                                   std::to_string(spec.dim) +
                                   " out of range for rank " +
                                   std::to_string(rankOf));
  if (!spec.bounds.empty())
    if (std::string problem = checkBounds(spec.bounds, spec.numChunks());
        !problem.empty())
      return Status::invalidArgument(what + ": " + problem);
  return Status::ok();
}

Status checkChunkSpec(const Program &program, const ChunkSpec &spec,
                      const std::vector<int64_t> &shape,
                      const std::string &what) {
  SHARDLIN_RETURN_IF_ERROR(checkChunkSpec(program, spec, shape.size(), what));
  const int64_t n = shape[static_cast<size_t>(spec.dim)];
  if (spec.bounds.empty() || n == kDynamic)
    return Status::ok();
  if (std::string problem = checkBounds(spec.bounds, spec.numChunks(), n);
      !problem.empty())
    return Status::invalidArgument(what + ": " + problem + " (dim " +
                                   std::to_string(spec.dim) + " of " +
                                   formatShape(shape) + ")");
  return Status::ok();
}

namespace {
/// Program::validate for a compiled program (Program::compiled).
Status validateCompiled(const Program &p) {
  const std::string what = "compiled program '" + p.name + "' (" + p.compiled + ")";
  if (p.compiled.find_first_of(" \t\r\n") != std::string::npos)
    return Status::invalidArgument(what + ": the code's name has white space");
  if (!p.instrs.empty())
    return Status::invalidArgument(
        what + " has " + std::to_string(p.instrs.size()) +
        " instruction(s); a compiled program is its entry's signature only");
  if (p.values.size() != p.args.size() + p.results.size())
    return Status::invalidArgument(
        what + " has " + std::to_string(p.values.size()) + " values for " +
        std::to_string(p.args.size()) + " argument(s) and " +
        std::to_string(p.results.size()) + " result(s)");
  for (size_t i = 0; i < p.results.size(); ++i) {
    const size_t v = p.args.size() + i;
    if (p.results[i] != static_cast<int>(v))
      return Status::invalidArgument(what + ": result " + std::to_string(i) +
                                     " must be value " + std::to_string(v) +
                                     ", not " + std::to_string(p.results[i]));
    for (int64_t d : p.values[v].shape)
      if (d != kDynamic && d < 0)
        return Status::invalidArgument(what + ": result " +
                                       std::to_string(i) + " has the shape " +
                                       formatShape(p.values[v].shape));
  }
  return Status::ok();
}
} // namespace

namespace {
/// The layouts of the results, if any (Program::resultLayouts).
Status validateResultLayouts(const Program &p) {
  if (p.resultLayouts.empty())
    return Status::ok();
  if (p.resultLayouts.size() != p.results.size())
    return Status::invalidArgument(
        "program '" + p.name + "' has " +
        std::to_string(p.resultLayouts.size()) + " result layouts for " +
        std::to_string(p.results.size()) + " result(s)");
  for (size_t i = 0; i < p.results.size(); ++i) {
    const ResultLayout &layout = p.resultLayouts[i];
    if (!layout.sharded)
      continue;
    const std::string what = "result " + std::to_string(i);
    SHARDLIN_RETURN_IF_ERROR(
        checkChunkSpec(p, layout.sharding, layout.globalShape, what));
    const std::vector<int64_t> &local =
        p.values[static_cast<size_t>(p.results[i])].shape;
    bool fits = local.size() == layout.globalShape.size();
    for (size_t d = 0; fits && d < local.size(); ++d) {
      if (layout.globalShape[d] == kDynamic || layout.globalShape[d] < 0)
        return Status::invalidArgument(what + ": a sharded result needs a "
                                              "static global shape, not " +
                                       formatShape(layout.globalShape));
      fits = local[d] == kDynamic ||
             (static_cast<int64_t>(d) == layout.sharding.dim
                  ? local[d] <= layout.globalShape[d]
                  : local[d] == layout.globalShape[d]);
    }
    if (!fits)
      return Status::invalidArgument(
          what + ": its local shape " + formatShape(local) +
          " is not a chunk of its global shape " +
          formatShape(layout.globalShape) + " along dim " +
          std::to_string(layout.sharding.dim));
  }
  return Status::ok();
}
} // namespace

namespace {

/// The constants table: static shapes, the bytes of that many elements, and
/// a split one's chunk spec.
Status validateConstants(const Program &p) {
  for (size_t i = 0; i < p.constants.size(); ++i) {
    const Constant &c = p.constants[i];
    const std::string what = "constant " + std::to_string(i) +
                             (c.location.empty() ? "" : " (" + c.location + ")");
    if (hasDynamicDim(c.shape))
      return Status::invalidArgument(what + " has the dynamic shape " +
                                     formatShape(c.shape));
    int64_t count = 0;
    SHARDLIN_RETURN_IF_ERROR(
        checkedNumElements(c.shape, count, dtypeSize(c.dtype))
            .withContext(what));
    const uint64_t bytes = static_cast<uint64_t>(count) * dtypeSize(c.dtype);
    if (c.bytes.size() != bytes)
      return Status::invalidArgument(
          what + " of " + dtypeName(c.dtype) + " " + formatShape(c.shape) +
          " holds " + std::to_string(c.bytes.size()) + " bytes, not " +
          std::to_string(bytes));
    if (c.sharded)
      SHARDLIN_RETURN_IF_ERROR(
          checkChunkSpec(p, c.sharding, c.shape, what));
  }
  return Status::ok();
}

} // namespace

Status Program::validate() const {
  const int numValues = static_cast<int>(values.size());
  if (args.size() > values.size())
    return Status::invalidArgument("program '" + name + "' has more arguments than values");
  std::vector<bool> defined(values.size(), false);
  for (size_t i = 0; i < args.size(); ++i) {
    defined[i] = true;
    // Value i is argument i: a plan sizes the argument from one and its
    // uses from the other, so they must be the same type.
    if (args[i].type.dtype != values[i].dtype ||
        args[i].type.shape != values[i].shape)
      return Status::invalidArgument(
          "argument " + std::to_string(i) + " has type " +
          dtypeName(args[i].type.dtype) + " " + formatShape(args[i].type.shape) +
          " but value " + std::to_string(i) + " has type " +
          dtypeName(values[i].dtype) + " " + formatShape(values[i].shape));
  }
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].sharded && args[i].replicated)
      return Status::invalidArgument(
          describeArgument(*this, i) +
          " is both sharded and replicated: a replicated argument is a plain "
          "one, the same on every rank");
  for (size_t i = 0; i < args.size(); ++i)
    for (char c : args[i].parameter)
      if (std::isspace(static_cast<unsigned char>(c)) ||
          std::iscntrl(static_cast<unsigned char>(c)))
        return Status::invalidArgument(
            "the parameter name '" + args[i].parameter + "' of " +
            describeArgument(*this, i) +
            " holds a space or a control character (a parameter name is "
            "one word)");
  for (size_t i = 0; i < args.size(); ++i)
    SHARDLIN_RETURN_IF_ERROR(checkParameterRows(*this, i));
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].sharded)
      SHARDLIN_RETURN_IF_ERROR(checkChunkSpec(*this, args[i].sharding,
                                              args[i].globalShape,
                                              "argument " + std::to_string(i)));
  SHARDLIN_RETURN_IF_ERROR(validateConstants(*this));
  if (!compiled.empty()) {
    SHARDLIN_RETURN_IF_ERROR(validateCompiled(*this));
    return validateResultLayouts(*this);
  }
  for (size_t s = 0; s < instrs.size(); ++s) {
    const Instr &in = instrs[s];
    std::string what = "instruction " + std::to_string(s) + " (" +
                       opCodeName(in.op) + ")";
    if (static_cast<size_t>(in.op) >= kNumOpCodes)
      return Status::invalidArgument(
          "instruction " + std::to_string(s) + " has an unknown op code " +
          std::to_string(static_cast<int>(in.op)));
    const OpInfo &info = opInfo(in.op);
    const size_t count = in.operands.size();
    if (count < info.minOperands || count > info.maxOperands)
      return Status::invalidArgument(
          what + " has " + std::to_string(count) + " operands, expected " +
          std::to_string(info.minOperands) +
          (info.maxOperands == info.minOperands
               ? std::string()
               : " to " + std::to_string(info.maxOperands)));
    for (int v : in.operands)
      if (v < 0 || v >= numValues || !defined[v])
        return Status::invalidArgument(what + " uses undefined value " +
                             std::to_string(v));
    if (in.result < 0 || in.result >= numValues || defined[in.result])
      return Status::invalidArgument(what + " defines invalid or duplicate value " +
                           std::to_string(in.result));
    if (!info.ownElementTypes)
      for (int v : in.operands)
        if (values[v].dtype != values[in.result].dtype)
          return Status::invalidArgument(what + " mixes element types");
    SHARDLIN_RETURN_IF_ERROR(info.verify(*this, in, what));
    if (!in.strategy.empty() &&
        in.strategy.find_first_of(" \t\r\n") != std::string::npos)
      return Status::invalidArgument(what + " has a strategy name with "
                                            "white space: '" +
                                     in.strategy + "'");
    if (in.overlapChunks != 0 &&
        (in.op != OpCode::AllGather || in.overlapChunks < 1 ||
         in.overlapChunks > kMaxOverlapChunks))
      return Status::invalidArgument(
          what + " has overlap " + std::to_string(in.overlapChunks) +
          ": only an all_gather overlaps, in 1 to " +
          std::to_string(kMaxOverlapChunks) + " chunks");
    defined[in.result] = true;
  }
  for (int v : results)
    if (v < 0 || v >= numValues || !defined[v])
      return Status::invalidArgument("program result " + std::to_string(v) +
                           " is not defined");
  return validateResultLayouts(*this);
}

} // namespace shardlin::rt
