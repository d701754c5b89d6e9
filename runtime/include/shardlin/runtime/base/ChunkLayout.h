//===- ChunkLayout.h - PyTorch ChunkShardingSpec arithmetic -----*- C++ -*-===//
//
// The one place where chunk sizes, offsets and the chunk <-> rank maps are
// computed. The compiler (type inference, verifiers) and the runtime (plans,
// collective counts) both use it, so they cannot disagree.
//
// A dimension of size n split over W chunks: split = ceil(n / W); chunk i
// covers [i*split, min(n, (i+1)*split)), possibly empty. placements[i] is the
// rank that holds chunk i; placements is a permutation of 0..W-1.
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

/// The chunk sharding of one dimension: which dim, and which rank holds each
/// chunk.
struct ChunkSpec {
  int64_t dim = 0;
  std::vector<int64_t> placements;

  int64_t numChunks() const { return static_cast<int64_t>(placements.size()); }
  bool operator==(const ChunkSpec &o) const {
    return dim == o.dim && placements == o.placements;
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

/// split = ceil(n / w), for n >= 0 and w >= 1, without overflow.
inline int64_t chunkSplit(int64_t n, int64_t w) {
  return n / w + (n % w != 0 ? 1 : 0);
}

/// The range of chunk `i` (0 <= i < w) of a dimension of size `n`.
inline Range chunkRange(int64_t n, int64_t w, int64_t i) {
  const int64_t split = chunkSplit(n, w);
  if (split == 0)
    return {0, 0};
  // i * split may exceed n (empty trailing chunks); clamp without overflow.
  const int64_t begin = (i > n / split) ? n : std::min(n, i * split);
  const int64_t end = (i + 1 > n / split) ? n : std::min(n, (i + 1) * split);
  return {begin, end - begin};
}

/// True if every chunk of a dimension of size n over w chunks has the same
/// size (so the per-rank size is static).
inline bool chunksUniform(int64_t n, int64_t w) { return n % w == 0; }

/// The range each rank holds of one dimension of size n under one placement
/// list. Build it from a spec whose placements passed checkPlacements().
class ChunkLayout {
public:
  ChunkLayout(int64_t n, const std::vector<int64_t> &placements)
      : rankRanges_(placements.size()) {
    const int64_t w = static_cast<int64_t>(placements.size());
    for (int64_t c = 0; c < w; ++c)
      rankRanges_[placements[c]] = chunkRange(n, w, c);
  }

  int64_t numChunks() const { return static_cast<int64_t>(rankRanges_.size()); }
  /// The range held by rank r.
  Range ofRank(int64_t r) const { return rankRanges_[r]; }

private:
  std::vector<Range> rankRanges_;
};

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_CHUNKLAYOUT_H
