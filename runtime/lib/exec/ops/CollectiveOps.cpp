//===- CollectiveOps.cpp - all_gather, all_to_all, reduce_scatter ---===//
//
// Each collective's pieces on one rank (the chunk rule's, or for a dim of
// run-time sizes the ranks' blocks), sized by exec/CollectiveSizes.h as the
// C ABI's calls are, and its call on the communicator, staging pieces that
// are not contiguous (exec/Exchange.h).
//
//===----------------------------------------------------------------------===//

#include "exec/CollectiveSizes.h"
#include "exec/OpKernels.h"

#include <utility>

namespace shardlin::rt {

namespace {

/// What the plan's messages call a collective's tensors and dims.
const CollectiveNames kPlanNames = {"the operand", "the result", "dim",
                                    "split dim", "concat dim"};

/// Fills `out` with the blocks of a dynamic dim `d` concatenated from every
/// rank's operand 0 (chunk c from rank placements[c]). Fails if their sum
/// overflows, or if the plan has no other ranks' sizes (a program without
/// dynamic argument dims has no dynamic dim to stack).
Status stackedBlocks(const OpResolveContext &ctx, int64_t d,
                     const std::vector<int64_t> &placements, RowBlocks &out) {
  if (!ctx.peers)
    return ctx.error("dim " + std::to_string(d) +
                     " of the result is dynamic, but the program has no "
                     "dynamic argument dims to take its size from");
  out.dim = d;
  out.sizes.clear();
  int64_t total = 0;
  for (int64_t p : placements) {
    const int64_t size = ctx.peerOperandShape(static_cast<int>(p), 0)[d];
    if (__builtin_add_overflow(total, size, &total))
      return ctx.error("the blocks stacked along dim " + std::to_string(d) +
                       " overflow a 64-bit size");
    out.sizes.push_back(size);
  }
  return Status::ok();
}

/// The pieces of result dim `d`, which a collective assembles from every
/// rank (all_gather's dim, all_to_all's concat dim): the chunk rule over
/// the result type's size or, for a dynamic dim, every rank's rows as they
/// are (chunk c is rank placements[c]'s block), which the result remembers.
Status assembledPieces(OpResolveContext &ctx, int64_t d,
                       const std::vector<int64_t> &placements, DimPieces &out) {
  const int64_t n = ctx.resultType()[d];
  if (n != kDynamic) {
    out = chunkPieces(n, placements);
    return Status::ok();
  }
  SHARDLIN_RETURN_IF_ERROR(stackedBlocks(ctx, d, placements, ctx.resultBlocks));
  out = blockPieces(ctx.resultBlocks.sizes, placements);
  return Status::ok();
}

/// The pieces into which a collective splits operand 0 along `d` by
/// `placements`: its blocks if that dim was stacked from them, else the
/// chunk rule over its size.
DimPieces splitPieces(const OpResolveContext &ctx, int64_t d,
                      const std::vector<int64_t> &placements) {
  const RowBlocks &b = ctx.operandBlocks(0);
  if (b.dim == d && b.sizes.size() == placements.size())
    return blockPieces(b.sizes, placements);
  return chunkPieces(ctx.operandShape(0)[d], placements);
}

/// Takes a collective's tables into the step, or its sizing's error as
/// this op's.
Status takeSizes(OpResolveContext &ctx, const Status &sized,
                 CollectiveSizes &sizes) {
  if (!sized)
    return ctx.error(sized.message());
  ctx.step.send = std::move(sizes.send);
  ctx.step.recv = std::move(sizes.recv);
  ctx.step.sendCount = sizes.sendCount;
  return Status::ok();
}

/// The send buffer of a collective: the operand, or the staging buffer it
/// was packed into.
Status sendBuffer(OpExecuteContext &ctx, const char *&send) {
  send = ctx.operand(0);
  if (!ctx.step.send.staged)
    return Status::ok();
  char *staging = static_cast<char *>(ctx.step.sendStaging.data());
  SHARDLIN_RETURN_IF_ERROR(movePieces(ctx.ops, ctx.step.send, Direction::Pack,
                                      send, staging, ctx.eltSize()));
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

Status resolveAllGather(OpResolveContext &ctx) {
  const std::vector<int64_t> &src = ctx.operandShape(0);
  const int64_t d = ctx.in.along.dim;
  DimPieces pieces;
  SHARDLIN_RETURN_IF_ERROR(
      assembledPieces(ctx, d, ctx.in.along.placements, pieces));
  ctx.result = src;
  ctx.result[d] = pieces.n;
  // The gathered shape is new: check its size before any product of it.
  SHARDLIN_RETURN_IF_ERROR(ctx.checkSize(ctx.result));
  CollectiveSizes sizes;
  return takeSizes(ctx,
                   sizeAllGather(src, ctx.result, d, std::move(pieces),
                                 ctx.rank, kPlanNames, sizes),
                   sizes);
}

Status executeAllGather(OpExecuteContext &ctx) {
  char *recv = recvBuffer(ctx);
  SHARDLIN_RETURN_IF_ERROR(ctx.comm.allGatherV(
      ctx.operand(0), ctx.step.sendCount, recv, ctx.step.recv.counts,
      ctx.step.recv.displs, ctx.dtype()));
  return finishRecv(ctx, recv);
}

Status resolveAllToAll(OpResolveContext &ctx) {
  const std::vector<int64_t> &src = ctx.operandShape(0);
  const int64_t sd = ctx.in.split.dim, cd = ctx.in.concat.dim;
  DimPieces concat;
  SHARDLIN_RETURN_IF_ERROR(
      assembledPieces(ctx, cd, ctx.in.concat.placements, concat));
  DimPieces split = splitPieces(ctx, sd, ctx.in.split.placements);
  ctx.result = pieceShape(src, sd, split, ctx.rank);
  ctx.result[cd] = concat.n;
  SHARDLIN_RETURN_IF_ERROR(ctx.checkSize(ctx.result));
  CollectiveSizes sizes;
  return takeSizes(ctx,
                   sizeAllToAll(src, ctx.result, sd, std::move(split), cd,
                                std::move(concat), ctx.rank, kPlanNames, sizes),
                   sizes);
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

Status resolveReduceScatter(OpResolveContext &ctx) {
  const std::vector<int64_t> &src = ctx.operandShape(0);
  const int64_t d = ctx.in.along.dim;
  DimPieces pieces = splitPieces(ctx, d, ctx.in.along.placements);
  ctx.result = pieceShape(src, d, pieces, ctx.rank);
  CollectiveSizes sizes;
  return takeSizes(ctx,
                   sizeReduceScatter(src, ctx.result, d, std::move(pieces),
                                     ctx.rank, kPlanNames, sizes),
                   sizes);
}

Status executeReduceScatter(OpExecuteContext &ctx) {
  const char *send = nullptr;
  SHARDLIN_RETURN_IF_ERROR(sendBuffer(ctx, send));
  return ctx.comm.reduceScatterV(send, ctx.step.send.counts,
                                 ctx.step.send.displs, ctx.result(),
                                 ctx.dtype());
}

} // namespace

std::vector<OpKernel> collectiveKernels() {
  return {{OpCode::AllGather, resolveAllGather, executeAllGather},
          {OpCode::AllToAll, resolveAllToAll, executeAllToAll},
          {OpCode::ReduceScatter, resolveReduceScatter, executeReduceScatter}};
}

} // namespace shardlin::rt
