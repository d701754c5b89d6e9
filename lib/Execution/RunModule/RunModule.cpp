//===- RunModule.cpp - Compile a module file and run it on ranks ----------===//

#include "shardlin/Execution/RunModule.h"
#include "shardlin/Dialect/Shardlin/IR/ArgAttrs.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"
#include "shardlin/Conversion/ShardToShardlin/ShardToShardlin.h"
#include "shardlin/Execution/Jit.h"
#include "shardlin/Execution/ProgramBuilder.h"
#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/program/ProgramText.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace rt = ::shardlin::rt;

namespace mlir::shardlin {

//===----------------------------------------------------------------------===//
// Diagnostics
//===----------------------------------------------------------------------===//

DiagnosticLinePrinter::DiagnosticLinePrinter(MLIRContext &context,
                                             DiagnosticSink sink)
    : handler_(&context, [this, sink = std::move(sink)](Diagnostic &d) {
        std::string loc;
        // Line 0 is the implicit module around the file's ops: name the
        // file.
        if (auto flc = d.getLocation()->findInstanceOf<FileLineColLoc>())
          loc =
              flc.getFilename().str() +
              (flc.getLine() == 0 ? std::string()
                                  : ":" + std::to_string(flc.getLine()) + ":" +
                                        std::to_string(flc.getColumn())) +
              ": ";
        const DiagnosticSeverity severity = d.getSeverity();
        const char *name = severity == DiagnosticSeverity::Error     ? "error"
                           : severity == DiagnosticSeverity::Warning ? "warning"
                           : severity == DiagnosticSeverity::Remark  ? "remark"
                                                                     : "note";
        sawError_ |= severity == DiagnosticSeverity::Error;
        if (sink) {
          sink(loc.empty() ? loc : loc.substr(0, loc.size() - 2), severity,
               d.str());
          return success();
        }
        llvm::errs() << (loc + name + ": " + d.str() + "\n");
        return success();
      }) {}

//===----------------------------------------------------------------------===//
// Grids
//===----------------------------------------------------------------------===//

namespace {

/// The value a gemm's rhs reads: its source through the gathers, converts
/// and rank-local views (local_shard, local_slice) of a lowered weight.
Value weightSource(Value rhs) {
  while (Operation *def = rhs.getDefiningOp()) {
    if (!isa<AllGatherOp, ConvertOp, LocalShardOp, LocalSliceOp>(def))
      break;
    rhs = def->getOperand(0);
  }
  return rhs;
}

/// Whether `op` reads its operand `use` as a vector broadcast along its
/// last loop (a norm's weight, LayerNorm's bias: `(d0, ..., dn) -> (dn)`).
bool readsAsLastDimVector(linalg::LinalgOp op, OpOperand &use) {
  if (!op.isDpsInput(&use))
    return false;
  AffineMap map = op.getMatchingIndexingMap(&use);
  return map.getNumDims() > 1 && map.getNumResults() == 1 &&
         map.getResult(0) ==
             getAffineDimExpr(map.getNumDims() - 1, map.getContext());
}

/// What `fn` uses as a parameter: `parameters`, linears' weights and the
/// biases; `shared`, a gemm's rhs and a broadcast vector, parameters when
/// every rank of the replica holds them or their chunk. A func.call's
/// operands count as its callee uses its arguments (a layer's norm helper);
/// `active` holds the functions being walked (a recursive call is skipped).
void collectParameters(func::FuncOp fn, llvm::DenseSet<Value> &parameters,
                       llvm::DenseSet<Value> &shared,
                       llvm::SmallPtrSetImpl<Operation *> &active) {
  fn.walk([&](Operation *op) {
    if (auto linear = dyn_cast<LinearOp>(op)) {
      parameters.insert(linear.getWeight());
      parameters.insert(linear.getBias());
    } else if (auto gemm = dyn_cast<GemmOp>(op)) {
      parameters.insert(gemm.getBias());
      // The rhs: a lowered linear's weight chunk (perhaps gathered or
      // converted), or a replicated weight the gemm reads whole or sliced
      // (attention's K and V with more ranks than kv heads).
      shared.insert(weightSource(gemm.getRhs()));
    } else if (auto add = dyn_cast<BiasAddOp>(op)) {
      parameters.insert(add.getBias());
    } else if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      for (OpOperand &use : op->getOpOperands())
        if (readsAsLastDimVector(linalgOp, use))
          shared.insert(use.get());
    } else if (auto call = dyn_cast<func::CallOp>(op)) {
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr());
      if (!callee || callee.isExternal() ||
          callee.getNumArguments() != call.getNumOperands() ||
          !active.insert(callee).second)
        return;
      llvm::DenseSet<Value> inner, innerShared;
      collectParameters(callee, inner, innerShared, active);
      active.erase(callee);
      for (auto [arg, operand] :
           llvm::zip(callee.getArguments(), call.getOperands())) {
        if (inner.contains(arg))
          parameters.insert(operand);
        if (innerShared.contains(arg))
          shared.insert(operand);
      }
    }
  });
}

} // namespace

std::vector<size_t> parameterGradients(ModuleOp module, StringRef entry) {
  std::vector<size_t> out;
  FailureOr<func::FuncOp> f = selectEntry(module, entry);
  if (failed(f))
    return out;
  auto of = (*f)->getAttrOfType<FlatSymbolRefAttr>("shardlin.backward_of");
  auto forward =
      of ? module.lookupSymbol<func::FuncOp>(of.getValue()) : nullptr;
  if (!forward || forward.isExternal())
    return out;
  llvm::DenseSet<Value> parameters, shared;
  llvm::SmallPtrSet<Operation *, 4> active;
  active.insert(forward);
  collectParameters(forward, parameters, shared, active);
  for (auto [i, arg] : llvm::enumerate(forward.getArguments())) {
    // A rank-local tensor (each rank its own, not marked replicated) is an
    // activation even where a gemm or a broadcast reads it.
    const bool whole = isa<ShardedType>(arg.getType()) ||
                       forward.getArgAttr(i, kReplicatedArgAttrName);
    if (forward.getArgAttr(i, kParameterArgAttrName) ||
        parameters.contains(arg) || (whole && shared.contains(arg)))
      out.push_back(i);
  }
  return out;
}

namespace {

/// --grid's "DPxTP", both >= 1.
bool parseGrid(StringRef text, int &dp, int &tp) {
  auto [left, right] = text.split('x');
  return !left.getAsInteger(10, dp) && !right.getAsInteger(10, tp) && dp >= 1 &&
         tp >= 1;
}

/// The data-parallel replicas an imported 2-D grid's module records
/// (kDataParallelAttrName), 0 when it records none.
LogicalResult moduleReplicas(ModuleOp module, int &replicas,
                             std::string &error) {
  replicas = 0;
  auto dp = module->getAttrOfType<IntegerAttr>(kDataParallelAttrName);
  if (!dp)
    return success();
  if (dp.getInt() < 1 || dp.getInt() > rt::kMaxWorldSize) {
    error = std::string(kDataParallelAttrName) + " is " +
            std::to_string(dp.getInt()) +
            "; it must be a number of replicas in [1, " +
            std::to_string(rt::kMaxWorldSize) + "]";
    return failure();
  }
  replicas = int(dp.getInt());
  return success();
}

/// The world size of an upstream-form module is its grid's: --world-size
/// may repeat it, not contradict it, and so may the MPI job.
LogicalResult checkGridDevices(int64_t gridDevices, int worldSize,
                               int mpiWorldSize, std::string &error) {
  const std::string devices = std::to_string(gridDevices);
  if (worldSize > 0 && worldSize != gridDevices) {
    error = "--world-size=" + std::to_string(worldSize) +
            " conflicts with the module's shard.grid of " + devices +
            " devices: an upstream-form module runs on its grid's devices "
            "(drop --world-size, or give " +
            devices + ")";
    return failure();
  }
  if (mpiWorldSize > 0 && mpiWorldSize != gridDevices) {
    error = "the MPI job has " + std::to_string(mpiWorldSize) +
            " processes but the module's shard.grid has " + devices +
            " devices: run it with mpirun -np " + devices;
    return failure();
  }
  return success();
}

/// The grid the entry runs on: --grid's, else the module's data-parallel
/// replicas (when running it), else none (an empty name).
LogicalResult chooseGrid(ModuleOp module, const RunModuleOptions &options,
                         int replicas, GridRun &grid, std::string &error) {
  if (!options.grid.empty()) {
    if (!parseGrid(options.grid, grid.config.dataParallel,
                   grid.tensorParallel)) {
      error = "--grid=" + options.grid +
              ": expected DPxTP, two integers >= 1 (e.g. --grid=2x4)";
      return failure();
    }
    if (options.emitProgram) {
      error = "--grid runs a program; --emit-program writes one";
      return failure();
    }
    grid.name = "--grid=" + options.grid;
    grid.fromFlag = true;
  } else if (replicas > 0 && !options.emitProgram) {
    grid.config.dataParallel = replicas;
    grid.tensorParallel = -1; // the program's
    grid.name = "the module's data-parallel grid of " +
                std::to_string(replicas) + " replicas";
  }
  // A grid's results to average, read before the entry is lowered.
  if (!grid.name.empty())
    grid.config.averaged = parameterGradients(module, options.entry);
  return success();
}

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

/// The plan executor's program, or the compiled code's signature and its
/// ranks' executors: everything after this runs both the same way.
LogicalResult compileEntry(ModuleOp module, const RunModuleOptions &options,
                           std::chrono::steady_clock::time_point start,
                           const DiagnosticLinePrinter &diagnostics,
                           CompiledRun &run) {
  char line[160];
  if (!options.jit) {
    FailureOr<rt::Program> program =
        buildProgram(module, options.entry, options.lowering);
    if (failed(program) || diagnostics.sawError())
      return failure();
    run.program = std::move(*program);
    std::snprintf(line, sizeof line, "compiled in %.3f ms",
                  millisecondsSince(start));
    run.compileReport = line;
    return success();
  }
  JitOptions jitOptions;
  jitOptions.lowering = options.lowering;
  if (!options.jitCpu.empty())
    jitOptions.targetCpu = options.jitCpu;
  const double parsed = millisecondsSince(start);
  auto compiled = JitEntry::compile(module, options.entry, jitOptions);
  if (failed(compiled) || diagnostics.sawError())
    return failure();
  run.program = (*compiled)->program();
  run.executors = (*compiled)->executors();
  std::snprintf(line, sizeof line,
                "jit: parsed in %.3f ms, lowered to LLVM in %.3f ms, "
                "compiled to native code in %.3f ms",
                parsed, 1e3 * (*compiled)->lowerSeconds(),
                1e3 * (*compiled)->codegenSeconds());
  run.compileReport = line;
  return success();
}

/// Parses `path` into `context`, refusing what would crash MLIR's parser.
OwningOpRef<ModuleOp> parseModuleFile(MLIRContext &context,
                                      const RunModuleOptions &options,
                                      std::string &error) {
  const std::string &path = options.inputFile;
  std::unique_ptr<llvm::MemoryBuffer> file =
      options.inputText.empty()
          ? openInputFile(path, &error)
          : llvm::MemoryBuffer::getMemBufferCopy(options.inputText, path);
  if (!file)
    return nullptr;
  // With a sink, its refusal is one more diagnostic for it.
  std::string refusal;
  llvm::raw_string_ostream refusalStream(refusal);
  if (failed(refuseUpstreamParserCrash(
          file->getMemBufferRef(),
          options.diagnostics ? static_cast<llvm::raw_ostream &>(refusalStream)
                              : llvm::errs()))) {
    if (options.diagnostics)
      options.diagnostics(path, DiagnosticSeverity::Error,
                          llvm::StringRef(refusal).trim().str());
    return nullptr;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  return parseSourceFile<ModuleOp>(sourceMgr, &context);
}

} // namespace

//===----------------------------------------------------------------------===//
// Compiling and running
//===----------------------------------------------------------------------===//

void registerRunDialects(DialectRegistry &registry,
                         const RunModuleOptions &options) {
  registerExecutionDialects(registry);
  if (options.jit)
    registerJitDialects(registry);
}

std::string checkRunModuleOptions(const RunModuleOptions &options,
                                  const rt::RunConfig &config) {
  // What --jit cannot do comes first: it holds whether or not this runtime
  // was built with the backend asked for.
  const rt::BackendInfo *backend = rt::findBackend(config.backend);
  if (options.jit && options.emitProgram)
    return "--emit-program writes the plan executor's program; compiled "
           "code (--jit) runs where it was compiled";
  if (options.jit && backend && backend->device != rt::DeviceKind::Host)
    return "--jit runs on the CPU backends (threads, mpi): compiled code "
           "calls the runtime's C ABI, which has no GPU backends; run '" +
           config.backend + "' programs without --jit";
  if (!options.jitCpu.empty()) {
    if (!options.jit)
      return "--jit-cpu=" + options.jitCpu +
             " names the CPU --jit compiles for; without --jit nothing is "
             "compiled to native code";
    if (std::string why = checkTargetCpu(options.jitCpu); !why.empty())
      return "--jit-cpu=" + options.jitCpu + ": " + why;
  }
  return "";
}

FailureOr<CompiledRun> compileForRun(MLIRContext &context,
                                     const RunModuleOptions &options,
                                     const rt::RunConfig &config,
                                     int mpiWorldSize, std::string &error) {
  error.clear();
  DiagnosticLinePrinter diagnostics(context, options.diagnostics);
  const auto start = std::chrono::steady_clock::now();
  OwningOpRef<ModuleOp> module =
      parseModuleFile(context, options, error);
  if (!module)
    return failure();
  // An upstream-form module (it holds a shard.grid) is imported first, for
  // both paths; its grid says W.
  FailureOr<int64_t> gridDevices = importForExecution(*module);
  if (failed(gridDevices) || diagnostics.sawError())
    return failure();
  CompiledRun run;
  run.gridDevices = *gridDevices;
  run.mpiWorldSize = mpiWorldSize;
  // A module imported from a 2-D grid is one replica of a data-parallel
  // grid: it runs as that many replicas unless --grid says otherwise.
  int replicas = 0;
  if (failed(moduleReplicas(*module, replicas, error)))
    return failure();
  // With a grid the module's shard.grid is one replica's (its TP ranks);
  // the grid's own checks (runCompiled) say the rest.
  if (run.gridDevices > 0 && options.grid.empty() && replicas == 0 &&
      failed(checkGridDevices(run.gridDevices, config.worldSize, mpiWorldSize,
                              error)))
    return failure();
  if (failed(chooseGrid(*module, options, replicas, run.grid, error)) ||
      failed(compileEntry(*module, options, start, diagnostics, run)))
    return failure();
  // The grid's W even where nothing is split (every value replicated).
  if (run.program.worldSize == 0)
    run.program.worldSize = run.gridDevices;
  if (!options.verbose)
    run.compileReport.clear();
  return run;
}

rt::Status writeCompiled(const CompiledRun &run, const rt::RunConfig &config,
                         const std::string &path) {
  // A run checks --world-size against the program; so does writing it.
  SHARDLIN_RETURN_IF_ERROR(rt::checkWorldSize(run.program, config.worldSize));
  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return rt::Status::ioError("cannot write '" + path + "': " + ec.message());
  out.os() << rt::serializeProgram(run.program);
  out.keep();
  return rt::Status::ok();
}

namespace {

/// The grid's checks once the program says one replica's ranks, and the
/// config that runs it: TP ranks per replica, DP replicas.
rt::Status checkGrid(const CompiledRun &run, rt::RunConfig &config,
                     int &tensorParallel, std::string &name) {
  const rt::Program &program = run.program;
  const int tp = program.worldSize > 0 ? int(program.worldSize) : 1;
  if (tensorParallel < 0)
    tensorParallel = tp;
  const int w = run.grid.config.dataParallel * tensorParallel;
  if (tp != tensorParallel)
    return rt::Status::invalidArgument(
        name + ": '" + program.name + "' runs on " + std::to_string(tp) +
        " ranks, not " + std::to_string(tensorParallel));
  if (!run.grid.fromFlag) // the module's, now that TP is known
    name += " of " + std::to_string(tensorParallel) + " ranks";
  if (config.worldSize != 0 && config.worldSize != w)
    return rt::Status::invalidArgument(
        name + " has " + std::to_string(w) +
        " ranks; --world-size=" + std::to_string(config.worldSize));
  if (run.mpiWorldSize > 0 && run.mpiWorldSize != w)
    return rt::Status::invalidArgument(
        name + " has " + std::to_string(w) + " ranks, but the MPI job has " +
        std::to_string(run.mpiWorldSize) +
        " processes: run it with mpirun -np " + std::to_string(w));
  config.worldSize = tensorParallel;
  config.replicas = run.grid.config.dataParallel;
  return rt::Status::ok();
}

} // namespace

rt::Status runCompiled(const CompiledRun &run, rt::RunConfig &config,
                       std::vector<rt::RankResult> *ranks) {
  config.executor = run.executors;
  if (run.grid.name.empty())
    return rt::runProgramWithFiles(run.program, config, ranks);
  int tensorParallel = run.grid.tensorParallel;
  std::string name = run.grid.name;
  SHARDLIN_RETURN_IF_ERROR(checkGrid(run, config, tensorParallel, name));
  return rt::runGridWithFiles(run.program, config, run.grid.config, ranks);
}

//===----------------------------------------------------------------------===//
// The lowering's flags
//===----------------------------------------------------------------------===//

std::string takeLoweringFlags(int &argc, char **argv,
                              const std::vector<LoweringFlag> &flags) {
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
        flags, [&](const LoweringFlag &f) { return f.name == name; });
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

std::string loweringFlagsHelp(const std::vector<LoweringFlag> &flags) {
  std::string text = "\nLowering options (shardlin-opt's "
                     "--lower-sharded-linear options, as flags):\n";
  size_t width = 0;
  for (const LoweringFlag &f : flags)
    width = std::max(width, f.name.size());
  for (const LoweringFlag &f : flags) {
    text += "  --" + f.name + "=<value>" +
            std::string(width - f.name.size() + 2, ' ') + "- " + f.description;
    // The pass's descriptions give their defaults; say it where one does not.
    if (!StringRef(f.description).contains("default"))
      text += " (default " + f.defaultValue + ")";
    text += "\n";
  }
  return text;
}

} // namespace mlir::shardlin
