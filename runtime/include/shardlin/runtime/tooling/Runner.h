//===- Runner.h - Run a program on every rank with .npy files ---*- C++ -*-===//
//
// What shardlin-run (and the runtime-only runner) do after they have a
// Program, as a layer on the in-memory run API (Execute.h): bind .npy files to the entry arguments of every rank, run, and
// write each rank's results. Path conventions:
//   - "{rank}" in a path is replaced by the rank number;
//   - an argument path without "{rank}" is read by every rank;
//   - for a sharded argument, a path without "{rank}" holds the GLOBAL
//     tensor, of which each rank reads only its own chunk (its rows or row
//     pieces, with pread: a rank's memory and I/O are those of its chunk);
//     a path with "{rank}" may also name per-rank shard files, each holding
//     exactly its rank's chunk: a file of the global shape is read as the
//     global tensor, any other must have the shape its chunk spec gives
//     that rank;
//   - an output path without "{rank}" is written by rank 0 only.
// Before running, the ranks agree (one all_reduce) that all of them loaded
// their inputs, so a bad file on one rank fails every rank at once instead of
// leaving the others waiting in a collective.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_RUNNER_H
#define SHARDLIN_RUNTIME_RUNNER_H

#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/base/ChunkLayout.h"
#include "shardlin/runtime/exec/Execute.h"
#include "shardlin/runtime/program/Program.h"
#include "shardlin/runtime/base/Status.h"

#include <string>
#include <vector>

namespace shardlin::rt {

/// A run whose inputs and outputs are .npy files.
struct RunConfig : RunOptions {
  std::vector<std::string> argPaths;
  std::vector<std::string> outPaths;
  /// A safetensors file (--params) that supplies every argument holding a
  /// parameter (Argument::parameter) by its name, through the same path as
  /// --arg=FILE.safetensors:NAME (each rank reads its chunk of a sharded
  /// one). argPaths then lists only the other arguments, in order. Empty:
  /// argPaths lists every argument.
  std::string paramsPath;
  /// How the ranks' plans are built (RankCallbacks::planOptions).
  PlanOptions plan;
  /// For a compiled program (Program::compiled): what executes each rank
  /// (RankCallbacks::executor). The files are bound, agreed on and written
  /// as for any other program.
  RankCallbacks::MakeExecutor executor;
  /// The tools' --verbose: they print what the ranks did (describeRank) and
  /// how each GEMM was lowered; the runner itself prints nothing.
  bool verbose = false;
};

/// Copies rank `rank`'s chunk of a global row-major tensor (split by `spec`)
/// into `out`: what a sharded entry argument is bound to.
void extractLocalChunk(const void *global,
                       const std::vector<int64_t> &globalShape, DType dtype,
                       const ChunkSpec &spec, int rank,
                       std::vector<uint8_t> &out);

/// Replaces every "{rank}" in `path`.
std::string substituteRank(const std::string &path, int rank);

/// The argument paths of a run with a parameters file: `config.argPaths`
/// (the arguments that hold no parameter, in order) with
/// `paramsPath:NAME` put in the place of each parameter argument. Without
/// a parameters file, `config.argPaths` as they are. InvalidArgument for a
/// parameters file whose name does not end in
/// ".safetensors", a program with no parameter argument, or a count of
/// paths other than that of the arguments without a parameter.
Status parameterArgPaths(const Program &program, const RunConfig &config,
                         std::vector<std::string> &out);

/// Runs `program` as described above (with parameterArgPaths' paths). For "mpi" an MpiSession must be alive.
/// On failure the status is the root cause (the failing rank's own error),
/// not the "another rank failed" of the others.
/// `ranks`, if given, receives each rank's outcome (as runProgram's).
Status runProgramWithFiles(const Program &program, const RunConfig &config,
                           std::vector<RankResult> *ranks = nullptr);

/// The tools' --verbose report of a run: the pipelined blocks (rank 0's,
/// describePipelines; every rank makes the same) and each rank's phases
/// (describeRank, with the file runner's "load" and "write").
std::vector<std::string> describeRun(const Program &program,
                                     const std::vector<RankResult> &ranks);

/// A data-parallel x tensor-parallel grid (shardlin-run --grid=DPxTP,
/// docs/training.md, "Grids"): `dataParallel` replicas of a program of TP
/// ranks on DP * TP ranks of any backend (RunOptions::replicas: world rank
/// g is rank g % TP of replica g / TP, and the program runs in its
/// replica's group). After the run, each result listed in `averaged` (a
/// parameter's gradient) is averaged over the replicas, in the rank's
/// device memory: an all-reduce across the replicas (RankRun::replicas()),
/// then a scaling by 1 / DP (f16/bf16: the sum rounded once, then the
/// quotient once more; exact for a power of 2). The paths follow Runner's
/// conventions within a replica ({rank} is the rank in the replica), and
/// "{replica}" in a path is replaced by the replica: every output path must
/// have it, so that replicas do not write the same file.
struct GridConfig {
  int dataParallel = 1;
  std::vector<size_t> averaged;
};

/// Runs `program` on a grid as described above, on config.backend.
/// config.worldSize is one replica's TP (0: the program's); under mpirun
/// the job has DP * TP processes. config.replicas is ignored (the grid's
/// dataParallel is used).
Status runGridWithFiles(const Program &program, const RunConfig &config,
                        const GridConfig &grid,
                        std::vector<RankResult> *ranks = nullptr);

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_RUNNER_H
