//===- OpKernels.cpp - How each op resolves and runs on a rank ------------===//
//
// The kernel table (OpKernels.h): each kind's kernels (exec/ops/*.cpp) are
// placed at their OpCode, and the pieces several kinds share.
//
//===----------------------------------------------------------------------===//

#include "exec/OpKernels.h"

namespace shardlin::rt {

Status OpResolveContext::error(const std::string &msg) const {
  std::string where = in.location.empty() ? "" : in.location + ": ";
  return Status::invalidArgument(where + "shardlin." + opCodeName(in.op) +
                                 ": " + msg);
}

Status OpResolveContext::checkSize(const std::vector<int64_t> &shape) const {
  int64_t count = 0;
  Status sized = checkedNumElements(shape, count, plan.eltSize(in.result));
  return sized ? sized : error(sized.message());
}

Status executeNothing(OpExecuteContext &) { return Status::ok(); }

/// Whether the op may write its result over operand i's storage: nothing
/// else reads that storage (this use is its only one) and it is not an
/// argument's.
bool mayOverwrite(const OpResolveContext &ctx, size_t i) {
  const Plan::Impl &plan = ctx.plan;
  const int rootIn = plan.root[ctx.in.operands[i]];
  int rootUses = 0;
  for (size_t v = 0; v < plan.shapes.size(); ++v)
    if (plan.root[v] == rootIn && plan.shapes[v].size() != 0)
      rootUses += plan.uses[v];
  return !plan.isArgRoot[rootIn] && rootUses == 1;
}

namespace {

std::vector<OpKernel> makeKernels() {
  std::vector<OpKernel> table(kNumOpCodes);
  for (const std::vector<OpKernel> &kind :
       {viewKernels(), collectiveKernels(), computeKernels(), layoutKernels(),
        attentionKernels()})
    for (const OpKernel &k : kind)
      table[static_cast<size_t>(k.op)] = k;
  return table;
}

} // namespace

const OpKernel *findOpKernel(OpCode op) {
  static const std::vector<OpKernel> table = makeKernels();
  const size_t i = static_cast<size_t>(op);
  if (i >= table.size() || !table[i].resolve || !table[i].execute)
    return nullptr;
  return &table[i];
}

} // namespace shardlin::rt
