//===- BenchOptions.cpp - Parsing the command line of shardlin-bench ------===//
//
// The command line goes through llvm::cl. Every option value is taken as
// text and converted here, as before: lists may carry K/M/G suffixes, and
// the numbers of the timing options and --max-mem-gib are read with
// atoi/atof. The mode (--quick, --full) sets the defaults first; the options
// given on the command line then override them, whatever their order.
//
//===----------------------------------------------------------------------===//

#include "BenchOptions.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace shardlin::bench {

template <typename T>
bool parseList(const std::string &s, std::vector<T> &out) {
  out.clear();
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty())
      continue;
    char *end = nullptr;
    double mult = 1;
    std::string num = item;
    // Sizes may carry K/M/G suffixes (powers of 1024).
    char last = num.back();
    if (last == 'K' || last == 'k')
      mult = 1024.0;
    else if (last == 'M' || last == 'm')
      mult = 1024.0 * 1024;
    else if (last == 'G' || last == 'g')
      mult = 1024.0 * 1024 * 1024;
    if (mult != 1)
      num.pop_back();
    double v = std::strtod(num.c_str(), &end);
    if (!end || *end)
      return false;
    out.push_back(static_cast<T>(v * mult));
  }
  return true;
}

template bool parseList(const std::string &, std::vector<int> &);
template bool parseList(const std::string &, std::vector<int64_t> &);
template bool parseList(const std::string &, std::vector<uint64_t> &);

static std::vector<std::string> splitNames(const std::string &s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty())
      out.push_back(item);
  return out;
}

namespace {

namespace cl = llvm::cl;

cl::OptionCategory category("shardlin-bench options");

// Modes.
cl::opt<bool> quickOpt("quick",
                       cl::desc("Smoke run (seconds): tiny shapes, uneven and "
                                "permuted chunks, no PyTorch"),
                       cl::cat(category));
cl::opt<bool> fullOpt("full",
                      cl::desc("The whole sweep: B 1..16384, N = K 256..8192 "
                               "(hours; bounded by --max-mem-gib)"),
                      cl::cat(category));
cl::opt<bool> shortHelp("h", cl::desc("Alias for --help"), cl::cat(category));

// What runs.
using TextOpt = cl::opt<std::string>;
TextOpt sectionsOpt("sections",
                    cl::desc("linear,targets,collectives,compile,elementwise,"
                             "blocks"),
                    cl::value_desc("LIST"), cl::cat(category));
TextOpt backendsOpt("backends", cl::desc("threads,mpi"), cl::value_desc("LIST"),
                    cl::cat(category));
TextOpt worldSizesOpt("world-sizes", cl::desc("e.g. 1,2,4"),
                      cl::value_desc("LIST"), cl::cat(category));
TextOpt rowsOpt("rows", cl::desc("B, rows per rank"), cl::value_desc("LIST"),
                cl::cat(category));
TextOpt featuresOpt("features", cl::desc("N = K"), cl::value_desc("LIST"),
                    cl::cat(category));
TextOpt dimsOpt("dims",
                cl::desc("Weight sharding dims: 1 (K split), 0 (N split)"),
                cl::value_desc("LIST"), cl::cat(category));
TextOpt strategiesOpt("strategies", cl::desc("activations,gather-weight,auto"),
                      cl::value_desc("LIST"), cl::cat(category));
cl::opt<bool> permutedOpt("permuted", cl::desc("Non-identity placements"),
                          cl::cat(category));
TextOpt
    collectiveSizesOpt("collective-sizes",
                       cl::desc("nccl-tests sizes in bytes (K/M/G suffixes)"),
                       cl::value_desc("LIST"), cl::cat(category));
TextOpt collectiveWorldSizesOpt(
    "collective-world-sizes",
    cl::desc("World sizes of the collectives section (default 2,4)"),
    cl::value_desc("LIST"), cl::cat(category));
TextOpt blockWorldSizesOpt("block-world-sizes",
                          cl::desc("W of the blocks section (default 2,4)"),
                          cl::value_desc("LIST"), cl::cat(category));
TextOpt blockHiddenOpt("block-hidden", cl::desc("H of the blocks section"),
                       cl::value_desc("LIST"), cl::cat(category));
TextOpt blockRowsOpt("block-rows",
                     cl::desc("B per rank of the blocks section"),
                     cl::value_desc("LIST"), cl::cat(category));
TextOpt compileOpsOpt("compile-ops",
                      cl::desc("Numbers of linears in the compile benchmark"),
                      cl::value_desc("LIST"), cl::cat(category));

// Output and helpers.
TextOpt jsonOpt("json", cl::desc("Write the results as JSON"),
                cl::value_desc("PATH"), cl::cat(category));
TextOpt plotOpt("plot",
                cl::desc("Write a PNG plot (bench/plot.py, matplotlib)"),
                cl::value_desc("PATH"), cl::cat(category));
cl::opt<bool> noJitOpt("no-jit",
                       cl::desc("Do not run the linear cases through the JIT "
                                "(the jit column and the JIT targets)"),
                       cl::cat(category));
cl::opt<bool> torchOpt("torch",
                       cl::desc("Compare with PyTorch's F.linear "
                                "(bench/torch_linear.py)"),
                       cl::cat(category));
cl::opt<bool> noTorchOpt("no-torch", cl::desc("Do not compare with PyTorch"),
                         cl::cat(category));
TextOpt pythonOpt("python",
                  cl::desc("Interpreter for the helpers (default "
                           "bench/.venv/bin/python if it exists, else "
                           "/usr/bin/python3)"),
                  cl::value_desc("PATH"), cl::cat(category));
TextOpt scriptsDirOpt("scripts-dir",
                      cl::desc("Where torch_linear.py and plot.py are"),
                      cl::value_desc("DIR"), cl::cat(category));
TextOpt mpirunOpt("mpirun", cl::desc("mpirun to launch the mpi backend with"),
                  cl::value_desc("PATH"), cl::cat(category));
TextOpt maxMemOpt("max-mem-gib",
                  cl::desc("Skip cases estimated to need more memory"),
                  cl::value_desc("G"), cl::cat(category));

// Timing.
TextOpt warmupOpt("warmup", cl::desc("Warm-up runs"), cl::value_desc("N"),
                  cl::cat(category));
TextOpt minTrialsOpt("min-trials", cl::desc("Fewest trials"),
                     cl::value_desc("N"), cl::cat(category));
TextOpt maxTrialsOpt("max-trials", cl::desc("Most trials"), cl::value_desc("N"),
                     cl::cat(category));
TextOpt minTimeOpt("min-time",
                   cl::desc("Target length of all trials of a measurement"),
                   cl::value_desc("S"), cl::cat(category));
TextOpt trialTimeOpt("trial-time", cl::desc("Target length of one trial"),
                     cl::value_desc("S"), cl::cat(category));

// The worker modes of the MPI launches (internal).
TextOpt mpiWorkerOpt("mpi-worker", cl::Hidden, cl::cat(category));
TextOpt mpiCollectivesWorkerOpt("mpi-collectives-worker", cl::Hidden,
                                cl::cat(category));
TextOpt mpiBlocksWorkerOpt("mpi-blocks-worker", cl::Hidden, cl::cat(category));
TextOpt mpiOutOpt("mpi-out", cl::Hidden, cl::cat(category));

bool given(const cl::Option &opt) { return opt.getNumOccurrences() > 0; }

/// A list option into `out`; false (with the message) if it does not parse.
template <typename T> bool applyList(const TextOpt &opt, std::vector<T> &out) {
  if (!given(opt) || parseList(opt.getValue(), out))
    return true;
  std::fprintf(stderr, "shardlin-bench: bad list in '--%s=%s'\n",
               opt.ArgStr.str().c_str(), opt.getValue().c_str());
  return false;
}

void applyText(const TextOpt &opt, std::string &out) {
  if (given(opt))
    out = opt.getValue();
}

} // namespace

void usage() { llvm::cl::PrintHelpMessage(); }

/// The defaults of the mode; explicit flags override them.
static void applyModeDefaults(bool quick, bool full, Options &o) {
  o.mode = quick ? "quick" : full ? "full" : "default";
  if (quick) {
    o.rows = {1, 5, 32};
    o.features = {64, 97};
    o.permuted = true;
    o.collectiveSizes = {4096, 65536};
    o.compileOps = {1, 10, 100, 1000};
    o.blockHidden = {64};
    o.blockRows = {3, 16};
    o.timing.warmup = 1;
    o.timing.minTrials = 2;
    o.timing.maxTrials = 3;
    o.timing.minSeconds = 0.005;
    o.timing.trialSeconds = 0.002;
    o.torch = o.torch < 0 ? 0 : o.torch;
  } else if (full) {
    o.rows = {1, 4, 16, 64, 256, 1024, 4096, 16384};
    o.features = {256, 512, 1024, 2048, 4096, 8192};
    o.collectiveSizes = {1024, 16384, 262144, 4194304, 67108864, 268435456};
    o.compileOps = {1, 10, 100, 1000, 10000};
    o.blockHidden = {1024, 2048};
    o.blockRows = {16, 256, 2048};
    o.maxMemGiB = 12.0;
  } else {
    o.rows = {1, 16, 256, 2048};
    o.features = {256, 1024, 2048};
    o.collectiveSizes = {4096, 65536, 1048576, 16777216};
    o.compileOps = {1, 10, 100, 1000, 10000};
    o.blockHidden = {1024, 2048};
    o.blockRows = {16, 256, 2048};
    o.timing.minSeconds = 0.2;
  }
}

/// Applies the options given on the command line (other than --quick and
/// --full) over the mode's defaults. False after a list that does not parse.
static bool applyFlags(Options &o) {
  if (given(sectionsOpt)) {
    auto v = splitNames(sectionsOpt);
    o.sections = std::set<std::string>(v.begin(), v.end());
  }
  if (given(backendsOpt))
    o.backends = splitNames(backendsOpt);
  if (given(strategiesOpt))
    o.strategies = splitNames(strategiesOpt);
  if (!applyList(worldSizesOpt, o.worldSizes) || !applyList(rowsOpt, o.rows) ||
      !applyList(featuresOpt, o.features) || !applyList(dimsOpt, o.dims) ||
      !applyList(collectiveSizesOpt, o.collectiveSizes) ||
      !applyList(collectiveWorldSizesOpt, o.collectiveWorldSizes) ||
      !applyList(compileOpsOpt, o.compileOps) ||
      !applyList(blockWorldSizesOpt, o.blockWorldSizes) ||
      !applyList(blockHiddenOpt, o.blockHidden) ||
      !applyList(blockRowsOpt, o.blockRows))
    return false;
  o.blockShapesGiven = given(blockHiddenOpt) || given(blockRowsOpt);
  if (permutedOpt)
    o.permuted = true;
  if (noJitOpt)
    o.jit = false;
  applyText(jsonOpt, o.json);
  applyText(plotOpt, o.plot);
  // --torch and --no-torch: the last one given wins.
  if (given(torchOpt) && given(noTorchOpt))
    o.torch = torchOpt.getPosition() > noTorchOpt.getPosition() ? 1 : 0;
  else if (given(torchOpt))
    o.torch = 1;
  else if (given(noTorchOpt))
    o.torch = 0;
  applyText(scriptsDirOpt, o.scriptsDir);
  // The venv of bench/torch-venv.sh (PyTorch 2.x) when there is one.
  o.python = o.scriptsDir + "/.venv/bin/python";
  if (!fileExists(o.python))
    o.python = "/usr/bin/python3";
  applyText(pythonOpt, o.python);
  applyText(mpirunOpt, o.mpirun);
  if (given(maxMemOpt))
    o.maxMemGiB = std::atof(maxMemOpt.c_str());
  if (given(warmupOpt))
    o.timing.warmup = std::atoi(warmupOpt.c_str());
  if (given(minTrialsOpt))
    o.timing.minTrials = std::atoi(minTrialsOpt.c_str());
  if (given(maxTrialsOpt))
    o.timing.maxTrials = std::atoi(maxTrialsOpt.c_str());
  if (given(minTimeOpt))
    o.timing.minSeconds = std::atof(minTimeOpt.c_str());
  if (given(trialTimeOpt))
    o.timing.trialSeconds = std::atof(trialTimeOpt.c_str());
  applyText(mpiWorkerOpt, o.mpiWorker);
  applyText(mpiCollectivesWorkerOpt, o.mpiCollectivesWorker);
  applyText(mpiOutOpt, o.mpiOut);
  applyText(mpiBlocksWorkerOpt, o.mpiBlocksWorker);
  return true;
}

/// Rejects unknown section, strategy and backend names.
static bool checkNames(const Options &o) {
  for (const std::string &s : o.sections)
    if (s != "linear" && s != "targets" && s != "collectives" &&
        s != "compile" && s != "elementwise" && s != "blocks") {
      std::fprintf(stderr, "shardlin-bench: unknown section '%s'\n", s.c_str());
      return false;
    }
  for (const std::string &s : o.strategies)
    if (s != "activations" && s != "gather-weight" && s != "auto") {
      std::fprintf(stderr, "shardlin-bench: unknown strategy '%s'\n",
                   s.c_str());
      return false;
    }
  for (const std::string &b : o.backends)
    if (b != "threads" && b != "mpi") {
      std::fprintf(stderr, "shardlin-bench: unknown backend '%s'\n", b.c_str());
      return false;
    }
  return true;
}

bool parseArgs(int argc, char **argv, Options &o) {
  // Only this tool's options in --help (the LLVM libraries register their
  // own).
  llvm::cl::HideUnrelatedOptions(category);
  std::string errors;
  llvm::raw_string_ostream errs(errors);
  if (!llvm::cl::ParseCommandLineOptions(
          argc, argv,
          "the shardlin benchmark suite (docs/performance.md)\n\n"
          "  shardlin-bench [--quick | --full] [options]\n",
          &errs)) {
    std::fprintf(stderr, "%s", errors.c_str());
    return false;
  }
  if (shortHelp) {
    usage();
    std::exit(0);
  }
  if (quickOpt && fullOpt) {
    std::fprintf(stderr,
                 "shardlin-bench: --quick and --full exclude each other\n");
    return false;
  }
  // Mode defaults first; explicit flags override them below.
  applyModeDefaults(quickOpt, fullOpt, o);
  if (!applyFlags(o))
    return false;
  if (!checkNames(o))
    return false;
  if (o.torch < 0)
    o.torch = 1;
  return true;
}

} // namespace shardlin::bench
