//===- BenchCommon.h - Shared pieces of shardlin-bench ----------*- C++ -*-===//
//
// shardlin-bench measures the compiled plans (threads and MPI backends), the
// collectives on their own, and the compiler. This header holds what the
// sections share: the case descriptions, the timing protocol, deterministic
// data, what it reads of the machine (cores, load, CPU use, helper
// processes). Report.cpp writes the JSON (llvm::json).
//
// Timing protocol (all sections, after nccl-tests): warm-up runs, then
// `trials` trials of `iters` back-to-back runs. Before a trial every rank
// meets in a barrier; the trial's time is (latest end over ranks) - (earliest
// start over ranks), on CLOCK_MONOTONIC, which is shared by the threads and
// processes of one machine; one run's time is that divided by `iters`. The
// reported figure is the median over trials, with the min and max as the
// spread. `iters` is chosen so that a trial lasts about `trialSeconds`, and
// `trials` so that all trials last about `minSeconds` (within [minTrials,
// maxTrials]).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_BENCH_BENCHCOMMON_H
#define SHARDLIN_BENCH_BENCHCOMMON_H

#include "LinearTesting.h"
#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/comm/Communicator.h"
#include "shardlin/runtime/exec/Execute.h"
#include "shardlin/runtime/program/Program.h"
#include "shardlin/runtime/base/Status.h"

#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace shardlin::bench {

namespace rt = ::shardlin::rt;

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

struct TimingOptions {
  int warmup = 2;
  int minTrials = 3;
  int maxTrials = 15;
  /// Target length of all trials of one measurement, seconds.
  double minSeconds = 0.3;
  /// Target length of one trial, seconds (small cases run many iterations).
  double trialSeconds = 0.02;
  int maxItersPerTrial = 2000;
};

/// The statistics of one measurement (seconds per run).
struct Timing {
  std::vector<double> perRun; // one entry per trial
  int iters = 0;
  int trials = 0;
  double median() const;
  double min() const;
  double max() const;
};

/// Picks iters and trials from the time of one warm-up run.
void planTrials(double oneRunSeconds, const TimingOptions &opt, int &iters,
                int &trials);

double nowSeconds(); // CLOCK_MONOTONIC

/// Runs the timing protocol on one rank of `comm` (every rank calls it with
/// the same options). `run` executes the timed work once. Returns the
/// agreed per-run times on every rank (gathered through `comm`), and, in
/// `bytesPerRun`, the bytes this rank's communicator counted in one run
/// (measured on the last warm-up run) and in `bytesConsistent` whether every
/// trial counted exactly iters times that.
rt::Status timeOnRank(rt::Communicator &comm, const TimingOptions &opt,
                      const std::function<rt::Status()> &run, Timing &timing,
                      uint64_t &bytesPerRun, bool &bytesConsistent);

/// Gathers one double from every rank (allGatherV, F64). Counted by the
/// communicator's stats, so call it outside measured regions.
rt::Status gatherDoubles(rt::Communicator &comm,
                         const std::vector<double> &mine,
                         std::vector<double> &all);

//===----------------------------------------------------------------------===//
// Linear cases
//===----------------------------------------------------------------------===//

struct LinearCase {
  int id = 0;
  std::string backend = "threads"; // threads | mpi
  int64_t dim = 1;                 // 1: K split (row-wise), 0: N split
  int64_t rows = 1;                // B, per rank
  int64_t n = 256, k = 256;
  std::vector<int64_t> placements = {0};
  /// Requested: activations | gather-weight | auto (W = 1: "local").
  std::string strategy = "auto";
  /// Compiled to native code as `shardlin-run --jit` compiles it (the
  /// native path and MLIR's ExecutionEngine) instead of run by the plan
  /// executor; the same bind, timing protocol and checks.
  bool jit = false;

  int worldSize() const { return static_cast<int>(placements.size()); }
  /// Total work of the step over all ranks: 2 * W * B * N * K.
  double flops() const;
  std::string label() const;
  /// The layer as the tests describe it (LinearTesting.h): input B x K, with
  /// bias, f32, this case's strategy.
  testkit::LinearSpec spec() const;
};

/// What one case measured.
struct LinearResult {
  bool ran = false;
  std::string error;
  /// The strategy in the compiled program: local | activations |
  /// gather-weight.
  std::string chosen;
  double compileSeconds = 0;
  int blasThreads = 0;
  Timing timing;
  std::vector<uint64_t> bytesSent;      // per rank, one run
  std::vector<uint64_t> bytesPredicted; // per rank, the cost model
  bool bytesConsistent = true;          // every trial == iters x one run
  int64_t verifyFailures = 0;
  std::string verifyReport;

  uint64_t maxBytesSent() const;
  uint64_t maxBytesPredicted() const;
  bool bytesMatch() const;
};

/// Parses and lowers `c` with its strategy (testkit::compileLinear of
/// c.spec(); W = 1: "auto"). Diagnostics become the message.
rt::Status compileLinear(const LinearCase &c, rt::Program &out);

/// What runs a case: the plan executor's program, or for c.jit the compiled
/// entry's signature and its ranks' executors (testkit::jitLinear), with the
/// strategy the lowering chose (the JIT's pipeline lowers with the same
/// pass and options, so it is the plan's program's).
struct CompiledCase {
  rt::Program program;
  rt::RankCallbacks::MakeExecutor executors;
  std::string chosen;
};
rt::Status compileCase(const LinearCase &c, CompiledCase &out);

/// The strategy the lowering chose (local | activations | gather-weight),
/// as the program records it; several comma-separated if its linears
/// differ, "unrecorded" if it records none.
std::string programStrategy(const rt::Program &p);

/// Per-rank predicted bytes sent for `c` lowered with `chosen`.
std::vector<uint64_t> predictBytes(const LinearCase &c,
                                   const std::string &chosen);
/// The strategy the cost model (with the pass's default machine model)
/// would choose for `c`.
std::string modelChoice(const LinearCase &c);
/// The cost model's estimated time (us) of `strategy` for `c`.
double modelEstimateUs(const LinearCase &c, const std::string &strategy);
/// The estimate split into its latency and bandwidth terms, as text:
/// "2 collectives x 3 peers x 2 us = 12.0 us latency + 0.4 us bandwidth +
/// 1.2 us GEMM = 13.6 us".
std::string modelBreakdown(const LinearCase &c, const std::string &strategy);

//===----------------------------------------------------------------------===//
// Data
//===----------------------------------------------------------------------===//

/// Deterministic values in [-1, 1): element i of tensor `seed` is a pure
/// function of (seed, i), so any block can be generated on its own (an MPI
/// rank generates only its rows, yet sees the same values as the dense run).
void fillUniform(float *dst, int64_t count, uint64_t seed, int64_t offset = 0);

constexpr uint64_t kSeedX = 1, kSeedA = 2, kSeedB = 3;

/// Checks rows {0, B/2, B-1} of rank `rank`'s output y (B x N) against a
/// float64 reference computed from the generated data; error bound
/// (K + W + 2) * 2^-24 relative to sum |x_k a_jk| + |b_j| (the worst case of
/// f32 accumulation). Returns the failures and describes the first few.
int64_t verifyRows(const LinearCase &c, int rank, const float *x,
                   const float *a, const float *bias, const float *y,
                   std::string &report);

//===----------------------------------------------------------------------===//
// Running a case
//===----------------------------------------------------------------------===//

/// Runs `c` on the threads backend (W threads of this process) through the
/// in-memory run API (rt::runProgram; the MPI worker calls rt::runRank):
/// each rank binds its rows of X, its chunk of the global weight and the
/// bias, the ranks agree that all are ready, then the run hook times the
/// plan (or, for c.jit, the compiled code) with the timing protocol and
/// checks the output.
LinearResult runLinearThreads(const LinearCase &c, const TimingOptions &opt);

/// A dense reference run in this process: y = X A^T + b with X of M x K,
/// cblas_sgemm (bias pre-filled, beta = 1) on `threads` BLAS threads.
struct DenseResult {
  int64_t m = 0, n = 0, k = 0;
  int threads = 0;
  Timing timing;
};
DenseResult runDense(int64_t m, int64_t n, int64_t k, int threads,
                     const TimingOptions &opt);

/// Launches `mpirun -np W` on this executable in worker mode for every case
/// (all with the same W) and reads back the results. Returns an error if
/// the launch failed; per-case errors go into the results.
rt::Status runLinearMpi(const std::vector<LinearCase> &cases,
                        const TimingOptions &opt, const std::string &mpirun,
                        std::vector<LinearResult> &results);

/// The worker: `mpirun ... shardlin-bench --mpi-worker=CASES --mpi-out=OUT`.
int mpiWorkerMain(int argc, char **argv, const std::string &casesPath,
                  const std::string &outPath, const TimingOptions &opt);

/// The arguments that must be passed on to an mpirun command line for
/// an MPI launch on this machine (e.g. --allow-run-as-root as root).
std::vector<std::string> mpirunFlags(int np);

/// Runs `mpirun <flags> -np np <this executable><workerArgs>`, output to
/// the file `log`; the error carries the end of the log.
rt::Status launchMpi(const std::string &mpirun, int np,
                     const std::string &workerArgs, const std::string &log);

/// launchMpi of `workerArgs` --mpi-out=DIR/out.txt and the timing flags
/// (its log in DIR/log.txt), then each line the worker wrote to that file,
/// even after a failure, to `onLine`.
rt::Status
launchMpiWorker(const std::string &mpirun, int np,
                const std::string &workerArgs, const std::string &dir,
                const TimingOptions &opt,
                const std::function<void(std::istringstream &)> &onLine);

/// The timing options as worker command-line flags (leading space).
std::string timingFlags(const TimingOptions &opt);

/// What a PyTorch peer script (bench/torch_*.py) reported.
struct PeerRun {
  /// False when the script could not run or said "unavailable"; `message`
  /// then starts with "skipped: " and says why.
  bool available = false;
  std::string version; // from its "torch VERSION" line
  std::string message;
};

/// Runs `python script<args><timingFlags(timing)> --shapes=SHAPES` and hands
/// the rest of each "result ..." line to `onResult`. The scripts print
/// "torch VERSION" first, or "unavailable REASON" when torch is missing.
PeerRun runTorchPeer(const std::string &python, const std::string &script,
                     const std::string &args, const TimingOptions &timing,
                     const std::string &shapes,
                     const std::function<void(std::istream &)> &onResult);

/// A fresh directory under $TMPDIR (or /tmp).
std::string makeTempDir();
std::string shellQuote(const std::string &s);

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

struct CollectiveResult {
  std::string backend, op; // all_gather | reduce_scatter | all_to_all
  int worldSize = 0;
  /// nccl-tests' "size": all_gather: the gathered (receive) buffer;
  /// reduce_scatter: the send buffer; all_to_all: one rank's send buffer.
  uint64_t sizeBytes = 0;
  Timing timing;
  double algbw = 0, busbw = 0; // GB/s
  uint64_t bytesSent = 0, bytesExpected = 0; // per rank, max over ranks
  bool bytesMatch = true;
  std::string error;
};

/// Runs every (op, size) on `comm` (this rank's part); the results are
/// complete on rank 0.
rt::Status runCollectivesOnRank(rt::Communicator &comm,
                                const std::vector<uint64_t> &sizes,
                                const TimingOptions &opt,
                                std::vector<CollectiveResult> &results);

std::vector<CollectiveResult>
runCollectivesThreads(int worldSize, const std::vector<uint64_t> &sizes,
                      const TimingOptions &opt);

rt::Status runCollectivesMpi(int worldSize, const std::vector<uint64_t> &sizes,
                             const TimingOptions &opt,
                             const std::string &mpirun,
                             std::vector<CollectiveResult> &results);

int mpiCollectivesWorkerMain(int argc, char **argv,
                             const std::vector<uint64_t> &sizes,
                             const std::string &outPath,
                             const TimingOptions &opt);

//===----------------------------------------------------------------------===//
// Compile time
//===----------------------------------------------------------------------===//

struct CompileResult {
  int ops = 0;
  double parseSeconds = 0, lowerSeconds = 0, translateSeconds = 0;
  int samples = 0;
  std::string error;
  double totalSeconds() const {
    return parseSeconds + lowerSeconds + translateSeconds;
  }
  /// Parse + lower, the figure the target is about.
  double parseLowerSeconds() const { return parseSeconds + lowerSeconds; }
};

/// A module whose @main chains `ops` linears, alternating a K-split and an
/// N-split weight over 4 ranks.
std::string chainMlir(int ops);

/// Times parse, lower (strategy auto) and translation of chainMlir(ops),
/// the median of `samples` repetitions of each.
CompileResult runCompileBench(int ops, int samples);

//===----------------------------------------------------------------------===//
// Environment
//===----------------------------------------------------------------------===//

int cores(); // hardware threads, at least 1

double loadAverage(); // the 1-minute load, -1 if unknown

/// CPU time of the whole machine (busy jiffies, in seconds) and of this
/// process with its waited-for children (mpirun ranks, python helpers), to
/// tell how much of the machine other processes used during a section.
struct CpuSnapshot {
  double wall = 0, machineBusy = 0, own = 0;
};

CpuSnapshot cpuSnapshot();

/// Share of the machine's cores that other processes kept busy between two
/// snapshots (0 = quiet, 1 = every core taken).
double foreignShare(const CpuSnapshot &a, const CpuSnapshot &b);

bool fileExists(const std::string &p);

/// Runs a shell command, captures its stdout, returns its exit status.
int capture(const std::string &cmd, std::string &out);

/// `v` formatted with the printf format `f`.
std::string fmt(const char *f, double v);

/// "512 B", "1.5 KiB", ... "2.0 GiB".
std::string humanBytes(double b);

} // namespace shardlin::bench

#endif // SHARDLIN_BENCH_BENCHCOMMON_H
