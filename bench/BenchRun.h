//===- BenchRun.h - What the sections of shardlin-bench share ---*- C++ -*-===//
//
// One run of the suite: main() fills a BenchRun from the options and calls
// the sections in order (targets, linear, collectives, compile), each of
// which adds its results; the summary then reads them all to print the
// target lines and write the JSON and the plot.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_BENCH_BENCHRUN_H
#define SHARDLIN_BENCH_BENCHRUN_H

#include "BenchCommon.h"
#include "BenchOptions.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace shardlin::bench {

//===----------------------------------------------------------------------===//
// Results
//===----------------------------------------------------------------------===//

/// One case of the linear sweep.
struct Row {
  LinearCase c;
  LinearResult r;
  /// The same case compiled by the JIT (c with jit set), run right after
  /// the plan's; not run with --no-jit.
  LinearResult jit;
  bool skipped = false;
  std::string skipReason;
};

/// The shape of a dense GEMM: M x K times (N x K)^T.
struct DenseKey {
  int64_t m, n, k;
  bool operator<(const DenseKey &o) const {
    return std::tie(m, n, k) < std::tie(o.m, o.n, o.k);
  }
};

struct TorchResult {
  double median = 0, min = 0, max = 0;
  int iters = 0, trials = 0;
};

struct TorchInfo {
  bool available = false;
  std::string message, version;
  int threads = 0;
  std::map<DenseKey, TorchResult> results;
};

/// Runs bench/torch_linear.py on `shapes` (F.linear on all cores). When it
/// cannot, `message` says why.
TorchInfo runTorch(const Options &o, const std::set<DenseKey> &shapes);

/// The strategy cheapest in bytes among the forced ones, for the auto check.
struct AutoCheck {
  std::string where;
  uint64_t autoBytes = 0, bestBytes = 0;
  std::string autoChose, cheapest, why;
  double autoSeconds = 0, cheapestSeconds = 0;
};

/// Where `auto` sends more bytes than the byte-cheapest strategy, from the
/// cost model alone (the sweep shows measured bytes equal the model's
/// exactly, so this covers every B, not just the sweep's): for each (W, dim,
/// N = K), the ranges of B in [1, maxRows] where it happens.
struct AutoBand {
  int w = 0;
  int64_t dim = 0, features = 0, lo = 0, hi = 0;
  uint64_t autoBytes = 0, bestBytes = 0; // at lo
  std::string autoChose;
};

/// The checks of the linear table.
struct LinearChecks {
  int mismatches = 0, verifyFailures = 0, errors = 0, checked = 0;
};

struct TorchShape {
  int64_t rows = 0, features = 0;
  double shardlinSeconds = 0, torchSeconds = 0;
};
struct TorchTarget {
  std::string message, version; // message: why it was not measured
  std::vector<TorchShape> shapes;
  int faster = 0;
  double geomean = 0;
};

struct TargetRatio {
  std::string name, description;
  double shardlinSeconds = 0, referenceSeconds = 0, ratio = 0, limit = 0;
  /// Best round against best round: less sensitive to bursts of load from
  /// other processes than the medians.
  double ratioOfMins = 0;
  bool met = false;
  bool measured = false;
  std::string note;
};

//===----------------------------------------------------------------------===//
// The run
//===----------------------------------------------------------------------===//

struct BenchRun {
  /// Reads the machine's load and CPU use at the start of the run.
  explicit BenchRun(const Options &opts);

  /// Ends the open section (the share of the cores other processes used
  /// during it) and opens `name` (the 1-minute load when it starts). The
  /// first section opens with the load at the start of the run. A section
  /// opens even when it is not selected, as its figures go into the JSON.
  void beginSection(const std::string &name);
  /// Ends the open section.
  void endSection();

  const Options &opts;

  // The machine.
  const double loadStart;
  const CpuSnapshot cpuStart;
  const double t0;
  CpuSnapshot cpuMark;                       // when the open section began
  std::string section;                       // the open section
  std::map<std::string, double> sectionLoad; // 1-min load when it started
  // Share of the cores other processes used during each section.
  std::map<std::string, double> sectionForeign;
  double foreignAll = 0, loadEnd = 0; // set by the summary

  bool failed = false;

  // Targets.
  std::vector<TargetRatio> targets;
  TorchTarget torchTarget;

  // The linear sweep.
  bool doLinear = false;
  std::vector<Row> rows;
  std::map<DenseKey, DenseResult> dense;
  TorchInfo torch;
  LinearChecks checks;
  std::vector<AutoCheck> autoChecks;
  std::vector<AutoBand> autoBands;

  std::vector<CollectiveResult> collectives;
  std::vector<CompileResult> compiles;
};

//===----------------------------------------------------------------------===//
// The sections, in the order main() runs them
//===----------------------------------------------------------------------===//

/// The ratios of the performance targets, measured with the runs
/// interleaved, and W = 1 against PyTorch (Targets.cpp).
void runTargetsSection(BenchRun &run);

/// The sweep, its table and the byte, numerical and auto checks
/// (LinearSweep.cpp).
void runLinearSection(BenchRun &run);

/// The collectives table (CollectiveBench.cpp).
void runCollectivesSection(BenchRun &run);

/// The compile-time table (CompileBench.cpp).
void runCompileSection(BenchRun &run);

/// The fused GELU-tanh kernel against a copy, GB/s (ElementwiseBench.cpp).
void runElementwiseSection(BenchRun &run);

/// Transformer blocks: fused / unfused / gather-weight and PyTorch DTensor
/// (BlocksBench.cpp).
void runBlocksSection(BenchRun &run);
/// The blocks section's MPI worker: `mpirun ... shardlin-bench
/// --mpi-blocks-worker=CASES --mpi-out=OUT` (each rank writes OUT.<rank>).
int blocksMpiWorkerMain(int argc, char **argv, const std::string &casesPath,
                        const std::string &outPath, const TimingOptions &opt);

/// The summary, the JSON and the plot (Report.cpp). Returns the exit status.
int reportSummary(BenchRun &run);

} // namespace shardlin::bench

#endif // SHARDLIN_BENCH_BENCHRUN_H
