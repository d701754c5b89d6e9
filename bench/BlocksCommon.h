//===- BlocksCommon.h - What the blocks' forward and backward rows share -*- C++
//-*-===//
//
// The shapes, lowerings and PyTorch launcher of the blocks section, shared by
// its forward rows (BlocksBench.cpp) and its backward and training-step rows
// (BackwardBench.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_BENCH_BLOCKSCOMMON_H
#define SHARDLIN_BENCH_BLOCKSCOMMON_H

#include "BenchCommon.h"
#include "BenchOptions.h"

#include "BlockTesting.h"

#include <cstdint>
#include <functional>
#include <istream>
#include <string>
#include <tuple>
#include <vector>

namespace shardlin::bench {

double medianOf(std::vector<double> v);

/// One lowering of the block.
struct BlockVariant {
  const char *name;
  const char *strategy;
  bool fuse;
};
constexpr BlockVariant kBlockVariants[] = {
    {"fused", "activations", true},
    {"unfused", "activations", false},
    {"gather-weight", "gather-weight", true}};
constexpr int kNumBlockVariants = 3;

/// One shape of the section.
struct BlockCase {
  testkit::BlockKind kind = testkit::BlockKind::Mlp;
  int w = 2;
  int64_t h = 0, f = 0, rows = 0;

  testkit::BlockSpec spec(const BlockVariant &v) const;
  /// Per rank and run of the forward: 2 W B H F per col-wise linear and as
  /// much for the row-wise one, over W ranks.
  double flopsPerRank() const;
  /// Whether the float64 reference is cheap enough (~2^28 multiply-adds per
  /// rank) to check every row.
  bool cheapReference() const { return flopsPerRank() / 2 <= double(1 << 28); }
  std::string label() const;
};

/// The section's shapes: W x kind x H x B of the options.
std::vector<BlockCase> blockCases(const Options &o);

/// "12%", or "-" for a negative share.
std::string pct(double v);

using TorchKey = std::tuple<int, int, int64_t, int64_t>; // kind, W, H, B
inline TorchKey torchKey(const BlockCase &c) {
  return {int(c.kind), c.w, c.h, c.rows};
}

/// Runs bench/torch_blocks.py<extraArgs> once per W of the cases (the
/// shapes of that W) and hands each "result KIND H F B ..." line to
/// `onResult` with its key, the stream at the figures after B. Returns ""
/// or, when it could not run (or --no-torch), "skipped: ..."; `version` is
/// torch's.
std::string runTorchBlocks(
    const Options &o, const std::vector<BlockCase> &cases,
    const std::string &extraArgs,
    const std::function<void(const TorchKey &, std::istream &)> &onResult,
    std::string &version);

/// The backward and training-step rows of the blocks section
/// (BackwardBench.cpp), on the threads backend, after the forward rows.
void runBlocksBackward(const Options &o, const std::vector<BlockCase> &cases,
                       int rounds, bool &failed);

} // namespace shardlin::bench

#endif // SHARDLIN_BENCH_BLOCKSCOMMON_H
