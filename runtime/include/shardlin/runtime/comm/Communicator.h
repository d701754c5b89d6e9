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

#include "shardlin/runtime/base/Buffer.h"
#include "shardlin/runtime/base/DType.h"
#include "shardlin/runtime/base/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace shardlin::rt {

/// Traffic counters. "Sent" counts the payload bytes this rank contributes to
/// OTHER ranks under the collective's definition (its own block is a local
/// copy, not traffic), independent of the algorithm the backend uses:
///   allGatherV:     sendCount * (W - 1)
///   allToAllV:      sum of sendCounts[d] for d != rank
///   reduceScatterV: sum of counts[d] for d != rank
///   allReduce:      count - m + (W - 1) * m, m = the rank's chunk of count
///                   by the ceil rule in rank order (a ring's reduce-scatter
///                   + all-gather; 2 * count * (W - 1) over all ranks)
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

/// Every collective, in CollectiveKind's order, for an X macro:
/// X(Kind, "its name in messages"). The enum, the names, the hooks, the
/// dispatch table and the backends' override declarations are all made from
/// this one list.
#define SHARDLIN_FOR_EACH_COLLECTIVE(X)                                        \
  X(AllGatherV, "allGatherV")                                                  \
  X(AllToAllV, "allToAllV")                                                    \
  X(ReduceScatterV, "reduceScatterV")                                          \
  X(AllReduce, "allReduce")                                                    \
  X(Broadcast, "broadcast")                                                    \
  X(Barrier, "barrier")

enum class CollectiveKind : uint8_t {
#define SHARDLIN_COLLECTIVE_ENUMERATOR(kind, name) kind,
  SHARDLIN_FOR_EACH_COLLECTIVE(SHARDLIN_COLLECTIVE_ENUMERATOR)
#undef SHARDLIN_COLLECTIVE_ENUMERATOR
};

/// "allGatherV", ...: the collective's name in messages.
const char *collectiveName(CollectiveKind k);

/// One call of a collective as Communicator hands it to its backend, with
/// the verdict of the argument checks. The pointers point at the caller's
/// arguments, which live until the call returns.
struct CollectiveCall {
  CollectiveKind kind = CollectiveKind::Barrier;
  DType dtype = DType::F32;
  const void *send = nullptr;
  /// broadcast: the buffer.
  void *recv = nullptr;
  /// allGatherV: sendCount; allReduce and broadcast: count.
  int64_t count = 0;
  int root = 0;
  /// allToAllV: all four; allGatherV: recv*; reduceScatterV: send* hold the
  /// counts and displs tables.
  const std::vector<int64_t> *sendCounts = nullptr;
  const std::vector<int64_t> *sendDispls = nullptr;
  const std::vector<int64_t> *recvCounts = nullptr;
  const std::vector<int64_t> *recvDispls = nullptr;
  /// "threads allGatherV (rank 0 of 2)": the prefix of every message.
  std::string where;
  /// Non-empty when this rank's own arguments are invalid: the first
  /// problem found. A backend whose group checks arguments together (threads,
  /// cuda-local) still takes part in the collective so that every rank
  /// fails; the others return rejectInvalid(call).
  std::string invalid;
  /// What the call adds to CommStats::bytesSent if it succeeds.
  uint64_t bytesSent = 0;
};

/// In a backend's class body: the override declarations of the hooks every
/// backend implements (each collective's transfer, and split's work).
#define SHARDLIN_COMMUNICATOR_OVERRIDES                                        \
  SHARDLIN_FOR_EACH_COLLECTIVE(SHARDLIN_COLLECTIVE_OVERRIDE)                   \
  Status doSplit(int color, int key, std::unique_ptr<Communicator> &out)       \
      override;
#define SHARDLIN_COLLECTIVE_OVERRIDE(kind, name)                               \
  Status do##kind(const CollectiveCall &call) override;

/// A communicator: the collectives are non-virtual. Each checks this rank's
/// arguments once for every backend (dtype, counts and tables, root, then
/// the backend's own checks and its buffer check), calls the backend's hook
/// with the verdict, and counts a successful call in stats(). Backends
/// implement the hooks: the transfer, plus the group-wide checks where they
/// can make them.
class Communicator {
public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int worldSize() const = 0;
  /// "threads", "mpi", "nccl", "cuda-local".
  virtual const char *backendName() const = 0;
  virtual Device device() const { return Device{}; }
  /// Whether the collectives may be called from another thread than the
  /// one that made the communicator (one thread at a time, each call
  /// complete before the next): a pipelined block calls them from its lane's
  /// thread (exec/CommLane.h). Not under MPI_THREAD_FUNNELED.
  virtual bool callableFromAnyThread() const { return true; }

  /// Every rank contributes `sendCount` elements; rank r's block lands in
  /// `recv` at recvDispls[r] with recvCounts[r] (== r's sendCount) elements.
  Status allGatherV(const void *send, int64_t sendCount, void *recv,
                    const std::vector<int64_t> &recvCounts,
                    const std::vector<int64_t> &recvDispls, DType dtype);

  /// Rank r sends sendCounts[d] elements from send + sendDispls[d] to each
  /// rank d, and receives recvCounts[s] elements from each rank s into
  /// recv + recvDispls[s].
  Status allToAllV(const void *send, const std::vector<int64_t> &sendCounts,
                   const std::vector<int64_t> &sendDispls, void *recv,
                   const std::vector<int64_t> &recvCounts,
                   const std::vector<int64_t> &recvDispls, DType dtype);

  /// `send` holds one segment per rank: segment d at displs[d] with counts[d]
  /// elements (same tables on every rank). Rank r receives, in `recv`
  /// (counts[r] elements), the elementwise sum over all ranks of segment r.
  /// f16/bf16 are summed in f32 and rounded once.
  Status reduceScatterV(const void *send, const std::vector<int64_t> &counts,
                        const std::vector<int64_t> &displs, void *recv,
                        DType dtype);

  /// Elementwise sum over all ranks; `send` may equal `recv`.
  Status allReduce(const void *send, void *recv, int64_t count, DType dtype);

  Status broadcast(void *buffer, int64_t count, DType dtype, int root);

  Status barrier();

  /// Takes part in a collective of kind `kind` as a rank whose arguments
  /// are invalid for the reason `why`, without reading or writing any
  /// buffer. Where the group checks its ranks' arguments together (threads,
  /// cuda-local) every rank's call then fails at once, naming this rank and
  /// `why`, instead of the others waiting for this rank until the timeout;
  /// elsewhere (mpi, nccl) only this rank's call fails. A Barrier, which
  /// has no arguments to be wrong, just fails here. For callers that
  /// find their own arguments wrong before they can make the call (the C
  /// ABI's views). Returns the failure (InvalidArgument, or the group's
  /// error); nothing is counted in stats().
  Status failCollective(CollectiveKind kind, DType dtype,
                        const std::string &why);

  /// Splits the ranks into groups, as MPI_Comm_split does: the ranks that
  /// pass the same `color` (>= 0) form one group, ordered by `key` and then
  /// by rank. `out` becomes this rank's communicator in its group: the same
  /// backend, device and timeout, independent of this one (either may be
  /// destroyed first). A collective: every rank of this communicator calls
  /// it, and none makes another collective on it meanwhile. threads and
  /// cuda-local make in-process groups, mpi calls MPI_Comm_split, nccl
  /// ncclCommSplit; Unavailable on a backend that cannot.
  Status split(int color, int key, std::unique_ptr<Communicator> &out);

  const CommStats &stats() const { return stats_; }
  void resetStats() { stats_ = CommStats(); }

protected:
  /// The transfers. `call.invalid` says whether this rank's arguments
  /// passed the checks; the tables and counts may be used only if it is
  /// empty. A hook returns the collective's status; Communicator counts it
  /// if it is ok.
#define SHARDLIN_COLLECTIVE_HOOK(kind, name)                                   \
  virtual Status do##kind(const CollectiveCall &call) = 0;
  SHARDLIN_FOR_EACH_COLLECTIVE(SHARDLIN_COLLECTIVE_HOOK)
#undef SHARDLIN_COLLECTIVE_HOOK
  /// split's work, after its argument checks (color >= 0). The default:
  /// Unavailable, naming the backend.
  virtual Status doSplit(int color, int key,
                         std::unique_ptr<Communicator> &out);

  /// A backend's own checks of this rank's arguments (e.g. MPI's int
  /// counts), run after the common ones passed and before the buffer
  /// checks: "" if fine, else the problem.
  virtual std::string checkBackendArguments(const CollectiveCall &) const {
    return {};
  }

  /// The check of a buffer the collective reads or writes `elements`
  /// elements of: "" if fine, else what is wrong. The default, for host
  /// memory, refuses a null pointer with elements to access; GPU backends
  /// also check that the device can reach it.
  virtual std::string checkBuffer(const char *name, const void *p,
                                  int64_t elements, DType dtype) const;

  /// The error of a call whose own arguments are invalid, for backends that
  /// reject them before communicating: "<where>: invalid arguments: <why>".
  static Status rejectInvalid(const CollectiveCall &call);

private:
  /// "threads allGatherV (rank 0 of 2)": the prefix of every message.
  std::string where(CollectiveKind kind) const;
  /// Fills call.where, checks the arguments (call.invalid) and computes
  /// call.bytesSent.
  void prepare(CollectiveCall &call) const;
  /// Counts `call` in stats() if `st` (its hook's result) is ok; returns st.
  Status finish(const CollectiveCall &call, Status st);
  /// Calls the hook of call.kind.
  Status dispatch(const CollectiveCall &call);
  /// A public collective: prepare, the hook, finish.
  Status run(CollectiveCall call);

  CommStats stats_;
};

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_COMMUNICATOR_H
