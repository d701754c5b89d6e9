//===- Ops.cpp - The runtime's ops: checks, sizes, execution, and the table
//-===//
//
// One section per op: its verify, resolve and execute functions. The table
// at the end lists each op once with its mnemonic, IR ops, operands and
// attributes (see OpTable.h).
//
//===----------------------------------------------------------------------===//

#include "PlanState.h"

#include <algorithm>
#include <numeric>

namespace shardlin::rt {

//===----------------------------------------------------------------------===//
// Shared pieces
//===----------------------------------------------------------------------===//

int64_t Exchange::totalCount() const {
  return std::accumulate(counts.begin(), counts.end(), int64_t(0));
}

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

namespace {

size_t rankOf(const Program &p, int value) {
  return p.values[value].shape.size();
}

Status noChecks(const Program &, const Instr &, const std::string &) {
  return Status::ok();
}

/// An op whose result is a view of its first operand (nothing to run).
Status executeNothing(OpExecuteContext &) { return Status::ok(); }

/// Builds the exchange tables for pieces that are the ranges `ranges[p]`
/// (indexed by rank) along the middle dim of `view`.
Exchange makeExchange(const DimSplit &view, std::vector<Range> ranges) {
  Exchange ex;
  ex.view = view;
  ex.staged = view.outer != 1;
  int64_t packed = 0;
  for (const Range &r : ranges) {
    int64_t count = view.outer * r.size * view.inner;
    ex.counts.push_back(count);
    ex.displs.push_back(ex.staged ? packed : r.offset * view.inner);
    packed += count;
  }
  ex.ranges = std::move(ranges);
  return ex;
}

std::vector<Range> rankRanges(const ChunkLayout &layout, int worldSize) {
  std::vector<Range> ranges;
  for (int p = 0; p < worldSize; ++p)
    ranges.push_back(layout.ofRank(p));
  return ranges;
}

enum class Direction { Pack, Unpack };

/// Packs the ranges of `tensor` ([outer, n, inner]) into consecutive blocks
/// of `staging` in rank order, or unpacks them back.
Status movePieces(LocalOps &ops, const Exchange &ex, Direction direction,
                  const char *from, char *to, size_t elt) {
  const DimSplit &v = ex.view;
  for (size_t p = 0; p < ex.ranges.size(); ++p) {
    const Range &r = ex.ranges[p];
    // An empty piece copies nothing, and its buffers may be null: no
    // pointer arithmetic on them (an offset from null is undefined).
    if (v.outer == 0 || r.size == 0 || v.inner == 0)
      continue;
    const int64_t tensorOffset = r.offset * v.inner * elt;
    const int64_t tensorStride = v.n * v.inner * elt;
    const int64_t stagingOffset = ex.displs[p] * elt;
    const int64_t rowBytes = r.size * v.inner * elt;
    SHARDLIN_RETURN_IF_ERROR(
        direction == Direction::Pack
            ? ops.copyRows(from + tensorOffset, tensorStride,
                           to + stagingOffset, rowBytes, v.outer, rowBytes)
            : ops.copyRows(from + stagingOffset, rowBytes, to + tensorOffset,
                           tensorStride, v.outer, rowBytes));
  }
  return Status::ok();
}

/// The send buffer of a collective: the operand, or the staging buffer it
/// was packed into.
Status sendBuffer(OpExecuteContext &ctx, const char *&send) {
  send = ctx.operand(0);
  if (!ctx.step.send.staged)
    return Status::ok();
  char *staging = static_cast<char *>(ctx.step.sendStaging.data());
  SHARDLIN_RETURN_IF_ERROR(
      movePieces(ctx.ops, ctx.step.send, Direction::Pack, send, staging,
                 ctx.eltSize()));
  send = staging;
  return Status::ok();
}

char *recvBuffer(OpExecuteContext &ctx) {
  return ctx.step.recv.staged ? static_cast<char *>(ctx.step.recvStaging.data())
                              : ctx.result();
}

Status finishRecv(OpExecuteContext &ctx, const char *recv) {
  if (!ctx.step.recv.staged)
    return Status::ok();
  return movePieces(ctx.ops, ctx.step.recv, Direction::Unpack, recv,
                    ctx.result(), ctx.eltSize());
}

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

/// Collectives along one dim keep the rank; their chunk spec applies to it.
Status verifyAlong(const Program &p, const Instr &in, const std::string &what) {
  const size_t rank = rankOf(p, in.result);
  SHARDLIN_RETURN_IF_ERROR(checkChunkSpec(p, in.along, rank, what));
  if (rankOf(p, in.operands[0]) != rank)
    return Status::invalidArgument(what + " changes the rank");
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// local_shard: a sharded argument's local chunk, as a value (a view).
//===----------------------------------------------------------------------===//

Status verifyLocalShard(const Program &p, const Instr &in,
                        const std::string &what) {
  if (static_cast<size_t>(in.operands[0]) >= p.args.size() ||
      !p.args[in.operands[0]].sharded)
    return Status::invalidArgument(what + " needs a sharded argument");
  return Status::ok();
}

Status resolveLocalShard(OpResolveContext &ctx) {
  ctx.result = ctx.operandShape(0);
  ctx.viewOperand(0, 0);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// reshape: same elements, another shape (a view).
//===----------------------------------------------------------------------===//

Status resolveReshape(OpResolveContext &ctx) {
  ctx.result = ctx.resultType();
  for (int64_t d : ctx.result)
    if (d == kDynamic)
      return ctx.error("a reshape to a rank-dependent shape is not supported");
  int64_t n = 0;
  Status sized =
      checkedNumElements(ctx.result, n, ctx.plan.eltSize(ctx.in.result));
  if (!sized)
    return ctx.error(sized.message());
  if (n != ctx.plan.numElements(ctx.in.operands[0]))
    return ctx.error("reshape from " + formatShape(ctx.operandShape(0)) +
                     " to " + formatShape(ctx.result) +
                     " changes the element count");
  ctx.viewOperand(0, 0);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// local_chunk: this rank's chunk along a dim (a view along the outermost
// non-unit dim, a copy otherwise).
//===----------------------------------------------------------------------===//

Status resolveLocalChunk(OpResolveContext &ctx) {
  const std::vector<int64_t> &src = ctx.operandShape(0);
  DimSplit v = splitAround(src, ctx.in.along.dim);
  ChunkLayout layout(v.n, ctx.in.along.placements);
  ctx.step.chunkView = v;
  ctx.step.chunkRange = layout.ofRank(ctx.rank);
  ctx.result = src;
  ctx.result[ctx.in.along.dim] = ctx.step.chunkRange.size;
  if (v.outer == 1)
    ctx.viewOperand(0, ctx.step.chunkRange.offset * v.inner *
                           ctx.operandEltSize(0));
  return Status::ok();
}

Status executeLocalChunk(OpExecuteContext &ctx) {
  const DimSplit &v = ctx.step.chunkView;
  const Range &r = ctx.step.chunkRange;
  if (v.outer == 1)
    return Status::ok(); // A view.
  if (v.outer == 0 || r.size == 0 || v.inner == 0)
    return Status::ok(); // Nothing to copy (and maybe null buffers).
  const size_t elt = ctx.eltSize();
  return ctx.ops.copyRows(
      ctx.operand(0) + r.offset * v.inner * elt, v.n * v.inner * elt,
      ctx.result(), r.size * v.inner * elt, v.outer, r.size * v.inner * elt);
}

//===----------------------------------------------------------------------===//
// all_gather: every rank's chunk along a dim, concatenated in chunk order.
//===----------------------------------------------------------------------===//

Status resolveAllGather(OpResolveContext &ctx) {
  const std::vector<int64_t> &src = ctx.operandShape(0);
  const int64_t d = ctx.in.along.dim;
  const int64_t gathered = ctx.resultType()[d];
  if (gathered == kDynamic)
    return ctx.error("the gathered dim must be static");
  ctx.result = src;
  ctx.result[d] = gathered;
  ChunkLayout layout(gathered, ctx.in.along.placements);
  const int64_t own = layout.ofRank(ctx.rank).size;
  if (src[d] != own)
    return ctx.error("rank " + std::to_string(ctx.rank) + " contributes " +
                     std::to_string(src[d]) + " along dim " +
                     std::to_string(d) + " but its chunk of " +
                     std::to_string(gathered) + " has " + std::to_string(own));
  // The gathered shape is new: check its size before any product of it.
  SHARDLIN_RETURN_IF_ERROR(ctx.checkSize(ctx.result));
  ctx.step.recv = makeExchange(splitAround(ctx.result, d),
                               rankRanges(layout, ctx.plan.worldSize));
  ctx.step.sendCount = ctx.step.recv.counts[ctx.rank];
  return Status::ok();
}

Status executeAllGather(OpExecuteContext &ctx) {
  char *recv = recvBuffer(ctx);
  SHARDLIN_RETURN_IF_ERROR(ctx.comm.allGatherV(
      ctx.operand(0), ctx.step.sendCount, recv, ctx.step.recv.counts,
      ctx.step.recv.displs, ctx.dtype()));
  return finishRecv(ctx, recv);
}

//===----------------------------------------------------------------------===//
// all_to_all: split along one dim, send piece p to rank p, concatenate the
// received pieces along another.
//===----------------------------------------------------------------------===//

Status verifyAllToAll(const Program &p, const Instr &in,
                      const std::string &what) {
  const size_t rank = rankOf(p, in.result);
  SHARDLIN_RETURN_IF_ERROR(
      checkChunkSpec(p, in.concat, rank, what + " concat"));
  if (in.concat.dim == in.split.dim)
    return Status::invalidArgument(what +
                                   " splits and concatenates the same dim");
  SHARDLIN_RETURN_IF_ERROR(checkChunkSpec(p, in.split, rank, what));
  if (rankOf(p, in.operands[0]) != rank)
    return Status::invalidArgument(what + " changes the rank");
  return Status::ok();
}

Status resolveAllToAll(OpResolveContext &ctx) {
  const std::vector<int64_t> &src = ctx.operandShape(0);
  const int64_t sd = ctx.in.split.dim, cd = ctx.in.concat.dim;
  const int64_t concatenated = ctx.resultType()[cd];
  if (concatenated == kDynamic)
    return ctx.error("the concatenated dim must be static");
  ChunkLayout splitLayout(src[sd], ctx.in.split.placements);
  ChunkLayout concatLayout(concatenated, ctx.in.concat.placements);
  const int64_t own = concatLayout.ofRank(ctx.rank).size;
  if (src[cd] != own)
    return ctx.error(
        "input dim " + std::to_string(cd) + " is " + std::to_string(src[cd]) +
        " but rank " + std::to_string(ctx.rank) + "'s chunk of " +
        std::to_string(concatenated) + " has " + std::to_string(own));
  ctx.result = src;
  ctx.result[sd] = splitLayout.ofRank(ctx.rank).size;
  ctx.result[cd] = concatenated;
  SHARDLIN_RETURN_IF_ERROR(ctx.checkSize(ctx.result));
  ctx.step.send = makeExchange(splitAround(src, sd),
                               rankRanges(splitLayout, ctx.plan.worldSize));
  ctx.step.recv = makeExchange(splitAround(ctx.result, cd),
                               rankRanges(concatLayout, ctx.plan.worldSize));
  return Status::ok();
}

Status executeAllToAll(OpExecuteContext &ctx) {
  const char *send = nullptr;
  SHARDLIN_RETURN_IF_ERROR(sendBuffer(ctx, send));
  char *recv = recvBuffer(ctx);
  SHARDLIN_RETURN_IF_ERROR(ctx.comm.allToAllV(
      send, ctx.step.send.counts, ctx.step.send.displs, recv,
      ctx.step.recv.counts, ctx.step.recv.displs, ctx.dtype()));
  return finishRecv(ctx, recv);
}

//===----------------------------------------------------------------------===//
// reduce_scatter: sum over ranks, each rank keeping its chunk along a dim.
//===----------------------------------------------------------------------===//

Status resolveReduceScatter(OpResolveContext &ctx) {
  const std::vector<int64_t> &src = ctx.operandShape(0);
  const int64_t d = ctx.in.along.dim;
  ChunkLayout layout(src[d], ctx.in.along.placements);
  ctx.result = src;
  ctx.result[d] = layout.ofRank(ctx.rank).size;
  ctx.step.send =
      makeExchange(splitAround(src, d), rankRanges(layout, ctx.plan.worldSize));
  return Status::ok();
}

Status executeReduceScatter(OpExecuteContext &ctx) {
  const char *send = nullptr;
  SHARDLIN_RETURN_IF_ERROR(sendBuffer(ctx, send));
  return ctx.comm.reduceScatterV(send, ctx.step.send.counts,
                                 ctx.step.send.displs, ctx.result(),
                                 ctx.dtype());
}

//===----------------------------------------------------------------------===//
// gemm: op(lhs) * op(rhs) (+ bias), row-major, transposes as BLAS flags.
//===----------------------------------------------------------------------===//

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
  return Status::ok();
}

Status executeGemm(OpExecuteContext &ctx) {
  PlanStep &st = ctx.step;
  GemmOp op;
  op.m = st.m;
  op.n = st.n;
  op.k = st.k;
  op.transA = ctx.in.transposeLhs;
  op.transB = ctx.in.transposeRhs;
  op.dtype = ctx.plan.program.values[ctx.in.operands[0]].dtype;
  op.f32Result = ctx.dtype() != op.dtype; // verifyGemm: f32 of f16/bf16
  op.a = ctx.operand(0);
  op.lda = st.lda;
  op.b = ctx.operand(1);
  op.ldb = st.ldb;
  op.bias = ctx.in.operands.size() == 3 ? ctx.operand(2) : nullptr;
  op.c = ctx.result();
  op.ldc = std::max<int64_t>(1, st.n);
  if (st.epilogue < 0)
    return ctx.gemm.run(op);
  // The elementwise instruction after it, as its epilogue (see
  // fuseIntoGemm).
  const Instr &next = ctx.plan.program.instrs[st.epilogue];
  PlanStep &nextStep = ctx.plan.steps[st.epilogue];
  for (size_t k = 0; k < nextStep.exprOperands.size(); ++k)
    nextStep.exprOperands[k].data = ctx.plan.ptr(next.operands[k]);
  GemmEpilogue epilogue;
  epilogue.expr = &next.expr;
  epilogue.operands = &nextStep.exprOperands;
  epilogue.y = ctx.plan.ptr(next.result);
  Status ran = ctx.gemm.runWithEpilogue(op, epilogue, ctx.ops);
  if (ran)
    return ran;
  return ran.withContext(
      "with the shardlin.elementwise" +
      (next.location.empty() ? std::string() : " at " + next.location) +
      " as its epilogue");
}

//===----------------------------------------------------------------------===//
// bias_add: a rank-1 bias added along the last dim (in place when nothing
// else reads the input's storage).
//===----------------------------------------------------------------------===//

Status verifyBiasAdd(const Program &p, const Instr &in,
                     const std::string &what) {
  if (rankOf(p, in.result) == 0 || rankOf(p, in.operands[1]) != 1)
    return Status::invalidArgument(what + " needs a rank-1 bias");
  return Status::ok();
}

Status resolveBiasAdd(OpResolveContext &ctx) {
  ctx.result = ctx.operandShape(0);
  const int64_t biasSize = ctx.operandShape(1)[0];
  if (ctx.result.empty() || biasSize != ctx.result.back())
    return ctx.error("bias of " + std::to_string(biasSize) +
                     " elements for an input of shape " +
                     formatShape(ctx.result));
  ctx.step.inPlace = mayOverwrite(ctx, 0);
  if (ctx.step.inPlace)
    ctx.viewOperand(0, 0);
  return Status::ok();
}

Status executeBiasAdd(OpExecuteContext &ctx) {
  const int r = ctx.in.result;
  const int64_t cols = ctx.plan.shapes[r].back();
  const int64_t rows = cols == 0 ? 0 : ctx.plan.numElements(r) / cols;
  return ctx.ops.biasAdd(ctx.operand(0), ctx.operand(1), ctx.result(), rows,
                         cols, ctx.dtype());
}

//===----------------------------------------------------------------------===//
// elementwise: a fused chain of elementwise ops, the expression program in
// Instr::expr (Expr.h), over operands of the result's shape ("full") and
// rank-1 row vectors of its last dim broadcast over the rows. In place over
// a full operand when nothing else reads its storage.
//===----------------------------------------------------------------------===//

/// An operand of a rank >= 2 result that is rank 1 is a row vector; every
/// other operand is full (a rank-1 result's operands are all full).
bool isRowVector(size_t operandRank, size_t resultRank) {
  return resultRank >= 2 && operandRank == 1;
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
    if (isRowVector(shape.size(), result.size())) {
      if (shape[0] != kDynamic && result.back() != kDynamic &&
          shape[0] != result.back())
        return Status::invalidArgument(
            operand + " is a row vector of " + std::to_string(shape[0]) +
            " elements but the result " + formatShape(result) +
            " has rows of " + std::to_string(result.back()));
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
  if (!readsIt)
    return;
  plan.steps[ctx.index - 1].epilogue = static_cast<int>(ctx.index);
  ctx.step.inGemmEpilogue = true;
}

Status resolveElementwise(OpResolveContext &ctx) {
  const size_t rank = ctx.resultType().size();
  const size_t n = ctx.in.operands.size();
  size_t first = 0;
  while (isRowVector(ctx.operandShape(first).size(), rank))
    ++first; // verify saw a full operand
  ctx.result = ctx.operandShape(first);
  PlanStep &st = ctx.step;
  st.exprOperands.assign(n, ExprOperand{});
  for (size_t k = 0; k < n; ++k) {
    const std::vector<int64_t> &shape = ctx.operandShape(k);
    if (isRowVector(shape.size(), rank)) {
      st.exprOperands[k].rowVector = true;
      if (shape[0] != ctx.result.back())
        return ctx.error("on rank " + std::to_string(ctx.rank) +
                         " row vector operand " + std::to_string(k) + " has " +
                         std::to_string(shape[0]) +
                         " elements but the result " +
                         formatShape(ctx.result) + " has rows of " +
                         std::to_string(ctx.result.back()));
    } else if (shape != ctx.result) {
      return ctx.error("on rank " + std::to_string(ctx.rank) + " operand " +
                       std::to_string(k) + " is " + formatShape(shape) +
                       " but operand " + std::to_string(first) + " is " +
                       formatShape(ctx.result));
    }
  }
  st.cols = rank == 0 ? 1 : ctx.result.back();
  st.rows = rank == 0 ? 1 : product(ctx.result, 0, rank - 1);
  st.inPlace = false;
  for (size_t k = 0; k < n && !st.inPlace; ++k)
    if (!st.exprOperands[k].rowVector && mayOverwrite(ctx, k)) {
      st.inPlace = true;
      ctx.viewOperand(k, 0);
    }
  fuseIntoGemm(ctx);
  return Status::ok();
}

Status executeElementwise(OpExecuteContext &ctx) {
  PlanStep &st = ctx.step;
  if (st.inGemmEpilogue)
    return Status::ok(); // The gemm before it ran it.
  for (size_t k = 0; k < st.exprOperands.size(); ++k)
    st.exprOperands[k].data = ctx.operand(k);
  return ctx.ops.elementwise(ctx.in.expr, st.exprOperands, ctx.result(),
                             st.rows, st.cols, ctx.dtype());
}

//===----------------------------------------------------------------------===//
// convert: the elements in another type (f32 to f16/bf16 rounding once, or
// back exactly), the same shape.
//===----------------------------------------------------------------------===//

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

Status resolveConvert(OpResolveContext &ctx) {
  ctx.result = ctx.operandShape(0);
  return Status::ok();
}

Status executeConvert(OpExecuteContext &ctx) {
  const int r = ctx.in.result;
  return ctx.ops.convert(ctx.operand(0),
                         ctx.plan.program.values[ctx.in.operands[0]].dtype,
                         ctx.result(), ctx.dtype(), ctx.plan.numElements(r));
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

using Kind = OpAttribute::Kind;

OpAttribute chunksAttr(const char *keyword, const char *odsName,
                       ChunkSpec Instr::*field) {
  return {Kind::Chunks, keyword, {{odsName, field, nullptr}}};
}

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
       resolveLocalShard,
       executeNothing,
       false},
      {OpCode::LocalChunk,
       "local_chunk",
       {"shardlin.local_chunk"},
       1,
       1,
       {along},
       verifyAlong,
       resolveLocalChunk,
       executeLocalChunk,
       false},
      {OpCode::AllGather,
       "all_gather",
       {"shardlin.all_gather"},
       1,
       1,
       {along},
       verifyAlong,
       resolveAllGather,
       executeAllGather,
       false},
      {OpCode::AllToAll,
       "all_to_all",
       {"shardlin.all_to_all"},
       1,
       1,
       {chunksAttr("chunk", "split", &Instr::split),
        chunksAttr("concat", "concat", &Instr::concat)},
       verifyAllToAll,
       resolveAllToAll,
       executeAllToAll,
       false},
      {OpCode::ReduceScatter,
       "reduce_scatter",
       {"shardlin.reduce_scatter"},
       1,
       1,
       {along},
       verifyAlong,
       resolveReduceScatter,
       executeReduceScatter,
       false},
      {OpCode::Gemm,
       "gemm",
       {"shardlin.gemm"},
       2,
       3,
       {{Kind::Flags,
         "trans",
         {{"transpose_lhs", nullptr, &Instr::transposeLhs},
          {"transpose_rhs", nullptr, &Instr::transposeRhs}}}},
       verifyGemm,
       resolveGemm,
       executeGemm,
       true},
      {OpCode::BiasAdd,
       "bias_add",
       {"shardlin.bias_add"},
       2,
       2,
       {},
       verifyBiasAdd,
       resolveBiasAdd,
       executeBiasAdd,
       false},
      {OpCode::Reshape,
       "reshape",
       {"tensor.collapse_shape", "tensor.expand_shape"},
       1,
       1,
       {},
       noChecks,
       resolveReshape,
       executeNothing,
       false},
      // Built by the translator from chains of arith/math/linalg ops, not
      // from one IR op: no irOps.
      {OpCode::Elementwise,
       "elementwise",
       {},
       1,
       kMaxExprNodes,
       {{Kind::Expr, "expr", {{"expr", nullptr, nullptr, &Instr::expr}}}},
       verifyElementwise,
       resolveElementwise,
       executeElementwise,
       false},
      {OpCode::Convert,
       "convert",
       {"shardlin.convert"},
       1,
       1,
       {},
       verifyConvert,
       resolveConvert,
       executeConvert,
       true},
  };
  return t;
}

} // namespace

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
