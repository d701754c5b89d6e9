//===- AttentionVerify.cpp - attention's and rope's checks ----------------===//
//
// What Program::validate checks of attention, attention_grad and rope
// beyond every op's checks (docs/runtime.md, "Attention and RoPE"): the head
// tables, and the shapes against them wherever a size is static.
//
//===----------------------------------------------------------------------===//

#include "program/AttentionVerify.h"

#include "shardlin/runtime/program/AttentionHeads.h"

#include <cmath>

namespace shardlin::rt {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

/// The largest head index, head size and group the ops take: far beyond
/// any model, and small enough that no product of the ones the kernels
/// form (heads * D, (kv + 1) * g) can overflow int64.
constexpr int64_t kMaxHeadValue = int64_t(1) << 24;

/// Whether two sizes agree where both are static.
bool agree(int64_t a, int64_t b) {
  return a == kDynamic || b == kDynamic || a == b;
}

Status checkOneInt(const std::vector<int64_t> &v, const char *keyword,
                   const std::string &what) {
  if (v.size() != 1 || v[0] <= 0 || v[0] > kMaxHeadValue)
    return Status::invalidArgument(what + " needs `" + keyword +
                                   " 1 N` with 0 < N <= " +
                                   str(kMaxHeadValue));
  return Status::ok();
}

Status checkTable(const Program &p, const std::vector<int64_t> &table,
                  const char *keyword, const std::string &what) {
  if (table.empty() || table.size() % 2 != 0)
    return Status::invalidArgument(what + ": `" + keyword +
                                   "` needs one pair [begin, end) per rank");
  const size_t pairs = table.size() / 2;
  if (p.worldSize != 0 && pairs != size_t(p.worldSize))
    return Status::invalidArgument(what + ": `" + keyword + "` has " +
                                   str(int64_t(pairs)) + " pairs but the "
                                   "program has " + str(p.worldSize) +
                                   " ranks");
  for (size_t r = 0; r < pairs; ++r)
    if (table[2 * r] > table[2 * r + 1] || table[2 * r + 1] > kMaxHeadValue)
      return Status::invalidArgument(
          what + ": `" + keyword + "` gives rank " + str(int64_t(r)) +
          " the heads [" + str(table[2 * r]) + ", " + str(table[2 * r + 1]) +
          ") (begin after end, or beyond " + str(kMaxHeadValue) + ")");
  return Status::ok();
}

/// The last dim of a [B, S, n*D] or [S, n*D] value, checked against every
/// rank's n heads of `table` where it is static.
Status checkHeadsDim(const Program &p, int v, const std::vector<int64_t> &table,
                     int64_t headDim, const std::string &name,
                     const std::string &what) {
  const std::vector<int64_t> &shape = p.values[v].shape;
  if (shape.size() != 2 && shape.size() != 3)
    return Status::invalidArgument(what + ": " + name + " " +
                                   formatShape(shape) +
                                   " is not [B, S, heads*D] or [S, heads*D]");
  const int64_t last = shape.back();
  for (size_t r = 0; last != kDynamic && 2 * r < table.size(); ++r) {
    const int64_t heads = table[2 * r + 1] - table[2 * r];
    if (heads * headDim != last)
      return Status::invalidArgument(
          what + ": " + name + " " + formatShape(shape) + " has a last dim of " +
          str(last) + " but rank " + str(int64_t(r)) + " holds " + str(heads) +
          " heads of " + str(headDim) + " (" + str(heads * headDim) + ")");
  }
  return Status::ok();
}

} // namespace

Status checkHeadTables(const Program &p, const Instr &in,
                       const std::string &what) {
  SHARDLIN_RETURN_IF_ERROR(checkOneInt(in.headDim, "head_dim", what));
  SHARDLIN_RETURN_IF_ERROR(checkOneInt(in.group, "group", what));
  SHARDLIN_RETURN_IF_ERROR(checkTable(p, in.qHeads, "q_heads", what));
  SHARDLIN_RETURN_IF_ERROR(checkTable(p, in.kvHeads, "kv_heads", what));
  if (in.qHeads.size() != in.kvHeads.size())
    return Status::invalidArgument(what + ": `q_heads` and `kv_heads` have "
                                          "pairs for different numbers of "
                                          "ranks");
  if (!std::isfinite(in.scale))
    return Status::invalidArgument(what + ": the scale is not finite");
  if (in.op == OpCode::AttentionGrad &&
      (in.wrt.size() != 1 || in.wrt[0] < 0 || in.wrt[0] > 2))
    return Status::invalidArgument(
        what + " needs `wrt 1 K` with K 0 (dq), 1 (dk) or 2 (dv)");
  for (int64_t r = 0; 2 * size_t(r) < in.qHeads.size(); ++r) {
    const AttentionHeads h = attentionHeadsOf(in, r);
    if (h.q.size() == 0)
      continue;
    // h / g grows with h: the first and the last query head bound the rest.
    for (int64_t j : {int64_t(0), h.q.size() - 1})
      if (h.kvOf(j) < 0 || h.kvOf(j) >= h.kv.size())
        return Status::invalidArgument(
            what + ": rank " + str(r) + "'s query head " + str(h.q.begin + j) +
            " needs kv head " + str((h.q.begin + j) / h.group) +
            " (group " + str(h.group) + "), which is not among its kv heads [" +
            str(h.kv.begin) + ", " + str(h.kv.end) + ")");
  }
  return Status::ok();
}

AttentionHeads attentionHeadsOf(const Instr &in, int64_t r) {
  AttentionHeads h;
  h.headDim = in.headDim[0];
  h.group = in.group[0];
  h.q = headsOf(in.qHeads, r);
  h.kv = headsOf(in.kvHeads, r);
  return h;
}

Status verifyAttention(const Program &p, const Instr &in,
                       const std::string &what) {
  SHARDLIN_RETURN_IF_ERROR(checkHeadTables(p, in, what));
  const int64_t d = in.headDim[0];
  const bool grad = in.op == OpCode::AttentionGrad;
  const int q = in.operands[0], k = in.operands[1], v = in.operands[2];
  SHARDLIN_RETURN_IF_ERROR(checkHeadsDim(p, q, in.qHeads, d, "q", what));
  SHARDLIN_RETURN_IF_ERROR(checkHeadsDim(p, k, in.kvHeads, d, "k", what));
  SHARDLIN_RETURN_IF_ERROR(checkHeadsDim(p, v, in.kvHeads, d, "v", what));
  std::vector<int> same = {q, k, v, in.result};
  if (grad)
    SHARDLIN_RETURN_IF_ERROR(
        checkHeadsDim(p, in.operands[3], in.qHeads, d, "dO", what));
  if (grad)
    same.push_back(in.operands[3]);
  const int wrt = grad ? int(in.wrt[0]) : 0;
  SHARDLIN_RETURN_IF_ERROR(checkHeadsDim(
      p, in.result, wrt == 0 ? in.qHeads : in.kvHeads, d, "the result", what));
  // Every value [B, S, *] of q's leading dims.
  const std::vector<int64_t> &qs = p.values[q].shape;
  for (int x : same) {
    const std::vector<int64_t> &xs = p.values[x].shape;
    bool ok = xs.size() == qs.size();
    for (size_t i = 0; ok && i + 1 < qs.size(); ++i)
      ok = agree(xs[i], qs[i]);
    if (!ok)
      return Status::invalidArgument(
          what + ": " + formatShape(xs) + " and q " + formatShape(qs) +
          " differ in their batch or sequence dims");
  }
  const size_t numInputs = grad ? 4 : 3;
  if (in.operands.size() > numInputs) {
    const std::vector<int64_t> &m = p.values[in.operands[numInputs]].shape;
    const int64_t s = qs[qs.size() - 2];
    if (m.size() != 2 || !agree(m[0], s) || !agree(m[1], s))
      return Status::invalidArgument(what + ": the mask " + formatShape(m) +
                                     " is not [S, S] for q " +
                                     formatShape(qs));
  }
  return Status::ok();
}

Status verifyRope(const Program &p, const Instr &in, const std::string &what) {
  SHARDLIN_RETURN_IF_ERROR(checkOneInt(in.headDim, "head_dim", what));
  const int64_t d = in.headDim[0];
  if (d % 2 != 0)
    return Status::invalidArgument(what + ": head_dim " + str(d) +
                                   " is odd (rotate-half pairs i, i + D/2)");
  const ValueType &x = p.values[in.operands[0]];
  const ValueType &y = p.values[in.result];
  if (x.dtype != y.dtype)
    return Status::invalidArgument(what + " has a " + dtypeName(y.dtype) +
                                   " result of a " + dtypeName(x.dtype) +
                                   " input");
  if (x.shape.size() != 2 && x.shape.size() != 3)
    return Status::invalidArgument(what + ": x " + formatShape(x.shape) +
                                   " is not [B, S, heads*D] or [S, heads*D]");
  bool same = x.shape.size() == y.shape.size();
  for (size_t i = 0; same && i < x.shape.size(); ++i)
    same = agree(x.shape[i], y.shape[i]);
  if (!same)
    return Status::invalidArgument(what + " changes the shape " +
                                   formatShape(x.shape) + " to " +
                                   formatShape(y.shape));
  if (x.shape.back() != kDynamic && x.shape.back() % d != 0)
    return Status::invalidArgument(what + ": x " + formatShape(x.shape) +
                                   " does not hold whole heads of " + str(d));
  const int64_t s = x.shape[x.shape.size() - 2];
  for (int i : {1, 2}) {
    const ValueType &t = p.values[in.operands[size_t(i)]];
    const char *name = i == 1 ? "cos" : "sin";
    if (t.dtype != DType::F32 && t.dtype != x.dtype)
      return Status::invalidArgument(what + ": the " + name + " table is " +
                                     dtypeName(t.dtype) + " (f32 or x's " +
                                     dtypeName(x.dtype) + ")");
    if (t.shape.size() != 2 || !agree(t.shape[0], s) ||
        !agree(t.shape[1], d / 2))
      return Status::invalidArgument(what + ": the " + name + " table " +
                                     formatShape(t.shape) + " is not [S, D/2] = " +
                                     formatShape({s, d / 2}));
  }
  if (p.values[in.operands[1]].dtype != p.values[in.operands[2]].dtype)
    return Status::invalidArgument(what +
                                   ": the cos and sin tables' types differ");
  return Status::ok();
}

} // namespace shardlin::rt
