//===- Replicated.h - Checking that replicated arguments agree --*- C++ -*-===//
//
// A plain argument declared replicated (Argument::replicated: the upstream
// import's arguments without a split) must hold the same value on every
// rank: the lowering relies on it (a col-wise layer on a replicated x skips
// the all_gather of x, and each rank's output then mixes columns computed
// from the other ranks' x if they differ). Nothing else in a run would
// notice, so runRank checks it before the program's first collective:
//   - dynamic dims: the sizes every rank gives are exchanged anyway
//     (DynamicSizes); those of a replicated argument must be equal;
//   - values: each rank hashes its bound bytes (ContentHash: 64 bits over
//     the dtype, the shape and the bytes, folded to 48 bits so that a hash
//     is exact in the double slots of the ranks' agreement), the hashes
//     travel in that agreement's one all_reduce (rank r fills its own slot
//     per argument; the sum is every rank's hash), and every rank compares
//     them the same way, so every rank fails with the same error naming the
//     argument and the ranks that differ from rank 0.
// RunOptions::checkReplicated = false skips both.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_EXEC_REPLICATED_H
#define SHARDLIN_RUNTIME_EXEC_REPLICATED_H

#include "shardlin/runtime/exec/Device.h"
#include "shardlin/runtime/exec/Plan.h"
#include "shardlin/runtime/program/Program.h"
#include "shardlin/runtime/base/Status.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace shardlin::rt {

/// A 64-bit hash of a byte stream in the manner of xxHash64 (four lanes of
/// multiply-rotate rounds, 32 bytes a stripe, then an avalanche), fed in
/// pieces of any size: the digest depends only on the concatenated bytes.
/// Not cryptographic: it tells values that differ by mistake, not by design.
class ContentHash {
public:
  ContentHash();
  void update(const void *data, size_t bytes);
  uint64_t digest() const;

private:
  void stripe(const unsigned char *p);
  uint64_t lanes_[4];
  unsigned char pending_[32];
  size_t pendingBytes_ = 0;
  uint64_t total_ = 0;
};

/// The 48-bit hash of an argument's value: its dtype, shape and bytes.
/// `data` is in `device`'s memory (copied to the host in pieces when it is
/// not the host's).
Status hashArgumentValue(RankDevice &device, const void *data, DType dtype,
                         const std::vector<int64_t> &shape, uint64_t &hash);

/// The program's replicated arguments, in order.
std::vector<size_t> replicatedArgs(const Program &program);

/// InvalidArgument naming the first replicated argument whose dynamic dims
/// are not the same size on every rank (sizes[r][i]: rank r's size of
/// dynamicArgDims(program)[i]), with every rank's shape.
Status checkReplicatedSizes(const Program &program, const DynamicSizes &sizes);

/// InvalidArgument naming the first replicated argument (of `args`,
/// replicatedArgs' order) whose hashes differ, and the ranks whose hash
/// differs from rank 0's. `hashes[r * args.size() + k]` is rank r's hash of
/// argument args[k].
Status checkReplicatedHashes(const Program &program,
                             const std::vector<size_t> &args,
                             const std::vector<double> &hashes, int worldSize);

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_EXEC_REPLICATED_H
