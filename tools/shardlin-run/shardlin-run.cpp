//===- shardlin-run.cpp - Compile and run a shardlin program --------------===//
//
//   shardlin-run FILE.mlir [RUN FLAGS] [--entry=NAME] [--jit [--jit-cpu=NAME]]
//                [--grid=DPxTP] [LOWERING FLAGS] --arg=PATH... --out=PATH...
//
// Parses FILE, imports it if it is in the upstream form (it holds a
// shard.grid, whose size is then W: docs/interop.md), lowers any
// shardlin.linear, translates the entry function to a runtime Program and
// runs it on W ranks (see shardlin/runtime/tooling/Runner.h for the .npy
// path conventions). --emit-program writes the Program's text form
// instead, for shardlin-exec on machines without LLVM. --jit compiles the
// module to native code instead (--shardlin-lower-to-llvm and MLIR's
// ExecutionEngine, shardlin/Execution/Jit.h) and runs that on the same
// ranks, with the same files, agreement and errors.
//
// The run flags (--world-size, --backend, ...) are shardlin-exec's, from one
// table (shardlin/runtime/tooling/Flags.h); the lowering flags are the
// pass's options. This file only parses the command line: the compile and
// the run are shardlin/Execution/RunModule.h's.
//
//===----------------------------------------------------------------------===//

#include "shardlin/Dialect/Shardlin/Transforms/Passes.h"
#include "shardlin/Execution/RunModule.h"
#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/backends/Mpi.h"
#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/tooling/Flags.h"
#include "shardlin/runtime/tooling/Process.h"
#include "shardlin/runtime/tooling/Runner.h"
#include "shardlin/runtime/tooling/Signals.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <set>
#include <string_view>

using namespace llvm;
namespace rt = ::shardlin::rt;
namespace sl = ::mlir::shardlin;

namespace {
cl::OptionCategory category("shardlin-run options");
cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input .mlir>"),
                               cl::Required, cl::cat(category));
cl::opt<std::string> entry("entry",
                           cl::desc("Entry function (default: the only "
                                    "public function, or main)"),
                           cl::init(""), cl::cat(category));
cl::opt<std::string> emitProgram(
    "emit-program",
    cl::desc("Write the compiled program (text form, for shardlin-exec) to "
             "this path and exit without running"),
    cl::init(""), cl::cat(category));
cl::opt<std::string> grid(
    "grid",
    cl::desc("DPxTP: DP replicas of the entry, each on its own TP ranks, on "
             "DP*TP ranks of any backend; a backward function's parameter "
             "gradients (weights, biases, norm weights) are averaged over the "
             "replicas; {replica} in a "
             "path is the replica, {rank} the rank in it (docs/training.md, "
             "\"Grids\")"),
    cl::init(""), cl::cat(category));
cl::opt<bool> jit(
    "jit",
    cl::desc("Compile the module to native code (--shardlin-lower-to-llvm "
             "and MLIR's ExecutionEngine) and run that, on the CPU backends; "
             "the module may mix shardlin with upstream ops the plan executor "
             "does not run (docs/native.md)"),
    cl::init(false), cl::cat(category));
cl::opt<std::string> jitCpu(
    "jit-cpu",
    cl::desc("With --jit: the CPU to compile for, 'host' (the default: this "
             "machine's CPU and features) or an LLVM CPU name such as "
             "x86-64-v2, whose features alone the code then uses "
             "(docs/native.md)"),
    cl::value_desc("NAME"), cl::init(""), cl::cat(category));

int fail(const std::string &message) {
  // One write, so lines of several MPI processes do not interleave.
  errs() << ("shardlin-run: error: " + message + "\n");
  return 1;
}

void printVersion(raw_ostream &os) {
  os << "shardlin-run " SHARDLIN_VERSION "\n"
     << "  backends: " << rt::availableBackends() << "\n"
     << "  gemm: " << rt::availableGemmBackends() << "\n"
     << "  gpu: " << rt::describeGpuModule() << "\n"
     << "  blas: OpenBLAS with its " << rt::blasCoreName() << " kernels\n";
}

/// The run flags' --help section. A run flag that is also one of the
/// lowering's (--overlap-chunks) is the lowering's here: takeLoweringFlags
/// takes it first, and the program it writes says it to the run.
std::string runFlagsSection(const std::vector<sl::LoweringFlag> &lowering) {
  std::set<std::string_view> names;
  for (const sl::LoweringFlag &flag : lowering)
    names.insert(flag.name);
  return "\nRun options (shardlin-exec's too):\n" +
         rt::runFlagsHelp(names, "Here the lowering's option of this name "
                                 "(below): the program carries it to the "
                                 "run");
}
} // namespace

int main(int argc, char **argv) {
  // OpenBLAS's kernels for this CPU, if it fell back to older ones
  // (Process.h): before anything starts a thread.
  rt::reexecForBlasKernels(argv);
  InitLLVM init(argc, argv);
  // SIGINT, SIGTERM, SIGHUP and SIGPIPE remove the staged outputs before
  // they end the process (through LLVM's handlers, installed above): asked
  // for here, before any thread starts (the runner installs none).
  rt::installOutputSignalHandlers();
  cl::SetVersionPrinter(printVersion);
  const std::vector<sl::LoweringFlag> loweringFlags =
      sl::lowerShardedLinearFlags();
  const std::string runHelp = runFlagsSection(loweringFlags);
  const std::string loweringHelp = sl::loweringFlagsHelp(loweringFlags);
  cl::extrahelp runHelpSection(runHelp), loweringHelpSection(loweringHelp);
  const std::string loweringText =
      sl::takeLoweringFlags(argc, argv, loweringFlags);
  rt::RunConfig config;
  if (rt::Status s = rt::takeRunFlags(argc, argv, config); !s)
    return fail(s.message());
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "shardlin-run: compile and run a shardlin "
                              "program on W ranks\n");
  sl::RunModuleOptions options;
  options.inputFile = inputFile;
  options.entry = entry;
  options.jit = jit;
  options.jitCpu = jitCpu;
  options.emitProgram = !emitProgram.empty();
  options.grid = grid;
  options.verbose = config.verbose;
  std::string error;
  FailureOr<sl::LowerShardedLinearOptions> lowering =
      sl::parseLowerShardedLinearOptions(loweringText, error);
  if (failed(lowering))
    return fail(error);
  options.lowering = *lowering;
  options.lowering.explain = options.lowering.explain || config.verbose;
  if (std::string message = sl::checkRunModuleOptions(options, config);
      !message.empty())
    return fail(message);
  // Every option's range, before any per-rank work.
  if (rt::Status s = rt::checkRunFlags(config); !s)
    return fail(rt::flagMessage(s, config));

  // MPI first, so every process of an mpirun job takes part even when it
  // fails later (it then exits with an error instead of hanging its peers).
  std::unique_ptr<rt::MpiSession> mpi;
  if (rt::findBackend(config.backend)->needsMpiSession() &&
      !options.emitProgram)
    if (rt::Status s = rt::MpiSession::create(&argc, &argv, mpi); !s)
      return fail(s.message());

  mlir::DialectRegistry registry;
  sl::registerRunDialects(registry, options);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  FailureOr<sl::CompiledRun> run = sl::compileForRun(
      context, options, config, mpi ? mpi->worldSize() : 0, error);
  if (failed(run))
    return error.empty() ? 1 : fail(error);
  if (!run->compileReport.empty())
    errs() << ("shardlin-run: " + run->compileReport + "\n");
  if (options.emitProgram) {
    rt::Status s = sl::writeCompiled(*run, config, emitProgram);
    return s ? 0 : fail(rt::flagMessage(s, config));
  }
  std::vector<rt::RankResult> ranks;
  rt::Status status = sl::runCompiled(*run, config, &ranks);
  if (config.verbose)
    for (const std::string &line : rt::describeRun(run->program, ranks))
      errs() << ("shardlin-run: " + line + "\n");
  if (!status)
    return fail(rt::flagMessage(status, config));
  return 0;
}
