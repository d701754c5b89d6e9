//===- BlocksMpiTest.cpp - Transformer blocks on the MPI backend ----------===//
//
// A plain program, run by ctest under mpirun with W = 1..4 ranks: each
// process compiles every block of blockConfigs(W) (MLP and SwiGLU in the
// three op forms, every dtype, residual chains of two blocks, 1-D and 3-D
// inputs, uneven and empty chunks, permuted and mismatched placements,
// forced and chosen strategies), runs its own rank through rt::runProgram
// on the mpi backend and checks its output against the float64 reference
// (every process regenerates every tensor from the configuration's seed)
// and its bytes sent against the cost model (expectedBlockBytes).
// MpiSuite.h sums the failures and prints the summary.
//
//===----------------------------------------------------------------------===//

#include "BlockTesting.h"
#include "MpiSuite.h"

#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/exec/Execute.h"
#include "shardlin/runtime/exec/Gemm.h"

#include <cstdio>
#include <memory>

namespace rt = ::shardlin::rt;
using namespace shardlin::testkit;

namespace {

std::vector<int64_t> reversed(int w) {
  std::vector<int64_t> p(w);
  for (int i = 0; i < w; ++i)
    p[i] = w - 1 - i;
  return p;
}

std::vector<BlockSpec> blockConfigs(int w) {
  std::vector<BlockSpec> all;
  BlockSpec base;
  base.placements = rotatedPlacements(w);
  base.f = 13; // uneven for W = 2..4
  base.h = 9;
  {
    BlockSpec s = base; // GELU-tanh, arith
    all.push_back(s);
    s.activation = Activation::Relu;
    s.form = OpForm::LinalgGeneric;
    all.push_back(s);
    s.activation = Activation::GeluErf;
    s.form = OpForm::LinalgElementwise;
    s.batch = {};
    all.push_back(s);
  }
  for (OpForm form : {OpForm::Arith, OpForm::LinalgGeneric,
                      OpForm::LinalgElementwise}) {
    BlockSpec g = base;
    g.kind = BlockKind::SwiGlu;
    g.form = form;
    g.batch = {2, 1, 3};
    all.push_back(g);
  }
  for (rt::DType t :
       {rt::DType::F16, rt::DType::BF16, rt::DType::F32, rt::DType::F64}) {
    BlockSpec s = base;
    s.dtype = t;
    s.residual = true;
    s.blocks = 2;
    s.activation = Activation::Silu;
    all.push_back(s);
  }
  {
    BlockSpec s = base; // Empty chunks: F = 3 over up to 4 ranks.
    s.f = 3;
    s.placements = reversed(w);
    s.residual = true;
    all.push_back(s);
    s = base; // The row-wise weight placed differently.
    s.rowPlacements = reversed(w);
    all.push_back(s);
  }
  for (const char *strategy : {"gather-weight", "auto"}) {
    BlockSpec s = base;
    s.strategy = strategy;
    s.residual = true;
    all.push_back(s);
  }
  return all;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<BlockSpec> configs;
  shardlin::e2e::MpiSuite suite;
  suite.label = "mpi blocks";
  suite.count = [&](int w) {
    configs = blockConfigs(w);
    return configs.size();
  };
  suite.run = [&](size_t i, const rt::CommOptions &commOptions,
                  rt::Communicator &comm) {
    const BlockSpec &spec = configs[i];
    const int rank = comm.rank();
    rt::RunOptions options;
    options.backend = "mpi";
    options.comm = commOptions;
    options.blasThreads = 1;
    rt::Program program;
    rt::Status status = compileBlock(spec, program);
    BlockData data;
    std::vector<std::vector<uint8_t>> outputs;
    std::vector<rt::RankResult> ranks;
    // Every process compiles the same text, so they all fail or all go on;
    // runProgram's agreement keeps a failure on one rank from blocking the
    // others anyway.
    if (status) {
      data = makeBlockData(spec, spec.name().size());
      status = runBlock(program, spec, data, options, outputs, ranks);
    }
    if (!status) {
      std::fprintf(stderr, "FAIL %s rank %d: %s\n", spec.name().c_str(), rank,
                   status.message().c_str());
      return false;
    }
    std::string report;
    if (checkBlockOutput(spec, data, rank, outputs[rank], report) != 0) {
      std::fprintf(stderr, "FAIL %s", report.c_str());
      return false;
    }
    // The traffic the cost model predicts for this rank, to the byte.
    const uint64_t expected = expectedBlockBytes(spec)[size_t(rank)];
    if (ranks.size() != 1 || ranks[0].stats.bytesSent != expected) {
      std::fprintf(stderr, "FAIL %s rank %d: sent %llu bytes, the cost model "
                           "says %llu\n",
                   spec.name().c_str(), rank,
                   ranks.empty() ? 0ull
                                 : (unsigned long long)ranks[0].stats.bytesSent,
                   (unsigned long long)expected);
      return false;
    }
    return true;
  };
  return shardlin::e2e::runMpiSuite(argc, argv, suite);
}
