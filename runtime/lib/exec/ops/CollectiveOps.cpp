//===- CollectiveOps.cpp - all_gather, all_to_all, reduce_scatter ---===//
//
// Each collective's sizes on one rank (the ranges every rank holds, from
// the chunk layout or, for a dim of run-time sizes, from the ranks' blocks)
// and its call on the communicator, staging pieces that are not contiguous
// (exec/Exchange.h).
//
//===----------------------------------------------------------------------===//

#include "exec/OpKernels.h"

namespace shardlin::rt {

namespace {

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

} // namespace

std::vector<OpKernel> collectiveKernels() {
  return {{OpCode::AllGather, resolveAllGather, executeAllGather},
          {OpCode::AllToAll, resolveAllToAll, executeAllToAll},
          {OpCode::ReduceScatter, resolveReduceScatter, executeReduceScatter}};
}

} // namespace shardlin::rt
