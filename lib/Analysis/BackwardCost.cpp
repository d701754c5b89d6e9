//===- BackwardCost.cpp - What backward functions cost --------------------===//
//
// The traffic of the backward functions --shardlin-generate-backward emits,
// per rank, by the rules of CostModel.cpp (the runtime's CommStats): the
// lit tests show the programs, and the backward numeric test
// (test/Unit/BackwardNumericTest.cpp) checks every rank's bytes of those
// programs against these functions.
//
//===----------------------------------------------------------------------===//

#include "shardlin/Analysis/CostModel.h"

#include "shardlin/runtime/base/ChunkLayout.h"

#include <algorithm>
#include <functional>

namespace shardlin {

namespace {

/// A StrategyCost from each rank's traffic (`traffic(r, own)`, own = r's
/// share of `splitSize` under `placements`), timed as estimateCost does.
StrategyCost costOf(Strategy strategy, int64_t splitSize,
                    const std::vector<int64_t> &placements,
                    const MachineModel &m,
                    const std::function<RankTraffic(uint64_t own)> &traffic) {
  const int64_t w = static_cast<int64_t>(placements.size());
  rt::ChunkLayout layout(splitSize, placements);
  StrategyCost c;
  c.strategy = strategy;
  c.bytesSent.resize(w);
  c.bytesReceived.resize(w);
  c.peakExtraBytes.resize(w);
  const double bytesPerUs = m.bandwidthGBps * 1e3;
  double worstUs = 0.0;
  for (int64_t r = 0; r < w; ++r) {
    RankTraffic t = traffic(layout.ofRank(r).size);
    double us = t.flops / (m.gemmGflops * 1e3);
    for (auto [out, in] : t.calls) {
      c.bytesSent[r] += out;
      c.bytesReceived[r] += in;
      us += m.latencyUs * (w - 1) +
            static_cast<double>(std::max(out, in)) / bytesPerUs;
    }
    c.peakExtraBytes[r] = t.peakExtraBytes;
    c.collectives = static_cast<int>(t.calls.size());
    worstUs = std::max(worstUs, us);
  }
  c.estimatedUs = worstUs;
  return c;
}

} // namespace

StrategyCost estimateBackwardCost(const LinearShape &s, Strategy strategy,
                                  const MachineModel &machine, bool recompute,
                                  bool bias) {
  const uint64_t w = s.placements.size();
  const uint64_t e = s.elementBytes, p = partialSumBytes(s.elementBytes);
  const uint64_t b = s.rows, n = s.n, k = s.k;
  const int64_t splitSize = s.dim == 1 ? s.k : s.n;
  auto traffic = [&](uint64_t own) {
    RankTraffic t;
    if (strategy == Strategy::GatherWeight) {
      const uint64_t split = splitSize, other = s.dim == 1 ? n : k;
      if (recompute)
        t.calls.push_back(
            {(w - 1) * own * other * e, (split - own) * other * e});
      t.calls.push_back({(split - own) * other * p, (w - 1) * own * other * p});
      if (bias) {
        const uint64_t reduced = 2 * n * (w - 1) / w * p;
        t.calls.push_back({reduced, reduced});
      }
      // The gathered weight, and its gradient's every-row sum.
      t.peakExtraBytes = n * k * (e + p);
      t.flops = 4 * b * n * k;
      return t;
    }
    if (s.dim == 1) {
      // Row-wise: the exchanged x again, the gathered dy, dx's exchange.
      if (recompute)
        t.calls.push_back({b * (k - own) * e, (w - 1) * b * own * e});
      t.calls.push_back({(w - 1) * b * n * e, (w - 1) * b * n * e});
      t.calls.push_back({(w - 1) * b * own * e, b * (k - own) * e});
      t.peakExtraBytes = (w * b * n + 2 * w * b * own) * e;
      t.flops = 4 * w * b * n * own;
      return t;
    }
    // Col-wise: the gathered x again, dy's exchange, dx's partial sums, the
    // bias's chunks.
    if (recompute)
      t.calls.push_back({(w - 1) * b * k * e, (w - 1) * b * k * e});
    t.calls.push_back({b * (n - own) * e, (w - 1) * b * own * e});
    t.calls.push_back({(w - 1) * b * k * p, (w - 1) * b * k * p});
    if (bias)
      t.calls.push_back({(w - 1) * own * p, (n - own) * p});
    t.peakExtraBytes = w * b * own * e + w * b * k * (e + p);
    t.flops = 4 * w * b * k * own;
    return t;
  };
  return costOf(strategy, splitSize, s.placements, machine, traffic);
}

StrategyCost estimateFusedBlockBackwardCost(const BlockShape &s,
                                            const MachineModel &machine,
                                            bool recompute, int64_t colBiases) {
  const uint64_t w = s.placements.size();
  const uint64_t e = s.elementBytes, p = partialSumBytes(s.elementBytes);
  const uint64_t b = s.rows, k = s.k, n = s.n, f = s.f;
  const uint64_t cols = s.colLinears;
  auto traffic = [&](uint64_t own) {
    RankTraffic t;
    if (recompute)
      t.calls.push_back({(w - 1) * b * k * e, (w - 1) * b * k * e});
    t.calls.push_back({(w - 1) * b * n * e, (w - 1) * b * n * e});
    t.calls.push_back({(w - 1) * b * k * p, (w - 1) * b * k * p});
    for (int64_t i = 0; i < colBiases; ++i)
      t.calls.push_back({(w - 1) * own * p, (f - own) * p});
    // The gathered dy, dE and each dH, dx's partial sums; recomputed, the
    // gathered x, each H and E too.
    t.peakExtraBytes =
        (w * b * n + (cols + 1) * w * b * own) * e + w * b * k * p +
        (recompute ? (w * b * k + (cols + 1) * w * b * own) * e : 0);
    t.flops = 4 * w * b * own * (cols * k + n) +
              (recompute ? 2 * w * b * own * cols * k : 0);
    return t;
  };
  StrategyCost c =
      costOf(Strategy::Activations, s.f, s.placements, machine, traffic);
  return c;
}

} // namespace shardlin
