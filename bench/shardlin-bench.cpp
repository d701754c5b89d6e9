//===- shardlin-bench.cpp - The shardlin benchmark suite ------------------===//
//
//   shardlin-bench [--quick | --full] [options]
//
// Sections (all by default;
// --sections=linear,targets,collectives,compile,elementwise,blocks):
//   linear       every (backend, W, dim, B, N = K, strategy) of the sweep:
//                time, GFLOP/s, bytes sent per rank (measured by the
//                communicator, checked exactly against the cost model), next
//                to the dense OpenBLAS GEMM + bias of the same total work on
//                all cores and PyTorch's F.linear (when installed);
//   targets      the ratios of the performance targets, measured with the
//                runs interleaved (dense, shardlin, dense, shardlin, ...);
//   collectives  all_gather / reduce_scatter / all_to_all on the
//                communicators, nccl-tests' algbw and busbw;
//   compile      parse + lower time of modules of 1 ... 10,000 linears;
//   elementwise  the fused activation kernels on 64 MiB against a copy, GB/s,
//                and a GEMM + GELU with the chain as its epilogue or not;
//   blocks       MLP and SwiGLU blocks lowered fused, unfused and with
//                gathered weights, bytes checked against the cost model,
//                next to PyTorch DTensor (when installed); then their
//                backward and training step (BackwardBench.cpp), next to
//                DTensor's loss.backward().
//
// Output: a table on stdout, --json=PATH, --plot=PATH (bench/plot.py).
// Exit status 1 if any byte count differs from the prediction, any output
// fails the numerical check, or any case fails to run.
//
// This file holds main() and the run's bookkeeping; BenchRun.h names the
// file of each section.
//
//===----------------------------------------------------------------------===//

#include "BenchOptions.h"
#include "BenchRun.h"

#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/exec/Gemm.h"
#include "shardlin/runtime/backends/Mpi.h"
#include "shardlin/runtime/tooling/Process.h"

#include <cblas.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

using namespace shardlin::bench;
namespace rt = ::shardlin::rt;

namespace shardlin::bench {

BenchRun::BenchRun(const Options &options)
    : opts(options), loadStart(loadAverage()), cpuStart(cpuSnapshot()),
      t0(nowSeconds()), cpuMark(cpuStart) {}

void BenchRun::beginSection(const std::string &name) {
  if (section.empty()) {
    sectionLoad[name] = loadStart;
  } else {
    endSection();
    cpuMark = cpuSnapshot();
    sectionLoad[name] = loadAverage();
  }
  section = name;
}

void BenchRun::endSection() {
  sectionForeign[section] = foreignShare(cpuMark, cpuSnapshot());
}

} // namespace shardlin::bench

namespace {

/// The mpi backend needs the runtime built with MPI and an mpirun; without
/// them it is dropped from the backends, with a note.
void dropMpiIfUnavailable(Options &o) {
  bool haveMpi =
      rt::mpiAvailable() && !o.mpirun.empty() && fileExists(o.mpirun);
  std::string mpiNote;
  if (std::find(o.backends.begin(), o.backends.end(), "mpi") !=
          o.backends.end() &&
      !haveMpi) {
    mpiNote = !rt::mpiAvailable() ? "the runtime was built without MPI"
                                  : "no mpirun (" + o.mpirun + ")";
    std::printf("mpi backend skipped: %s\n", mpiNote.c_str());
    o.backends.erase(std::remove(o.backends.begin(), o.backends.end(), "mpi"),
                     o.backends.end());
  }
}

void printHeader(const BenchRun &run) {
  const Options &o = run.opts;
  std::printf("shardlin-bench (%s): %d cores, load %.2f, OpenBLAS %s\n",
              o.mode.c_str(), cores(), run.loadStart, openblas_get_config());
  std::printf("timing: %d warm-up, then %d..%d trials of back-to-back runs "
              "(~%.3g s each, ~%.3g s in all); figures are medians over "
              "trials\n",
              o.timing.warmup, o.timing.minTrials, o.timing.maxTrials,
              o.timing.trialSeconds, o.timing.minSeconds);
}

} // namespace

int main(int argc, char **argv) {
  // OpenBLAS's kernels for this CPU, if it fell back to older ones
  // (Gemm.h): the dense baseline and shardlin's GEMMs alike.
  rt::reexecForBlasKernels(argv);
  Options o;
  if (!parseArgs(argc, argv, o)) {
    usage();
    return 2;
  }
  if (!o.mpiWorker.empty())
    return mpiWorkerMain(argc, argv, o.mpiWorker, o.mpiOut, o.timing);
  if (!o.mpiBlocksWorker.empty())
    return blocksMpiWorkerMain(argc, argv, o.mpiBlocksWorker, o.mpiOut,
                               o.timing);
  if (!o.mpiCollectivesWorker.empty()) {
    std::vector<uint64_t> sizes;
    parseList(o.mpiCollectivesWorker, sizes);
    return mpiCollectivesWorkerMain(argc, argv, sizes, o.mpiOut, o.timing);
  }
  dropMpiIfUnavailable(o);

  BenchRun run(o);
  printHeader(run);
  // The targets first: a run that waited for a quiet machine measures them
  // while it is quietest.
  runTargetsSection(run);
  runLinearSection(run);
  runCollectivesSection(run);
  runCompileSection(run);
  runElementwiseSection(run);
  runBlocksSection(run);
  return reportSummary(run);
}
