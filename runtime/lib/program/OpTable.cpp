//===- OpTable.cpp - The description of every runtime op ------------------===//
//
// Each op once: its mnemonic, the IR ops it is translated from, its
// operands, its attributes and its own checks (verify), as Program::validate,
// the text form and the translator from IR read them (OpTable.h). How an op
// resolves its sizes and runs on a rank is the executor's
// (exec/OpKernels.h).
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/program/OpTable.h"

#include "program/AttentionVerify.h"

#include <algorithm>

namespace shardlin::rt {

namespace {

size_t rankOf(const Program &p, int value) {
  return p.values[value].shape.size();
}

/// Collectives along one dim keep the rank; their chunk spec applies to it,
/// and its bounds to the whole dim: all_gather's result's, local_chunk's
/// and reduce_scatter's operand's.
Status verifyAlong(const Program &p, const Instr &in, const std::string &what) {
  const size_t rank = rankOf(p, in.result);
  if (rankOf(p, in.operands[0]) != rank)
    return Status::invalidArgument(what + " changes the rank");
  const int whole = in.op == OpCode::AllGather ? in.result : in.operands[0];
  return checkChunkSpec(p, in.along, p.values[whole].shape, what);
}

/// local_slice (whole: the operand, part: the result) and local_place
/// (whole: the result, part: the operand): one dim of the whole value's
/// rank, one [b, e) pair per rank within the dim's static size, the other
/// dims unchanged and the part's dim static only where every range has
/// that size. The messages name the values as the instruction's operand
/// and result.
Status verifyRankRanges(const Program &p, const Instr &in, bool placing,
                        const std::string &what) {
  const int wholeValue = placing ? in.result : in.operands[0];
  const int partValue = placing ? in.operands[0] : in.result;
  const std::string wholeName = placing ? "result" : "operand";
  const std::string partName = placing ? "operand" : "result";
  const std::vector<int64_t> &src = p.values[wholeValue].shape;
  const std::vector<int64_t> &dst = p.values[partValue].shape;
  if (in.sliceDim.size() != 1 || in.sliceDim[0] < 0 ||
      static_cast<size_t>(in.sliceDim[0]) >= src.size())
    return Status::invalidArgument(what + " needs one dim of its " +
                                   wholeName + " " + formatShape(src));
  if (dst.size() != src.size())
    return Status::invalidArgument(what + " changes the rank");
  const size_t dim = static_cast<size_t>(in.sliceDim[0]);
  if (in.ranges.empty() || in.ranges.size() % 2 != 0 ||
      (p.worldSize > 0 &&
       in.ranges.size() != static_cast<size_t>(2 * p.worldSize)))
    return Status::invalidArgument(
        what + " needs one [begin, end) pair per rank, not " +
        std::to_string(in.ranges.size()) + " numbers");
  for (size_t r = 0; r < in.ranges.size(); r += 2) {
    const int64_t b = in.ranges[r], e = in.ranges[r + 1];
    const std::string pair = "[" + std::to_string(b) + ", " +
                             std::to_string(e) + ") of rank " +
                             std::to_string(r / 2);
    if (b < 0 || e < b || (src[dim] != kDynamic && e > src[dim]))
      return Status::invalidArgument(what + ": the range " + pair +
                                     " is not within dim " +
                                     std::to_string(dim) + " of " +
                                     formatShape(src));
    if (dst[dim] != kDynamic && dst[dim] != e - b)
      return Status::invalidArgument(what + ": the " + partName + " " +
                                     formatShape(dst) + " is static along dim " +
                                     std::to_string(dim) + " but the range " +
                                     pair + " has " + std::to_string(e - b));
  }
  for (size_t d = 0; d < src.size(); ++d)
    if (d != dim && src[d] != dst[d])
      return Status::invalidArgument(what + " changes dim " +
                                     std::to_string(d) + ": " +
                                     formatShape(p.values[in.operands[0]].shape) +
                                     " to " +
                                     formatShape(p.values[in.result].shape));
  return Status::ok();
}

Status verifyLocalSlice(const Program &p, const Instr &in,
                        const std::string &what) {
  return verifyRankRanges(p, in, false, what);
}

/// local_place: as local_slice, the result the whole value, whose dim
/// must be static (the size of the zero result).
Status verifyLocalPlace(const Program &p, const Instr &in,
                        const std::string &what) {
  SHARDLIN_RETURN_IF_ERROR(
      verifyRankRanges(p, in, true, what));
  const std::vector<int64_t> &dst = p.values[in.result].shape;
  const int64_t dim = in.sliceDim[0];
  if (dst[static_cast<size_t>(dim)] == kDynamic)
    return Status::invalidArgument(what + " places into a result " +
                                   formatShape(dst) + " dynamic along dim " +
                                   std::to_string(dim) +
                                   ", which must be static");
  return Status::ok();
}

Status verifyLocalShard(const Program &p, const Instr &in,
                        const std::string &what) {
  if (static_cast<size_t>(in.operands[0]) >= p.args.size() ||
      !p.args[in.operands[0]].sharded)
    return Status::invalidArgument(what + " needs a sharded argument");
  return Status::ok();
}

Status verifyReshape(const Program &p, const Instr &in,
                     const std::string &what) {
  if (p.values[in.operands[0]].dtype != p.values[in.result].dtype)
    return Status::invalidArgument(what + " mixes element types");
  if (in.operands.size() == 2 && rankOf(p, in.operands[1]) != rankOf(p, in.result))
    return Status::invalidArgument(
        what + " takes its dynamic dims from a value of rank " +
        std::to_string(rankOf(p, in.operands[1])) + ", not the result's " +
        std::to_string(rankOf(p, in.result)));
  if (in.reshapeGroups.empty())
    return Status::ok();
  // One entry per dim of the side of higher rank: a dim of the other side.
  const size_t to = rankOf(p, in.result), from = rankOf(p, in.operands[0]);
  const size_t big = std::max(to, from), small = std::min(to, from);
  if (to == from || in.reshapeGroups.size() != big)
    return Status::invalidArgument(
        what + " has " + std::to_string(in.reshapeGroups.size()) +
        " groups for an operand of rank " + std::to_string(from) +
        " and a result of rank " + std::to_string(to) +
        " (one per dim of the higher rank)");
  for (int64_t d : in.reshapeGroups)
    if (d < 0 || d >= static_cast<int64_t>(small))
      return Status::invalidArgument(what + " groups by dim " +
                                     std::to_string(d) + " of rank " +
                                     std::to_string(small));
  return Status::ok();
}

Status verifyAllToAll(const Program &p, const Instr &in,
                      const std::string &what) {
  const size_t rank = rankOf(p, in.result);
  if (rankOf(p, in.operands[0]) != rank)
    return Status::invalidArgument(what + " changes the rank");
  // The concat spec splits the result's concat dim, the split spec the
  // operand's split dim.
  SHARDLIN_RETURN_IF_ERROR(checkChunkSpec(p, in.concat,
                                          p.values[in.result].shape,
                                          what + " concat"));
  if (in.concat.dim == in.split.dim)
    return Status::invalidArgument(what +
                                   " splits and concatenates the same dim");
  return checkChunkSpec(p, in.split, p.values[in.operands[0]].shape, what);
}

/// Whether a gemm with operands of `operands` gives an f32 result: the
/// partial products of a K split, summed over ranks before one rounding.
bool isF32ResultOf(DType operands, DType result) {
  return result == DType::F32 &&
         (operands == DType::F16 || operands == DType::BF16);
}

Status verifyGemm(const Program &p, const Instr &in, const std::string &what) {
  if (rankOf(p, in.result) != 2 || rankOf(p, in.operands[0]) != 2 ||
      rankOf(p, in.operands[1]) != 2 ||
      (in.operands.size() == 3 && rankOf(p, in.operands[2]) != 1))
    return Status::invalidArgument(what + " needs rank-2 operands and result");
  const DType t = p.values[in.operands[0]].dtype;
  for (int v : in.operands)
    if (p.values[v].dtype != t)
      return Status::invalidArgument(what + " mixes element types");
  const DType r = p.values[in.result].dtype;
  if (r != t && !isF32ResultOf(t, r))
    return Status::invalidArgument(
        what + " has a " + dtypeName(r) + " result of " + dtypeName(t) +
        " operands (the result has their type, or f32 for f16 and bf16)");
  if (r != t && in.operands.size() == 3)
    return Status::invalidArgument(what + " has a bias and an f32 result of " +
                                   dtypeName(t) + " operands");
  return Status::ok();
}

Status verifyBiasAdd(const Program &p, const Instr &in,
                     const std::string &what) {
  if (rankOf(p, in.result) == 0 || rankOf(p, in.operands[1]) != 1)
    return Status::invalidArgument(what + " needs a rank-1 bias");
  return Status::ok();
}

Status verifyElementwise(const Program &p, const Instr &in,
                         const std::string &what) {
  SHARDLIN_RETURN_IF_ERROR(validateExpr(in.expr, in.operands.size(), what));
  const std::vector<int64_t> &result = p.values[in.result].shape;
  bool anyFull = false;
  for (size_t k = 0; k < in.operands.size(); ++k) {
    const std::vector<int64_t> &shape = p.values[in.operands[k]].shape;
    const std::string operand =
        what + " operand " + std::to_string(k) + " " + formatShape(shape);
    if (isRowVectorOperand(shape.size(), result.size())) {
      if (shape[0] != kDynamic && result.back() != kDynamic &&
          shape[0] != result.back())
        return Status::invalidArgument(
            operand + " is a row vector of " + std::to_string(shape[0]) +
            " elements but the result " + formatShape(result) +
            " has rows of " + std::to_string(result.back()));
      continue;
    }
    if (isColumnOperand(shape, result)) {
      for (size_t d = 0; d + 1 < shape.size(); ++d)
        if (shape[d] != kDynamic && result[d] != kDynamic &&
            shape[d] != result[d])
          return Status::invalidArgument(operand + " differs from the result " +
                                         formatShape(result) + " in dim " +
                                         std::to_string(d));
      continue;
    }
    if (shape.size() != result.size())
      return Status::invalidArgument(
          operand + " is neither of the result's shape " +
          formatShape(result) + " nor a row vector of its last dim");
    for (size_t d = 0; d < shape.size(); ++d)
      if (shape[d] != kDynamic && result[d] != kDynamic &&
          shape[d] != result[d])
        return Status::invalidArgument(operand + " differs from the result " +
                                       formatShape(result) + " in dim " +
                                       std::to_string(d));
    anyFull = true;
  }
  if (!anyFull)
    return Status::invalidArgument(what + " needs an operand of the result's "
                                          "shape " +
                                   formatShape(result) +
                                   " (all its operands are row vectors)");
  return Status::ok();
}

Status verifyConvert(const Program &p, const Instr &in,
                     const std::string &what) {
  const DType from = p.values[in.operands[0]].dtype;
  const DType to = p.values[in.result].dtype;
  if (!isConversion(from, to))
    return Status::invalidArgument(what + " converts " + dtypeName(from) +
                                   " to " + dtypeName(to) +
                                   " (f32 to f16 or bf16, or back)");
  if (rankOf(p, in.operands[0]) != rankOf(p, in.result))
    return Status::invalidArgument(what + " changes the rank");
  return Status::ok();
}

/// sum_rows: a rank-2 input's column sums, rank 1; the result has the
/// input's element type, or f32 for f16/bf16 (the unrounded sum a bias's
/// gradient keeps until its sum over ranks, as gemm's f32 result).
Status verifySumRows(const Program &p, const Instr &in,
                     const std::string &what) {
  if (rankOf(p, in.operands[0]) != 2 || rankOf(p, in.result) != 1)
    return Status::invalidArgument(what +
                                   " needs a rank-2 input and a rank-1 result");
  const std::vector<int64_t> &input = p.values[in.operands[0]].shape;
  const std::vector<int64_t> &result = p.values[in.result].shape;
  if (input[1] != kDynamic && result[0] != kDynamic && input[1] != result[0])
    return Status::invalidArgument(
        what + " sums the rows of " + formatShape(input) + " into " +
        formatShape(result) + " (the result has one element per column)");
  const DType t = p.values[in.operands[0]].dtype;
  const DType r = p.values[in.result].dtype;
  if (r != t && !isF32ResultOf(t, r))
    return Status::invalidArgument(
        what + " has a " + dtypeName(r) + " result of a " + dtypeName(t) +
        " input (the result has its type, or f32 for f16 and bf16)");
  return Status::ok();
}

/// Whether two shapes agree in rank and in every dim static in both.
bool compatibleShapes(const std::vector<int64_t> &a,
                      const std::vector<int64_t> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t d = 0; d < a.size(); ++d)
    if (a[d] != kDynamic && b[d] != kDynamic && a[d] != b[d])
      return false;
  return true;
}

/// all_reduce and from_local: the result has the operand's shape.
Status verifySameShape(const Program &p, const Instr &in,
                       const std::string &what) {
  const std::vector<int64_t> &from = p.values[in.operands[0]].shape;
  const std::vector<int64_t> &to = p.values[in.result].shape;
  if (!compatibleShapes(from, to))
    return Status::invalidArgument(what + " changes the shape " +
                                   formatShape(from) + " to " +
                                   formatShape(to));
  return Status::ok();
}

/// from_local: the result, of the operand's shape, is this rank's chunk of
/// a sharded tensor whose chunks the spec's bounds give; a static size
/// along its dim is every chunk's.
Status verifyFromLocal(const Program &p, const Instr &in,
                       const std::string &what) {
  SHARDLIN_RETURN_IF_ERROR(verifySameShape(p, in, what));
  const std::vector<int64_t> &local = p.values[in.result].shape;
  SHARDLIN_RETURN_IF_ERROR(checkChunkSpec(p, in.along, local.size(), what));
  const std::vector<int64_t> &bounds = in.along.bounds;
  if (bounds.empty())
    return Status::invalidArgument(
        what + " needs explicit chunk bounds (they give the global size of "
               "dim " +
        std::to_string(in.along.dim) + ")");
  const int64_t size = local[static_cast<size_t>(in.along.dim)];
  for (size_t c = 0; size != kDynamic && c + 1 < bounds.size(); ++c)
    if (bounds[c + 1] - bounds[c] != size)
      return Status::invalidArgument(
          what + " has " + std::to_string(size) + " elements along dim " +
          std::to_string(in.along.dim) + " on every rank, but chunk " +
          std::to_string(c) + " has " +
          std::to_string(bounds[c + 1] - bounds[c]));
  return Status::ok();
}

Status verifyTranspose(const Program &p, const Instr &in,
                       const std::string &what) {
  const std::vector<int64_t> &from = p.values[in.operands[0]].shape;
  const std::vector<int64_t> &to = p.values[in.result].shape;
  const std::vector<int64_t> &perm = in.permutation;
  if (perm.size() != to.size() || from.size() != to.size())
    return Status::invalidArgument(
        what + " permutes " + std::to_string(perm.size()) + " dims of " +
        formatShape(from) + " into " + formatShape(to));
  std::vector<bool> seen(perm.size(), false);
  for (size_t i = 0; i < perm.size(); ++i) {
    const int64_t d = perm[i];
    if (d < 0 || static_cast<size_t>(d) >= perm.size() || seen[d])
      return Status::invalidArgument(what + ": the permutation is not one of " +
                                     std::to_string(perm.size()) + " dims");
    seen[d] = true;
    if (from[d] != kDynamic && to[i] != kDynamic && from[d] != to[i])
      return Status::invalidArgument(
          what + ": result dim " + std::to_string(i) + " of " +
          formatShape(to) + " is not operand dim " + std::to_string(d) +
          " of " + formatShape(from));
  }
  return Status::ok();
}

Status verifyFill(const Program &p, const Instr &in, const std::string &what) {
  const std::vector<int64_t> &shape = p.values[in.result].shape;
  const size_t first = fillInputsBegin(p.values[in.result]);
  if (in.operands.size() < first)
    return Status::invalidArgument(
        what + " fills the dynamic shape " + formatShape(shape) +
        " without a value to take its dynamic dims from");
  // The dynamic dims are the leading dims of that value (a row reduction's
  // rank-reduced init takes the rows of the matrix it reduces).
  if (first == 1 && rankOf(p, in.operands[0]) < shape.size())
    return Status::invalidArgument(
        what + " takes its dynamic dims from a value of rank " +
        std::to_string(rankOf(p, in.operands[0])) + ", below the result's " +
        std::to_string(shape.size()));
  for (size_t k = first; k < in.operands.size(); ++k) {
    const ValueType &v = p.values[in.operands[k]];
    if (v.dtype != p.values[in.result].dtype)
      return Status::invalidArgument(what + " mixes element types");
    if (shape.empty() || !isRowVectorOperand(v.shape.size(), shape.size()) ||
        (v.shape[0] != kDynamic && shape.back() != kDynamic &&
         v.shape[0] != shape.back()))
      return Status::invalidArgument(
          what + " operand " + std::to_string(k) + " " +
          formatShape(v.shape) + " is not a row vector of the result " +
          formatShape(shape));
  }
  return validateExpr(in.expr, in.operands.size() - first, what);
}

/// The result is this rank's part of the constant: its shape, but along a
/// split constant's dim the rank's chunk (`?` where the chunks differ).
Status verifyConstant(const Program &p, const Instr &in,
                      const std::string &what) {
  if (in.constantIndex.size() != 1 || in.constantIndex[0] < 0 ||
      static_cast<size_t>(in.constantIndex[0]) >= p.constants.size())
    return Status::invalidArgument(
        what + " reads no constant of the program's " +
        std::to_string(p.constants.size()) +
        " (expected `index 1 K`, 0 <= K < that count)");
  const Constant &c = p.constants[static_cast<size_t>(in.constantIndex[0])];
  const ValueType &result = p.values[in.result];
  const std::string name = "constant " + std::to_string(in.constantIndex[0]);
  if (result.dtype != c.dtype)
    return Status::invalidArgument(what + " of " + dtypeName(c.dtype) + " " +
                                   name + " defines a " +
                                   dtypeName(result.dtype) + " value");
  if (result.shape.size() != c.shape.size())
    return Status::invalidArgument(what + ": " + name + " " +
                                   formatShape(c.shape) +
                                   " has another rank than its result " +
                                   formatShape(result.shape));
  for (size_t d = 0; d < c.shape.size(); ++d) {
    const bool split = c.sharded && static_cast<int64_t>(d) == c.sharding.dim;
    if (result.shape[d] == c.shape[d] ||
        (split && (result.shape[d] == kDynamic || result.shape[d] < c.shape[d])))
      continue;
    return Status::invalidArgument(
        what + ": its result " + formatShape(result.shape) + " is not " +
        (c.sharded ? "a rank's chunk of " : "") + name + " " +
        formatShape(c.shape) + " (dim " + std::to_string(d) + ")");
  }
  return Status::ok();
}

/// reduce_last: y[i] = init[i] combined with every x[i, j] (reduceLast in
/// exec/LocalOps.h); the result and init have x's leading dims and either
/// a last dim of 1 (keep-dim) or none; the expression is the combination.
Status verifyReduceLast(const Program &p, const Instr &in,
                        const std::string &what) {
  const std::vector<int64_t> &x = p.values[in.operands[0]].shape;
  const std::vector<int64_t> &init = p.values[in.operands[1]].shape;
  const std::vector<int64_t> &y = p.values[in.result].shape;
  if (x.empty())
    return Status::invalidArgument(what + " reduces a rank-0 value");
  if (!compatibleShapes(init, y))
    return Status::invalidArgument(what + ": the init " + formatShape(init) +
                                   " and the result " + formatShape(y) +
                                   " differ");
  const bool keepDim = y.size() == x.size();
  if ((!keepDim && y.size() + 1 != x.size()) || (keepDim && y.back() != 1))
    return Status::invalidArgument(
        what + " reduces the last dim of " + formatShape(x) + " into " +
        formatShape(y) + " (the leading dims, with or without a last dim of 1)");
  for (size_t d = 0; d + 1 < x.size(); ++d)
    if (x[d] != kDynamic && y[d] != kDynamic && x[d] != y[d])
      return Status::invalidArgument(what + ": dim " + std::to_string(d) +
                                     " of " + formatShape(x) + " and " +
                                     formatShape(y) + " differ");
  if (!reduceLastCombiner(in.expr))
    return Status::invalidArgument(
        what + ": the combination is not one of add, maximum, maxnum "
               "(input 0 the element, input 1 the accumulator)");
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

using Kind = OpAttribute::Kind;

OpAttribute chunksAttr(const char *keyword, const char *odsName,
                       ChunkSpec Instr::*field) {
  return {Kind::Chunks, keyword, {{odsName, field, nullptr}}};
}

OpAttribute intsAttr(const char *keyword, std::vector<int64_t> Instr::*field) {
  return {Kind::Ints, keyword, {{keyword, nullptr, nullptr, nullptr, field}}};
}

/// attention's and attention_grad's attributes, in text order (the ODS
/// names are the keywords; docs/runtime.md, "Attention and RoPE").
std::vector<OpAttribute> attentionAttrs(bool grad) {
  std::vector<OpAttribute> attrs = {
      intsAttr("head_dim", &Instr::headDim),
      {Kind::Real,
       "scale",
       {{"scale", nullptr, nullptr, nullptr, nullptr, &Instr::scale}}},
      {Kind::Flags, "causal", {{"causal", nullptr, &Instr::causal}}},
      intsAttr("group", &Instr::group),
      intsAttr("q_heads", &Instr::qHeads),
      intsAttr("kv_heads", &Instr::kvHeads)};
  if (grad)
    attrs.push_back(intsAttr("wrt", &Instr::wrt));
  return attrs;
}

// Long: the table itself, one entry per op in OpCode order.
std::vector<OpInfo> makeTable() {
  const OpAttribute along = chunksAttr("chunk", "along", &Instr::along);
  std::vector<OpInfo> t = {
      {OpCode::LocalShard,
       "local_shard",
       {"shardlin.local_shard"},
       1,
       1,
       {},
       verifyLocalShard,
       false},
      {OpCode::LocalChunk,
       "local_chunk",
       {"shardlin.local_chunk"},
       1,
       1,
       {along},
       verifyAlong,
       false},
      {OpCode::AllGather,
       "all_gather",
       {"shardlin.all_gather"},
       1,
       1,
       {along},
       verifyAlong,
       false},
      {OpCode::AllToAll,
       "all_to_all",
       {"shardlin.all_to_all"},
       1,
       1,
       {chunksAttr("chunk", "split", &Instr::split),
        chunksAttr("concat", "concat", &Instr::concat)},
       verifyAllToAll,
       false},
      {OpCode::ReduceScatter,
       "reduce_scatter",
       {"shardlin.reduce_scatter"},
       1,
       1,
       {along},
       verifyAlong,
       false},
      // linalg.matmul too (rank-local: transposes from its indexing maps,
      // a non-zero init added after), which the translator builds itself.
      {OpCode::Gemm,
       "gemm",
       {"shardlin.gemm", "linalg.matmul"},
       2,
       3,
       {{Kind::Flags,
         "trans",
         {{"transpose_lhs", nullptr, &Instr::transposeLhs},
          {"transpose_rhs", nullptr, &Instr::transposeRhs}}}},
       verifyGemm,
       true},
      {OpCode::BiasAdd,
       "bias_add",
       {"shardlin.bias_add"},
       2,
       2,
       {},
       verifyBiasAdd,
       false},
      // Operand 1, if any: the value whose dims of the same index give the
      // result's dynamic dims (an expand_shape's output sizes, read from
      // tensor.dim ops by the translator).
      {OpCode::Reshape,
       "reshape",
       {"tensor.collapse_shape", "tensor.expand_shape"},
       1,
       2,
       {},
       verifyReshape,
       true},
      // Built by the translator from chains of arith/math/linalg ops, not
      // from one IR op: no irOps.
      {OpCode::Elementwise,
       "elementwise",
       {},
       1,
       kMaxExprNodes,
       {{Kind::Expr, "expr", {{"expr", nullptr, nullptr, &Instr::expr}}}},
       verifyElementwise,
       false},
      {OpCode::Convert,
       "convert",
       {"shardlin.convert"},
       1,
       1,
       {},
       verifyConvert,
       true},
      {OpCode::SumRows,
       "sum_rows",
       {"shardlin.sum_rows"},
       1,
       1,
       {},
       verifySumRows,
       true},
      // The sum over the ranks, every rank the whole (f16/bf16 in f32).
      {OpCode::AllReduce,
       "all_reduce",
       {"shardlin.all_reduce"},
       1,
       1,
       {},
       verifySameShape,
       false},
      // A view: the operand is this rank's chunk of a sharded result. The
      // chunk spec comes from the IR op's result type.
      {OpCode::FromLocal,
       "from_local",
       {"shardlin.from_local"},
       1,
       1,
       {chunksAttr("chunk", "sharding", &Instr::along)},
       verifyFromLocal,
       false},
      {OpCode::Transpose,
       "transpose",
       {"linalg.transpose"},
       1,
       1,
       {{Kind::Ints,
         "perm",
         {{"permutation", nullptr, nullptr, nullptr, &Instr::permutation}}}},
       verifyTranspose,
       false},
      // Built by the translator from a chain that reads no tensor of its
      // shape (linalg.fill, linalg.broadcast, a splat), not from one IR op.
      {OpCode::Fill,
       "fill",
       {},
       0,
       kMaxExprNodes + 1,
       {{Kind::Expr, "expr", {{"value", nullptr, nullptr, &Instr::expr}}}},
       verifyFill,
       true},
      // This rank's part of an entry of the program's constants table; the
      // translator builds the entry and the instruction from the IR op.
      {OpCode::Constant,
       "constant",
       {"shardlin.constant"},
       0,
       0,
       {{Kind::Ints,
         "index",
         {{"index", nullptr, nullptr, nullptr, &Instr::constantIndex}}}},
       verifyConstant,
       false},
      // A reduction over the last dim, rank-local (a norm's row sums and
      // maxima): linalg.reduce, and the linalg.generic reductions the
      // translator builds itself (TranslateReductions.cpp).
      {OpCode::ReduceLast,
       "reduce_last",
       {"linalg.reduce"},
       2,
       2,
       {{Kind::Expr, "expr", {{"combiner", nullptr, nullptr, &Instr::expr}}}},
       verifyReduceLast,
       false},
      // Rank-local attention over this rank's heads (q, k, v[, mask]), and
      // one of its gradients (q, k, v, dO[, mask]; `wrt`), built by the
      // translator from shardlin.attention and its head-aligned chunks.
      {OpCode::Attention,
       "attention",
       {},
       3,
       4,
       attentionAttrs(false),
       verifyAttention,
       false},
      {OpCode::AttentionGrad,
       "attention_grad",
       {},
       4,
       5,
       attentionAttrs(true),
       verifyAttention,
       false},
      // Rotary position embedding (x, cos, sin), rotate-half.
      {OpCode::Rope,
       "rope",
       {},
       3,
       3,
       {intsAttr("head_dim", &Instr::headDim),
        {Kind::Flags, "inverse", {{"inverse", nullptr, &Instr::inverse}}}},
       verifyRope,
       true},
      // Rank r's [b_r, e_r) along a dim of a value every rank holds whole
      // (ranges may overlap or be empty): the translator builds it from
      // shardlin.local_slice, whose `dim` is a plain integer.
      {OpCode::LocalSlice,
       "local_slice",
       {},
       1,
       1,
       {intsAttr("dim", &Instr::sliceDim), intsAttr("ranges", &Instr::ranges)},
       verifyLocalSlice,
       false},
      // The adjoint of local_slice: rank r's operand at [b_r, e_r) along the
      // dim of a zero result of the full (static) size; the translator
      // builds it from shardlin.local_place.
      {OpCode::LocalPlace,
       "local_place",
       {},
       1,
       1,
       {intsAttr("dim", &Instr::sliceDim), intsAttr("ranges", &Instr::ranges)},
       verifyLocalPlace,
       false},
  };
  return t;
}

} // namespace

std::optional<ExprOp> reduceLastCombiner(const ExprProgram &expr) {
  if (expr.nodes.size() != 3)
    return std::nullopt;
  const ExprNode &a = expr.nodes[0], &b = expr.nodes[1], &c = expr.nodes[2];
  if (a.op != ExprOp::Input || b.op != ExprOp::Input || a.input == b.input ||
      a.input < 0 || a.input > 1 || b.input < 0 || b.input > 1)
    return std::nullopt;
  const bool args = (c.args[0] == 0 && c.args[1] == 1) ||
                    (c.args[0] == 1 && c.args[1] == 0);
  if (!args || (c.op != ExprOp::Add && c.op != ExprOp::Maximum &&
                c.op != ExprOp::MaxNum))
    return std::nullopt;
  return c.op;
}

const std::vector<OpInfo> &opTable() {
  static const std::vector<OpInfo> table = makeTable();
  return table;
}

const OpInfo &opInfo(OpCode op) {
  // The table is in OpCode order (OpTableTest checks it).
  return opTable()[static_cast<size_t>(op)];
}

const OpInfo *findOpByMnemonic(const std::string &mnemonic) {
  for (const OpInfo &info : opTable())
    if (mnemonic == info.mnemonic)
      return &info;
  return nullptr;
}

size_t maxOperandsOfAnyOp() {
  size_t most = 0;
  for (const OpInfo &info : opTable())
    most = std::max(most, info.maxOperands);
  return most;
}

const char *opCodeName(OpCode op) {
  if (static_cast<size_t>(op) >= kNumOpCodes)
    return "unknown";
  return opInfo(op).mnemonic;
}

} // namespace shardlin::rt
