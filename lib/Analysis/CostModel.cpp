//===- CostModel.cpp - What each lowering of a sharded linear costs -------===//
//
// Byte counts follow the runtime's CommStats rules (Communicator.h): a rank
// "sends" the payload it contributes to other ranks; its own block is a local
// copy. The sizes come from the same ChunkLayout the runtime uses.
//
//===----------------------------------------------------------------------===//

#include "shardlin/Analysis/CostModel.h"

#include "shardlin/runtime/base/ChunkLayout.h"

#include <algorithm>
#include <cstdlib>

namespace shardlin {

int64_t partialSumBytes(int64_t elementBytes) {
  return elementBytes == 2 ? 4 : elementBytes;
}

namespace {

/// The extra memory of a K split's reduction in f32 (f16/bf16): the reduced
/// B x N rows before they are rounded to the result (the widened bias, N
/// elements, is not counted).
uint64_t widenedReductionBytes(uint64_t b, uint64_t n, uint64_t e) {
  const uint64_t p = partialSumBytes(int64_t(e));
  return p == e ? 0 : b * n * p;
}

/// The size of `rank`'s chunk of the weight's split dim.
uint64_t ownSplit(const LinearShape &s, int64_t rank) {
  return rt::ChunkLayout(s.dim == 1 ? s.k : s.n, s.placements, s.bounds)
      .ofRank(rank)
      .size;
}

/// The rows `rank` keeps of a Rows result of a Replicated or Features input
/// (B rows split by rowPlacements and rowBounds).
uint64_t ownRows(const LinearShape &s, int64_t rank) {
  std::vector<int64_t> placements = s.rowPlacements;
  if (placements.empty())
    for (int64_t r = 0; r < static_cast<int64_t>(s.placements.size()); ++r)
      placements.push_back(r);
  return rt::ChunkLayout(s.rows, placements, s.rowBounds).ofRank(rank).size;
}

// Each strategy's traffic for one rank.

/// The reference algorithms on each rank's own rows (the dialect's default
/// layouts).
RankTraffic rowsTraffic(const LinearShape &s, int64_t rank) {
  const uint64_t own = ownSplit(s, rank);
  const uint64_t w = s.placements.size();
  const uint64_t e = s.elementBytes;
  const uint64_t b = s.rows, n = s.n, k = s.k;
  const uint64_t others = (s.dim == 1 ? k : n) - own;
  RankTraffic t;
  if (s.dim == 1) {
    // all_to_all: x[:, K_c(d)] to every other rank d; receive B x k_r from
    // each. reduce_scatter: B x N partial sums (f32 for f16/bf16) to each
    // other rank, and the same back.
    const uint64_t p = partialSumBytes(s.elementBytes);
    t.calls.push_back({b * others * e, (w - 1) * b * own * e});
    t.calls.push_back({(w - 1) * b * n * p, (w - 1) * b * n * p});
    // Stacked inputs (W*B x k_r), partial products (W*B x N), the packed
    // send buffer of the strided K split (B x K), and the f32 sum of
    // f16/bf16 before it is rounded.
    t.peakExtraBytes = (w * b * own + b * k) * e + w * b * n * p +
                       widenedReductionBytes(b, n, e);
    t.flops = 2 * w * b * n * own;
    return t;
  }
  if (s.result == Layout::Features && !s.rowBounds.empty()) {
    // The ranks' rows gathered by explicit row chunks: this rank's r rows
    // to every other, the other S - r rows in; the rank's features of all
    // S rows.
    const uint64_t total = s.rowBounds.back(), r = ownRows(s, rank);
    t.calls.push_back({(w - 1) * r * k * e, (total - r) * k * e});
    t.peakExtraBytes = (total * k + total * own) * e;
    t.flops = 2 * total * k * own;
    return t;
  }
  // all_gather: B x K to every other rank. Then, for a Rows result,
  // all_to_all: B x n_r to every other rank; receive B x n_d from each.
  t.calls.push_back({(w - 1) * b * k * e, (w - 1) * b * k * e});
  if (s.result == Layout::Rows) {
    t.calls.push_back({(w - 1) * b * own * e, b * others * e});
    // Gathered inputs (W*B x K), local products (W*B x n_r), the unpack
    // buffer of the column placement (B x N).
    t.peakExtraBytes = (w * b * k + w * b * own + b * n) * e;
  } else {
    // A Features result is the local product itself.
    t.peakExtraBytes = (w * b * k + w * b * own) * e;
  }
  t.flops = 2 * w * b * k * own;
  return t;
}

/// A K split of an input whose rows every rank holds (Replicated, sliced
/// locally, or Features): one GEMM of partial sums over all B rows, then an
/// all_reduce (Replicated result) or a reduce_scatter of the rows (Rows).
RankTraffic partialSumsTraffic(const LinearShape &s, int64_t rank) {
  const uint64_t own = ownSplit(s, rank);
  const uint64_t w = s.placements.size();
  const uint64_t e = s.elementBytes, p = partialSumBytes(s.elementBytes);
  const uint64_t b = s.rows, n = s.n;
  RankTraffic t;
  // The strided copy of a replicated input's K chunk (local_chunk).
  const uint64_t slice = s.input == Layout::Replicated ? b * own * e : 0;
  if (s.result == Layout::Replicated) {
    t.calls = allReduceTraffic(b * n, p, int64_t(w), rank);
    t.peakExtraBytes = slice + b * n * p + widenedReductionBytes(b, n, e);
  } else {
    const uint64_t r = ownRows(s, rank);
    t.calls.push_back({(b - r) * n * p, (w - 1) * r * n * p});
    t.peakExtraBytes = slice + b * n * p + widenedReductionBytes(r, n, e);
  }
  t.flops = 2 * b * n * own;
  return t;
}

/// An N split of a replicated input: one local GEMM of the rank's features
/// of all B rows; nothing more for a Features result, an all_gather of the
/// features for a Replicated one, an all_to_all to each rank its rows for
/// a Rows one.
RankTraffic localFeaturesTraffic(const LinearShape &s, int64_t rank) {
  const uint64_t own = ownSplit(s, rank);
  const uint64_t w = s.placements.size();
  const uint64_t e = s.elementBytes;
  const uint64_t b = s.rows, n = s.n, k = s.k;
  RankTraffic t;
  t.peakExtraBytes = b * own * e;
  if (s.result == Layout::Replicated) {
    t.calls.push_back({(w - 1) * b * own * e, b * (n - own) * e});
    t.peakExtraBytes += b * n * e; // the unpack buffer of the columns
  } else if (s.result == Layout::Rows) {
    const uint64_t r = ownRows(s, rank);
    t.calls.push_back({(b - r) * own * e, r * (n - own) * e});
    t.peakExtraBytes += r * n * e;
  }
  t.flops = 2 * b * k * own;
  return t;
}

RankTraffic activationsTraffic(const LinearShape &s, int64_t rank) {
  if (s.input == Layout::Rows)
    return rowsTraffic(s, rank);
  if (s.dim == 1)
    return partialSumsTraffic(s, rank);
  return localFeaturesTraffic(s, rank);
}

bool activationsApplies(const LinearShape &) { return true; }

RankTraffic gatherWeightTraffic(const LinearShape &s, int64_t rank) {
  const uint64_t own = ownSplit(s, rank);
  const uint64_t w = s.placements.size();
  const uint64_t e = s.elementBytes;
  const uint64_t n = s.n, k = s.k;
  const uint64_t others = (s.dim == 1 ? k : n) - own;
  // The rows this rank computes: its own, all of a replicated input for a
  // replicated result, or its chunk of them for a Rows result.
  const uint64_t b = (s.input == Layout::Replicated && s.result == Layout::Rows)
                         ? ownRows(s, rank)
                         : uint64_t(s.rows);
  RankTraffic t;
  // all_gather of the weight's chunks: this rank's chunk to every other.
  const uint64_t chunk = own * (s.dim == 1 ? n : k);
  const uint64_t rest = others * (s.dim == 1 ? n : k);
  t.calls.push_back({(w - 1) * chunk * e, rest * e});
  // The full weight, plus a staging copy when chunks are columns.
  t.peakExtraBytes = n * k * e * (s.dim == 1 ? 2 : 1);
  t.flops = 2 * b * n * k;
  return t;
}

bool gatherWeightApplies(const LinearShape &s) {
  return s.input != Layout::Features && s.result != Layout::Features;
}

} // namespace

const std::vector<StrategyInfo> &strategies() {
  static const std::vector<StrategyInfo> table = {
      {Strategy::Activations, "activations",
       "move activations: all_to_all + GEMM + reduce_scatter (row-wise) or "
       "all_gather + GEMM + all_to_all (col-wise)",
       activationsTraffic, activationsApplies},
      {Strategy::GatherWeight, "gather-weight",
       "all_gather the weight's chunks, then one local GEMM",
       gatherWeightTraffic, gatherWeightApplies},
  };
  return table;
}

const StrategyInfo &strategyInfo(Strategy s) {
  for (const StrategyInfo &info : strategies())
    if (info.strategy == s)
      return info;
  // Every enumerator has an entry: a missing one is a bug in this file.
  std::abort();
}

const char *strategyName(Strategy s) { return strategyInfo(s).name; }

std::optional<Strategy> parseStrategy(const std::string &name) {
  for (const StrategyInfo &info : strategies())
    if (name == info.name)
      return info.strategy;
  return std::nullopt;
}

uint64_t StrategyCost::maxBytesSent() const {
  return bytesSent.empty() ? 0
                           : *std::max_element(bytesSent.begin(),
                                               bytesSent.end());
}

uint64_t StrategyCost::maxPeakExtraBytes() const {
  return peakExtraBytes.empty()
             ? 0
             : *std::max_element(peakExtraBytes.begin(), peakExtraBytes.end());
}

bool strategyApplies(const LinearShape &shape, Strategy strategy) {
  return strategyInfo(strategy).applies(shape);
}

std::vector<std::pair<uint64_t, uint64_t>>
allReduceTraffic(uint64_t elements, uint64_t bytes, int64_t w, int64_t rank) {
  std::vector<int64_t> identity(w);
  for (int64_t r = 0; r < w; ++r)
    identity[r] = r;
  const uint64_t mine =
      rt::ChunkLayout(int64_t(elements), identity).ofRank(rank).size;
  const uint64_t uw = w;
  // Reduce-scatter: every other rank's chunk out, (W-1) of this rank's
  // chunk in; all-gather: the reduced chunk out to W-1 ranks, the rest in.
  return {{(elements - mine) * bytes, (uw - 1) * mine * bytes},
          {(uw - 1) * mine * bytes, (elements - mine) * bytes}};
}

StrategyCost estimateCost(const LinearShape &s, Strategy strategy,
                          const MachineModel &m) {
  const int64_t w = static_cast<int64_t>(s.placements.size());
  const StrategyInfo &info = strategyInfo(strategy);

  StrategyCost c;
  c.strategy = strategy;
  c.bytesSent.resize(w);
  c.bytesReceived.resize(w);
  c.peakExtraBytes.resize(w);
  const double bytesPerUs = m.bandwidthGBps * 1e3; // GB/s = 1e3 bytes/us
  double worstUs = 0.0;

  for (int64_t r = 0; r < w; ++r) {
    RankTraffic t = info.rankTraffic(s, r);
    uint64_t sent = 0, received = 0;
    double us = t.flops / (m.gemmGflops * 1e3); // GFLOP/s = 1e3 flop/us
    // Each collective call is charged its own latency and transfer time.
    for (auto [out, in] : t.calls) {
      sent += out;
      received += in;
      us += m.latencyUs * (w - 1) +
            static_cast<double>(std::max(out, in)) / bytesPerUs;
    }
    c.bytesSent[r] = sent;
    c.bytesReceived[r] = received;
    c.peakExtraBytes[r] = t.peakExtraBytes;
    c.collectives = static_cast<int>(t.calls.size());
    worstUs = std::max(worstUs, us);
  }
  c.estimatedUs = worstUs;
  return c;
}

std::optional<Strategy> chooseStrategy(const LinearShape &shape,
                                       const MachineModel &machine,
                                       uint64_t memoryCapBytes) {
  std::optional<Strategy> best;
  double bestUs = 0.0;
  for (const StrategyInfo &info : strategies()) {
    if (!info.applies(shape))
      continue;
    StrategyCost c = estimateCost(shape, info.strategy, machine);
    if (memoryCapBytes != 0 && c.maxPeakExtraBytes() > memoryCapBytes)
      continue;
    if (!best || c.estimatedUs < bestUs) {
      best = info.strategy;
      bestUs = c.estimatedUs;
    }
  }
  return best;
}

namespace {

/// Each rank's GEMM and collective times of the fused block, in us.
void fusedBlockTimes(const BlockShape &s, const MachineModel &m, int64_t r,
                     double &gemmUs, double &commUs) {
  const int64_t w = static_cast<int64_t>(s.placements.size());
  rt::ChunkLayout layout(s.f, s.placements, s.bounds);
  const uint64_t e = s.elementBytes;
  const uint64_t p = partialSumBytes(s.elementBytes);
  const uint64_t b = s.rows, k = s.k, n = s.n, uw = w;
  const uint64_t own = layout.ofRank(r).size;
  const double flops = 2.0 * uw * b * own * (s.colLinears * k + n);
  gemmUs = flops / (m.gemmGflops * 1e3);
  commUs = 2 * m.latencyUs * (w - 1) +
           static_cast<double>((uw - 1) * b * (k * e + n * p)) /
               (m.bandwidthGBps * 1e3);
}

/// T(C) of chooseOverlapChunks for the slowest rank.
double overlappedUs(const BlockShape &s, const MachineModel &m, int chunks) {
  const int64_t w = static_cast<int64_t>(s.placements.size());
  double worst = 0;
  for (int64_t r = 0; r < w; ++r) {
    double c = 0, comm = 0;
    fusedBlockTimes(s, m, r, c, comm);
    worst = std::max(worst, std::max(c, comm) + std::min(c, comm) / chunks +
                                (chunks - 1) * 2 * m.latencyUs * (w - 1));
  }
  return worst;
}

} // namespace

OverlapChoice chooseOverlapChunks(const BlockShape &s, const MachineModel &m,
                                  int forced) {
  OverlapChoice c;
  c.sequentialUs = overlappedUs(s, m, 1);
  c.overlappedUs = c.sequentialUs;
  const int64_t w = static_cast<int64_t>(s.placements.size());
  if (w < 2 || forced == 0 || forced == 1)
    return c;
  if (forced >= 2) {
    c.chunks = forced;
    c.overlappedUs = overlappedUs(s, m, forced);
    return c;
  }
  if (!m.overlapsComm)
    return c;
  for (int chunks : {2, 3, 4, 6, 8}) {
    if (w * s.rows / chunks < kMinOverlapChunkRows)
      break;
    const double us = overlappedUs(s, m, chunks);
    if (us < 0.95 * c.sequentialUs && us < c.overlappedUs) {
      c.chunks = chunks;
      c.overlappedUs = us;
    }
  }
  return c;
}

StrategyCost estimateFusedBlockCost(const BlockShape &s,
                                    const MachineModel &m) {
  const int64_t w = static_cast<int64_t>(s.placements.size());
  rt::ChunkLayout layout(s.f, s.placements, s.bounds);
  const uint64_t e = s.elementBytes;
  const uint64_t p = partialSumBytes(s.elementBytes);
  const uint64_t b = s.rows, k = s.k, n = s.n, uw = w;
  StrategyCost c;
  c.strategy = Strategy::Activations;
  c.bytesSent.resize(w);
  c.bytesReceived.resize(w);
  c.peakExtraBytes.resize(w);
  c.collectives = 2;
  double worstUs = 0.0;
  for (int64_t r = 0; r < w; ++r) {
    const uint64_t own = layout.ofRank(r).size;
    // all_gather: B x K to every other rank, and the same from each;
    // reduce_scatter: B x N partial sums (f32 for f16/bf16) to every other
    // rank, and back.
    const uint64_t gather = (uw - 1) * b * k * e;
    const uint64_t scatter = (uw - 1) * b * n * p;
    c.bytesSent[r] = gather + scatter;
    c.bytesReceived[r] = gather + scatter;
    // The gathered rows (W*B x K), each col-wise product and the
    // elementwise result (W*B x f_r), the partial products (W*B x N), the
    // f32 sum of f16/bf16 before it is rounded.
    c.peakExtraBytes[r] =
        (uw * b * k + (s.colLinears + 1) * uw * b * own) * e + uw * b * n * p +
        widenedReductionBytes(b, n, e);
    double gemmUs = 0, commUs = 0;
    fusedBlockTimes(s, m, r, gemmUs, commUs);
    worstUs = std::max(worstUs, gemmUs + commUs);
  }
  c.estimatedUs = worstUs;
  return c;
}

} // namespace shardlin
