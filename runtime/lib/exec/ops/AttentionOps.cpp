//===- AttentionOps.cpp - attention, attention_grad, rope -----------------===//
//
// The executor's half of the attention ops (docs/runtime.md, "Attention and
// RoPE"): resolve reads this rank's pair of the head tables, checks the
// operands' sizes against it and sizes the result and the scratch; execute
// runs exec/Attention.h's runAttention, or LocalOps::rope.
//
//===----------------------------------------------------------------------===//

#include "exec/Attention.h"
#include "exec/OpKernels.h"

namespace shardlin::rt {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

/// This rank's problem, from the instruction and its operands' shapes.
AttentionProblem problemOf(const Plan::Impl &plan, const Instr &in, int rank) {
  AttentionProblem p;
  p.heads = attentionHeadsOf(in, rank);
  p.scale = in.scale;
  p.causal = in.causal;
  p.dtype = plan.program.values[in.result].dtype;
  const bool grad = in.op == OpCode::AttentionGrad;
  p.part = !grad            ? AttentionPart::Forward
           : in.wrt[0] == 0 ? AttentionPart::GradQ
           : in.wrt[0] == 1 ? AttentionPart::GradK
                            : AttentionPart::GradV;
  p.hasMask = in.operands.size() > (grad ? 4u : 3u);
  const std::vector<int64_t> &q = plan.shapes[in.operands[0]];
  p.seq = q[q.size() - 2];
  p.batch = q.size() == 3 ? q[0] : 1;
  return p;
}

/// Checks the rank's operands against its heads of the tables.
Status checkProblem(const OpResolveContext &ctx, const AttentionProblem &p) {
  const size_t numInputs = ctx.in.op == OpCode::AttentionGrad ? 4 : 3;
  const std::vector<int64_t> &q = ctx.operandShape(0);
  const int64_t d = p.heads.headDim;
  const char *names[] = {"q", "k", "v", "dO"};
  for (size_t i = 0; i < numInputs; ++i) {
    std::vector<int64_t> want = q;
    want.back() = (i == 1 || i == 2 ? p.heads.kv.size() : p.heads.q.size()) * d;
    if (ctx.operandShape(i) != want)
      return ctx.error("on rank " + str(ctx.rank) + " " + names[i] + " is " +
                       formatShape(ctx.operandShape(i)) + ", not " +
                       formatShape(want) + " (its heads of the tables)");
  }
  if (p.hasMask && ctx.operandShape(numInputs) !=
                       std::vector<int64_t>{p.seq, p.seq})
    return ctx.error("on rank " + str(ctx.rank) + " the mask is " +
                     formatShape(ctx.operandShape(numInputs)) + ", not [" +
                     str(p.seq) + ", " + str(p.seq) + "]");
  return Status::ok();
}

Status resolveAttention(OpResolveContext &ctx) {
  const int64_t pairs = int64_t(ctx.in.qHeads.size() / 2);
  if (pairs != ctx.plan.worldSize)
    return ctx.error("its head tables have " + str(pairs) +
                     " pairs but the run has " + str(ctx.plan.worldSize) +
                     " ranks");
  const AttentionProblem p = problemOf(ctx.plan, ctx.in, ctx.rank);
  SHARDLIN_RETURN_IF_ERROR(checkProblem(ctx, p));
  const bool kvOut =
      p.part == AttentionPart::GradK || p.part == AttentionPart::GradV;
  ctx.result = ctx.operandShape(kvOut ? 1 : 0);
  // The rows are whole sequences, the result's those of q (or k, v).
  ctx.resultBlocks = ctx.operandBlocks(kvOut ? 1 : 0);
  SHARDLIN_RETURN_IF_ERROR(ctx.checkSize(ctx.result));
  ctx.step.scratchBytes = attentionScratchBytes(p);
  if (ctx.step.scratchBytes < 0)
    return ctx.error("on rank " + str(ctx.rank) +
                     " its scratch's size overflows");
  return Status::ok();
}

Status executeAttention(OpExecuteContext &ctx) {
  // resolveAttention checked the same problem.
  const AttentionProblem p = problemOf(ctx.plan, ctx.in, ctx.comm.rank());
  AttentionTensors t;
  t.q = ctx.operand(0);
  t.k = ctx.operand(1);
  t.v = ctx.operand(2);
  const bool grad = ctx.in.op == OpCode::AttentionGrad;
  if (grad)
    t.dO = ctx.operand(3);
  if (p.hasMask)
    t.mask = ctx.operand(grad ? 4 : 3);
  t.out = ctx.result();
  t.scratch = ctx.step.scratch.data();
  return runAttention(ctx.gemm, ctx.ops, p, t);
}

Status resolveRope(OpResolveContext &ctx) {
  const std::vector<int64_t> &x = ctx.operandShape(0);
  const int64_t d = ctx.in.headDim[0];
  const int64_t s = x[x.size() - 2];
  if (x.back() % d != 0)
    return ctx.error("on rank " + str(ctx.rank) + " x " + formatShape(x) +
                     " does not hold whole heads of " + str(d));
  for (size_t i : {size_t(1), size_t(2)})
    if (ctx.operandShape(i) != std::vector<int64_t>{s, d / 2})
      return ctx.error("on rank " + str(ctx.rank) + " the " +
                       (i == 1 ? "cos" : "sin") + " table is " +
                       formatShape(ctx.operandShape(i)) + ", not [" + str(s) +
                       ", " + str(d / 2) + "] for x " + formatShape(x));
  ctx.result = x;
  ctx.resultBlocks = ctx.operandBlocks(0);
  return Status::ok();
}

Status executeRope(OpExecuteContext &ctx) {
  const std::vector<int64_t> &x = ctx.plan.shapes[ctx.in.operands[0]];
  const int64_t d = ctx.in.headDim[0];
  return ctx.ops.rope(ctx.operand(0), ctx.operand(1), ctx.operand(2),
                      ctx.plan.program.values[ctx.in.operands[1]].dtype,
                      ctx.result(), x.size() == 3 ? x[0] : 1,
                      x[x.size() - 2], x.back() / d, d, ctx.in.inverse,
                      ctx.dtype());
}

} // namespace

std::vector<OpKernel> attentionKernels() {
  return {{OpCode::Attention, resolveAttention, executeAttention},
          {OpCode::AttentionGrad, resolveAttention, executeAttention},
          {OpCode::Rope, resolveRope, executeRope}};
}

} // namespace shardlin::rt
