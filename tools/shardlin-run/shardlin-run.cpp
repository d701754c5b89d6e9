//===- shardlin-run.cpp - Compile and run a shardlin program --------------===//
//
//   shardlin-run FILE.mlir --world-size=W
//                [--backend=threads|mpi|cuda-local|nccl] [--device=N]
//                [--entry=NAME] [--jit] --arg=PATH... --out=PATH...
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
//===----------------------------------------------------------------------===//

#include "shardlin/Execution/Jit.h"
#include "shardlin/Dialect/Shardlin/Transforms/Passes.h"
#include "shardlin/Execution/ProgramBuilder.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"
#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/program/ProgramText.h"
#include "shardlin/runtime/backends/Mpi.h"
#include "shardlin/runtime/tooling/Flags.h"
#include "shardlin/runtime/tooling/Process.h"
#include "shardlin/runtime/tooling/Runner.h"
#include "shardlin/runtime/tooling/Signals.h"
#include "shardlin/Dialect/Shardlin/Transforms/ImportShard.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
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
                       cl::desc("Number of ranks; optional (default: the "
                                "placements' W, under mpirun the MPI world "
                                "size, else 1); must match the placements"),
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
                                        "order, or FILE.safetensors:NAME "
                                        "(the tensor NAME of a safetensors "
                                        "file); {rank} is replaced by the "
                                        "rank"),
                               cl::cat(category));
cl::list<std::string> outPaths("out",
                               cl::desc("One .npy per result, or "
                                        "FILE.safetensors:NAME (results "
                                        "naming one file go into it "
                                        "together); {rank} is replaced by "
                                        "the rank (without it, rank 0 writes "
                                        "the file)"),
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
cl::opt<bool> verbose(
    "verbose",
    cl::desc("Print, per linear, the chosen strategy and every strategy's "
             "bytes and estimate (the lowering's explain=true), and per rank "
             "the phases' times and traffic"),
    cl::init(false), cl::cat(category));
cl::opt<std::string> emitProgram(
    "emit-program",
    cl::desc("Write the compiled program (text form, for shardlin-exec) to "
             "this path and exit without running"),
    cl::init(""), cl::cat(category));

cl::opt<std::string> grid(
    "grid",
    cl::desc("DPxTP: DP replicas of the entry, each on its own TP ranks, on "
             "DP*TP ranks of any backend; a backward function's weight and "
             "bias gradients are averaged over the replicas; {replica} in a "
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

/// --grid's "DPxTP", both >= 1.
bool parseGrid(StringRef text, int &dp, int &tp) {
  auto [left, right] = text.split('x');
  return !left.getAsInteger(10, dp) && !right.getAsInteger(10, tp) &&
         dp >= 1 && tp >= 1;
}

/// The results of `entry` that are parameters' gradients, to average over
/// a grid's replicas: for a backward function (shardlin.backward_of = @f),
/// result i is the gradient of @f's argument i, a parameter's when that
/// argument is a weight (a sharded argument that a linear of @f takes as its
/// weight, or whose chunk, gathered or not, a gemm takes as its rhs) or the
/// bias of a linear,
/// gemm or bias_add of @f (a replicated bias). A sharded argument that is an
/// activation (an imported module's x split on its rows) keeps each
/// replica's own gradient, as do other entries' results.
std::vector<size_t> parameterGradients(mlir::ModuleOp module,
                                       StringRef entry) {
  std::vector<size_t> out;
  FailureOr<mlir::func::FuncOp> f = mlir::shardlin::selectEntry(module, entry);
  if (failed(f))
    return out;
  auto of = (*f)->getAttrOfType<mlir::FlatSymbolRefAttr>(
      "shardlin.backward_of");
  auto forward =
      of ? module.lookupSymbol<mlir::func::FuncOp>(of.getValue()) : nullptr;
  if (!forward || forward.isExternal())
    return out;
  llvm::DenseSet<mlir::Value> parameters;
  forward.walk([&](mlir::Operation *op) {
    if (auto linear = dyn_cast<mlir::shardlin::LinearOp>(op)) {
      parameters.insert(linear.getWeight());
      parameters.insert(linear.getBias());
    } else if (auto gemm = dyn_cast<mlir::shardlin::GemmOp>(op)) {
      parameters.insert(gemm.getBias());
      // The rhs of a lowered linear: the weight's chunk, perhaps gathered
      // (gather-weight) or converted.
      mlir::Value rhs = gemm.getRhs();
      while (mlir::Operation *def = rhs.getDefiningOp()) {
        if (!isa<mlir::shardlin::AllGatherOp, mlir::shardlin::ConvertOp>(def))
          break;
        rhs = def->getOperand(0);
      }
      if (auto chunk = rhs.getDefiningOp<mlir::shardlin::LocalShardOp>())
        parameters.insert(chunk.getSource());
    } else if (auto add = dyn_cast<mlir::shardlin::BiasAddOp>(op)) {
      parameters.insert(add.getBias());
    }
  });
  for (auto [i, arg] : llvm::enumerate(forward.getArguments()))
    if (parameters.contains(arg))
      out.push_back(i);
  return out;
}

int fail(const std::string &message) {
  // One write, so lines of several MPI processes do not interleave.
  errs() << ("shardlin-run: error: " + message + "\n");
  return 1;
}

/// The lowering's flags: --lower-sharded-linear's own options (their names,
/// descriptions and defaults read from the pass), taken out of argv before
/// llvm::cl parses the rest: `--NAME=VALUE`, or `--NAME` for a boolean.
/// Returns the pass-option string ("strategy=activations latency-us=3").
std::string takeLoweringFlags(int &argc, char **argv,
                              const std::vector<mlir::shardlin::LoweringFlag>
                                  &flags) {
  std::string options;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    StringRef arg = argv[i];
    StringRef body = arg;
    if (!body.consume_front("--") && !body.consume_front("-")) {
      argv[kept++] = argv[i];
      continue;
    }
    auto [name, value] = body.split('=');
    const bool known = llvm::any_of(
        flags, [&](const mlir::shardlin::LoweringFlag &f) { return f.name == name; });
    if (!known || arg == "--") {
      argv[kept++] = argv[i];
      continue;
    }
    options += (options.empty() ? "" : " ") +
               (body.contains('=') ? body.str() : name.str() + "=true");
  }
  argc = kept;
  argv[kept] = nullptr;
  return options;
}

/// --help's section on the lowering's flags.
std::string loweringFlagsHelp(
    const std::vector<mlir::shardlin::LoweringFlag> &flags) {
  std::string text = "\nLowering options (shardlin-opt's "
                     "--lower-sharded-linear options, as flags):\n";
  size_t width = 0;
  for (const mlir::shardlin::LoweringFlag &f : flags)
    width = std::max(width, f.name.size());
  for (const mlir::shardlin::LoweringFlag &f : flags) {
    text += "  --" + f.name + "=<value>" +
            std::string(width - f.name.size() + 2, ' ') + "- " + f.description;
    // The pass's descriptions give their defaults; say it where one does not.
    if (!StringRef(f.description).contains("default"))
      text += " (default " + f.defaultValue + ")";
    text += "\n";
  }
  return text;
}
} // namespace

int main(int argc, char **argv) {
  // OpenBLAS's kernels for this CPU, if it fell back to older ones
  // (Gemm.h): before anything starts a thread.
  rt::reexecForBlasKernels(argv);
  InitLLVM init(argc, argv);
  // SIGINT, SIGTERM, SIGHUP and SIGPIPE remove the staged outputs before
  // they end the process (through LLVM's handlers, installed above): asked
  // for here, before any thread starts (the runner installs none).
  rt::installOutputSignalHandlers();
  cl::SetVersionPrinter([](raw_ostream &os) {
    os << "shardlin-run " SHARDLIN_VERSION "\n"
       << "  backends: " << rt::availableBackends() << "\n"
       << "  gemm: " << rt::availableGemmBackends() << "\n"
       << "  gpu: " << rt::describeGpuModule() << "\n"
       << "  blas: OpenBLAS with its " << rt::blasCoreName() << " kernels\n";
  });
  const std::string backendHelp = "Backend: " + rt::describeBackends();
  backend.setDescription(backendHelp);
  const std::vector<mlir::shardlin::LoweringFlag> loweringFlags =
      mlir::shardlin::lowerShardedLinearFlags();
  const std::string loweringHelp = loweringFlagsHelp(loweringFlags);
  cl::extrahelp loweringHelpSection(loweringHelp);
  const std::string loweringText =
      takeLoweringFlags(argc, argv, loweringFlags);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "shardlin-run: compile and run a shardlin "
                              "program on W ranks\n");
  std::string loweringError;
  FailureOr<mlir::shardlin::LowerShardedLinearOptions> parsedLowering =
      mlir::shardlin::parseLowerShardedLinearOptions(loweringText,
                                                     loweringError);
  if (failed(parsedLowering))
    return fail(loweringError);
  mlir::shardlin::LowerShardedLinearOptions lowering = *parsedLowering;
  lowering.explain = lowering.explain || verbose;

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
  if (failed(mlir::shardlin::refuseUpstreamParserCrash(file->getMemBufferRef(),
                                                       errs())))
    return 1;
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;
  // An upstream-form module (it holds a shard.grid) is imported first, for
  // both paths; its grid says W, which --world-size may repeat but not
  // contradict.
  FailureOr<int64_t> gridDevices =
      mlir::shardlin::importForExecution(*module);
  if (failed(gridDevices) || sawError)
    return 1;
  // A module imported from a 2-D grid is one replica of a data-parallel
  // grid: it runs as that many replicas unless --grid says otherwise.
  int moduleReplicas = 0;
  if (auto dp = (*module)->getAttrOfType<mlir::IntegerAttr>(
          mlir::shardlin::kDataParallelAttrName)) {
    if (dp.getInt() < 1 || dp.getInt() > rt::kMaxWorldSize)
      return fail(std::string(mlir::shardlin::kDataParallelAttrName) +
                  " is " + std::to_string(dp.getInt()) +
                  "; it must be a number of replicas in [1, " +
                  std::to_string(rt::kMaxWorldSize) + "]");
    moduleReplicas = int(dp.getInt());
  }
  // With --grid the module's grid is one replica's (its TP ranks); --grid's
  // own checks below say the rest.
  if (*gridDevices > 0 && grid.empty() && moduleReplicas == 0 &&
      worldSize > 0 &&
      worldSize != *gridDevices)
    return fail("--world-size=" + std::to_string(worldSize) +
                " conflicts with the module's shard.grid of " +
                std::to_string(*gridDevices) +
                " devices: an upstream-form module runs on its grid's "
                "devices (drop --world-size, or give " +
                std::to_string(*gridDevices) + ")");
  if (*gridDevices > 0 && grid.empty() && moduleReplicas == 0 && mpi &&
      mpi->worldSize() != *gridDevices)
    return fail("the MPI job has " + std::to_string(mpi->worldSize()) +
                " processes but the module's shard.grid has " +
                std::to_string(*gridDevices) +
                " devices: run it with mpirun -np " +
                std::to_string(*gridDevices));
  auto millisecondsSince = [](std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now() - start)
        .count();
  };
  // A grid's results to average, read before the entry is lowered.
  rt::GridConfig gridConfig;
  int tensorParallel = 0;
  // How messages name the grid: the flag, or the module's.
  std::string gridName;
  if (!grid.empty()) {
    if (!parseGrid(grid, gridConfig.dataParallel, tensorParallel))
      return fail("--grid=" + grid + ": expected DPxTP, two integers >= 1 "
                  "(e.g. --grid=2x4)");
    if (!emitProgram.empty())
      return fail("--grid runs a program; --emit-program writes one");
    gridName = "--grid=" + grid;
  } else if (moduleReplicas > 0 && emitProgram.empty()) {
    gridConfig.dataParallel = moduleReplicas;
    tensorParallel = -1; // the program's
    gridName = "the module's data-parallel grid of " +
               std::to_string(moduleReplicas) + " replicas";
  }
  if (!gridName.empty())
    gridConfig.averaged = parameterGradients(*module, entry);
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
    if (program->worldSize == 0)
      program->worldSize = *gridDevices;
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
    // The grid's W even where nothing is split (every value replicated).
    if (program->worldSize == 0)
      program->worldSize = *gridDevices;
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
  rt::Status status;
  if (!gridName.empty()) {
    const int tp = program->worldSize > 0 ? int(program->worldSize) : 1;
    if (tensorParallel < 0)
      tensorParallel = tp;
    const int w = gridConfig.dataParallel * tensorParallel;
    if (tp != tensorParallel)
      return fail(gridName + ": '" + program->name + "' runs on " +
                  std::to_string(tp) + " ranks, not " +
                  std::to_string(tensorParallel));
    if (grid.empty()) // the module's, now that TP is known
      gridName += " of " + std::to_string(tensorParallel) + " ranks";
    if (worldSize != 0 && worldSize != w)
      return fail(gridName + " has " + std::to_string(w) +
                  " ranks; --world-size=" + std::to_string(worldSize));
    if (mpi && mpi->worldSize() != w)
      return fail(gridName + " has " + std::to_string(w) +
                  " ranks, but the MPI job has " +
                  std::to_string(mpi->worldSize()) +
                  " processes: run it with mpirun -np " + std::to_string(w));
    config.worldSize = tensorParallel;
    config.replicas = gridConfig.dataParallel;
    status = rt::runGridWithFiles(*program, config, gridConfig, &ranks);
  } else {
    status = rt::runProgramWithFiles(*program, config, &ranks);
  }
  if (verbose) {
    if (!ranks.empty())
      for (const std::string &line : rt::describePipelines(*program, ranks[0]))
        errs() << ("shardlin-run: " + line + "\n");
    for (const rt::RankResult &rank : ranks)
      errs() << ("shardlin-run: " + rt::describeRank(rank, "load", "write") + "\n");
  }
  if (!status)
    return fail(rt::flagMessage(status, config));
  return 0;
}
