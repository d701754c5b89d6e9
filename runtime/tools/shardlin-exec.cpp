//===- shardlin-exec.cpp - Run a compiled program with only the runtime ---===//
//
//   shardlin-exec PROGRAM [--world-size=W]
//                 [--backend=threads|mpi|cuda-local|nccl] [--device=N]
//                 --arg=PATH... --out=PATH... [--timeout=S] [--blas-threads=N]
//   shardlin-exec --version | --gpus | --help
//
// PROGRAM is the text form written by `shardlin-run FILE.mlir
// --emit-program=PROGRAM` on a machine that has LLVM/MLIR. This tool links
// only the shardlin runtime, so it runs where LLVM is not installed. The
// argument and output conventions are shardlin-run's (see Runner.h), and so
// are the backends and device selection (RunConfig). --version says whether
// the GPU module is there without loading it; --gpus loads it and says
// which GPUs this process can use ("gpu: ..."), which the lit suite reads to
// decide whether GPU tests can run.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/program/ProgramText.h"
#include "shardlin/runtime/backends/Mpi.h"
#include "shardlin/runtime/program/Program.h"
#include "shardlin/runtime/tooling/Flags.h"
#include "shardlin/runtime/tooling/Process.h"
#include "shardlin/runtime/tooling/Runner.h"
#include "shardlin/runtime/tooling/Signals.h"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
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

/// The usage text; the backends come from the registry.
std::string usageText() {
  return "usage: shardlin-exec PROGRAM [--world-size=W]\n"
         "                     [--backend=" +
         rt::backendNames() +
         "] [--device=N]\n"
         "                     --arg=PATH [--arg=PATH ...] --out=PATH "
         "[--out=PATH ...]\n"
         "                     [--timeout=SECONDS] [--blas-threads=N] "
         "[--overlap-chunks=N] [--verbose]\n"
         "PROGRAM is written by `shardlin-run FILE.mlir "
         "--emit-program=PROGRAM`.\n"
         "{rank} in a path is replaced by the rank number. A PATH is a .npy "
         "file, or FILE.safetensors:NAME for the tensor NAME of a "
         "safetensors file (results naming one file are written to it "
         "together).\n"
         "--world-size: the number of ranks; optional (default: the "
         "program's placements' W, under mpirun the MPI world size, else "
         "1).\n"
         "--timeout: seconds before a collective that has not completed "
         "fails on every rank (default: 300).\n"
         "--blas-threads: OpenBLAS threads per rank (default 0: cores / ranks "
         "per host).\n"
         "--overlap-chunks: run each fused block in N row chunks, their "
         "collectives overlapped with the GEMMs (0 or 1: in sequence; "
         "default: as the program's all_gathers say, `overlap N`).\n"
         "--verbose: print the strategy each GEMM was lowered with, and per "
         "rank the phases' times, traffic and bytes of input files read.\n"
         "--version: the version and what is built in (loads no GPU "
         "library); --gpus: the GPUs this process can use (loads the GPU "
         "module).\n"
         "Backends: " +
         rt::describeBackends() + ".\n";
}

bool parseNumber(const std::string &text, double &out) {
  char *end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return !text.empty() && end && *end == '\0';
}

/// An integer flag's value: digits only (a sign for `allowNegative`), in
/// int's range. The run options' own ranges are checkRunFlags'.
bool parseInt(const std::string &text, int &out, bool allowNegative = false) {
  if (text.empty() || text.size() > 12)
    return false;
  size_t i = allowNegative && text[0] == '-' ? 1 : 0;
  if (i == text.size())
    return false;
  for (size_t j = i; j < text.size(); ++j)
    if (text[j] < '0' || text[j] > '9')
      return false;
  const long long v = std::strtoll(text.c_str(), nullptr, 10);
  if (v < INT_MIN || v > INT_MAX)
    return false;
  out = static_cast<int>(v);
  return true;
}

} // namespace

int main(int argc, char **argv) {
  // OpenBLAS's kernels for this CPU, if it fell back to older ones
  // (Gemm.h): before anything starts a thread.
  rt::reexecForBlasKernels(argv);
  // SIGINT, SIGTERM, SIGHUP and SIGPIPE remove the staged outputs before
  // they end the process: asked for here, before any thread starts (the
  // runner installs no handler of its own).
  rt::installOutputSignalHandlers();
  const std::string usage = usageText();
  std::string programPath;
  rt::RunConfig config;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const std::string &flag, std::string &out) {
      if (a.rfind(flag + "=", 0) != 0)
        return false;
      out = a.substr(flag.size() + 1);
      return true;
    };
    std::string v;
    double num = 0;
    if (a == "--help" || a == "-h") {
      std::cout << usage;
      return 0;
    }
    if (a == "--version") {
      std::cout << "shardlin-exec " SHARDLIN_VERSION "\n  backends: "
                << rt::availableBackends()
                << "\n  gemm: " << rt::availableGemmBackends()
                << "\n  gpu: " << rt::describeGpuModule()
                << "\n  blas: OpenBLAS with its " << rt::blasCoreName()
                << " kernels\n";
      return 0;
    }
    if (a == "--gpus") {
      std::cout << "gpu: " << rt::describeGpus() << "\n";
      return 0;
    }
    if (a == "--verbose") {
      verbose = true;
    } else if (value("--world-size", v)) {
      if (!parseInt(v, config.worldSize) || config.worldSize < 1)
        return fail("--world-size must be a positive integer, got '" + v + "'");
    } else if (value("--backend", v)) {
      config.backend = v;
    } else if (value("--device", v)) {
      if (!parseInt(v, config.device) || config.device < 0)
        return fail("--device must be a device number (>= 0), got '" + v + "'");
    } else if (value("--arg", v)) {
      config.argPaths.push_back(v);
    } else if (value("--out", v)) {
      config.outPaths.push_back(v);
    } else if (value("--timeout", v)) {
      if (!parseNumber(v, num) || !(num > 0))
        return fail("--timeout must be a positive number, got '" + v + "'");
      config.comm.timeoutSeconds = num;
    } else if (value("--blas-threads", v)) {
      if (!parseInt(v, config.blasThreads) || config.blasThreads < 0)
        return fail("--blas-threads must be a non-negative integer, got '" +
                    v + "'");
    } else if (value("--overlap-chunks", v)) {
      if (!parseInt(v, config.plan.overlapChunks) ||
          config.plan.overlapChunks < 0 ||
          config.plan.overlapChunks > rt::kMaxOverlapChunks)
        return fail("--overlap-chunks must be an integer from 0 to " +
                    std::to_string(rt::kMaxOverlapChunks) + ", got '" + v +
                    "'");
    } else if (!a.empty() && a[0] == '-') {
      return fail("unknown option '" + a + "'\n" + usage);
    } else if (programPath.empty()) {
      programPath = a;
    } else {
      return fail("more than one program given ('" + programPath + "', '" +
                  a + "')");
    }
  }
  if (programPath.empty())
    return fail(std::string("no program given\n") + usage);
  // Every option's range, before any per-rank work.
  if (rt::Status s = rt::checkRunFlags(config); !s)
    return fail(rt::flagMessage(s, config));
  const rt::BackendInfo *backend = rt::findBackend(config.backend);

  std::unique_ptr<rt::MpiSession> mpi;
  if (backend->needsMpiSession()) {
    rt::Status s = rt::MpiSession::create(&argc, &argv, mpi);
    if (!s)
      return fail(s.message());
  }

  std::ifstream in(programPath, std::ios::binary);
  if (!in)
    return fail("cannot open program '" + programPath +
                "': " + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  rt::Program program;
  rt::Status parsed = rt::parseProgram(text.str(), program);
  if (!parsed)
    return fail(programPath + ": " + parsed.message());
  if (verbose)
    for (const rt::Instr &in : program.instrs)
      if (!in.strategy.empty())
        std::cerr << ("shardlin-exec: " +
                      (in.location.empty() ? std::string()
                                           : in.location + ": ") +
                      rt::opCodeName(in.op) + " lowered with " + in.strategy +
                      "\n");
  std::vector<rt::RankResult> ranks;
  rt::Status status = rt::runProgramWithFiles(program, config, &ranks);
  if (verbose) {
    if (!ranks.empty())
      for (const std::string &line : rt::describePipelines(program, ranks[0]))
        std::cerr << ("shardlin-exec: " + line + "\n");
    for (const rt::RankResult &rank : ranks)
      std::cerr << ("shardlin-exec: " + rt::describeRank(rank, "load", "write") + "\n");
  }
  if (!status)
    return fail(rt::flagMessage(status, config));
  return 0;
}
