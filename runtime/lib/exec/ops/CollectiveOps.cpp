//===- CollectiveOps.cpp - all_gather, all_to_all, reduce_scatter, all_reduce ===//
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

/// The chunks of a dim of size `n` under `spec`, or the error of bounds
/// that do not split it as this op's.
Status specPieces(const OpResolveContext &ctx, int64_t n, const ChunkSpec &spec,
                  DimPieces &out) {
  Status made = chunkPieces(n, spec.placements, spec.bounds, out);
  return made ? made : ctx.error(made.message());
}

/// Blocks stacked from the ranks' run-time sizes must be the chunks of
/// explicit bounds, where a spec has them.
Status checkBlocksAgainstBounds(const OpResolveContext &ctx,
                                const std::vector<int64_t> &sizes,
                                const ChunkSpec &spec) {
  if (spec.bounds.empty())
    return Status::ok();
  for (size_t c = 0; c < sizes.size(); ++c)
    if (sizes[c] != spec.bounds[c + 1] - spec.bounds[c])
      return ctx.error("chunk " + std::to_string(c) + " (rank " +
                       std::to_string(spec.placements[c]) + "'s) has " +
                       std::to_string(sizes[c]) +
                       " elements along dim " + std::to_string(spec.dim) +
                       " but the chunk bounds give it " +
                       std::to_string(spec.bounds[c + 1] - spec.bounds[c]));
  return Status::ok();
}

/// The pieces of result dim `spec.dim`, which a collective assembles from
/// every rank (all_gather's dim, all_to_all's concat dim): the chunks of
/// the result type's size or, for a dynamic dim, every rank's rows as they
/// are (chunk c is rank placements[c]'s block), which the result remembers.
Status assembledPieces(OpResolveContext &ctx, const ChunkSpec &spec,
                       DimPieces &out) {
  const int64_t d = spec.dim;
  const int64_t n = ctx.resultType()[d];
  if (n != kDynamic)
    return specPieces(ctx, n, spec, out);
  SHARDLIN_RETURN_IF_ERROR(
      stackedBlocks(ctx, d, spec.placements, ctx.resultBlocks));
  SHARDLIN_RETURN_IF_ERROR(
      checkBlocksAgainstBounds(ctx, ctx.resultBlocks.sizes, spec));
  out = blockPieces(ctx.resultBlocks.sizes, spec.placements);
  return Status::ok();
}

/// The pieces into which a collective splits operand 0 along `spec.dim`:
/// its blocks if that dim was stacked from them, else the chunks of its
/// size.
Status splitPieces(const OpResolveContext &ctx, const ChunkSpec &spec,
                   DimPieces &out) {
  const int64_t d = spec.dim;
  const RowBlocks &b = ctx.operandBlocks(0);
  if (b.dim == d && b.sizes.size() == spec.placements.size()) {
    SHARDLIN_RETURN_IF_ERROR(checkBlocksAgainstBounds(ctx, b.sizes, spec));
    out = blockPieces(b.sizes, spec.placements);
    return Status::ok();
  }
  return specPieces(ctx, ctx.operandShape(0)[d], spec, out);
}

/// Sizes the collective from the operand's shape to ctx.result with
/// `size` (a sizeAllGather-like function of CollectiveSizes.h; `args` are
/// its arguments between the shapes and the rank) and takes its tables
/// into the step, or its error as this op's.
template <typename SizeFn, typename... Args>
Status takeSizes(OpResolveContext &ctx, SizeFn size, Args &&...args) {
  CollectiveSizes sizes;
  Status sized = size(ctx.operandShape(0), ctx.result,
                      std::forward<Args>(args)..., ctx.rank, kPlanNames, sizes);
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
  SHARDLIN_RETURN_IF_ERROR(assembledPieces(ctx, ctx.in.along, pieces));
  ctx.result = src;
  ctx.result[d] = pieces.n;
  // The gathered shape is new: check its size before any product of it.
  SHARDLIN_RETURN_IF_ERROR(ctx.checkSize(ctx.result));
  return takeSizes(ctx, sizeAllGather, d, std::move(pieces));
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
  DimPieces concat, split;
  SHARDLIN_RETURN_IF_ERROR(assembledPieces(ctx, ctx.in.concat, concat));
  SHARDLIN_RETURN_IF_ERROR(splitPieces(ctx, ctx.in.split, split));
  ctx.result = pieceShape(src, sd, split, ctx.rank);
  ctx.result[cd] = concat.n;
  SHARDLIN_RETURN_IF_ERROR(ctx.checkSize(ctx.result));
  return takeSizes(ctx, sizeAllToAll, sd, std::move(split), cd,
                   std::move(concat));
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
  DimPieces pieces;
  SHARDLIN_RETURN_IF_ERROR(splitPieces(ctx, ctx.in.along, pieces));
  ctx.result = pieceShape(src, d, pieces, ctx.rank);
  return takeSizes(ctx, sizeReduceScatter, d, std::move(pieces));
}

Status executeReduceScatter(OpExecuteContext &ctx) {
  const char *send = nullptr;
  SHARDLIN_RETURN_IF_ERROR(sendBuffer(ctx, send));
  return ctx.comm.reduceScatterV(send, ctx.step.send.counts,
                                 ctx.step.send.displs, ctx.result(),
                                 ctx.dtype());
}

/// The operand's shape on every rank (an all_reduce sums tensors of one
/// shape), in place where nothing else reads the operand.
Status resolveAllReduce(OpResolveContext &ctx) {
  ctx.result = ctx.operandShape(0);
  if (ctx.peers)
    for (int p = 0; p < static_cast<int>(ctx.peers->size()); ++p)
      if (ctx.peerOperandShape(p, 0) != ctx.result)
        return ctx.error("sums tensors of one shape, but rank " +
                         std::to_string(p) + "'s operand is " +
                         formatShape(ctx.peerOperandShape(p, 0)) +
                         " and rank " + std::to_string(ctx.rank) + "'s " +
                         formatShape(ctx.result));
  ctx.resultBlocks = ctx.operandBlocks(0);
  if (mayOverwrite(ctx, 0))
    ctx.viewOperand(0, 0);
  return Status::ok();
}

Status executeAllReduce(OpExecuteContext &ctx) {
  return ctx.comm.allReduce(ctx.operand(0), ctx.result(),
                            ctx.plan.numElements(ctx.in.result), ctx.dtype());
}

} // namespace

std::vector<OpKernel> collectiveKernels() {
  return {{OpCode::AllGather, resolveAllGather, executeAllGather},
          {OpCode::AllToAll, resolveAllToAll, executeAllToAll},
          {OpCode::ReduceScatter, resolveReduceScatter, executeReduceScatter},
          {OpCode::AllReduce, resolveAllReduce, executeAllReduce}};
}

} // namespace shardlin::rt
