//===- RunModule.h - Compile a module file and run it on ranks --*- C++ -*-===//
//
// What shardlin-run does between its command line and the runtime, as a
// library that other tools and embedders call: parse the file (refusing
// what would crash MLIR's parser), import an upstream-form module, check
// the world size against its shard.grid and the MPI job, pick a
// data-parallel grid (--grid, or the module's own) and the results to
// average over it (parameterGradients), build the plan executor's program
// or compile the entry to native code, and then write the program or run
// it with the file runner (shardlin/runtime/tooling/Runner.h).
//
//   RunModuleOptions options;                 // file, entry, --jit, --grid
//   FailureOr<CompiledRun> run =
//       compileForRun(context, options, config, mpiWorldSize, error);
//   if (failed(run)) ...                      // `error`, or diagnostics
//   rt::Status s = runCompiled(*run, config, &ranks);
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_EXECUTION_RUNMODULE_H
#define SHARDLIN_EXECUTION_RUNMODULE_H

#include "shardlin/Dialect/Shardlin/Transforms/Passes.h"
#include "shardlin/runtime/program/Program.h"
#include "shardlin/runtime/tooling/Runner.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <functional>
#include <string>
#include <vector>

namespace mlir::shardlin {

/// Where a compile's diagnostics go instead of stderr (RunModuleOptions::
/// diagnostics): the location as DiagnosticLinePrinter prints it
/// ("file:line:col", "file" or ""), the severity and the message.
using DiagnosticSink = std::function<void(
    const std::string &location, DiagnosticSeverity severity,
    const std::string &message)>;

/// Prints each diagnostic of a context as one line, "file:line:col:
/// error: message" (one write, so that the lines of several MPI processes
/// do not interleave), while it lives, and remembers whether one was an
/// error: a pass that emits an error may still succeed.
class DiagnosticLinePrinter {
public:
  /// With a `sink`, each diagnostic goes to it instead of stderr.
  explicit DiagnosticLinePrinter(MLIRContext &context,
                                 DiagnosticSink sink = nullptr);
  bool sawError() const { return sawError_; }

private:
  bool sawError_ = false;
  ScopedDiagnosticHandler handler_;
};

/// The compile side of a run: shardlin-run's flags other than the run
/// flags (those are RunConfig's, shardlin/runtime/tooling/Flags.h).
struct RunModuleOptions {
  /// The .mlir file; "-" is stdin.
  std::string inputFile;
  /// If not empty, the module's text, parsed instead of reading inputFile
  /// (which then only names the buffer in locations): for embedders that
  /// hold the module in memory (the Python package).
  std::string inputText;
  /// If set, receives the compile's diagnostics instead of stderr.
  DiagnosticSink diagnostics;
  /// The entry function (selectEntry's rules when empty).
  std::string entry;
  /// Compile the module to native code (Jit.h) instead of building the
  /// plan executor's program.
  bool jit = false;
  /// With `jit`, the CPU to compile for (JitOptions::targetCpu; --jit-cpu):
  /// empty is "host".
  std::string jitCpu;
  /// The program is to be written (--emit-program), not run.
  bool emitProgram = false;
  /// --grid's "DPxTP"; empty: the module's own grid, if it has one.
  std::string grid;
  LowerShardedLinearOptions lowering;
  /// Time the compile (CompiledRun::compileReport).
  bool verbose = false;
};

/// The registry a context needs for compileForRun with `options`.
void registerRunDialects(DialectRegistry &registry,
                         const RunModuleOptions &options);

/// A data-parallel grid to run on (runGridWithFiles).
struct GridRun {
  ::shardlin::rt::GridConfig config;
  /// One replica's ranks; -1: the program's.
  int tensorParallel = 0;
  /// How messages name it: "--grid=2x4", or the module's grid.
  std::string name;
  /// The grid came from --grid (else from the module).
  bool fromFlag = false;
};

/// An entry compiled for a run.
struct CompiledRun {
  ::shardlin::rt::Program program;
  /// The compiled code's executors (RunConfig::executor); empty for the plan
  /// executor's program. They keep the code alive.
  ::shardlin::rt::RankCallbacks::MakeExecutor executors;
  /// The module's shard.grid size (0: none).
  int64_t gridDevices = 0;
  /// Set when the entry runs as replicas of a grid (its name not empty).
  GridRun grid;
  /// The MPI job's size the checks used (0: not under MPI).
  int mpiWorldSize = 0;
  /// With RunModuleOptions::verbose, how long the compile took, one line.
  std::string compileReport;
};

/// The checks of the compile flags against the run's, before anything is
/// compiled (and before MPI starts): --jit with --emit-program or a GPU
/// backend, --jit-cpu without --jit or naming no CPU LLVM knows. The
/// message on failure, else "".
std::string checkRunModuleOptions(const RunModuleOptions &options,
                                  const ::shardlin::rt::RunConfig &config);

/// Parses, imports and compiles `options.inputFile` in `context`, and
/// checks the world size (config.worldSize, `mpiWorldSize` of an MPI job or
/// 0) against the module's grid. On failure, `error` holds the message for
/// the tool to print, or is empty when the diagnostics (printed as lines
/// while this runs) said what failed.
FailureOr<CompiledRun> compileForRun(MLIRContext &context,
                                     const RunModuleOptions &options,
                                     const ::shardlin::rt::RunConfig &config,
                                     int mpiWorldSize, std::string &error);

/// Writes `run`'s program (the text form, for shardlin-exec) to `path`,
/// after checking config.worldSize against it as a run would.
::shardlin::rt::Status writeCompiled(const CompiledRun &run,
                                     const ::shardlin::rt::RunConfig &config,
                                     const std::string &path);

/// Runs `run` with the file runner, on its grid if it has one: `config` is
/// then set to one replica's world size and the replicas, so that
/// ::shardlin::rt::flagMessage names the grid in an error.
::shardlin::rt::Status
runCompiled(const CompiledRun &run, ::shardlin::rt::RunConfig &config,
            std::vector<::shardlin::rt::RankResult> *ranks = nullptr);

/// The results of `entry` that are parameters' gradients, to average over
/// a grid's replicas: for a backward function (shardlin.backward_of = @f),
/// result i is the gradient of @f's argument i, a parameter's when that
/// argument is a weight (a sharded argument that a linear of @f takes as its
/// weight, or whose chunk, gathered or not, a gemm takes as its rhs; a
/// `shardlin.replicated` one a gemm takes as its rhs, whole or through a
/// local_slice: attention's K and V weights with more ranks than kv heads),
/// the bias of a linear, gemm or bias_add of @f (a replicated bias), a
/// sharded or replicated argument that a linalg op of @f reads as a vector
/// broadcast along its last dim (a norm's weight, LayerNorm's bias), or an
/// argument bound to a named parameter (`shardlin.parameter`). A sharded
/// argument that is an activation (an imported module's x split on its
/// rows) or a replicated x keeps each replica's own gradient, as do other
/// entries' results.
std::vector<size_t> parameterGradients(ModuleOp module, StringRef entry);

/// The lowering's flags: --lower-sharded-linear's own options (their names,
/// descriptions and defaults read from the pass), taken out of argv before
/// llvm::cl parses the rest: `--NAME=VALUE`, or `--NAME` for a boolean.
/// Returns the pass-option string ("strategy=activations latency-us=3").
std::string takeLoweringFlags(int &argc, char **argv,
                              const std::vector<LoweringFlag> &flags);

/// --help's section on the lowering's flags.
std::string loweringFlagsHelp(const std::vector<LoweringFlag> &flags);

} // namespace mlir::shardlin

#endif // SHARDLIN_EXECUTION_RUNMODULE_H
