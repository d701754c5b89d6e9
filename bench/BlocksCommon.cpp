//===- BlocksCommon.cpp - What the blocks' forward and backward rows share ===//
//
// BlocksCommon.h: the shapes and the DTensor launcher of the blocks section.
//
//===----------------------------------------------------------------------===//

#include "BlocksCommon.h"

#include <algorithm>

namespace shardlin::bench {

using testkit::BlockKind;

double medianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0.0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

namespace {
/// The FFN width of a block: 4H for the MLP; for the SwiGLU 8H/3 rounded up
/// to a multiple of 64 (LLaMA's `multiple_of` rule).
int64_t ffnWidth(BlockKind kind, int64_t h) {
  if (kind == BlockKind::Mlp)
    return 4 * h;
  return (8 * h / 3 + 63) / 64 * 64;
}
} // namespace

testkit::BlockSpec BlockCase::spec(const BlockVariant &v) const {
  testkit::BlockSpec s;
  s.kind = kind;
  s.activation = testkit::Activation::GeluTanh; // the MLP's; SwiGLU: SiLU
  s.form = testkit::OpForm::Arith;
  s.h = h;
  s.f = f;
  s.batch = {rows};
  s.placements.resize(w);
  for (int r = 0; r < w; ++r)
    s.placements[r] = r;
  s.dtype = rt::DType::F32;
  s.strategy = v.strategy;
  s.fuse = v.fuse;
  return s;
}

double BlockCase::flopsPerRank() const {
  const int lin = kind == BlockKind::SwiGlu ? 2 : 1;
  return 2.0 * rows * h * f * (lin + 1);
}

std::string BlockCase::label() const {
  return std::string(testkit::blockKindName(kind)) + " W" + std::to_string(w) +
         " H" + std::to_string(h) + " F" + std::to_string(f) + " B" +
         std::to_string(rows);
}

std::vector<BlockCase> blockCases(const Options &o) {
  std::vector<BlockCase> cases;
  for (int w : o.blockWorldSizes)
    for (BlockKind kind : {BlockKind::Mlp, BlockKind::SwiGlu})
      for (int64_t h : o.blockHidden)
        for (int64_t b : o.blockRows) {
          // The default mode leaves out the largest products (H >= 2048 with
          // B = 2048: seconds per run on 2 cores); --full runs them.
          if (o.mode == "default" && h >= 2048 && b >= 2048 &&
              !o.blockShapesGiven)
            continue;
          BlockCase c;
          c.kind = kind;
          c.w = w;
          c.h = h;
          c.f = ffnWidth(kind, h);
          c.rows = b;
          cases.push_back(c);
        }
  return cases;
}

std::string pct(double v) { return v < 0 ? "-" : fmt("%.0f%%", 100 * v); }

std::string runTorchBlocks(
    const Options &o, const std::vector<BlockCase> &cases,
    const std::string &extraArgs,
    const std::function<void(const TorchKey &, std::istream &)> &onResult,
    std::string &version) {
  if (!o.torch)
    return "skipped: --no-torch";
  for (int w : o.blockWorldSizes) {
    std::string list;
    for (const BlockCase &c : cases)
      if (c.w == w)
        list += (list.empty() ? "" : ";") +
                std::string(testkit::blockKindName(c.kind)) + "," +
                std::to_string(c.h) + "," + std::to_string(c.f) + "," +
                std::to_string(c.rows);
    if (list.empty())
      continue;
    PeerRun peer =
        runTorchPeer(o.python, o.scriptsDir + "/torch_blocks.py",
                     " --world-size=" + std::to_string(w) + extraArgs, o.timing,
                     list, [&](std::istream &ls) {
                       std::string kind;
                       int64_t h, f, b;
                       ls >> kind >> h >> f >> b;
                       int k = kind == "swiglu" ? int(BlockKind::SwiGlu)
                                                : int(BlockKind::Mlp);
                       onResult(TorchKey{k, w, h, b}, ls);
                     });
    version = peer.version;
    if (!peer.available)
      return peer.message;
  }
  return "";
}

} // namespace shardlin::bench
