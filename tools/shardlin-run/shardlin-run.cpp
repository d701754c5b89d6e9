//===- shardlin-run.cpp - Compile and run a shardlin program --------------===//
//
//   shardlin-run FILE.mlir --world-size=W
//                [--backend=threads|mpi|cuda-local|nccl] [--device=N]
//                [--entry=NAME] [--jit] --arg=PATH... --out=PATH...
//
// Parses FILE, lowers any shardlin.linear, translates the entry function to
// a runtime Program and runs it on W ranks (see shardlin/runtime/tooling/Runner.h for
// the .npy path conventions). --emit-program writes the Program's text form
// instead, for shardlin-exec on machines without LLVM. --jit compiles the
// module to native code instead (--shardlin-lower-to-llvm and MLIR's
// ExecutionEngine, shardlin/Execution/Jit.h) and runs that on the same
// ranks, with the same files, agreement and errors.
//
//===----------------------------------------------------------------------===//

#include "shardlin/Execution/Jit.h"
#include "shardlin/Execution/ProgramBuilder.h"
#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/program/ProgramText.h"
#include "shardlin/runtime/backends/Mpi.h"
#include "shardlin/runtime/tooling/Flags.h"
#include "shardlin/runtime/tooling/Runner.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdio>
#include <memory>

using namespace llvm;
namespace rt = ::shardlin::rt;

namespace {
cl::OptionCategory category("shardlin-run options");
cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input .mlir>"),
                               cl::Required, cl::cat(category));
cl::opt<int> worldSize("world-size",
                       cl::desc("Number of ranks (must match the placements; "
                                "under mpirun, the MPI world size)"),
                       cl::init(0), cl::cat(category));
// The description comes from the backend registry.
cl::opt<std::string> backend("backend", cl::desc("Backend"),
                             cl::init("threads"), cl::cat(category));
cl::opt<int> device("device",
                    cl::desc("GPU for the GPU backends (cuda-local: the "
                             "shared one, default 0; nccl: under mpirun this "
                             "process's, default the node-local rank, else "
                             "the first of W)"),
                    cl::init(-1), cl::cat(category));
cl::opt<std::string> entry("entry",
                           cl::desc("Entry function (default: the only "
                                    "public function, or main)"),
                           cl::init(""), cl::cat(category));
cl::list<std::string> argPaths("arg",
                               cl::desc("One .npy per entry argument, in "
                                        "order; {rank} is replaced by the "
                                        "rank"),
                               cl::cat(category));
cl::list<std::string> outPaths("out",
                               cl::desc("One .npy per result; {rank} is "
                                        "replaced by the rank (without it, "
                                        "rank 0 writes the file)"),
                               cl::cat(category));
cl::opt<double> timeout("timeout",
                        cl::desc("Seconds before a collective that has not "
                                 "completed fails on every rank (default: "
                                 "300)"),
                        cl::init(300.0), cl::cat(category));
cl::opt<int> blasThreads("blas-threads",
                         cl::desc("OpenBLAS threads per rank (default 0: "
                                  "cores / ranks per host)"),
                         cl::init(0), cl::cat(category));
cl::opt<mlir::shardlin::StrategyOption> strategy(
    "strategy",
    cl::desc("Lowering strategy for shardlin.linear: auto (cost model), "
             "activations or gather-weight"),
    mlir::shardlin::strategyOptionValues(),
    cl::init(mlir::shardlin::StrategyOption::Auto), cl::cat(category));
cl::opt<bool> verbose(
    "verbose",
    cl::desc("Print, per linear, the chosen strategy and every strategy's "
             "bytes and estimate, and per rank the phases' times and traffic"),
    cl::init(false), cl::cat(category));
// The cost model's machine, as the pass takes it (its defaults too).
const mlir::shardlin::LowerShardedLinearOptions kPassDefaults;
cl::opt<double> latencyUs("latency-us",
                          cl::desc("Cost model: latency per collective and "
                                   "peer, in microseconds"),
                          cl::init(kPassDefaults.latencyUs), cl::cat(category));
cl::opt<double> bandwidthGBps(
    "bandwidth-gbps",
    cl::desc("Cost model: bytes each rank sends (and receives) per second, "
             "in GB/s"),
    cl::init(kPassDefaults.bandwidthGBps), cl::cat(category));
cl::opt<double> gemmGflops("gemm-gflops",
                           cl::desc("Cost model: GEMM rate per rank, in "
                                    "GFLOP/s"),
                           cl::init(kPassDefaults.gemmGflops),
                           cl::cat(category));
cl::opt<double> memoryCapMiB(
    "memory-cap-mib",
    cl::desc("Cap on the extra memory per rank a strategy may use, in MiB "
             "(0: none)"),
    cl::init(kPassDefaults.memoryCapMiB), cl::cat(category));
cl::opt<int64_t> assumedRows(
    "assumed-rows",
    cl::desc("Cost model: the rows per rank assumed for a linear whose batch "
             "dims are dynamic (their sizes come from the input files)"),
    cl::init(kPassDefaults.assumedRows), cl::cat(category));
cl::opt<std::string> emitProgram(
    "emit-program",
    cl::desc("Write the compiled program (text form, for shardlin-exec) to "
             "this path and exit without running"),
    cl::init(""), cl::cat(category));

cl::opt<bool> jit(
    "jit",
    cl::desc("Compile the module to native code (--shardlin-lower-to-llvm "
             "and MLIR's ExecutionEngine) and run that, on the CPU backends; "
             "the module may mix shardlin with upstream ops the plan executor "
             "does not run (docs/native.md)"),
    cl::init(false), cl::cat(category));

int fail(const std::string &message) {
  // One write, so lines of several MPI processes do not interleave.
  errs() << ("shardlin-run: error: " + message + "\n");
  return 1;
}
} // namespace

int main(int argc, char **argv) {
  // OpenBLAS's kernels for this CPU, if it fell back to older ones
  // (Gemm.h): before anything starts a thread.
  rt::reexecForBlasKernels(argv);
  InitLLVM init(argc, argv);
  cl::SetVersionPrinter([](raw_ostream &os) {
    os << "shardlin-run " SHARDLIN_VERSION "\n"
       << "  backends: " << rt::availableBackends() << "\n"
       << "  gemm: " << rt::availableGemmBackends() << "\n"
       << "  gpu: " << rt::describeGpuModule() << "\n"
       << "  blas: OpenBLAS with its " << rt::blasCoreName() << " kernels\n";
  });
  const std::string backendHelp = "Backend: " + rt::describeBackends();
  backend.setDescription(backendHelp);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "shardlin-run: compile and run a shardlin "
                              "program on W ranks\n");

  auto number = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return std::string(buf);
  };
  if (!(latencyUs >= 0))
    return fail("--latency-us must be >= 0, got " + number(latencyUs));
  if (!(bandwidthGBps > 0))
    return fail("--bandwidth-gbps must be > 0, got " + number(bandwidthGBps));
  if (!(gemmGflops > 0))
    return fail("--gemm-gflops must be > 0, got " + number(gemmGflops));
  if (!(memoryCapMiB >= 0))
    return fail("--memory-cap-mib must be >= 0, got " + number(memoryCapMiB));
  if (assumedRows < 1)
    return fail("--assumed-rows must be >= 1, got " +
                std::to_string(assumedRows));
  rt::RunConfig config;
  config.backend = backend;
  config.worldSize = worldSize;
  config.device = device;
  config.argPaths.assign(argPaths.begin(), argPaths.end());
  config.outPaths.assign(outPaths.begin(), outPaths.end());
  config.comm.timeoutSeconds = timeout;
  config.blasThreads = blasThreads;
  // What --jit cannot do comes first: it holds whether or not this runtime
  // was built with the backend asked for.
  const rt::BackendInfo *backendInfo = rt::findBackend(backend);
  if (jit && !emitProgram.empty())
    return fail("--emit-program writes the plan executor's program; "
                "compiled code (--jit) runs where it was compiled");
  if (jit && backendInfo && backendInfo->device != rt::DeviceKind::Host)
    return fail("--jit runs on the CPU backends (threads, mpi): compiled "
                "code calls the runtime's C ABI, which has no GPU backends; "
                "run '" + backend + "' programs without --jit");
  // Every option's range, before any per-rank work.
  if (rt::Status s = rt::checkRunFlags(config); !s)
    return fail(rt::flagMessage(s, config));

  // MPI first, so every process of an mpirun job takes part even when it
  // fails later (it then exits with an error instead of hanging its peers).
  std::unique_ptr<rt::MpiSession> mpi;
  if (backendInfo->needsMpiSession() && emitProgram.empty()) {
    rt::Status s = rt::MpiSession::create(&argc, &argv, mpi);
    if (!s)
      return fail(s.message());
  }

  mlir::DialectRegistry registry;
  mlir::shardlin::registerExecutionDialects(registry);
  if (jit)
    mlir::shardlin::registerJitDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();

  // One line per diagnostic: "file:line:col: error: message".
  bool sawError = false;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    std::string loc;
    // Line 0 is the implicit module around the file's ops: name the file.
    if (auto flc = d.getLocation()->findInstanceOf<mlir::FileLineColLoc>())
      loc = flc.getFilename().str() +
            (flc.getLine() == 0 ? std::string()
                                : ":" + std::to_string(flc.getLine()) + ":" +
                                      std::to_string(flc.getColumn())) +
            ": ";
    const char *sev = d.getSeverity() == mlir::DiagnosticSeverity::Error
                          ? "error"
                      : d.getSeverity() == mlir::DiagnosticSeverity::Warning
                          ? "warning"
                      : d.getSeverity() == mlir::DiagnosticSeverity::Remark
                          ? "remark"
                          : "note";
    if (d.getSeverity() == mlir::DiagnosticSeverity::Error)
      sawError = true;
    errs() << (loc + sev + ": " + d.str() + "\n");
    return mlir::success();
  });

  const auto compileStart = std::chrono::steady_clock::now();
  std::string errorMessage;
  auto file = mlir::openInputFile(inputFile, &errorMessage);
  if (!file)
    return fail(errorMessage);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;
  mlir::shardlin::LowerShardedLinearOptions lowering;
  lowering.strategy = strategy;
  lowering.latencyUs = latencyUs;
  lowering.bandwidthGBps = bandwidthGBps;
  lowering.gemmGflops = gemmGflops;
  lowering.memoryCapMiB = memoryCapMiB;
  lowering.assumedRows = assumedRows;
  lowering.explain = verbose;
  auto millisecondsSince = [](std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now() - start)
        .count();
  };
  // The plan executor's program, or the compiled code's signature and its
  // ranks' executors: everything after this runs both the same way.
  FailureOr<rt::Program> program = failure();
  rt::RankCallbacks::MakeExecutor executors;
  if (jit) {
    mlir::shardlin::JitOptions options;
    options.lowering = lowering;
    const double parsed = millisecondsSince(compileStart);
    auto compiled =
        mlir::shardlin::JitEntry::compile(*module, entry, options);
    if (failed(compiled) || sawError)
      return 1;
    program = (*compiled)->program();
    executors = (*compiled)->executors();
    if (verbose) {
      char line[160];
      std::snprintf(line, sizeof line,
                    "shardlin-run: jit: parsed in %.3f ms, lowered to LLVM "
                    "in %.3f ms, compiled to native code in %.3f ms\n",
                    parsed, 1e3 * (*compiled)->lowerSeconds(),
                    1e3 * (*compiled)->codegenSeconds());
      errs() << line;
    }
  } else {
    program = mlir::shardlin::buildProgram(*module, entry, lowering);
    if (failed(program) || sawError)
      return 1;
    if (verbose) {
      char line[96];
      std::snprintf(line, sizeof line, "shardlin-run: compiled in %.3f ms\n",
                    millisecondsSince(compileStart));
      errs() << line;
    }
  }

  if (!emitProgram.empty()) {
    // A run checks --world-size against the program; so does writing it.
    if (rt::Status s = rt::checkWorldSize(*program, worldSize); !s)
      return fail(rt::flagMessage(s, config));
    std::error_code ec;
    auto out = std::make_unique<ToolOutputFile>(emitProgram, ec,
                                                sys::fs::OF_Text);
    if (ec)
      return fail("cannot write '" + emitProgram + "': " + ec.message());
    out->os() << rt::serializeProgram(*program);
    out->keep();
    return 0;
  }

  config.executor = executors;
  std::vector<rt::RankResult> ranks;
  rt::Status status = rt::runProgramWithFiles(*program, config, &ranks);
  if (verbose)
    for (const rt::RankResult &rank : ranks)
      errs() << ("shardlin-run: " + rt::describeRank(rank, "load", "write") + "\n");
  if (!status)
    return fail(rt::flagMessage(status, config));
  return 0;
}
