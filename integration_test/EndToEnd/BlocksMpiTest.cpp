//===- BlocksMpiTest.cpp - Transformer blocks on the MPI backend ----------===//
//
// A plain program, run by ctest under mpirun with W = 1..4 ranks: each
// process compiles every block of blockConfigs(W) (MLP and SwiGLU in the
// three op forms, every dtype, residual chains of two blocks, 1-D and 3-D
// inputs, uneven and empty chunks, permuted and mismatched placements,
// forced and chosen strategies), runs its own rank through rt::runProgram
// on the mpi backend and checks its output against the float64 reference
// (every process regenerates every tensor from the configuration's seed).
// The failures are summed over ranks; rank 0 prints the summary and every
// process exits non-zero if any rank failed.
//
//===----------------------------------------------------------------------===//

#include "BlockTesting.h"

#include "shardlin/runtime/Execute.h"
#include "shardlin/runtime/Gemm.h"
#include "shardlin/runtime/MpiCommunicator.h"

#include <cstdio>
#include <memory>

namespace rt = ::shardlin::rt;
using namespace shardlin::testkit;

namespace {

/// Rank order rotated by one (identity for W = 1).
std::vector<int64_t> rotated(int w) {
  std::vector<int64_t> p(w);
  for (int i = 0; i < w; ++i)
    p[i] = (i + 1) % w;
  return p;
}

std::vector<int64_t> reversed(int w) {
  std::vector<int64_t> p(w);
  for (int i = 0; i < w; ++i)
    p[i] = w - 1 - i;
  return p;
}

std::vector<BlockSpec> blockConfigs(int w) {
  std::vector<BlockSpec> all;
  BlockSpec base;
  base.placements = rotated(w);
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
  std::unique_ptr<rt::MpiSession> session;
  rt::Status started = rt::MpiSession::create(&argc, &argv, session);
  if (!started) {
    std::fprintf(stderr, "mpi blocks: %s\n", started.message().c_str());
    return 1;
  }
  // The summing communicator (the runs make their own).
  rt::CommOptions commOptions;
  commOptions.timeoutSeconds = 60;
  std::unique_ptr<rt::Communicator> comm;
  rt::Status created = rt::createMpiCommunicator(commOptions, comm);
  if (!created) {
    std::fprintf(stderr, "mpi blocks: %s\n", created.message().c_str());
    return 1;
  }
  const int rank = comm->rank();
  const int w = comm->worldSize();

  rt::RunOptions options;
  options.backend = "mpi";
  options.comm = commOptions;
  // Several processes share the cores: one BLAS thread each.
  options.blasThreads = 1;

  const std::vector<BlockSpec> configs = blockConfigs(w);
  double failedConfigs = 0;
  for (const BlockSpec &spec : configs) {
    bool ok = true;
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
      ok = false;
    } else {
      std::string report;
      if (checkBlockOutput(spec, data, rank, outputs[rank], report) != 0) {
        std::fprintf(stderr, "FAIL %s", report.c_str());
        ok = false;
      }
    }
    double failedHere = ok ? 0.0 : 1.0;
    rt::Status summed =
        comm->allReduce(&failedHere, &failedHere, 1, rt::DType::F64);
    if (!summed) {
      std::fprintf(stderr, "mpi blocks: rank %d: %s\n", rank,
                   summed.message().c_str());
      return 1;
    }
    if (failedHere > 0)
      failedConfigs += 1;
    std::fflush(stderr);
  }
  if (rank == 0) {
    if (failedConfigs == 0)
      std::printf("mpi blocks: %zu configurations passed on %d ranks\n",
                  configs.size(), w);
    else
      std::printf("mpi blocks: %d of %zu configurations FAILED on %d ranks\n",
                  static_cast<int>(failedConfigs), configs.size(), w);
    std::fflush(stdout);
  }
  return failedConfigs == 0 ? 0 : 1;
}
