//===- BlocksTable.cpp - The blocks section's table ------------------------===//
//
// The forward rows of the blocks section (BlocksBench.cpp) as a table: per
// shape and backend, the three lowerings' times, the communication shares,
// the bytes per rank against the cost model, the check against the float64
// reference and DTensor's time; then the section's summary.
//
//===----------------------------------------------------------------------===//

#include "BlocksRows.h"

#include "BenchCommon.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace shardlin::bench {

void printBlocksTable(const std::vector<BlockRow> &rows, bool quick,
                      const std::string &torchMessage,
                      const std::string &torchVersion) {
  std::printf("%-8s %-7s %2s %5s %5s %5s | %10s %10s %10s | %7s %6s %6s | "
              "%10s %10s %10s | %6s | %10s %7s\n",
              "block", "backend", "W", "H", "F", "B", "fused ms", "unfused ms", "gw ms",
              "fus/unf", "comm%u", "comm%f", "fused B/rk", "unfused", "gw",
              "check", "DTensor ms", "fus/DT");
  int metSpeed = 0, wantSpeed = 0, fasterThanTorch = 0, torchShapes = 0;
  double logTorch = 0, torchError = 0;
  for (const BlockRow &row : rows) {
    const BlockCase &c = row.c;
    if (!row.error.empty() && row.v[0].medians.empty())
      continue;
    double t[kNumBlockVariants];
    for (int i = 0; i < kNumBlockVariants; ++i)
      t[i] = medianOf(row.v[i].medians);
    const double ratio = t[1] > 0 ? t[0] / t[1] : 0;
    const double commU =
        row.v[1].commShare.empty() ? -1 : row.v[1].commShare[0];
    const double commF =
        row.v[0].commShare.empty() ? -1 : row.v[0].commShare[0];
    std::string bytes[kNumBlockVariants];
    int64_t failures = 0;
    for (int i = 0; i < kNumBlockVariants; ++i) {
      const VariantResult &v = row.v[i];
      uint64_t mx = v.bytes.empty()
                        ? 0
                        : *std::max_element(v.bytes.begin(), v.bytes.end());
      bytes[i] = humanBytes(double(mx)) + (v.bytesMatch ? "" : "!");
      failures += v.checkFailures;
    }
    std::string check = failures ? "FAIL" : row.fullCheck ? "all" : "3 rows";
    std::string torchMs = "-", torchRatio = "-";
    if (row.haveTorch) {
      torchMs = fmt("%.3f", 1e3 * row.torch.median);
      const double r = t[0] / row.torch.median;
      torchRatio = fmt("%.2fx", r);
      ++torchShapes;
      fasterThanTorch += r < 1.0;
      logTorch += std::log(r);
      torchError = std::max(torchError, row.torch.maxError);
    }
    if (commU >= 0.2) {
      ++wantSpeed;
      metSpeed += ratio <= 0.8;
    }
    std::printf("%-8s %-7s %2d %5lld %5lld %5lld | %10.3f %10.3f %10.3f | "
                "%6.2fx %6s %6s | %10s %10s %10s | %6s | %10s %7s\n",
                testkit::blockKindName(c.kind), row.backend.c_str(), c.w,
                (long long)c.h,
                (long long)c.f, (long long)c.rows, 1e3 * t[0], 1e3 * t[1],
                1e3 * t[2], ratio, pct(commU).c_str(), pct(commF).c_str(),
                bytes[0].c_str(), bytes[1].c_str(), bytes[2].c_str(),
                check.c_str(), torchMs.c_str(), torchRatio.c_str());
    for (int i = 0; i < kNumBlockVariants; ++i) {
      const VariantResult &v = row.v[i];
      if (!v.bytesMatch) {
        std::printf("  MISMATCH %s %s %s: bytes per rank measured",
                    c.label().c_str(), row.backend.c_str(),
                    kBlockVariants[i].name);
        for (uint64_t b : v.bytes)
          std::printf(" %llu", (unsigned long long)b);
        std::printf(", predicted");
        for (uint64_t b : v.predicted)
          std::printf(" %llu", (unsigned long long)b);
        std::printf("%s\n", v.consistent ? "" : " (inconsistent over trials)");
      }
      if (v.checkFailures)
        std::printf("  WRONG OUTPUT %s %s %s: %lld elements\n%s",
                    c.label().c_str(), row.backend.c_str(),
                    kBlockVariants[i].name, (long long)v.checkFailures,
                    v.report.c_str());
    }
  }
  std::printf("bytes: per rank and run, max over ranks, measured by the "
              "communicator ('!' = differs from the cost model); fused = "
              "2(W-1)*B*H*4 exactly. comm%%u / comm%%f: share of the unfused "
              "/ fused time inside collectives. check: outputs against the "
              "float64 reference (all rows, or rows 0, B/2, B-1 of every "
              "rank).\n");
  std::printf("target fused <= 0.8x unfused where comm >= 20%% of unfused: "
              "met at %d of %d such shapes%s\n",
              metSpeed, wantSpeed, quick ? " (smoke: not a measurement)" : "");
  if (!torchMessage.empty())
    std::printf("DTensor: %s\n", torchMessage.c_str());
  else if (torchShapes)
    std::printf("DTensor (torch %s, gloo, W processes x 1 thread): fused "
                "shardlin faster at %d of %d shapes, geometric mean %.2fx; "
                "DTensor's outputs within %.2g of the unsharded module's "
                "(max |diff| / max |y|)\n",
                torchVersion.c_str(), fasterThanTorch, torchShapes,
                std::exp(logTorch / torchShapes), torchError);
}

} // namespace shardlin::bench
