//===- BlocksEndToEndTest.cpp - Transformer blocks on the threads backend -===//
//
// MLPs (ReLU, GELU-tanh, GELU-erf, SiLU) and SwiGLUs written as producers
// write them (arith/math ops on tensors, linalg.generic, linalg.elementwise;
// BlockTesting.h), with residual adds and chains of two blocks, compiled
// from MLIR text and run with one thread per rank through rt::runProgram:
// W = 1..8, even, uneven and empty chunks, permuted placements (and the two
// weights of a block placed differently), 1-D to 3-D inputs, every dtype,
// forced and chosen strategies, and chains of 72 and 153 ops between the
// linears, longer than one runtime instruction holds. Every element of every rank's output is
// compared with the float64 reference within blockErrorBound(), and each
// rank's bytes sent with the cost model's figure for its linears.
//
//===----------------------------------------------------------------------===//

#include "BlockTesting.h"

#include "shardlin/Analysis/CostModel.h"
#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/exec/Execute.h"
#include "shardlin/runtime/exec/Gemm.h"

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
    Threads, Blocks, ::testing::ValuesIn(blockSuite()),
    [](const ::testing::TestParamInfo<BlockSpec> &info) {
      return info.param.name();
    });

/// Long elementwise chains between the two linears (issue 27, finding 6):
/// GELU-tanh applied 8 times (72 ops) and 17 times (153 ops), more than
/// one runtime instruction holds (64 nodes), so the executor splits them
/// into several instructions. Fused (moving activations: the chain between
/// the two GEMMs of each rank's block of features) and not (each linear
/// gathering its weight), f32, f64 and bf16 (split in f32, rounded once),
/// uneven and permuted chunks, a residual, the arith and linalg.generic
/// forms; every element against the float64 reference.
std::vector<BlockSpec> longChains() {
  std::vector<BlockSpec> specs;
  auto add = [&](int repeat, rt::DType dtype, const char *strategy,
                 std::vector<int64_t> placements, OpForm form, bool residual) {
    BlockSpec s;
    s.activation = Activation::GeluTanh;
    s.repeat = repeat;
    s.dtype = dtype;
    s.strategy = strategy;
    s.placements = std::move(placements);
    s.form = form;
    s.residual = residual;
    s.batch = {2, 3};
    specs.push_back(s);
  };
  add(8, rt::DType::F32, "activations", {2, 0, 1}, OpForm::Arith, false);
  add(17, rt::DType::F32, "activations", {1, 3, 0, 2}, OpForm::Arith, true);
  add(17, rt::DType::F64, "gather-weight", {1, 0}, OpForm::LinalgGeneric,
      false);
  add(8, rt::DType::BF16, "activations", {0, 1}, OpForm::LinalgElementwise,
      false);
  add(17, rt::DType::F32, "activations", {0}, OpForm::Arith, false);
  return specs;
}

INSTANTIATE_TEST_SUITE_P(
    LongChains, Blocks, ::testing::ValuesIn(longChains()),
    [](const ::testing::TestParamInfo<BlockSpec> &info) {
      return info.param.name();
    });

} // namespace
} // namespace shardlin::testkit
