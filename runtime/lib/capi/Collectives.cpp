//===- Collectives.cpp - all_gather, all_to_all, reduce_scatter, all_reduce ===//
//
// Each collective reads and checks its views, sizes itself as the plan's
// kernels do (exec/CollectiveSizes.h: the chunks of its specs, the
// check that this rank's view has its piece's size, the communicator's
// tables), packs what is not dense into the context's scratch buffers, and
// calls the communicator.
//
//===----------------------------------------------------------------------===//

#include "capi/Arguments.h"
#include "capi/Context.h"
#include "capi/Entries.h"
#include "capi/Errors.h"
#include "exec/CollectiveSizes.h"
#include "shardlin/runtime/exec/Execute.h"

#include <string>
#include <utility>
#include <vector>

namespace shardlin::rt::capi {

namespace {

/// The arguments' names, as messages say them.
const CollectiveNames kNames = {"in", "out", "dim", "split_dim", "concat_dim"};

/// A collective's element type and its two views, which have one rank.
struct InOut {
  DType t = DType::F32;
  View in, out;
};

Status readInOut(int dtypeValue, const shardlin_memref *inRef,
                 const shardlin_memref *outRef, InOut &a) {
  SHARDLIN_RETURN_IF_ERROR(toDType(dtypeValue, "dtype", a.t));
  SHARDLIN_RETURN_IF_ERROR(readView(inRef, "in", a.t, -1, a.in));
  SHARDLIN_RETURN_IF_ERROR(readView(outRef, "out", a.t, -1, a.out));
  return checkSameRank(a.in, a.out);
}

/// The collectives along one dim.
enum class Along { Gather, Scatter };

/// all_gather's and reduce_scatter's arguments, read, checked and sized:
/// in and out agree but along `dim`, where the whole one (all_gather's out,
/// reduce_scatter's in) has the chunk spec's n and the other this rank's
/// chunk of it.
/// The chunks of `view`'s dim `dim` under a spec of the C ABI: its
/// placements (the argument `name`) and its bounds (null: the ceil rule).
Status viewPieces(shardlin_context *ctx, const View &view, int64_t dim,
                  const int64_t *placementsPtr, const char *name,
                  const int64_t *boundsPtr, DimPieces &out) {
  const int w = ctx->comm->worldSize();
  std::vector<int64_t> placements, bounds;
  SHARDLIN_RETURN_IF_ERROR(readPlacements(placementsPtr, name, w, placements));
  readBounds(boundsPtr, w, bounds);
  // "along_placements" -> "along_bounds": the argument the message names.
  std::string boundsName = name;
  boundsName.replace(boundsName.find("placements"), 10, "bounds");
  return chunkPieces(view.sizes[dim], std::move(placements), std::move(bounds),
                     out)
      .withContext(boundsName + " for " + view.name + " " + view.shape());
}

Status readAlong(shardlin_context *ctx, Along along, int dtypeValue,
                 const shardlin_memref *inRef, const shardlin_memref *outRef,
                 int64_t dim, const int64_t *placementsPtr,
                 const int64_t *boundsPtr, InOut &a, CollectiveSizes &sizes) {
  SHARDLIN_RETURN_IF_ERROR(readInOut(dtypeValue, inRef, outRef, a));
  SHARDLIN_RETURN_IF_ERROR(checkDim(dim, "along_dim", a.in));
  SHARDLIN_RETURN_IF_ERROR(checkSameDims(a.in, a.out, dim, dim));
  // The whole dim: all_gather's out, reduce_scatter's in.
  const View &whole = along == Along::Gather ? a.out : a.in;
  DimPieces pieces;
  SHARDLIN_RETURN_IF_ERROR(viewPieces(ctx, whole, dim, placementsPtr,
                                      "along_placements", boundsPtr, pieces));
  const int rank = ctx->comm->rank();
  if (along == Along::Gather)
    SHARDLIN_RETURN_IF_ERROR(sizeAllGather(a.in.sizes, a.out.sizes, dim,
                                           std::move(pieces), rank, kNames,
                                           sizes));
  else
    SHARDLIN_RETURN_IF_ERROR(sizeReduceScatter(a.in.sizes, a.out.sizes, dim,
                                               std::move(pieces), rank, kNames,
                                               sizes));
  return checkOutput(a.out, {&a.in});
}

/// The send buffer of a collective: the input's elements, packed into
/// rank blocks when the exchange is staged.
Status sendBuffer(shardlin_context *ctx, const View &in, const Exchange &ex,
                  const char *&send) {
  SHARDLIN_RETURN_IF_ERROR(denseInput(ctx, in, Slot::InDense, send));
  if (!ex.staged)
    return Status::ok();
  char *staging = nullptr;
  SHARDLIN_RETURN_IF_ERROR(ctx->scratch.get(
      Slot::SendStage, ex.totalCount() * static_cast<int64_t>(in.elt),
      staging));
  SHARDLIN_RETURN_IF_ERROR(movePieces(ctx->device->localOps(), ex,
                                      Direction::Pack, send, staging, in.elt));
  send = staging;
  return Status::ok();
}

/// Where a collective receives `out`'s elements: `buffer`, which is `dense`
/// (out itself, or scratch when out is not dense) or, for a staged
/// exchange, a staging buffer of rank blocks.
struct RecvBuffer {
  char *dense = nullptr, *buffer = nullptr;
};

Status recvBuffer(shardlin_context *ctx, const View &out, const Exchange &ex,
                  RecvBuffer &rb) {
  SHARDLIN_RETURN_IF_ERROR(denseOutput(ctx, out, Slot::OutDense, rb.dense));
  rb.buffer = rb.dense;
  if (!ex.staged)
    return Status::ok();
  return ctx->scratch.get(Slot::RecvStage,
                          ex.totalCount() * static_cast<int64_t>(out.elt),
                          rb.buffer);
}

/// Moves what a collective received into `out`.
Status finishRecv(shardlin_context *ctx, const View &out, const Exchange &ex,
                  const RecvBuffer &rb) {
  if (ex.staged)
    SHARDLIN_RETURN_IF_ERROR(movePieces(ctx->device->localOps(), ex,
                                        Direction::Unpack, rb.buffer, rb.dense,
                                        out.elt));
  finishOutput(out, rb.dense);
  return Status::ok();
}

} // namespace

Status allGather(shardlin_context *ctx, int dtypeValue,
                 const shardlin_memref *inRef, const shardlin_memref *outRef,
                 int64_t dim, const int64_t *placementsPtr,
                 const int64_t *boundsPtr, bool &joined) {
  InOut a;
  CollectiveSizes sizes;
  SHARDLIN_RETURN_IF_ERROR(readAlong(ctx, Along::Gather, dtypeValue, inRef,
                                     outRef, dim, placementsPtr, boundsPtr, a,
                                     sizes));
  const char *send = nullptr;
  SHARDLIN_RETURN_IF_ERROR(denseInput(ctx, a.in, Slot::InDense, send));
  RecvBuffer recv;
  SHARDLIN_RETURN_IF_ERROR(recvBuffer(ctx, a.out, sizes.recv, recv));
  joined = true;
  SHARDLIN_RETURN_IF_ERROR(ctx->comm->allGatherV(send, sizes.sendCount,
                                                 recv.buffer, sizes.recv.counts,
                                                 sizes.recv.displs, a.t));
  return finishRecv(ctx, a.out, sizes.recv, recv);
}

Status allToAll(shardlin_context *ctx, int dtypeValue,
                const shardlin_memref *inRef, const shardlin_memref *outRef,
                int64_t splitDim, const int64_t *splitPtr,
                const int64_t *splitBounds, int64_t concatDim,
                const int64_t *concatPtr, const int64_t *concatBounds,
                bool &joined) {
  Communicator &comm = *ctx->comm;
  InOut a;
  SHARDLIN_RETURN_IF_ERROR(readInOut(dtypeValue, inRef, outRef, a));
  SHARDLIN_RETURN_IF_ERROR(checkDim(splitDim, "split_dim", a.in));
  SHARDLIN_RETURN_IF_ERROR(checkDim(concatDim, "concat_dim", a.in));
  if (splitDim == concatDim)
    return invalid("split_dim and concat_dim are both " + str(splitDim) +
                   " (all_to_all splits one dim and concatenates another)");
  SHARDLIN_RETURN_IF_ERROR(checkSameDims(a.in, a.out, splitDim, concatDim));
  DimPieces split, concat;
  SHARDLIN_RETURN_IF_ERROR(viewPieces(ctx, a.in, splitDim, splitPtr,
                                      "split_placements", splitBounds, split));
  SHARDLIN_RETURN_IF_ERROR(viewPieces(ctx, a.out, concatDim, concatPtr,
                                      "concat_placements", concatBounds,
                                      concat));
  CollectiveSizes sizes;
  SHARDLIN_RETURN_IF_ERROR(sizeAllToAll(a.in.sizes, a.out.sizes, splitDim,
                                        std::move(split), concatDim,
                                        std::move(concat), comm.rank(), kNames,
                                        sizes));
  SHARDLIN_RETURN_IF_ERROR(checkOutput(a.out, {&a.in}));
  const char *send = nullptr;
  SHARDLIN_RETURN_IF_ERROR(sendBuffer(ctx, a.in, sizes.send, send));
  RecvBuffer recv;
  SHARDLIN_RETURN_IF_ERROR(recvBuffer(ctx, a.out, sizes.recv, recv));
  joined = true;
  SHARDLIN_RETURN_IF_ERROR(
      comm.allToAllV(send, sizes.send.counts, sizes.send.displs, recv.buffer,
                     sizes.recv.counts, sizes.recv.displs, a.t));
  return finishRecv(ctx, a.out, sizes.recv, recv);
}

Status reduceScatter(shardlin_context *ctx, int dtypeValue,
                     const shardlin_memref *inRef,
                     const shardlin_memref *outRef, int64_t dim,
                     const int64_t *placementsPtr, const int64_t *boundsPtr,
                     bool &joined) {
  InOut a;
  CollectiveSizes sizes;
  SHARDLIN_RETURN_IF_ERROR(readAlong(ctx, Along::Scatter, dtypeValue, inRef,
                                     outRef, dim, placementsPtr, boundsPtr, a,
                                     sizes));
  const char *send = nullptr;
  SHARDLIN_RETURN_IF_ERROR(sendBuffer(ctx, a.in, sizes.send, send));
  char *recv = nullptr;
  SHARDLIN_RETURN_IF_ERROR(denseOutput(ctx, a.out, Slot::OutDense, recv));
  joined = true;
  SHARDLIN_RETURN_IF_ERROR(ctx->comm->reduceScatterV(
      send, sizes.send.counts, sizes.send.displs, recv, a.t));
  finishOutput(a.out, recv);
  return Status::ok();
}

Status gatherBounds(shardlin_context *ctx, int64_t size,
                    const int64_t *placementsPtr, int64_t *bounds,
                    bool &joined) {
  Communicator &comm = *ctx->comm;
  const int w = comm.worldSize();
  // A size is exact in the f64 it travels as below 2^53.
  constexpr int64_t kMaxSize = int64_t(1) << 53;
  if (size < 0 || size >= kMaxSize)
    return invalid("size must be in [0, 2^53), got " + str(size));
  if (!bounds)
    return invalid("bounds must not be null (it receives world_size + 1 = " +
                   str(w + 1) + " values)");
  std::vector<int64_t> placements;
  SHARDLIN_RETURN_IF_ERROR(
      readPlacements(placementsPtr, "placements", w, placements));
  const double mine = static_cast<double>(size);
  std::vector<double> sizes(static_cast<size_t>(w));
  std::vector<int64_t> counts(static_cast<size_t>(w), 1), displs(counts.size());
  for (int r = 0; r < w; ++r)
    displs[static_cast<size_t>(r)] = r;
  joined = true;
  SHARDLIN_RETURN_IF_ERROR(
      comm.allGatherV(&mine, 1, sizes.data(), counts, displs, DType::F64));
  // Every rank checked its own size, so each received one is exact.
  int64_t total = 0;
  bounds[0] = 0;
  for (int c = 0; c < w; ++c) {
    const auto block = static_cast<int64_t>(
        sizes[static_cast<size_t>(placements[static_cast<size_t>(c)])]);
    if (__builtin_add_overflow(total, block, &total))
      return invalid("the ranks' sizes add up to more than an int64");
    bounds[c + 1] = total;
  }
  return Status::ok();
}

Status allReduce(shardlin_context *ctx, int dtypeValue,
                 const shardlin_memref *inRef, const shardlin_memref *outRef,
                 bool &joined) {
  InOut a;
  SHARDLIN_RETURN_IF_ERROR(readInOut(dtypeValue, inRef, outRef, a));
  SHARDLIN_RETURN_IF_ERROR(checkSameDims(a.in, a.out, -1, -1));
  SHARDLIN_RETURN_IF_ERROR(checkOneAddressPerElement(a.out));
  SHARDLIN_RETURN_IF_ERROR(checkDisjoint(a.out, a.in, /*allowSame=*/true));
  const char *send = nullptr;
  SHARDLIN_RETURN_IF_ERROR(denseInput(ctx, a.in, Slot::InDense, send));
  char *recv = nullptr;
  SHARDLIN_RETURN_IF_ERROR(denseOutput(ctx, a.out, Slot::OutDense, recv));
  joined = true;
  SHARDLIN_RETURN_IF_ERROR(
      ctx->comm->allReduce(send, recv, a.in.elements, a.t));
  finishOutput(a.out, recv);
  return Status::ok();
}

Status chunkRange(int64_t n, int64_t worldSize, const int64_t *placementsPtr,
                  const int64_t *boundsPtr, int64_t rank, int64_t *offset,
                  int64_t *size) {
  const std::string fn =
      boundsPtr ? "shardlin_chunk_range_bounds" : "shardlin_chunk_range";
  if (!offset || !size)
    return invalid(fn + ": offset and size must not be null");
  if (n < 0)
    return invalid(fn + ": n is negative (" + str(n) + ")");
  if (worldSize < 1 || worldSize > kMaxWorldSize)
    return invalid(fn + ": world_size must be in [1, " + str(kMaxWorldSize) +
                   "], got " + str(worldSize));
  std::vector<int64_t> placements;
  SHARDLIN_RETURN_IF_ERROR(readPlacements(placementsPtr, "placements",
                                          static_cast<int>(worldSize),
                                          placements)
                               .withContext(fn));
  if (rank < 0 || rank >= worldSize)
    return invalid(fn + ": rank " + str(rank) + " is not in [0, " +
                   str(worldSize - 1) + "]");
  std::vector<int64_t> bounds;
  readBounds(boundsPtr, static_cast<int>(worldSize), bounds);
  DimPieces pieces;
  SHARDLIN_RETURN_IF_ERROR(
      chunkPieces(n, std::move(placements), std::move(bounds), pieces)
          .withContext(fn));
  const Range range = pieces.ranges[rank];
  *offset = range.offset;
  *size = range.size;
  return Status::ok();
}

} // namespace shardlin::rt::capi
