//===- CostModel.h - What each lowering of a sharded linear costs -*- C++ -*-===//
//
// For one linear (B rows, an N x K weight split along `dim` over W ranks with
// the given placements, elements of `elementBytes`), the exact bytes each rank
// sends and receives under each strategy (uneven chunks included, counted the
// way the runtime's CommStats count them), the peak extra memory per rank,
// and an estimated time from a latency / bandwidth / GEMM-rate model.
//
// Plain C++ on purpose: the pass, the benchmarks and the tests share it.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_ANALYSIS_COSTMODEL_H
#define SHARDLIN_ANALYSIS_COSTMODEL_H

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace shardlin {

/// Every lowering of a multi-rank linear. The list of strategies itself is
/// strategies() below: everything else (option values, the pass's choice,
/// the patterns registered) reads it.
enum class Strategy {
  /// The reference algorithms: move activations (row-wise: all_to_all +
  /// GEMM + reduce_scatter; col-wise: all_gather + GEMM + all_to_all).
  Activations,
  /// all_gather the weight's chunks, then one local GEMM; no output
  /// communication.
  GatherWeight,
};

/// The name of `s` in strategies().
const char *strategyName(Strategy s);
/// The strategy named `name` in strategies() ("activations",
/// "gather-weight"), or nullopt.
std::optional<Strategy> parseStrategy(const std::string &name);

/// The size of one element of a K split's partial products, which are
/// produced, reduce-scattered and biased in f32 when the elements are f16 or
/// bf16 (2 bytes) and rounded once after the reduction: 4 for 2-byte
/// elements, `elementBytes` otherwise (the lowering's partialSumType).
int64_t partialSumBytes(int64_t elementBytes);

/// How a linear's input or result is spread over the ranks (the dialect's
/// #shardlin.layout, docs/interop.md).
enum class Layout {
  /// Each rank its own rows (a rank-local value; rank r's rows of the
  /// global tensor): the dialect's default.
  Rows,
  /// The same tensor on every rank.
  Replicated,
  /// Each rank all rows, but only the features (last-dim columns) of its
  /// chunk of the weight's split dim.
  Features,
};

struct LinearShape {
  /// B: the input's rows, per rank for a Rows input, in all for a
  /// Replicated or Features one.
  int64_t rows = 0;
  int64_t n = 0, k = 0;
  int64_t dim = 1; // 1 = K split, 0 = N split (whatever the weight's storage)
  std::vector<int64_t> placements;
  int64_t elementBytes = 4;
  /// The chunk boundaries of the split dim; empty: the ceil rule.
  std::vector<int64_t> bounds;
  Layout input = Layout::Rows;
  Layout result = Layout::Rows;
  /// For a Rows result of a Replicated or Features input, how its B rows
  /// are split: placements (empty: rank order) and boundaries (empty: the
  /// ceil rule). For Rows -> Features, the explicit chunks by which the
  /// ranks' rows are gathered, if any (then each rank's rows are its chunk
  /// of rowBounds' total; without them, `rows` on every rank).
  std::vector<int64_t> rowPlacements, rowBounds;
};

/// The machine model. Defaults describe a CPU node with shared memory; the
/// pass exposes each field as an option.
struct MachineModel {
  /// Per collective call and per peer message, in microseconds.
  double latencyUs = 2.0;
  /// Bytes per second each rank can send (and receive) at once, in GB/s.
  double bandwidthGBps = 10.0;
  /// GEMM rate per rank, GFLOP/s.
  double gemmGflops = 100.0;
  /// Whether a rank's collectives run beside its GEMMs without slowing
  /// them (a GPU's copy engines or NICs and its SMs); a CPU rank's
  /// collectives are copies by the same cores.
  bool overlapsComm = false;
};

struct StrategyCost {
  Strategy strategy = Strategy::Activations;
  /// Indexed by rank.
  std::vector<uint64_t> bytesSent;
  std::vector<uint64_t> bytesReceived;
  std::vector<uint64_t> peakExtraBytes;
  /// Number of collective calls.
  int collectives = 0;
  /// Estimated time of the slowest rank, microseconds.
  double estimatedUs = 0.0;

  uint64_t maxBytesSent() const;
  uint64_t maxPeakExtraBytes() const;
};

/// What one rank does under a strategy: the bytes it sends and receives in
/// each collective call, its peak extra memory and its GEMM flops.
struct RankTraffic {
  /// (sent, received) per collective call, in program order.
  std::vector<std::pair<uint64_t, uint64_t>> calls;
  uint64_t peakExtraBytes = 0;
  uint64_t flops = 0;
};

/// One lowering strategy as the cost model sees it. The pass reads the same
/// entries for its option values, its choice and its patterns, so adding a
/// strategy is one entry here plus the pattern(s) that emit it
/// (docs/lowering.md, "Adding a strategy").
struct StrategyInfo {
  Strategy strategy;
  /// As spelled in the `strategy` options and in `shardlin.lowering`.
  const char *name;
  /// One line, for --help.
  const char *description;
  /// The traffic of `rank` (in [0, W)).
  RankTraffic (*rankTraffic)(const LinearShape &shape, int64_t rank);
  /// Whether the strategy can lower a linear of these layouts.
  bool (*applies)(const LinearShape &shape);
};

/// Every strategy, in the order chooseStrategy breaks ties in.
const std::vector<StrategyInfo> &strategies();
/// The entry of `s` in strategies().
const StrategyInfo &strategyInfo(Strategy s);

/// Whether `strategy` can lower a linear of `shape`'s layouts (moving
/// activations lowers every supported pair; gathering the weight needs every
/// rank to hold whole rows of the input: a Rows or Replicated input, and a
/// result that is not split by features).
bool strategyApplies(const LinearShape &shape, Strategy strategy);

/// What an all-reduce of `elements` values of `bytes` each sends and
/// receives on `rank` of `w`: counted as a reduce-scatter followed by an
/// all-gather of the flattened values' chunks by the ceil rule in rank order
/// (the bandwidth-optimal ring's traffic, 2 (W-1)/W of the data for
/// divisible sizes). The runtime counts an all_reduce the same way. Two
/// entries, one per phase.
std::vector<std::pair<uint64_t, uint64_t>>
allReduceTraffic(uint64_t elements, uint64_t bytes, int64_t w, int64_t rank);

/// The cost of `strategy` for `shape` (W = placements.size() >= 2), which
/// must apply to it (strategyApplies).
StrategyCost estimateCost(const LinearShape &shape, Strategy strategy,
                          const MachineModel &machine);

/// The cheapest strategy by estimated time among those that apply and whose
/// peak extra memory fits `memoryCapBytes` (0: no cap); ties go to the
/// strategy listed first in strategies() (Activations). Returns nullopt if
/// none fits.
std::optional<Strategy> chooseStrategy(const LinearShape &shape,
                                       const MachineModel &machine,
                                       uint64_t memoryCapBytes);

/// A block the pass can fuse: col-wise linear(s) x (B x K) -> (B x F) with
/// the weights' F split, rank-local elementwise ops, and a row-wise linear
/// (B x F) -> (B x N) whose K (= F) is split the same way.
struct BlockShape {
  int64_t rows = 0; // B
  int64_t k = 0;    // the col-wise linears' input features
  int64_t f = 0;    // the split features
  int64_t n = 0;    // the row-wise linear's output features
  /// Col-wise linears on the same input (2 for a SwiGLU's gate and up).
  int64_t colLinears = 1;
  std::vector<int64_t> placements;
  int64_t elementBytes = 4;
  /// The chunk boundaries of F; empty: the ceil rule.
  std::vector<int64_t> bounds;
};

/// The fused lowering of a block (Megatron's sequence-parallel MLP):
/// all_gather of x (W*B x K), the col-wise GEMM(s) on the rank's F chunk,
/// the elementwise ops on that (W*B) x f_r block, the row-wise GEMM and a
/// reduce_scatter. Each rank sends (W-1) B K elements in the all_gather
/// and (W-1) B N partial sums (of partialSumBytes) in the reduce_scatter.
/// `strategy` of the result is Activations (the fused form moves
/// activations).
StrategyCost estimateFusedBlockCost(const BlockShape &shape,
                                    const MachineModel &machine);

/// The fewest rows of every rank together (W*B / chunks) a chunk of a
/// pipelined block keeps when the cost model chooses the chunks: smaller
/// GEMMs fall off the machine's rate.
constexpr int64_t kMinOverlapChunkRows = 256;

/// A fused block run in row chunks, each chunk's all_gather and
/// reduce_scatter beside the GEMMs of the chunk before (the runtime's
/// pipeline, docs/runtime.md). For the slowest rank, with c its GEMM time
/// and m its collectives' time (estimateFusedBlockCost's terms), in C
/// chunks the two lanes overlap but for one chunk of the shorter:
///   T(C) = max(c, m) + min(c, m) / C + (C - 1) * 2 * latency * (W - 1)
/// (each chunk adds a call of each collective). T(1) is the sequential
/// estimateFusedBlockCost.
struct OverlapChoice {
  /// 1: in sequence.
  int chunks = 1;
  double sequentialUs = 0, overlappedUs = 0;
};

/// `forced` >= 2 takes that many chunks, 0 or 1 none; -1 lets the model
/// choose among 2, 3, 4, 6 and 8 on a machine that overlapsComm, the
/// cheapest that keeps kMinOverlapChunkRows per chunk and is at least 5%
/// under the sequential estimate (else 1). W = 1 has nothing to overlap.
OverlapChoice chooseOverlapChunks(const BlockShape &shape,
                                  const MachineModel &machine, int forced);

//===----------------------------------------------------------------------===//
// Backward functions (--shardlin-generate-backward, docs/training.md;
// lib/Analysis/BackwardCost.cpp). The same counting rules: what each rank
// sends and receives in each collective call, as the runtime counts it.
//===----------------------------------------------------------------------===//

/// The backward of one linear lowered with `strategy` (W >= 2): the duals of
/// its forward collectives, and, with `recompute`, the forward collective
/// that gives the backward the input it needs again (the gathered x,
/// the exchanged x, or the gathered weight); without, that value was saved
/// by the forward and nothing else moves. Per rank r (own = r's share of the
/// split dim; e = elementBytes, p = partialSumBytes(e)):
///   row-wise activations: all_gather dy (W-1)·B·N·e; all_to_all of dx
///     (W-1)·B·own·e sent, B·(K-own)·e received; recompute: the all_to_all
///     of x; a bias costs nothing (the sum of the gathered dy's rows);
///   col-wise activations: all_to_all of dy B·(N-own)·e sent, (W-1)·B·own·e
///     received; reduce_scatter of dx's partial sums (W-1)·B·K·p; recompute:
///     all_gather of x (W-1)·B·K·e; a bias: all_gather of its chunks,
///     (W-1)·own·p sent, (N-own)·p received;
///   gather-weight: reduce_scatter of the weight's gradient (the f32 sums of
///     every rank's rows for f16/bf16), (S-own)·O·p sent, (W-1)·own·O·p
///     received (S the split dim's size, O the other's); recompute: the
///     weight's all_gather; a bias: all_reduce of N·p, 2·N·(W-1)/W elements
///     (integer division) each way.
StrategyCost estimateBackwardCost(const LinearShape &shape, Strategy strategy,
                                  const MachineModel &machine, bool recompute,
                                  bool bias);

/// The backward of a fused block (estimateFusedBlockCost's shape): an
/// all_gather of dy, (W-1)·B·N·e, and a reduce_scatter of dx's partial sums,
/// (W-1)·B·K·p: 2(W-1)·B·H elements for an H -> F -> H block; with
/// `recompute`, the all_gather of x again, (W-1)·B·K·e; for each of
/// `colBiases` col-wise linears with a bias, an all_gather of its gradient's
/// chunks, (W-1)·f_r·p sent, (F-f_r)·p received. The row-wise bias costs
/// nothing (the sum of the gathered dy's rows).
StrategyCost estimateFusedBlockBackwardCost(const BlockShape &shape,
                                            const MachineModel &machine,
                                            bool recompute,
                                            int64_t colBiases);

} // namespace shardlin

#endif // SHARDLIN_ANALYSIS_COSTMODEL_H
