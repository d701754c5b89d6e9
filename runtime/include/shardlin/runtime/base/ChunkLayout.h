//===- ChunkLayout.h - Chunk boundaries and the chunk <-> rank map -*- C++ -*-===//
//
// The one place where chunk sizes, offsets and the chunk <-> rank maps are
// computed. The compiler (type inference, verifiers, cost model, lowering)
// and the runtime (plans, collective counts) both use it, so they cannot
// disagree.
//
// A dimension of size n is split into W chunks by W + 1 boundaries
// 0 = bounds[0] <= bounds[1] <= ... <= bounds[W] = n: chunk i covers
// [bounds[i], bounds[i+1]), possibly empty. Without explicit boundaries the
// boundaries are PyTorch's ChunkShardingSpec rule: split = ceil(n / W),
// bounds[i] = min(n, i * split). Explicit boundaries come from upstream
// `shard.sharding ... sharded_dims_offsets` or from head-aligned splits.
// placements[i] is the rank that holds chunk i; placements is a permutation
// of 0..W-1.
//
// Header-only and dependency-free on purpose.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_CHUNKLAYOUT_H
#define SHARDLIN_RUNTIME_CHUNKLAYOUT_H

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace shardlin::rt {

/// A half-open range [offset, offset + size) along one dimension.
struct Range {
  int64_t offset = 0;
  int64_t size = 0;
  bool operator==(const Range &o) const {
    return offset == o.offset && size == o.size;
  }
};

/// The chunk sharding of one dimension: which dim, which rank holds each
/// chunk, and optionally where the chunks begin and end.
struct ChunkSpec {
  int64_t dim = 0;
  std::vector<int64_t> placements;
  /// Empty: the ceil rule. Otherwise W + 1 boundaries (checkBounds), the
  /// last one the size of the dim.
  std::vector<int64_t> bounds;

  int64_t numChunks() const { return static_cast<int64_t>(placements.size()); }
  bool operator==(const ChunkSpec &o) const {
    return dim == o.dim && placements == o.placements && bounds == o.bounds;
  }
};

/// Returns an empty string if `placements` is a permutation of 0..W-1 (W >=
/// 1), otherwise a message saying what is wrong with it.
inline std::string checkPlacements(const std::vector<int64_t> &placements) {
  const int64_t w = static_cast<int64_t>(placements.size());
  if (w == 0)
    return "placements must not be empty";
  std::vector<int64_t> seenAt(w, -1);
  for (int64_t i = 0; i < w; ++i) {
    int64_t p = placements[i];
    if (p < 0 || p >= w)
      return "placement " + std::to_string(p) + " at position " +
             std::to_string(i) + " is out of range [0, " +
             std::to_string(w - 1) + "]";
    if (seenAt[p] >= 0)
      return "rank " + std::to_string(p) + " appears twice (positions " +
             std::to_string(seenAt[p]) + " and " + std::to_string(i) + ")";
    seenAt[p] = i;
  }
  return {};
}

/// Returns an empty string if `bounds` are boundaries of `w` chunks: w + 1
/// non-decreasing values starting at 0. If `n` >= 0, the last one must also
/// be `n` (the size of the dim they split). Otherwise a message saying what
/// is wrong with them.
inline std::string checkBounds(const std::vector<int64_t> &bounds, int64_t w,
                               int64_t n = -1) {
  if (static_cast<int64_t>(bounds.size()) != w + 1)
    return "bounds of " + std::to_string(w) + " chunks need " +
           std::to_string(w + 1) + " values, got " +
           std::to_string(bounds.size());
  if (bounds.front() != 0)
    return "bounds must start at 0, got " + std::to_string(bounds.front());
  for (size_t i = 1; i < bounds.size(); ++i)
    if (bounds[i] < bounds[i - 1])
      return "bounds must be non-decreasing, but bound " + std::to_string(i) +
             " (" + std::to_string(bounds[i]) + ") is less than bound " +
             std::to_string(i - 1) + " (" + std::to_string(bounds[i - 1]) +
             ")";
  if (n >= 0 && bounds.back() != n)
    return "bounds end at " + std::to_string(bounds.back()) +
           " but the dim has " + std::to_string(n) + " elements";
  return {};
}

/// split = ceil(n / w), for n >= 0 and w >= 1, without overflow.
inline int64_t chunkSplit(int64_t n, int64_t w) {
  return n / w + (n % w != 0 ? 1 : 0);
}

/// The range of chunk `i` (0 <= i < w) of a dimension of size `n` under the
/// ceil rule.
inline Range chunkRange(int64_t n, int64_t w, int64_t i) {
  const int64_t split = chunkSplit(n, w);
  if (split == 0)
    return {0, 0};
  // i * split may exceed n (empty trailing chunks); clamp without overflow.
  const int64_t begin = (i > n / split) ? n : std::min(n, i * split);
  const int64_t end = (i + 1 > n / split) ? n : std::min(n, (i + 1) * split);
  return {begin, end - begin};
}

/// The w + 1 boundaries of the ceil rule for a dimension of size n.
inline std::vector<int64_t> ceilBounds(int64_t n, int64_t w) {
  std::vector<int64_t> bounds(w + 1);
  for (int64_t i = 0; i < w; ++i)
    bounds[i] = chunkRange(n, w, i).offset;
  bounds[w] = n;
  return bounds;
}

/// The range of chunk `i` (0 <= i < w) under explicit `bounds` (checked by
/// checkBounds).
inline Range boundsRange(const std::vector<int64_t> &bounds, int64_t i) {
  return {bounds[i], bounds[i + 1] - bounds[i]};
}

/// True if every chunk of a dimension of size n over w chunks has the same
/// size under the ceil rule (so the per-rank size is static).
inline bool chunksUniform(int64_t n, int64_t w) { return n % w == 0; }

/// True if every chunk under `bounds` has the same size. Equal chunks are
/// exactly the ceil rule's chunks of a divisible size, so such bounds and
/// no bounds describe the same chunks.
inline bool boundsUniform(const std::vector<int64_t> &bounds) {
  for (size_t i = 2; i < bounds.size(); ++i)
    if (bounds[i] - bounds[i - 1] != bounds[1] - bounds[0])
      return false;
  return true;
}

/// The range each rank holds of one dimension of size n under one placement
/// list and, optionally, explicit boundaries. Build it from a spec that
/// passed checkPlacements() (and checkBounds() for n).
class ChunkLayout {
public:
  /// The ceil rule.
  ChunkLayout(int64_t n, const std::vector<int64_t> &placements)
      : ChunkLayout(n, placements, {}) {}

  /// Explicit boundaries; empty `bounds` means the ceil rule.
  ChunkLayout(int64_t n, const std::vector<int64_t> &placements,
              const std::vector<int64_t> &bounds)
      : rankRanges_(placements.size()), chunkRanges_(placements.size()) {
    const int64_t w = static_cast<int64_t>(placements.size());
    for (int64_t c = 0; c < w; ++c) {
      chunkRanges_[c] = bounds.empty() ? chunkRange(n, w, c)
                                       : boundsRange(bounds, c);
      rankRanges_[placements[c]] = chunkRanges_[c];
    }
  }

  /// The dimension `spec` splits, of size n.
  ChunkLayout(int64_t n, const ChunkSpec &spec)
      : ChunkLayout(n, spec.placements, spec.bounds) {}

  int64_t numChunks() const { return static_cast<int64_t>(rankRanges_.size()); }
  /// The range held by rank r.
  Range ofRank(int64_t r) const { return rankRanges_[r]; }
  /// The range of chunk c.
  Range ofChunk(int64_t c) const { return chunkRanges_[c]; }
  /// True if every chunk has the same size.
  bool uniform() const {
    for (const Range &r : chunkRanges_)
      if (r.size != chunkRanges_.front().size)
        return false;
    return true;
  }

private:
  std::vector<Range> rankRanges_;
  std::vector<Range> chunkRanges_;
};

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_CHUNKLAYOUT_H
