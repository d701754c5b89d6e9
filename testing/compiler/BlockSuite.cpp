//===- BlockSuite.cpp - The blocks' test suite and their expected bytes ---===//
//
// blockSuite (the configurations the block tests and the bench run: every
// kind, activation and op form, fused and not, uneven, empty and permuted
// chunks, every dtype) and the bytes each rank is expected to send for a
// block (expectedBlockBytes, from the cost model: the fused block's or each
// linear's under the strategy the pass applies, less the gather of x that
// the col-wise linears of an unfused block share). Split from
// BlockTesting.cpp, which writes, compiles and runs the blocks.
//
//===----------------------------------------------------------------------===//

#include "BlockTesting.h"

#include "LinearTesting.h"

#include "shardlin/Analysis/CostModel.h"

#include <algorithm>
#include <optional>
#include <utility>

namespace shardlin::testkit {

namespace {

/// The bytes rank `rank` sends for one linear of the block under the
/// strategy the pass applies to it.
uint64_t linearBytes(const BlockSpec &spec, int64_t n, int64_t k, int64_t dim,
                     const std::vector<int64_t> &placements, int rank) {
  if (placements.size() < 2)
    return 0;
  LinearShape shape;
  shape.rows = spec.rows();
  shape.n = n;
  shape.k = k;
  shape.dim = dim;
  shape.placements = placements;
  shape.elementBytes = static_cast<int64_t>(rt::dtypeSize(spec.dtype));
  std::optional<Strategy> strategy = parseStrategy(spec.strategy);
  if (!strategy)
    strategy = chooseStrategy(shape, MachineModel(), 0);
  if (!strategy)
    return ~uint64_t(0);
  return estimateCost(shape, *strategy, MachineModel()).bytesSent[rank];
}

/// The bytes each rank does not send because the col-wise linears of an
/// unfused block (a SwiGLU's gate and up) that move activations gather
/// their one x once: --lower-sharded-linear merges identical collectives
/// (SimplifyCollectives.cpp). Each such gather sends the rank's rows (as
/// many on every rank) to the W - 1 others.
uint64_t sharedGatherBytes(const BlockSpec &spec) {
  const int w = spec.worldSize();
  if (spec.colLinears() < 2 || w < 2)
    return 0;
  LinearShape col{spec.rows(), spec.f, spec.h, 0, spec.placements,
                  static_cast<int64_t>(rt::dtypeSize(spec.dtype))};
  std::optional<Strategy> strategy = parseStrategy(spec.strategy);
  if (!strategy)
    strategy = chooseStrategy(col, MachineModel(), 0);
  if (strategy != Strategy::Activations)
    return 0;
  return uint64_t(spec.colLinears() - 1) * uint64_t(w - 1) *
         uint64_t(spec.rows()) * uint64_t(spec.h) *
         uint64_t(rt::dtypeSize(spec.dtype));
}

::shardlin::BlockShape blockShape(const BlockSpec &spec) {
  ::shardlin::BlockShape shape;
  shape.rows = spec.rows();
  shape.k = spec.h;
  shape.f = spec.f;
  shape.n = spec.h;
  shape.colLinears = spec.colLinears();
  shape.placements = spec.placements;
  shape.elementBytes = static_cast<int64_t>(rt::dtypeSize(spec.dtype));
  return shape;
}

/// A fixed scramble of 0..w-1 (not a rotation for w >= 4).
std::vector<int64_t> scrambled(int w) {
  std::vector<int64_t> p = identityPlacements(w);
  for (int i = 0; i + 1 < w; i += 2)
    std::swap(p[i], p[i + 1]);
  if (w >= 3)
    std::rotate(p.begin(), p.begin() + 1, p.end());
  return p;
}

} // namespace

std::vector<BlockSpec> blockSuite() {
  std::vector<BlockSpec> all;
  const OpForm forms[] = {OpForm::Arith, OpForm::LinalgGeneric,
                          OpForm::LinalgElementwise};
  const Activation acts[] = {Activation::Relu, Activation::GeluTanh,
                             Activation::GeluErf, Activation::Silu};
  // Every activation and form, MLP and SwiGLU, on W = 3 with uneven chunks
  // (F = 20 over 3) and permuted placements, f32.
  for (OpForm form : forms) {
    for (Activation act : acts) {
      BlockSpec s;
      s.form = form;
      s.activation = act;
      s.placements = {2, 0, 1};
      all.push_back(s);
    }
    BlockSpec g;
    g.kind = BlockKind::SwiGlu;
    g.form = form;
    g.placements = {1, 2, 0};
    g.colBias = false;
    all.push_back(g);
  }
  // W = 1..8: identity, reversed, scrambled; F = 13 makes chunks uneven
  // for most W and empty ones past W = 13 / 2; F = 5 leaves ranks of W = 8
  // with no features at all.
  for (int w = 1; w <= 8; ++w) {
    std::vector<std::vector<int64_t>> orders = {identityPlacements(w)};
    if (w > 1)
      orders.push_back(rotatedPlacements(w, w - 1));
    if (w > 2)
      orders.push_back(scrambled(w));
    for (size_t o = 0; o < orders.size(); ++o) {
      BlockSpec s;
      s.f = 13;
      s.h = 7;
      s.placements = orders[o];
      s.activation = o == 0 ? Activation::GeluTanh : Activation::Relu;
      s.form = forms[(w + o) % 3];
      all.push_back(s);
    }
    BlockSpec empty;
    empty.f = 5;
    empty.h = 6;
    empty.placements = scrambled(w);
    empty.activation = Activation::GeluErf;
    empty.residual = true;
    all.push_back(empty);
    BlockSpec glu;
    glu.kind = BlockKind::SwiGlu;
    glu.f = 11;
    glu.placements = rotatedPlacements(w, 1 % w);
    glu.form = forms[w % 3];
    all.push_back(glu);
  }
  // The base of the groups below: a block with a residual.
  auto withResidual = [](BlockKind kind, std::vector<int64_t> placements,
                         int64_t f) {
    BlockSpec s;
    s.kind = kind;
    s.placements = std::move(placements);
    s.f = f;
    s.residual = true;
    return s;
  };
  // Every dtype, each form, with residuals and two chained blocks.
  for (rt::DType t :
       {rt::DType::F16, rt::DType::BF16, rt::DType::F32, rt::DType::F64})
    for (OpForm form : forms) {
      BlockSpec s = withResidual(BlockKind::Mlp, {3, 1, 0, 2}, 18);
      s.dtype = t;
      s.form = form;
      s.blocks = 2;
      all.push_back(s);
      BlockSpec g = s;
      g.kind = BlockKind::SwiGlu;
      g.blocks = 1;
      g.rowBias = false;
      all.push_back(g);
    }
  // Inputs of every rank: 1-D, 2-D, 3-D.
  for (std::vector<int64_t> batch :
       {std::vector<int64_t>{}, {1}, {2, 3}, {3, 1, 2}}) {
    BlockSpec s;
    s.batch = batch;
    s.placements = {1, 0};
    s.activation = Activation::Silu;
    s.residual = true;
    all.push_back(s);
    BlockSpec g = s;
    g.form = OpForm::LinalgGeneric;
    all.push_back(g);
  }
  // The two weights of a block placed differently, and biases off.
  {
    BlockSpec s;
    s.placements = {0, 1, 2};
    s.rowPlacements = {2, 0, 1};
    all.push_back(s);
    s.colBias = false;
    s.rowBias = false;
    s.form = OpForm::LinalgElementwise;
    all.push_back(s);
  }
  // The same blocks lowered linear by linear (fuse-blocks=false).
  for (BlockKind kind : {BlockKind::Mlp, BlockKind::SwiGlu})
    for (rt::DType t : {rt::DType::F32, rt::DType::BF16}) {
      BlockSpec s = withResidual(kind, {2, 0, 3, 1}, 14);
      s.dtype = t;
      s.fuse = false;
      all.push_back(s);
    }
  // Strategies: gather-weight and the cost model's choice.
  for (const char *strategy : {"gather-weight", "auto"})
    for (BlockKind kind : {BlockKind::Mlp, BlockKind::SwiGlu}) {
      BlockSpec s = withResidual(kind, {2, 3, 0, 1}, 22);
      s.strategy = strategy;
      all.push_back(s);
    }
  return all;
}

bool blockIsFused(const BlockSpec &spec) {
  if (!spec.fuse || spec.worldSize() < 2 ||
      spec.rowWeightPlacements() != spec.placements ||
      (spec.form == OpForm::LinalgGeneric && spec.colBias) ||
      spec.strategy == "gather-weight")
    return false;
  if (spec.strategy == "activations")
    return true;
  MachineModel m;
  double fused = estimateFusedBlockCost(blockShape(spec), m).estimatedUs;
  LinearShape col{spec.rows(), spec.f, spec.h, 0, spec.placements,
                  static_cast<int64_t>(rt::dtypeSize(spec.dtype))};
  LinearShape row{spec.rows(), spec.h, spec.f, 1, spec.placements,
                  static_cast<int64_t>(rt::dtypeSize(spec.dtype))};
  double separate =
      spec.colLinears() *
          estimateCost(col, *chooseStrategy(col, m, 0), m).estimatedUs +
      estimateCost(row, *chooseStrategy(row, m, 0), m).estimatedUs;
  return !(separate < fused);
}

std::vector<uint64_t> expectedBlockBytes(const BlockSpec &spec) {
  const int w = spec.worldSize();
  std::vector<uint64_t> out(size_t(w), 0);
  if (blockIsFused(spec)) {
    std::vector<uint64_t> fused =
        estimateFusedBlockCost(blockShape(spec), MachineModel()).bytesSent;
    for (int r = 0; r < w; ++r)
      out[size_t(r)] = fused[size_t(r)] * uint64_t(spec.blocks);
    return out;
  }
  for (int r = 0; r < w; ++r)
    out[size_t(r)] =
        (spec.colLinears() *
             linearBytes(spec, spec.f, spec.h, 0, spec.placements, r) -
         sharedGatherBytes(spec) +
         linearBytes(spec, spec.h, spec.f, 1, spec.rowWeightPlacements(), r)) *
        uint64_t(spec.blocks);
  return out;
}

} // namespace shardlin::testkit
