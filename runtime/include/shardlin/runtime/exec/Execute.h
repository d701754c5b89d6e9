//===- Execute.h - Run a program in memory on W ranks -----------*- C++ -*-===//
//
// How ranks run a program in memory. A caller with a compiled Program and
// its own buffers (host memory, or the memory of the ranks' device) runs it
// on the ranks of a backend (backends/Registry.h's runProgram, which builds
// on runRank below) and gets every rank's status and traffic:
//
//   rt::RunOptions options;           // backend "threads", W from the program
//   rt::RankCallbacks callbacks;
//   callbacks.bind = [&](const rt::Plan &plan, rt::RankDevice &device,
//                        rt::RankBuffers &buffers) {
//     buffers.args = {x[plan.rank()].data(), w.data()};
//     buffers.results = {y[plan.rank()].data()};
//     return rt::Status::ok();
//   };
//   std::vector<rt::RankResult> ranks;
//   rt::Status s = rt::runProgram(program, options, callbacks, &ranks);
//
// Every rank builds its plan, binds its buffers, then all ranks agree (one
// all_reduce) that every rank is ready, runs the same program and holds the
// same replicated arguments (RunOptions::checkReplicated) before the
// first collective of the program: a bad input on one rank fails every rank
// at once instead of leaving the others waiting. A rank that stops because
// another one failed reports StatusCode::Aborted; the status returned is the
// root cause (the first failure that is not Aborted).
//
// A caller that times or repeats the run (the bench, the replay tests) sets
// RankCallbacks::run: it then gets the bound plan (RankRun) in place of the
// single execution and executes it as often as it likes.
//
// What executes a rank's program is pluggable: the plan executor by default,
// or, for a compiled program (Program::compiled: an entry's signature whose
// body is native code, shardlin-run --jit), the RankExecutor that
// RankCallbacks::executor makes for the rank. Everything around the
// execution (sizes, binding, the agreement, RankRun, finish) is the same.
//
// A program whose plain arguments have dynamic dims (`?`, batch sizes known
// only at run time) needs RankCallbacks::argShapes: each rank gives its
// arguments' shapes, the ranks exchange their sizes in one more all_reduce
// before the plans are built (every rank's plan needs every rank's sizes),
// and a bad shape on one rank fails every rank there. RankCallbacks::plans
// keeps the plans of each distinct set of sizes for later runs.
//
// The file-based runner (tooling/Runner.h) is a layer on top: its bind reads .npy
// files, its finish writes them.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_EXEC_EXECUTE_H
#define SHARDLIN_RUNTIME_EXEC_EXECUTE_H

#include "shardlin/runtime/exec/Device.h"
#include "shardlin/runtime/comm/Communicator.h"
#include "shardlin/runtime/exec/Plan.h"
#include "shardlin/runtime/exec/PlanCache.h"
#include "shardlin/runtime/program/Program.h"
#include "shardlin/runtime/base/Status.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace shardlin::rt {

/// A program as one run hands it to its ranks: a single shared copy (every
/// rank's plan holds it; no rank copies it) and what identifies it, computed
/// once per run, not per rank: its text form (ProgramText.h; the plan
/// cache's key) and a fingerprint of that text without the source
/// locations, which do not change what runs (what the ranks' agreement
/// compares).
class SharedProgram {
public:
  explicit SharedProgram(const Program &program);
  explicit SharedProgram(std::shared_ptr<const Program> program);

  const Program &program() const { return *program_; }
  const std::shared_ptr<const Program> &shared() const { return program_; }
  const std::shared_ptr<const std::string> &text() const { return text_; }
  uint64_t fingerprint() const { return fingerprint_; }

private:
  std::shared_ptr<const Program> program_;
  std::shared_ptr<const std::string> text_;
  uint64_t fingerprint_ = 0;
};

struct RunOptions {
  /// A name from backendRegistry(): "threads", "mpi", "cuda-local" (W ranks
  /// as threads sharing one GPU) or "nccl" (one GPU per rank: one process per
  /// rank under mpirun, else one process driving W GPUs from W threads).
  std::string backend = "threads";
  /// Number of ranks (of one replica, on a grid: see `replicas`); for mpi
  /// (and nccl under mpirun) it must match the MPI world (0: take it from
  /// MPI, or from the program otherwise).
  int worldSize = 0;
  /// The GPU, for the GPU backends; -1 picks one. cuda-local: the device all
  /// ranks share (default 0). nccl under mpirun: this process's device
  /// (default: its node-local rank modulo the visible devices). nccl without
  /// mpirun: the first of the W consecutive devices of the ranks (default 0).
  /// Must stay -1 for the CPU backends.
  int device = -1;
  CommOptions comm;
  /// OpenBLAS threads per rank (a process-wide setting); 0 leaves OpenBLAS
  /// as it is. The policy is the caller's: the file runner, the tools and
  /// the C ABI pass defaultBlasThreads (tooling/Process.h), cores / ranks
  /// per host.
  int blasThreads = 0;
  /// Backends whose ranks are threads of this process (threads,
  /// cuda-local, nccl without mpirun): once a rank has failed, give up on
  /// the ranks still in argShapes, bind or finish min(timeout, 2 s) later,
  /// instead of waiting for them (ranks in the runtime itself are waited for: its
  /// waits are collectives with the timeout). A rank stuck outside the
  /// runtime's timed waits (e.g. reading an input that never arrives) would
  /// otherwise hold runProgram forever. Those ranks get DeadlineExceeded,
  /// naming the callback, and their threads are detached: they keep a copy of the program
  /// and the callbacks, but whatever the callbacks reference must stay valid
  /// until the process ends (the file runner's does; the tools then exit).
  /// Under mpi (one process per rank) nothing can be given up on; instead
  /// the ranks' agreements wait lateRankGraceSeconds longer than the
  /// timeout, so that a rank whose input wait (bounded by the timeout)
  /// failed still joins them and every rank names it.
  bool abandonLateRanks = false;
  /// A data-parallel grid (docs/training.md, "Grids"): `replicas` copies of
  /// the program's W ranks run side by side on replicas * W ranks of the
  /// backend (mpi and nccl under mpirun: the launcher's world, which must be
  /// that many; worldSize stays one replica's W). World rank g is rank
  /// g % W of replica g / W: each splits the world (Communicator::split)
  /// into its replica's group, where the program runs, and the group of the
  /// ranks with its rank in every replica (RankRun::replicas()). Every
  /// backend runs grids.
  int replicas = 1;
  /// Check, before the program's first collective, that every replicated
  /// argument (Argument::replicated) has the same shape and bytes on every
  /// rank, failing every rank with an error that names the argument and
  /// the ranks that differ (exec/Replicated.h). It costs a hash of those
  /// arguments on each rank (on a GPU, after their copy to the host) and a
  /// slot per rank and argument in the ranks' agreement (docs/robustness.md,
  /// "Replicated arguments"). false trusts the caller.
  bool checkReplicated = true;
  /// A test seam: if set, each rank's communicator of the threads and mpi
  /// backends is passed through it before the run (the fault tests wrap it
  /// in one that injects faults).
  std::function<std::unique_ptr<Communicator>(std::unique_ptr<Communicator>)>
      wrapCommunicator;
};

/// How long ranks that are late because of a callback (RunOptions::
/// abandonLateRanks) are waited for once another rank failed:
/// min(timeout, 2 s).
inline double lateRankGraceSeconds(const CommOptions &comm) {
  return comm.timeoutSeconds < 2.0 ? comm.timeoutSeconds : 2.0;
}

/// One rank's caller-owned buffers, in the memory of the rank's device:
/// args[i] holds plan.argShape(i) elements of plan.argType(i), results[i]
/// has room for plan.resultShape(i) of plan.resultType(i).
struct RankBuffers {
  std::vector<const void *> args;
  std::vector<void *> results;
  /// Only for a compiled program's results whose shape has a `?` (a size
  /// its run decides; Program::compiled): bind leaves results[i] null, and
  /// each run sets results[i] to memory the executor owns (until its next
  /// run or the rank's end) and resultShapes[i] to the shape. Empty
  /// otherwise.
  std::vector<std::vector<int64_t>> resultShapes;
};

/// Executes one rank's compiled program (Program::compiled) where the plan
/// executor would run its plan: RankCallbacks::executor makes one per rank,
/// over the rank's communicator and device, and the rank's plan (built from
/// the program's signature) gives its arguments' and results' shapes.
class RankExecutor {
public:
  virtual ~RankExecutor() = default;
  /// Runs the program once: reads buffers.args (the plan's argShape(i) each)
  /// and writes buffers.results (resultShape(i) each; for a shape with a
  /// `?`, sets results[i] and resultShapes[i], see RankBuffers). Its
  /// collectives go through the rank's communicator, so that their traffic,
  /// timeouts and failures are the runtime's; an error fails the rank.
  virtual Status run(RankBuffers &buffers) = 0;
};

/// One rank's plan, bound and agreed on, as RankCallbacks::run receives it:
/// what the default path would execute once.
class RankRun {
public:
  /// `executor`, if given, executes in place of the plan (a compiled
  /// program's).
  RankRun(Plan &plan, Communicator &comm, RankDevice &device,
          RankBuffers &buffers, RankExecutor *executor = nullptr,
          Communicator *replicas = nullptr)
      : plan_(plan), comm_(comm), device_(device), buffers_(buffers),
        executor_(executor), replicas_(replicas) {}
  RankRun(const RankRun &) = delete;
  RankRun &operator=(const RankRun &) = delete;

  const Plan &plan() const { return plan_; }
  /// The communicator the program's collectives go through (device memory
  /// on the GPU backends). The caller may make collectives of its own on it
  /// between executions (barriers, gathers of timings): they are not
  /// counted in stats().
  Communicator &comm() { return comm_; }
  RankDevice &device() { return device_; }
  /// On a grid (RunOptions::replicas > 1): the ranks that hold this rank's
  /// place in every replica, in replica order, over the same memory as
  /// comm() (e.g. for averaging gradients across the replicas). Null
  /// otherwise.
  Communicator *replicas() { return replicas_; }
  /// The buffers bind filled. Their contents may change between
  /// executions (new inputs for a replay); the tables must keep matching
  /// the plan, which execute() checks again.
  RankBuffers &buffers() { return buffers_; }

  /// Runs the plan (or the compiled program's executor) once on buffers(),
  /// exactly as the default path does.
  Status execute();

  /// The traffic of the last execute() alone, and of all of them summed
  /// (what RankResult::stats reports). Each is the difference of the
  /// communicator's counters across execute(), so it holds whatever the
  /// caller does to them (resetStats included) in between.
  const CommStats &lastStats() const { return last_; }
  const CommStats &stats() const { return total_; }
  /// How many times execute() ran (successfully or not).
  int executions() const { return executions_; }

private:
  Plan &plan_;
  Communicator &comm_;
  RankDevice &device_;
  RankBuffers &buffers_;
  RankExecutor *executor_;
  Communicator *replicas_;
  CommStats last_, total_;
  int executions_ = 0;
  /// The lane of the plan's pipelined blocks (RankDevice::createCommLane),
  /// made at the first execute() that needs it and kept for the replays.
  std::unique_ptr<CommLane> lane_;
};

struct RankCallbacks {
  /// Required for a program whose plain arguments have dynamic dims, unused
  /// otherwise: called on the rank's thread before its plan is built, fills
  /// shapes[i] with the shape argument i has on `rank` (every dim; it may
  /// be left empty for an argument without dynamic dims). The static dims
  /// are checked against the program (dynamicSizesOf, naming `names[i]`,
  /// e.g. the file, when given). A failure here fails every rank, the
  /// others with Aborted.
  std::function<Status(int rank, std::vector<std::vector<int64_t>> &shapes,
                       std::vector<std::string> &names)>
      argShapes;
  /// Optional: where the ranks' plans are kept between runs (PlanCache.h),
  /// for ranks on host memory; a rank whose sizes were seen before reuses
  /// its plan. Without it each run builds its plans. (With
  /// RunOptions::abandonLateRanks a rank given up on may still give its plan
  /// back later: the cache must then live as long as the process.)
  PlanCache *plans = nullptr;
  /// Called on the rank's thread once its plan is built, before the ranks
  /// agree that they are ready: fills `buffers` (the device's copyFromHost
  /// and allocator serve callers whose data is on the host). A failure here
  /// fails every rank, the others with Aborted.
  std::function<Status(const Plan &plan, RankDevice &device,
                       RankBuffers &buffers)>
      bind;
  /// Optional: called on the rank's thread after bind, the bytes of input
  /// files the rank read (RankResult::bytesLoaded).
  std::function<uint64_t(int rank)> loadedBytes;
  /// Required for a compiled program (Program::compiled), unused otherwise:
  /// called on the rank's thread after bind, before the ranks agree that
  /// they are ready, to make the rank's executor over its communicator and
  /// device (both outlive the executor, which is destroyed before the rank
  /// ends). A failure here fails every rank, the others with Aborted.
  /// How the rank's plan is built (Plan.h): GEMM epilogues, and the
  /// row chunks of its pipelined blocks (RunOptions::overlapChunks).
  PlanOptions planOptions;
  /// RunOptions::checkReplicated: runProgram sets it here and in
  /// perReplica's callbacks; a caller of runRank sets it itself.
  bool checkReplicated = true;
  using MakeExecutor = std::function<Status(
      const Plan &plan, Communicator &comm, RankDevice &device,
      std::unique_ptr<RankExecutor> &out)>;
  MakeExecutor executor;
  /// Optional: replaces the single execution of the plan, for callers that
  /// time or repeat it. Called on the rank's thread once the ranks agreed
  /// that all are ready, with comm's stats reset; `run.execute()` runs the
  /// plan once and may be called any number of times (every rank must make
  /// the same collectives, so the same number of executions). The rank's
  /// RankResult::stats are run.stats() (the executions' traffic only) and
  /// its seconds.run the time of the whole call. An error fails this rank;
  /// on success finish follows as usual.
  std::function<Status(RankRun &run)> run;
  /// Optional: called on the rank's thread after its run succeeded (for
  /// example to copy and write the results). `agree` is a host-memory
  /// communicator over the same ranks, for agreements of the caller's own.
  std::function<Status(const Plan &plan, RankDevice &device,
                       const RankBuffers &buffers, Communicator &agree)>
      finish;
  /// Optional: called on the rank's thread when the rank is done, whatever
  /// the outcome, while its device is still alive (free device memory that
  /// bind allocated here: the device does not outlive the run).
  std::function<void(int rank)> release;
  /// Optional, for a grid (RunOptions::replicas > 1): element d holds the
  /// callbacks of replica d's ranks (each replica its own inputs and
  /// outputs; `rank` and plan.rank() in them are the rank in the replica),
  /// and the fields above are unused. Without it every replica uses the
  /// fields above.
  std::shared_ptr<const std::vector<RankCallbacks>> perReplica;
};

/// The callbacks of replica `replica`'s ranks (RankCallbacks::perReplica).
const RankCallbacks &callbacksOfReplica(const RankCallbacks &callbacks,
                                        int replica);

/// What one rank did.
struct RankResult {
  int rank = -1;
  /// Ok, the rank's own error, or Aborted when it stopped because another
  /// rank failed.
  Status status;
  /// The traffic of the program's run alone (the agreement is not counted);
  /// with RankCallbacks::run, of all its executions summed.
  CommStats stats;
  /// Wall-clock seconds of each phase this rank went through (0 for those it
  /// did not reach): building the plan, bind (loading or copying the
  /// inputs), the agreement (waiting for the other ranks included), the run
  /// (on a GPU: until its work is enqueued; finish waits for it) and finish
  /// (writing the results).
  /// `check`: hashing the replicated arguments (RunOptions::
  /// checkReplicated; 0 when nothing was checked), counted apart from bind.
  struct Phases {
    double plan = 0, bind = 0, check = 0, agree = 0, run = 0, finish = 0;
  } seconds;
  /// Whether the plan came from RankCallbacks::plans rather than being
  /// built for this run.
  bool planReused = false;
  /// The bytes of input files this rank read (RankCallbacks::loadedBytes;
  /// a sharded argument's: only its chunk), 0 if not counted.
  uint64_t bytesLoaded = 0;
  /// What the plan made of the blocks asked to overlap (Plan::pipelines).
  std::vector<PipelineInfo> pipelines;
};

/// One line for --verbose: "rank R: plan 0.01 ms, bind ..., sent N bytes in
/// C collectives", "; read N bytes of input files" if counted, and the error
/// if the rank failed; "plan 0.00 ms
/// (reused)" when the plan came from the cache. The file runners name
/// bind and finish "load" and "write".
std::string describeRank(const RankResult &rank, const char *bindName = "bind",
                         const char *finishName = "finish");

/// Lines for --verbose, one per block the plan was asked to pipeline
/// (RankResult::pipelines; every rank's plan makes the same chunks):
/// "LOC: block from instruction I to J pipelined in N row chunks" or
/// "... runs in sequence: WHY".
std::vector<std::string> describePipelines(const Program &program,
                                           const RankResult &rank);

/// One rank on a communicator the caller created: builds the plan on
/// `device` (for dynamic argument dims, after exchanging every rank's sizes
/// through `agree`), binds, agrees with the other ranks through `agree`
/// (host memory; default `comm`), runs with comm's stats reset right before
/// (once, or through callbacks.run), then finishes. The backends' runners are made
/// of this.
/// `grid` is the rank's place on a grid (runWorldRank).
struct GridPlace {
  /// RankRun::replicas().
  Communicator *replicas = nullptr;
  /// Host memory, over every rank of every replica: the agreements that
  /// can fail go through it too (once the replica's own has), so that a
  /// replica that failed to prepare stops the others before their first
  /// collective instead of leaving them waiting for it to average.
  Communicator *world = nullptr;
};
RankResult runRank(const SharedProgram &program, Communicator &comm,
                   RankDevice &device, const RankCallbacks &callbacks,
                   Communicator *agree = nullptr,
                   const GridPlace *grid = nullptr);

/// A launcher's rank: runRank on `world` when `replicas` is 1; on a grid,
/// world rank g splits `world` (and `agree`, if given) into its replica's
/// group and its place's group across the replicas (RunOptions::replicas),
/// then runs rank g % W of replica g / W with callbacksOfReplica. The
/// result's rank is g. Every rank of `world` must call it.
RankResult runWorldRank(const SharedProgram &program, int replicas,
                        Communicator &world, RankDevice &device,
                        const RankCallbacks &callbacks,
                        Communicator *agree = nullptr);

/// The most ranks a run may have.
constexpr int kMaxWorldSize = 4096;

/// InvalidArgument unless 1 <= worldSize <= kMaxWorldSize.
Status checkWorldSizeRange(int worldSize);

/// The checks of RunOptions' numbers that hold whatever the backend:
/// InvalidArgument, in the runtime's words (the tools say which flag).
Status checkRunOptions(const RunOptions &options);

/// The world size rule of every backend. `requested` is the caller's (0:
/// none); `launched` is the size a launcher or MPI fixed (0: none, the ranks
/// are threads, and W is `requested`, else the program's, else 1). Checks
/// both against the program's placements.
Status resolveWorldSize(const Program &program, int requested, int launched,
                        int &worldSize);

/// On a grid, averages result i of `run`'s rank over the replicas
/// (RankRun::replicas()), in the rank's device memory, after an
/// execution: an all-reduce, then a scaling by 1 / DP computed in float64
/// and rounded once to the result's type (f16/bf16: the sum was rounded
/// once already; exact for a power of 2). For a parameter's gradient of a
/// data-parallel step. Nothing to do off a grid.
Status averageOverReplicas(RankRun &run, size_t result);

/// The ranks a backend launches for `options`: RunOptions::replicas groups
/// of resolveWorldSize's W. `launched` as resolveWorldSize's, for the whole
/// world: a multiple of the replicas, each group's share checked as W.
Status resolveLaunchedRanks(const Program &program, const RunOptions &options,
                            int launched, int &ranks);

/// Checks a requested world size (0: none requested) against
/// the one the program was compiled for (0: any).
Status checkWorldSize(const Program &program, int requested);

/// The root cause among ranks' outcomes: the first error that is neither
/// Aborted nor DeadlineExceeded (a rank's own failure), else the first
/// that is not Aborted (a timeout, which names the rank waited for), else
/// the first error, else ok.
Status rootCause(const std::vector<RankResult> &ranks);

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_EXEC_EXECUTE_H
