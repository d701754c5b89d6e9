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

namespace shardlin::rt {

//===----------------------------------------------------------------------===//
// Shared pieces
//===----------------------------------------------------------------------===//

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

/// An op whose result is a view of its first operand (nothing to run).
Status executeNothing(OpExecuteContext &) { return Status::ok(); }

/// The ranges each rank holds of a dim made of blocks (`sizes`, by chunk;
/// chunk c belongs to rank placements[c]), indexed by rank.
std::vector<Range> blockRanges(const std::vector<int64_t> &sizes,
                               const std::vector<int64_t> &placements) {
  std::vector<Range> ranges(placements.size());
  int64_t offset = 0;
  for (size_t c = 0; c < placements.size(); ++c) {
    ranges[placements[c]] = {offset, sizes[c]};
    offset += sizes[c]; // The sum was checked when the blocks were made.
  }
  return ranges;
}

/// The blocks of a dynamic dim `d` concatenated from every rank's operand
/// 0 (chunk c from rank placements[c]), and their sum. Fails if the sum
/// overflows, or if the plan has no other ranks' sizes (a program without
/// dynamic argument dims has no dynamic dim to stack).
Status stackedBlocks(const OpResolveContext &ctx, int64_t d,
                     const std::vector<int64_t> &placements, RowBlocks &out,
                     int64_t &total) {
  if (!ctx.peers)
    return ctx.error("dim " + std::to_string(d) +
                     " of the result is dynamic, but the program has no "
                     "dynamic argument dims to take its size from");
  out.dim = d;
  out.sizes.clear();
  total = 0;
  for (int64_t p : placements) {
    const int64_t size = ctx.peerOperandShape(static_cast<int>(p), 0)[d];
    if (__builtin_add_overflow(total, size, &total))
      return ctx.error("the blocks stacked along dim " + std::to_string(d) +
                       " overflow a 64-bit size");
    out.sizes.push_back(size);
  }
  return Status::ok();
}

/// The ranges, by rank, into which a collective splits operand 0 along
/// `d` by `placements`: its blocks if that dim was stacked from them, else
/// the chunk rule over its size.
std::vector<Range> splitRanges(const OpResolveContext &ctx, int64_t d,
                               const std::vector<int64_t> &placements) {
  const RowBlocks &b = ctx.operandBlocks(0);
  if (b.dim == d && b.sizes.size() == placements.size())
    return blockRanges(b.sizes, placements);
  return rankRanges(ChunkLayout(ctx.operandShape(0)[d], placements),
                    ctx.plan.worldSize);
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

Status verifyReshape(const Program &p, const Instr &in,
                     const std::string &what) {
  if (p.values[in.operands[0]].dtype != p.values[in.result].dtype)
    return Status::invalidArgument(what + " mixes element types");
  if (in.operands.size() == 2 && rankOf(p, in.operands[1]) != rankOf(p, in.result))
    return Status::invalidArgument(
        what + " takes its dynamic dims from a value of rank " +
        std::to_string(rankOf(p, in.operands[1])) + ", not the result's " +
        std::to_string(rankOf(p, in.result)));
  return Status::ok();
}

Status resolveReshape(OpResolveContext &ctx) {
  ctx.result = ctx.resultType();
  // Dynamic dims come from the second operand's same dims, if there is one
  // (an expand_shape's output sizes); one left is inferred from the count.
  int inferred = -1;
  for (size_t d = 0; d < ctx.result.size(); ++d) {
    if (ctx.result[d] == kDynamic && ctx.in.operands.size() == 2)
      ctx.result[d] = ctx.operandShape(1)[d];
    if (ctx.result[d] != kDynamic)
      continue;
    if (inferred >= 0)
      return ctx.error("a reshape to " + formatShape(ctx.resultType()) +
                       " has more than one dynamic dim and no value to take "
                       "them from");
    inferred = static_cast<int>(d);
  }
  const int64_t count = ctx.plan.numElements(ctx.in.operands[0]);
  if (inferred >= 0) {
    // The product of the other dims (checked like any shape).
    std::vector<int64_t> others = ctx.result;
    others[inferred] = 1;
    int64_t known = 0;
    Status sized =
        checkedNumElements(others, known, ctx.plan.eltSize(ctx.in.result));
    if (!sized)
      return ctx.error(sized.message());
    if (known == 0)
      return ctx.error("cannot infer dim " + std::to_string(inferred) +
                       " of a reshape from " +
                       formatShape(ctx.operandShape(0)) + " to " +
                       formatShape(ctx.resultType()) +
                       ": its other dims hold no elements");
    if (count % known != 0)
      return ctx.error("reshape from " + formatShape(ctx.operandShape(0)) +
                       " to " + formatShape(ctx.resultType()) +
                       ": the element count " + std::to_string(count) +
                       " is not a multiple of " + std::to_string(known));
    ctx.result[inferred] = count / known;
  }
  int64_t n = 0;
  Status sized =
      checkedNumElements(ctx.result, n, ctx.plan.eltSize(ctx.in.result));
  if (!sized)
    return ctx.error(sized.message());
  if (n != count)
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
  const std::vector<int64_t> &placements = ctx.in.along.placements;
  int64_t gathered = ctx.resultType()[d];
  std::vector<Range> ranges;
  if (gathered == kDynamic) {
    // Rows of run-time sizes: chunk c is rank placements[c]'s block.
    SHARDLIN_RETURN_IF_ERROR(
        stackedBlocks(ctx, d, placements, ctx.resultBlocks, gathered));
    ranges = blockRanges(ctx.resultBlocks.sizes, placements);
  } else {
    ranges = rankRanges(ChunkLayout(gathered, placements), ctx.plan.worldSize);
  }
  ctx.result = src;
  ctx.result[d] = gathered;
  const int64_t own = ranges[ctx.rank].size;
  if (src[d] != own)
    return ctx.error("rank " + std::to_string(ctx.rank) + " contributes " +
                     std::to_string(src[d]) + " along dim " +
                     std::to_string(d) + " but its chunk of " +
                     std::to_string(gathered) + " has " + std::to_string(own));
  // The gathered shape is new: check its size before any product of it.
  SHARDLIN_RETURN_IF_ERROR(ctx.checkSize(ctx.result));
  ctx.step.recv = makeExchange(splitAround(ctx.result, d), std::move(ranges));
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
  const std::vector<int64_t> &concatPlacements = ctx.in.concat.placements;
  int64_t concatenated = ctx.resultType()[cd];
  std::vector<Range> concatRanges;
  if (concatenated == kDynamic) {
    // Rows of run-time sizes: piece c' comes from rank placements[c'] with
    // that rank's rows.
    SHARDLIN_RETURN_IF_ERROR(stackedBlocks(ctx, cd, concatPlacements,
                                           ctx.resultBlocks, concatenated));
    concatRanges = blockRanges(ctx.resultBlocks.sizes, concatPlacements);
  } else {
    concatRanges = rankRanges(ChunkLayout(concatenated, concatPlacements),
                              ctx.plan.worldSize);
  }
  const int64_t own = concatRanges[ctx.rank].size;
  if (src[cd] != own)
    return ctx.error(
        "input dim " + std::to_string(cd) + " is " + std::to_string(src[cd]) +
        " but rank " + std::to_string(ctx.rank) + "'s chunk of " +
        std::to_string(concatenated) + " has " + std::to_string(own));
  std::vector<Range> splitPieces = splitRanges(ctx, sd, ctx.in.split.placements);
  ctx.result = src;
  ctx.result[sd] = splitPieces[ctx.rank].size;
  ctx.result[cd] = concatenated;
  SHARDLIN_RETURN_IF_ERROR(ctx.checkSize(ctx.result));
  ctx.step.send = makeExchange(splitAround(src, sd), std::move(splitPieces));
  ctx.step.recv =
      makeExchange(splitAround(ctx.result, cd), std::move(concatRanges));
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
  std::vector<Range> pieces = splitRanges(ctx, d, ctx.in.along.placements);
  ctx.result = src;
  ctx.result[d] = pieces[ctx.rank].size;
  ctx.step.send = makeExchange(splitAround(src, d), std::move(pieces));
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
  // The result's rows are op(lhs)'s rows, blocks and all.
  const RowBlocks &lhsBlocks = ctx.operandBlocks(0);
  if (lhsBlocks.dim == (ctx.in.transposeLhs ? 1 : 0))
    ctx.resultBlocks = {0, lhsBlocks.sizes};
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
  ctx.resultBlocks = ctx.operandBlocks(0);
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
  ctx.resultBlocks = ctx.operandBlocks(0);
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
       resolveReshape,
       executeNothing,
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
