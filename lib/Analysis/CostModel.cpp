//===- CostModel.cpp - What each lowering of a sharded linear costs -------===//
//
// Byte counts follow the runtime's CommStats rules (Communicator.h): a rank
// "sends" the payload it contributes to other ranks; its own block is a local
// copy. The sizes come from the same ChunkLayout the runtime uses.
//
//===----------------------------------------------------------------------===//

#include "shardlin/Analysis/CostModel.h"

#include "shardlin/runtime/ChunkLayout.h"

#include <algorithm>

namespace shardlin {

const char *strategyName(Strategy s) {
  return s == Strategy::Activations ? "activations" : "gather-weight";
}

std::optional<Strategy> parseStrategy(const std::string &name) {
  if (name == "activations")
    return Strategy::Activations;
  if (name == "gather-weight")
    return Strategy::GatherWeight;
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

StrategyCost estimateCost(const LinearShape &s, Strategy strategy,
                          const MachineModel &m) {
  const int64_t w = static_cast<int64_t>(s.placements.size());
  const uint64_t e = s.elementBytes;
  const uint64_t b = s.rows, n = s.n, k = s.k;
  // The split dim's size and each rank's share of it.
  const int64_t splitSize = s.dim == 1 ? s.k : s.n;
  rt::ChunkLayout layout(splitSize, s.placements);

  StrategyCost c;
  c.strategy = strategy;
  c.bytesSent.resize(w);
  c.bytesReceived.resize(w);
  c.peakExtraBytes.resize(w);
  const double bytesPerUs = m.bandwidthGBps * 1e3; // GB/s = 1e3 bytes/us
  double worstUs = 0.0;

  for (int64_t r = 0; r < w; ++r) {
    const uint64_t own = layout.ofRank(r).size; // k_r or n_r
    const uint64_t others = splitSize - own;
    uint64_t sent = 0, received = 0, extra = 0;
    // Per-collective (sent, received) pairs, to charge each its own time.
    std::vector<std::pair<uint64_t, uint64_t>> calls;
    uint64_t flops = 0;
    if (strategy == Strategy::Activations && s.dim == 1) {
      // all_to_all: x[:, K_c(d)] to every other rank d; receive B x k_r from
      // each. reduce_scatter: B x N to each other rank, and the same back.
      calls.push_back({b * others * e, (w - 1) * b * own * e});
      calls.push_back({(w - 1) * b * n * e, (w - 1) * b * n * e});
      // Stacked inputs (W*B x k_r), partial products (W*B x N), and the
      // packed send buffer of the strided K split (B x K).
      extra = (w * b * own + w * b * n + b * k) * e;
      flops = 2 * w * b * n * own;
    } else if (strategy == Strategy::Activations) {
      // all_gather: B x K to every other rank. all_to_all: B x n_r to every
      // other rank; receive B x n_d from each.
      calls.push_back({(w - 1) * b * k * e, (w - 1) * b * k * e});
      calls.push_back({(w - 1) * b * own * e, b * others * e});
      // Gathered inputs (W*B x K), local products (W*B x n_r), the unpack
      // buffer of the column placement (B x N).
      extra = (w * b * k + w * b * own + b * n) * e;
      flops = 2 * w * b * k * own;
    } else {
      // all_gather of the weight's chunks: this rank's chunk to every other.
      const uint64_t chunk = own * (s.dim == 1 ? n : k);
      const uint64_t rest = others * (s.dim == 1 ? n : k);
      calls.push_back({(w - 1) * chunk * e, rest * e});
      // The full weight, plus a staging copy when chunks are columns.
      extra = n * k * e * (s.dim == 1 ? 2 : 1);
      flops = 2 * b * n * k;
    }
    double us = flops / (m.gemmGflops * 1e3); // GFLOP/s = 1e3 flop/us
    for (auto [out, in] : calls) {
      sent += out;
      received += in;
      us += m.latencyUs * (w - 1) +
            static_cast<double>(std::max(out, in)) / bytesPerUs;
    }
    c.bytesSent[r] = sent;
    c.bytesReceived[r] = received;
    c.peakExtraBytes[r] = extra;
    c.collectives = static_cast<int>(calls.size());
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
  for (Strategy s : {Strategy::Activations, Strategy::GatherWeight}) {
    StrategyCost c = estimateCost(shape, s, machine);
    if (memoryCapBytes != 0 && c.maxPeakExtraBytes() > memoryCapBytes)
      continue;
    if (!best || c.estimatedUs < bestUs) {
      best = s;
      bestUs = c.estimatedUs;
    }
  }
  return best;
}

} // namespace shardlin
