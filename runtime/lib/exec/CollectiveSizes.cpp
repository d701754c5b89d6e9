//===- CollectiveSizes.cpp - A collective's sizes on one rank -------------===//

#include "exec/CollectiveSizes.h"

#include "shardlin/runtime/program/Program.h"

#include <algorithm>
#include <utility>

namespace shardlin::rt {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

/// InvalidArgument unless `part`'s `dim` is `rank`'s piece of `whole`'s:
/// "in [3, 2] has 3 along dim 0 but rank 1's chunk of 5 (chunk 1 of 2,
/// split 3) has 2 (out is [5, 2])".
Status checkPiece(const std::string &partName, const std::vector<int64_t> &part,
                  const std::string &wholeName,
                  const std::vector<int64_t> &whole, const std::string &dimName,
                  int64_t dim, const DimPieces &pieces, int rank) {
  if (part[dim] == pieces.ranges[rank].size)
    return Status::ok();
  return Status::invalidArgument(
      partName + " " + formatShape(part) + " has " + str(part[dim]) +
      " along " + dimName + " " + str(dim) + " but " + pieces.describe(rank) +
      " (" + wholeName + " is " + formatShape(whole) + ")");
}

} // namespace

std::string DimPieces::describe(int rank) const {
  const int64_t w = static_cast<int64_t>(placements.size());
  const int64_t chunk = std::find(placements.begin(), placements.end(), rank) -
                        placements.begin();
  const std::string has = " has " + str(ranges[rank].size);
  if (blocks)
    return "rank " + str(rank) + "'s block of " + str(n) + " (chunk " +
           str(chunk) + " of " + str(w) + ")" + has;
  std::string rule = "split " + str(chunkSplit(n, w));
  if (!bounds.empty()) {
    rule = "bounds [";
    for (size_t i = 0; i < bounds.size(); ++i)
      rule += (i ? ", " : "") + str(bounds[i]);
    rule += "]";
  }
  return "rank " + str(rank) + "'s chunk of " + str(n) + " (chunk " +
         str(chunk) + " of " + str(w) + ", " + rule + ")" + has;
}

Status chunkPieces(int64_t n, std::vector<int64_t> placements,
                   std::vector<int64_t> bounds, DimPieces &out) {
  const int64_t w = static_cast<int64_t>(placements.size());
  if (!bounds.empty())
    if (std::string problem = checkBounds(bounds, w, n); !problem.empty())
      return Status::invalidArgument("the chunk bounds do not split a dim of " +
                                     str(n) + ": " + problem);
  DimPieces p;
  p.n = n;
  const ChunkLayout layout(n, placements, bounds);
  for (int64_t r = 0; r < w; ++r)
    p.ranges.push_back(layout.ofRank(r));
  p.placements = std::move(placements);
  p.bounds = std::move(bounds);
  out = std::move(p);
  return Status::ok();
}

DimPieces blockPieces(const std::vector<int64_t> &sizes,
                      std::vector<int64_t> placements) {
  DimPieces p;
  p.blocks = true;
  p.ranges.resize(placements.size());
  for (size_t c = 0; c < placements.size(); ++c) {
    p.ranges[placements[c]] = {p.n, sizes[c]};
    p.n += sizes[c];
  }
  p.placements = std::move(placements);
  return p;
}

std::vector<int64_t> pieceShape(std::vector<int64_t> whole, int64_t dim,
                                const DimPieces &pieces, int rank) {
  whole[dim] = pieces.ranges[rank].size;
  return whole;
}

Status sizeAllGather(const std::vector<int64_t> &in,
                     const std::vector<int64_t> &out, int64_t dim,
                     DimPieces pieces, int rank, const CollectiveNames &names,
                     CollectiveSizes &sizes) {
  SHARDLIN_RETURN_IF_ERROR(
      checkPiece(names.in, in, names.out, out, names.along, dim, pieces, rank));
  sizes.recv = makeExchange(splitAround(out, dim), std::move(pieces.ranges));
  sizes.sendCount = sizes.recv.counts[rank];
  return Status::ok();
}

Status sizeReduceScatter(const std::vector<int64_t> &in,
                         const std::vector<int64_t> &out, int64_t dim,
                         DimPieces pieces, int rank,
                         const CollectiveNames &names, CollectiveSizes &sizes) {
  SHARDLIN_RETURN_IF_ERROR(
      checkPiece(names.out, out, names.in, in, names.along, dim, pieces, rank));
  sizes.send = makeExchange(splitAround(in, dim), std::move(pieces.ranges));
  return Status::ok();
}

Status sizeAllToAll(const std::vector<int64_t> &in,
                    const std::vector<int64_t> &out, int64_t splitDim,
                    DimPieces split, int64_t concatDim, DimPieces concat,
                    int rank, const CollectiveNames &names,
                    CollectiveSizes &sizes) {
  SHARDLIN_RETURN_IF_ERROR(checkPiece(names.in, in, names.out, out,
                                      names.concat, concatDim, concat, rank));
  SHARDLIN_RETURN_IF_ERROR(checkPiece(names.out, out, names.in, in, names.split,
                                      splitDim, split, rank));
  sizes.send = makeExchange(splitAround(in, splitDim), std::move(split.ranges));
  sizes.recv =
      makeExchange(splitAround(out, concatDim), std::move(concat.ranges));
  return Status::ok();
}

} // namespace shardlin::rt
