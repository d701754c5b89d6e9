//===- OpKernels.h - How each op resolves and runs on a rank ----*- C++ -*-===//
//
// Internal to the runtime. The executor's half of an op (the other half,
// its description and checks, is the op table: program/OpTable.h): a
// resolve function that computes the result's shape on one rank and what
// execute needs (counts, views, GEMM sizes; it may make the result a view
// of an operand), and an execute function that runs it with the rank's
// communicator, GEMM and local ops. Both see the plan through the contexts
// of PlanState.h. Each kind of op lists its kernels in its own file
// (exec/ops/ViewOps.cpp, CollectiveOps.cpp, ComputeOps.cpp, LayoutOps.cpp,
// AttentionOps.cpp).
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
std::vector<OpKernel> attentionKernels();

/// An op whose result is a view of its first operand (nothing to run).
Status executeNothing(OpExecuteContext &);

/// Whether the op's execute can be restricted to a window of rows of its
/// rank-2 values (every operand and result that is not a row vector, a
/// gemm's rhs or its bias): gemm (of an untransposed lhs), bias_add,
/// elementwise, convert. A pipelined block (Pipeline.cpp) runs its chunks
/// so.
bool executesRows(OpCode op);
/// Runs the op on rows [row0, row0 + rows) of those values.
Status executeRows(OpExecuteContext &ctx, int64_t row0, int64_t rows);

/// Whether the op may write its result over operand i's storage: nothing
/// else reads that storage (this use is its only one) and it is not an
/// argument's.
bool mayOverwrite(const OpResolveContext &ctx, size_t i);

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_LIB_EXEC_OPKERNELS_H
