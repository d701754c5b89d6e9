//===- OpKernels.h - How each op resolves and runs on a rank ----*- C++ -*-===//
//
// Internal to the runtime. The executor's half of an op (the other half,
// its description and checks, is the op table: program/OpTable.h): a
// resolve function that computes the result's shape on one rank and what
// execute needs (counts, views, GEMM sizes; it may make the result a view
// of an operand), and an execute function that runs it with the rank's
// communicator, GEMM and local ops. Both see the plan through the contexts
// of PlanState.h. Each kind of op lists its kernels in its own file
// (exec/ops/ViewOps.cpp, CollectiveOps.cpp, ComputeOps.cpp, LayoutOps.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_EXEC_OPKERNELS_H
#define SHARDLIN_RUNTIME_LIB_EXEC_OPKERNELS_H

#include "exec/PlanState.h"

#include <vector>

namespace shardlin::rt {

struct OpKernel {
  OpCode op = OpCode::LocalShard;
  Status (*resolve)(OpResolveContext &ctx) = nullptr;
  Status (*execute)(OpExecuteContext &ctx) = nullptr;
};

/// The kernels of op `op`, or null if it has none (a runtime bug, which
/// Plan::build reports as Internal; OpTableTest checks every op has them).
const OpKernel *findOpKernel(OpCode op);

/// Each kind's kernels.
std::vector<OpKernel> viewKernels();
std::vector<OpKernel> collectiveKernels();
std::vector<OpKernel> computeKernels();
std::vector<OpKernel> layoutKernels();

/// An op whose result is a view of its first operand (nothing to run).
Status executeNothing(OpExecuteContext &);

/// Whether the op may write its result over operand i's storage: nothing
/// else reads that storage (this use is its only one) and it is not an
/// argument's.
bool mayOverwrite(const OpResolveContext &ctx, size_t i);

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_LIB_EXEC_OPKERNELS_H
