//===- Communicator.h - Collectives of the shardlin runtime -----*- C++ -*-===//
//
// One communicator per rank, with explicit, typed collectives in the manner of
// NCCL and Gloo. All counts and displacements are in elements of `dtype`.
// Buffers live on the communicator's device(). Every call is collective: each
// rank of the group must make the same sequence of calls.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_COMMUNICATOR_H
#define SHARDLIN_RUNTIME_COMMUNICATOR_H

#include "shardlin/runtime/Buffer.h"
#include "shardlin/runtime/DType.h"
#include "shardlin/runtime/Status.h"

#include <cstdint>
#include <vector>

namespace shardlin::rt {

/// Traffic counters. "Sent" counts the payload bytes this rank contributes to
/// OTHER ranks under the collective's definition (its own block is a local
/// copy, not traffic), independent of the algorithm the backend uses:
///   allGatherV:     sendCount * (W - 1)
///   allToAllV:      sum of sendCounts[d] for d != rank
///   reduceScatterV: sum of counts[d] for d != rank
///   allReduce:      2 * count * (W - 1) / W (reduce-scatter + all-gather)
///   broadcast:      count * (W - 1) on the root, 0 elsewhere
/// each multiplied by the element size.
struct CommStats {
  uint64_t bytesSent = 0;
  uint64_t calls = 0;
};

struct CommOptions {
  /// A collective that has not completed after this many seconds fails on
  /// every rank instead of hanging.
  double timeoutSeconds = 300.0;
};

class Communicator {
public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int worldSize() const = 0;
  /// "threads", "mpi", "nccl", "cuda-local".
  virtual const char *backendName() const = 0;
  virtual Device device() const { return Device{}; }

  /// Every rank contributes `sendCount` elements; rank r's block lands in
  /// `recv` at recvDispls[r] with recvCounts[r] (== r's sendCount) elements.
  virtual Status allGatherV(const void *send, int64_t sendCount, void *recv,
                            const std::vector<int64_t> &recvCounts,
                            const std::vector<int64_t> &recvDispls,
                            DType dtype) = 0;

  /// Rank r sends sendCounts[d] elements from send + sendDispls[d] to each
  /// rank d, and receives recvCounts[s] elements from each rank s into
  /// recv + recvDispls[s].
  virtual Status allToAllV(const void *send,
                           const std::vector<int64_t> &sendCounts,
                           const std::vector<int64_t> &sendDispls, void *recv,
                           const std::vector<int64_t> &recvCounts,
                           const std::vector<int64_t> &recvDispls,
                           DType dtype) = 0;

  /// `send` holds one segment per rank: segment d at displs[d] with counts[d]
  /// elements (same tables on every rank). Rank r receives, in `recv`
  /// (counts[r] elements), the elementwise sum over all ranks of segment r.
  /// f16/bf16 are summed in f32 and rounded once.
  virtual Status reduceScatterV(const void *send,
                                const std::vector<int64_t> &counts,
                                const std::vector<int64_t> &displs, void *recv,
                                DType dtype) = 0;

  /// Elementwise sum over all ranks; `send` may equal `recv`.
  virtual Status allReduce(const void *send, void *recv, int64_t count,
                           DType dtype) = 0;

  virtual Status broadcast(void *buffer, int64_t count, DType dtype,
                           int root) = 0;

  virtual Status barrier() = 0;

  const CommStats &stats() const { return stats_; }
  void resetStats() { stats_ = CommStats(); }

protected:
  CommStats stats_;
};

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_COMMUNICATOR_H
