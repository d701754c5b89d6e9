//===- shardlin-exec.cpp - Run a compiled program with only the runtime ---===//
//
//   shardlin-exec PROGRAM [RUN FLAGS] --arg=PATH... --out=PATH...
//   shardlin-exec --version | --gpus | --help
//
// PROGRAM is the text form written by `shardlin-run FILE.mlir
// --emit-program=PROGRAM` on a machine that has LLVM/MLIR. This tool links
// only the shardlin runtime, so it runs where LLVM is not installed. The
// argument and output conventions are shardlin-run's (see Runner.h), and so
// are the backends and device selection (RunConfig); the run flags are
// shardlin-run's too, parsed from one table (tooling/Flags.h). --version says
// whether the GPU module is there without loading it; --gpus loads it and says
// which GPUs this process can use ("gpu: ..."), which the lit suite reads to
// decide whether GPU tests can run.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/backends/Mpi.h"
#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/program/Program.h"
#include "shardlin/runtime/program/ProgramText.h"
#include "shardlin/runtime/tooling/Flags.h"
#include "shardlin/runtime/tooling/Process.h"
#include "shardlin/runtime/tooling/Runner.h"
#include "shardlin/runtime/tooling/Signals.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

namespace rt = shardlin::rt;

namespace {

int fail(const std::string &message) {
  // One write, so lines of several MPI processes do not interleave.
  std::cerr << ("shardlin-exec: error: " + message + "\n") << std::flush;
  return 1;
}

/// The usage text; the run flags come from their table.
std::string usageText() {
  return "usage: shardlin-exec PROGRAM [--world-size=W] [RUN FLAGS] "
         "--arg=PATH... --out=PATH...\n"
         "       shardlin-exec --version | --gpus | --help\n"
         "PROGRAM is written by `shardlin-run FILE.mlir "
         "--emit-program=PROGRAM`.\n"
         "Run flags (shardlin-run's too):\n" +
         rt::runFlagsHelp() +
         "Other flags:\n"
         "  --version  - The version and what is built in (loads no GPU "
         "library)\n"
         "  --gpus     - The GPUs this process can use (loads the GPU "
         "module)\n";
}

/// --help, --version and --gpus: true (and `exitCode` set) when `arg` is one.
bool answerQuery(const std::string &arg, int &exitCode) {
  exitCode = 0;
  if (arg == "--help" || arg == "-h")
    std::cout << usageText();
  else if (arg == "--version")
    std::cout << "shardlin-exec " SHARDLIN_VERSION "\n  backends: "
              << rt::availableBackends()
              << "\n  gemm: " << rt::availableGemmBackends()
              << "\n  gpu: " << rt::describeGpuModule()
              << "\n  blas: OpenBLAS with its " << rt::blasCoreName()
              << " kernels\n";
  else if (arg == "--gpus")
    std::cout << "gpu: " << rt::describeGpus() << "\n";
  else
    return false;
  return true;
}

/// What is left after the run flags: one program path, or a query. Returns
/// -1 to go on, else the exit code.
int parseRest(int argc, char **argv, std::string &programPath) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    int exitCode = 0;
    if (answerQuery(a, exitCode))
      return exitCode;
    if (!a.empty() && a[0] == '-')
      return fail("unknown option '" + a + "'\n" + usageText());
    if (!programPath.empty())
      return fail("more than one program given ('" + programPath + "', '" + a +
                  "')");
    programPath = a;
  }
  if (programPath.empty())
    return fail("no program given\n" + usageText());
  return -1;
}

rt::Status readProgram(const std::string &path, rt::Program &program) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return rt::Status::ioError("cannot open program '" + path +
                               "': " + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  rt::Status parsed = rt::parseProgram(text.str(), program);
  return parsed ? parsed
                : rt::Status::invalidArgument(path + ": " + parsed.message());
}

/// --verbose: how each GEMM was lowered, as the program records it.
void printStrategies(const rt::Program &program) {
  for (const rt::Instr &in : program.instrs)
    if (!in.strategy.empty())
      std::cerr << ("shardlin-exec: " +
                    (in.location.empty() ? std::string() : in.location + ": ") +
                    rt::opCodeName(in.op) + " lowered with " + in.strategy +
                    "\n");
}

} // namespace

int main(int argc, char **argv) {
  // OpenBLAS's kernels for this CPU, if it fell back to older ones
  // (Process.h): before anything starts a thread.
  rt::reexecForBlasKernels(argv);
  // SIGINT, SIGTERM, SIGHUP and SIGPIPE remove the staged outputs before
  // they end the process: asked for here, before any thread starts (the
  // runner installs no handler of its own).
  rt::installOutputSignalHandlers();
  rt::RunConfig config;
  if (rt::Status s = rt::takeRunFlags(argc, argv, config); !s)
    return fail(s.message());
  std::string programPath;
  if (int exitCode = parseRest(argc, argv, programPath); exitCode >= 0)
    return exitCode;
  // Every option's range, before any per-rank work.
  if (rt::Status s = rt::checkRunFlags(config); !s)
    return fail(rt::flagMessage(s, config));

  std::unique_ptr<rt::MpiSession> mpi;
  if (rt::findBackend(config.backend)->needsMpiSession())
    if (rt::Status s = rt::MpiSession::create(&argc, &argv, mpi); !s)
      return fail(s.message());

  rt::Program program;
  if (rt::Status s = readProgram(programPath, program); !s)
    return fail(s.message());
  if (config.verbose)
    printStrategies(program);
  std::vector<rt::RankResult> ranks;
  rt::Status status = rt::runProgramWithFiles(program, config, &ranks);
  if (config.verbose)
    for (const std::string &line : rt::describeRun(program, ranks))
      std::cerr << ("shardlin-exec: " + line + "\n");
  if (!status)
    return fail(rt::flagMessage(status, config));
  return 0;
}
