//===- BlocksEndToEndTest.cpp - Transformer blocks on the threads backend -===//
//
// MLPs (ReLU, GELU-tanh, GELU-erf, SiLU) and SwiGLUs written as producers
// write them (arith/math ops on tensors, linalg.generic, linalg.elementwise;
// BlockTesting.h), with residual adds and chains of two blocks, compiled
// from MLIR text and run with one thread per rank through rt::runProgram:
// W = 1..8, even, uneven and empty chunks, permuted placements (and the two
// weights of a block placed differently), 1-D to 3-D inputs, every dtype,
// forced and chosen strategies. Every element of every rank's output is
// compared with the float64 reference within blockErrorBound(), and each
// rank's bytes sent with the cost model's figure for its linears.
//
//===----------------------------------------------------------------------===//

#include "BlockTesting.h"

#include "shardlin/Analysis/CostModel.h"
#include "shardlin/runtime/Execute.h"
#include "shardlin/runtime/Gemm.h"

#include <gtest/gtest.h>

#include <ostream>

namespace shardlin::testkit {

/// How gtest prints a configuration (in failure messages).
void PrintTo(const BlockSpec &c, std::ostream *os) { *os << c.name(); }

namespace {

namespace rt = ::shardlin::rt;

class SingleBlasThread : public ::testing::Environment {
public:
  void SetUp() override { rt::setBlasThreads(1); }
};
const ::testing::Environment *const singleBlasThread =
    ::testing::AddGlobalTestEnvironment(new SingleBlasThread);

std::vector<int64_t> identity(int w) {
  std::vector<int64_t> p(w);
  for (int i = 0; i < w; ++i)
    p[i] = i;
  return p;
}

/// A fixed scramble of 0..w-1 (not a rotation for w >= 4).
std::vector<int64_t> scrambled(int w) {
  std::vector<int64_t> p = identity(w);
  for (int i = 0; i + 1 < w; i += 2)
    std::swap(p[i], p[i + 1]);
  if (w >= 3)
    std::rotate(p.begin(), p.begin() + 1, p.end());
  return p;
}

std::vector<BlockSpec> configs() {
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
    std::vector<std::vector<int64_t>> orders = {identity(w)};
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
  // Every dtype, each form, with residuals and two chained blocks.
  for (rt::DType t :
       {rt::DType::F16, rt::DType::BF16, rt::DType::F32, rt::DType::F64})
    for (OpForm form : forms) {
      BlockSpec s;
      s.dtype = t;
      s.form = form;
      s.placements = {3, 1, 0, 2};
      s.f = 18;
      s.residual = true;
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
      BlockSpec s;
      s.kind = kind;
      s.dtype = t;
      s.fuse = false;
      s.placements = {2, 0, 3, 1};
      s.f = 14;
      s.residual = true;
      all.push_back(s);
    }
  // Strategies: gather-weight and the cost model's choice.
  for (const char *strategy : {"gather-weight", "auto"})
    for (BlockKind kind : {BlockKind::Mlp, BlockKind::SwiGlu}) {
      BlockSpec s;
      s.kind = kind;
      s.strategy = strategy;
      s.placements = {2, 3, 0, 1};
      s.f = 22;
      s.residual = true;
      all.push_back(s);
    }
  return all;
}

/// What the pass must do with `spec` and what each rank then sends
/// (BlockTesting: blockIsFused, expectedBlockBytes); a fused block's
/// figure is also the formula, (W-1) B H elements for the
/// all_gather and as many for the reduce_scatter, whose partial sums are
/// f32 for f16 and bf16.
std::vector<uint64_t> expectedBytes(const BlockSpec &spec) {
  std::vector<uint64_t> bytes = expectedBlockBytes(spec);
  if (blockIsFused(spec)) {
    const uint64_t elt = rt::dtypeSize(spec.dtype);
    const uint64_t partial = elt == 2 ? 4 : elt;
    for (uint64_t b : bytes)
      EXPECT_EQ(b, uint64_t(spec.worldSize() - 1) * spec.rows() * spec.h *
                       (elt + partial) * spec.blocks);
  }
  return bytes;
}

/// A fused program has no all_to_all and its GEMMs say "fused"; an
/// unfused one (W > 1) has neither.
void checkFusion(const BlockSpec &spec, const rt::Program &program) {
  int allToAll = 0, fusedGemms = 0;
  for (const rt::Instr &in : program.instrs) {
    allToAll += in.op == rt::OpCode::AllToAll;
    fusedGemms += in.op == rt::OpCode::Gemm && in.strategy == "fused";
  }
  if (blockIsFused(spec)) {
    EXPECT_EQ(allToAll, 0);
    EXPECT_EQ(fusedGemms, spec.blocks * (spec.colLinears() + 1));
  } else {
    EXPECT_EQ(fusedGemms, 0);
  }
}

class Blocks : public ::testing::TestWithParam<BlockSpec> {};

TEST_P(Blocks, EveryRankMatchesTheReference) {
  const BlockSpec &spec = GetParam();
  rt::Program program;
  rt::Status compiled = compileBlock(spec, program);
  ASSERT_TRUE(compiled.isOk()) << compiled.message();
  checkFusion(spec, program);
  BlockData data = makeBlockData(spec, /*seed=*/spec.name().size());
  rt::RunOptions options;
  options.backend = "threads";
  options.comm.timeoutSeconds = 30;
  std::vector<std::vector<uint8_t>> outputs;
  std::vector<rt::RankResult> ranks;
  rt::Status ran = runBlock(program, spec, data, options, outputs, ranks);
  ASSERT_TRUE(ran.isOk()) << ran.message() << "\n" << blockMlir(spec);
  std::string report;
  int64_t failures = 0;
  for (int r = 0; r < spec.worldSize(); ++r)
    failures += checkBlockOutput(spec, data, r, outputs[r], report);
  EXPECT_EQ(failures, 0) << report << blockMlir(spec);
  ASSERT_EQ(ranks.size(), static_cast<size_t>(spec.worldSize()));
  const std::vector<uint64_t> bytes = expectedBytes(spec);
  for (int r = 0; r < spec.worldSize(); ++r)
    EXPECT_EQ(ranks[r].stats.bytesSent, bytes[r]) << "rank " << r;
}

INSTANTIATE_TEST_SUITE_P(
    Threads, Blocks, ::testing::ValuesIn(configs()),
    [](const ::testing::TestParamInfo<BlockSpec> &info) {
      return info.param.name();
    });

} // namespace
} // namespace shardlin::testkit
