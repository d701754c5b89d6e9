//===- DynamicBatchMpiTest.cpp - Run-time batch sizes under mpirun --------===//
//
// A plain program, run by ctest under mpirun with W = 1..4 ranks: each
// process compiles every layer (and a fused block) with a dynamic batch dim
// once and runs it, in this one process, through batchSizeRuns(W): sizes
// that differ between ranks, 0 and 1 rows, and a repeat. Each process reads
// only its own rank's size, the ranks exchange them before the plans are
// built, and each checks its own output against the float64 reference and
// that the repeated sizes reuse its cached plan. MpiSuite.h sums the
// failures and prints the summary.
//
//===----------------------------------------------------------------------===//

#include "BlockTesting.h"
#include "E2ESupport.h"
#include "MpiSuite.h"

#include "shardlin/runtime/exec/PlanCache.h"

#include <cstdio>
#include <set>

namespace rt = ::shardlin::rt;
using namespace shardlin::e2e;
using shardlin::testkit::BlockSpec;
using shardlin::testkit::rotatedPlacements;

namespace {

constexpr int64_t kDyn = rt::kDynamic;

std::vector<LinearConfig> linearConfigs(int w) {
  std::vector<LinearConfig> all;
  for (int64_t dim : {1, 0})
    for (const char *strategy : {"activations", "gather-weight"}) {
      LinearConfig c;
      c.dim = dim;
      c.strategy = strategy;
      c.placements = rotatedPlacements(w);
      c.batch = {kDyn, 3};
      all.push_back(c);
    }
  return all;
}

/// Runs `runs` through one compiled program for this process's rank;
/// `runOnce` runs one set of sizes and checks the output, returning whether
/// the plan was reused through `reused`.
bool runAll(const std::string &name, int rank,
            const std::vector<std::vector<std::vector<int64_t>>> &runs,
            const std::function<rt::Status(size_t, bool &)> &runOnce) {
  std::set<std::vector<std::vector<int64_t>>> seen;
  for (size_t i = 0; i < runs.size(); ++i) {
    bool reused = false;
    rt::Status s = runOnce(i, reused);
    if (!s) {
      std::fprintf(stderr, "FAIL %s run %zu rank %d: %s\n", name.c_str(), i,
                   rank, s.message().c_str());
      return false;
    }
    const bool repeat = !seen.insert(runs[i]).second;
    if (reused != repeat) {
      std::fprintf(stderr, "FAIL %s run %zu rank %d: the plan was %s\n",
                   name.c_str(), i, rank,
                   reused ? "reused for new sizes" : "rebuilt for known sizes");
      return false;
    }
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<LinearConfig> linears;
  MpiSuite suite;
  suite.label = "mpi dynamic";
  suite.count = [&](int w) {
    linears = linearConfigs(w);
    return linears.size() + 1; // and one block
  };
  suite.run = [&](size_t index, const rt::CommOptions &commOptions,
                  rt::Communicator &comm) {
    const int rank = comm.rank(), w = comm.worldSize();
    rt::PlanCache cache;
    rt::Program program;
    if (index < linears.size()) {
      const LinearConfig &base = linears[index];
      const auto runs = batchSizeRuns(w, base.batch);
      rt::Status compiled = compileLinear(base, program);
      if (!compiled) {
        std::fprintf(stderr, "FAIL %s: %s\n", base.name().c_str(),
                     compiled.message().c_str());
        return false;
      }
      return runAll(base.name(), rank, runs, [&](size_t i, bool &reused) {
        LinearConfig config = base;
        config.rankBatch = runs[i];
        const LinearData data = makeLinearData(config);
        std::vector<uint8_t> output;
        SHARDLIN_RETURN_IF_ERROR(
            runRank(program, config, data, comm, output, &cache, &reused));
        std::string report;
        if (checkOutput(config, data, rank, output, report) != 0)
          return rt::Status::internal(report);
        return rt::Status::ok();
      });
    }
    BlockSpec base; // A fused MLP on dynamic rows.
    base.batch = {kDyn};
    base.placements = rotatedPlacements(w);
    base.f = 13;
    base.h = 9;
    base.form = shardlin::testkit::OpForm::LinalgElementwise;
    const auto runs = batchSizeRuns(w, base.batch);
    rt::Status compiled = shardlin::testkit::compileBlock(base, program);
    if (!compiled) {
      std::fprintf(stderr, "FAIL %s: %s\n", base.name().c_str(),
                   compiled.message().c_str());
      return false;
    }
    rt::RunOptions options;
    options.backend = "mpi";
    options.comm = commOptions;
    options.blasThreads = 1;
    return runAll(base.name(), rank, runs, [&](size_t i, bool &reused) {
      shardlin::testkit::BlockBatchRun run;
      SHARDLIN_RETURN_IF_ERROR(shardlin::testkit::runBlockAt(
          program, base, runs[i], 11 + i, options, cache, run));
      reused = run.ranks.at(0).planReused;
      std::string report;
      if (shardlin::testkit::checkBlockOutput(run.spec, run.data, rank,
                                              run.outputs[rank], report) != 0)
        return rt::Status::internal(report);
      return rt::Status::ok();
    });
  };
  return runMpiSuite(argc, argv, suite);
}
