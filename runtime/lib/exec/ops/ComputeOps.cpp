//===- ComputeOps.cpp - gemm, bias_add, elementwise, convert, sum_rows ----===//
//
// The ops that compute on the rank's device: the GEMM (with an elementwise
// instruction after it as its epilogue), the bias, fused elementwise
// expressions (in place where nothing else reads an operand), the f32
// <-> f16/bf16 conversion, the column sums of a bias's gradient and the
// row reductions of a norm (reduce_last).
//
//===----------------------------------------------------------------------===//

#include "exec/OpKernels.h"

#include <algorithm>

namespace shardlin::rt {

namespace {

Status resolveGemm(OpResolveContext &ctx) {
  const std::vector<int64_t> &a = ctx.operandShape(0);
  const std::vector<int64_t> &b = ctx.operandShape(1);
  PlanStep &st = ctx.step;
  st.m = ctx.in.transposeLhs ? a[1] : a[0];
  const int64_t ka = ctx.in.transposeLhs ? a[0] : a[1];
  const int64_t kb = ctx.in.transposeRhs ? b[1] : b[0];
  st.n = ctx.in.transposeRhs ? b[0] : b[1];
  if (ka != kb)
    return ctx.error("contraction dims differ on rank " +
                     std::to_string(ctx.rank) + ": lhs " + formatShape(a) +
                     ", rhs " + formatShape(b));
  st.k = ka;
  st.lda = std::max<int64_t>(1, a[1]);
  st.ldb = std::max<int64_t>(1, b[1]);
  if (ctx.in.operands.size() == 3 && ctx.operandShape(2)[0] != st.n)
    return ctx.error("bias has " + std::to_string(ctx.operandShape(2)[0]) +
                     " elements but the result has " + std::to_string(st.n) +
                     " columns on rank " + std::to_string(ctx.rank));
  ctx.result = {st.m, st.n};
  // The result's rows are op(lhs)'s rows, blocks and all.
  const RowBlocks &lhsBlocks = ctx.operandBlocks(0);
  if (lhsBlocks.dim == (ctx.in.transposeLhs ? 1 : 0))
    ctx.resultBlocks = {0, lhsBlocks.sizes};
  return Status::ok();
}

/// Where row `row0` of value `v`, a matrix of rows x cols, starts.
char *rowOf(const OpExecuteContext &ctx, int v, int64_t row0) {
  const std::vector<int64_t> &shape = ctx.plan.shapes[v];
  const int64_t cols = shape.empty() ? 1 : shape.back();
  return ctx.plan.ptr(v) + row0 * cols * static_cast<int64_t>(ctx.plan.eltSize(v));
}

/// The gemm on rows [row0, row0 + rows) of its lhs and result (the whole:
/// 0 and st.m), with its epilogue on the same rows.
Status executeGemmRows(OpExecuteContext &ctx, int64_t row0, int64_t rows) {
  PlanStep &st = ctx.step;
  GemmOp op;
  op.m = rows;
  op.n = st.n;
  op.k = st.k;
  op.transA = ctx.in.transposeLhs;
  op.transB = ctx.in.transposeRhs;
  op.dtype = ctx.plan.program.values[ctx.in.operands[0]].dtype;
  op.f32Result = ctx.dtype() != op.dtype; // verifyGemm: f32 of f16/bf16
  // A row window is only taken of an untransposed lhs (Pipeline.cpp), whose
  // rows have k elements (a row of C has n); an empty operand's storage may
  // be null, and its offset is then 0.
  op.a = ctx.operand(0) + row0 * st.k * int64_t(dtypeSize(op.dtype));
  op.lda = st.lda;
  op.b = ctx.operand(1);
  op.ldb = st.ldb;
  op.bias = ctx.in.operands.size() == 3 ? ctx.operand(2) : nullptr;
  op.ldc = std::max<int64_t>(1, st.n);
  op.c = ctx.result() + row0 * st.n * int64_t(ctx.eltSize());
  if (st.epilogue < 0)
    return ctx.gemm.run(op);
  // The elementwise instruction after it, as its epilogue (see
  // fuseIntoGemm).
  const Instr &next = ctx.plan.program.instrs[st.epilogue];
  PlanStep &nextStep = ctx.plan.steps[st.epilogue];
  for (size_t k = 0; k < nextStep.exprOperands.size(); ++k)
    nextStep.exprOperands[k].data =
        nextStep.exprOperands[k].rowVector
            ? ctx.plan.ptr(next.operands[k])
            : rowOf(ctx, next.operands[k], row0);
  GemmEpilogue epilogue;
  epilogue.expr = &next.expr;
  epilogue.operands = &nextStep.exprOperands;
  epilogue.y = rowOf(ctx, next.result, row0);
  Status ran = ctx.gemm.runWithEpilogue(op, epilogue, ctx.ops);
  if (ran)
    return ran;
  return ran.withContext(
      "with the shardlin.elementwise" +
      (next.location.empty() ? std::string() : " at " + next.location) +
      " as its epilogue");
}

Status executeGemm(OpExecuteContext &ctx) {
  return executeGemmRows(ctx, 0, ctx.step.m);
}

Status resolveBiasAdd(OpResolveContext &ctx) {
  ctx.result = ctx.operandShape(0);
  const int64_t biasSize = ctx.operandShape(1)[0];
  if (ctx.result.empty() || biasSize != ctx.result.back())
    return ctx.error("bias of " + std::to_string(biasSize) +
                     " elements for an input of shape " +
                     formatShape(ctx.result));
  ctx.resultBlocks = ctx.operandBlocks(0);
  ctx.step.inPlace = mayOverwrite(ctx, 0);
  if (ctx.step.inPlace)
    ctx.viewOperand(0, 0);
  return Status::ok();
}

Status executeBiasAddRows(OpExecuteContext &ctx, int64_t row0,
                          int64_t rows) {
  const int64_t cols = ctx.plan.shapes[ctx.in.result].back();
  return ctx.ops.biasAdd(rowOf(ctx, ctx.in.operands[0], row0), ctx.operand(1),
                         rowOf(ctx, ctx.in.result, row0), rows, cols,
                         ctx.dtype());
}

Status executeBiasAdd(OpExecuteContext &ctx) {
  const int r = ctx.in.result;
  const int64_t cols = ctx.plan.shapes[r].back();
  const int64_t rows = cols == 0 ? 0 : ctx.plan.numElements(r) / cols;
  return ctx.ops.biasAdd(ctx.operand(0), ctx.operand(1), ctx.result(), rows,
                         cols, ctx.dtype());
}

/// Makes the instruction the epilogue of the gemm right before it when it
/// reads that gemm's result as a full operand (PlanOptions::
/// fuseGemmEpilogues): the gemm then runs it on its result as it computes
/// it (GemmBackend::runWithEpilogue), and this instruction does nothing.
/// The gemm's result is then m x n = rows x cols, dense, of this op's
/// element type; every other operand was computed before the gemm, and
/// the result's storage is this op's own or a full operand's that nothing
/// else reads (mayOverwrite), so not the gemm's inputs.
void fuseIntoGemm(OpResolveContext &ctx) {
  Plan::Impl &plan = ctx.plan;
  if (!plan.options.fuseGemmEpilogues || ctx.index == 0)
    return;
  const Instr &prev = plan.program.instrs[ctx.index - 1];
  if (prev.op != OpCode::Gemm)
    return;
  bool readsIt = false;
  for (size_t k = 0; k < ctx.in.operands.size(); ++k)
    readsIt = readsIt || (ctx.in.operands[k] == prev.result &&
                          !ctx.step.exprOperands[k].rowVector);
  // The epilogues take row vectors and full operands, not columns.
  for (const ExprOperand &o : ctx.step.exprOperands)
    readsIt = readsIt && !o.column;
  if (!readsIt)
    return;
  plan.steps[ctx.index - 1].epilogue = static_cast<int>(ctx.index);
  ctx.step.inGemmEpilogue = true;
}

Status resolveElementwise(OpResolveContext &ctx) {
  const size_t rank = ctx.resultType().size();
  const size_t n = ctx.in.operands.size();
  // The result's shape: the first full operand's (verify saw one), one
  // that is not a column where some operand is wider than one column.
  size_t first = n;
  for (size_t k = 0; k < n; ++k) {
    const std::vector<int64_t> &shape = ctx.operandShape(k);
    if (isRowVectorOperand(shape.size(), rank))
      continue;
    if (first == n ||
        (ctx.operandShape(first).back() == 1 && shape.back() != 1))
      first = k;
  }
  ctx.result = ctx.operandShape(first);
  PlanStep &st = ctx.step;
  st.exprOperands.assign(n, ExprOperand{});
  for (size_t k = 0; k < n; ++k) {
    const std::vector<int64_t> &shape = ctx.operandShape(k);
    if (isRowVectorOperand(shape.size(), rank)) {
      st.exprOperands[k].rowVector = true;
      if (shape[0] != ctx.result.back())
        return ctx.error("on rank " + std::to_string(ctx.rank) +
                         " row vector operand " + std::to_string(k) + " has " +
                         std::to_string(shape[0]) +
                         " elements but the result " +
                         formatShape(ctx.result) + " has rows of " +
                         std::to_string(ctx.result.back()));
    } else if (shape != ctx.result && isColumnOperand(shape, ctx.result)) {
      st.exprOperands[k].column = true;
      if (!std::equal(shape.begin(), shape.end() - 1, ctx.result.begin()))
        return ctx.error("on rank " + std::to_string(ctx.rank) +
                         " column operand " + std::to_string(k) + " is " +
                         formatShape(shape) + " but the result is " +
                         formatShape(ctx.result));
    } else if (shape != ctx.result) {
      return ctx.error("on rank " + std::to_string(ctx.rank) + " operand " +
                       std::to_string(k) + " is " + formatShape(shape) +
                       " but operand " + std::to_string(first) + " is " +
                       formatShape(ctx.result));
    } else if (const RowBlocks &b = ctx.operandBlocks(k); b.dim >= 0) {
      // Full operands stacked from different blocks would pair rows of
      // different ranks.
      if (ctx.resultBlocks.dim >= 0 && !(ctx.resultBlocks == b))
        return ctx.error("operands " + std::to_string(first) + " and " +
                         std::to_string(k) +
                         " are stacked from different blocks of rows");
      ctx.resultBlocks = b;
    }
  }
  st.cols = rank == 0 ? 1 : ctx.result.back();
  st.rows = rank == 0 ? 1 : product(ctx.result, 0, rank - 1);
  st.inPlace = false;
  for (size_t k = 0; k < n && !st.inPlace; ++k)
    if (!st.exprOperands[k].rowVector && !st.exprOperands[k].column &&
        mayOverwrite(ctx, k)) {
      st.inPlace = true;
      ctx.viewOperand(k, 0);
    }
  fuseIntoGemm(ctx);
  return Status::ok();
}

Status executeElementwiseRows(OpExecuteContext &ctx, int64_t row0,
                              int64_t rows) {
  PlanStep &st = ctx.step;
  if (st.inGemmEpilogue)
    return Status::ok(); // The gemm before it ran it.
  for (size_t k = 0; k < st.exprOperands.size(); ++k)
    st.exprOperands[k].data = st.exprOperands[k].rowVector
                                  ? ctx.operand(k)
                                  : rowOf(ctx, ctx.in.operands[k], row0);
  return ctx.ops.elementwise(ctx.in.expr, st.exprOperands,
                             rowOf(ctx, ctx.in.result, row0), rows, st.cols,
                             ctx.dtype());
}

Status executeElementwise(OpExecuteContext &ctx) {
  return executeElementwiseRows(ctx, 0, ctx.step.rows);
}

/// reduce_last: rows = the product of x's leading dims, cols its last.
Status resolveReduceLast(OpResolveContext &ctx) {
  const std::vector<int64_t> &x = ctx.operandShape(0);
  const std::vector<int64_t> &init = ctx.operandShape(1);
  ctx.step.cols = x.back();
  ctx.step.rows = product(x, 0, x.size() - 1);
  if (product(init, 0, init.size()) != ctx.step.rows)
    return ctx.error("on rank " + std::to_string(ctx.rank) + " the init " +
                     formatShape(init) + " does not have a value per row of " +
                     formatShape(x));
  ctx.result = init;
  // The rows of x are the result's: a block of rows stays one.
  if (ctx.operandBlocks(0).dim == 0)
    ctx.resultBlocks = ctx.operandBlocks(0);
  return Status::ok();
}

Status executeReduceLast(OpExecuteContext &ctx) {
  return ctx.ops.reduceLast(*reduceLastCombiner(ctx.in.expr), ctx.operand(0),
                            ctx.operand(1), ctx.result(), ctx.step.rows,
                            ctx.step.cols, ctx.dtype());
}

Status resolveConvert(OpResolveContext &ctx) {
  ctx.result = ctx.operandShape(0);
  ctx.resultBlocks = ctx.operandBlocks(0);
  return Status::ok();
}

Status executeConvertRows(OpExecuteContext &ctx, int64_t row0, int64_t rows) {
  const std::vector<int64_t> &shape = ctx.plan.shapes[ctx.in.result];
  const int64_t cols = shape.empty() ? 1 : shape.back();
  return ctx.ops.convert(rowOf(ctx, ctx.in.operands[0], row0),
                         ctx.plan.program.values[ctx.in.operands[0]].dtype,
                         rowOf(ctx, ctx.in.result, row0), ctx.dtype(),
                         rows * cols);
}

Status executeConvert(OpExecuteContext &ctx) {
  const int r = ctx.in.result;
  return ctx.ops.convert(ctx.operand(0),
                         ctx.plan.program.values[ctx.in.operands[0]].dtype,
                         ctx.result(), ctx.dtype(), ctx.plan.numElements(r));
}

Status resolveSumRows(OpResolveContext &ctx) {
  const std::vector<int64_t> &input = ctx.operandShape(0);
  ctx.step.rows = input[0];
  ctx.step.cols = input[1];
  ctx.result = {input[1]};
  return Status::ok();
}

Status executeSumRows(OpExecuteContext &ctx) {
  return ctx.ops.sumRows(ctx.operand(0),
                         ctx.plan.program.values[ctx.in.operands[0]].dtype,
                         ctx.result(), ctx.dtype(), ctx.step.rows,
                         ctx.step.cols);
}

} // namespace

bool executesRows(OpCode op) {
  return op == OpCode::Gemm || op == OpCode::BiasAdd ||
         op == OpCode::Elementwise || op == OpCode::Convert;
}

Status executeRows(OpExecuteContext &ctx, int64_t row0, int64_t rows) {
  switch (ctx.in.op) {
  case OpCode::Gemm:
    return executeGemmRows(ctx, row0, rows);
  case OpCode::BiasAdd:
    return executeBiasAddRows(ctx, row0, rows);
  case OpCode::Elementwise:
    return executeElementwiseRows(ctx, row0, rows);
  case OpCode::Convert:
    return executeConvertRows(ctx, row0, rows);
  default:
    return Status::internal(std::string("shardlin.") + opCodeName(ctx.in.op) +
                            " cannot run on a window of rows");
  }
}

std::vector<OpKernel> computeKernels() {
  return {{OpCode::Gemm, resolveGemm, executeGemm},
          {OpCode::BiasAdd, resolveBiasAdd, executeBiasAdd},
          {OpCode::Elementwise, resolveElementwise, executeElementwise},
          {OpCode::Convert, resolveConvert, executeConvert},
          {OpCode::SumRows, resolveSumRows, executeSumRows},
          {OpCode::ReduceLast, resolveReduceLast, executeReduceLast}};
}

} // namespace shardlin::rt
