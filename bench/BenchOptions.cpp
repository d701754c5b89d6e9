//===- BenchOptions.cpp - Parsing the command line of shardlin-bench ------===//

#include "BenchOptions.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace shardlin::bench {

static bool startsWith(const std::string &s, const char *p) {
  return s.rfind(p, 0) == 0;
}

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

void usage() {
  std::printf(
      "usage: shardlin-bench [--quick | --full] [options]\n"
      "  --quick                 smoke run (seconds): tiny shapes, uneven and "
      "permuted chunks, no PyTorch\n"
      "  --full                  the whole sweep: B 1..16384, N = K 256..8192 "
      "(hours; bounded by --max-mem-gib)\n"
      "  --sections=LIST         linear,targets,collectives,compile\n"
      "  --backends=LIST         threads,mpi\n"
      "  --world-sizes=LIST      e.g. 1,2,4\n"
      "  --rows=LIST             B, rows per rank\n"
      "  --features=LIST         N = K\n"
      "  --dims=LIST             weight sharding dims: 1 (K split), 0 (N "
      "split)\n"
      "  --strategies=LIST       activations,gather-weight,auto\n"
      "  --permuted              non-identity placements\n"
      "  --collective-sizes=LIST nccl-tests sizes in bytes (K/M/G suffixes)\n"
      "  --compile-ops=LIST      numbers of linears in the compile benchmark\n"
      "  --json=PATH             write the results as JSON\n"
      "  --plot=PATH             write a PNG plot (bench/plot.py, matplotlib)\n"
      "  --torch / --no-torch    compare with PyTorch's F.linear "
      "(bench/torch_linear.py)\n"
      "  --python=PATH           interpreter for the helpers "
      "(default /usr/bin/python3)\n"
      "  --scripts-dir=DIR       where torch_linear.py and plot.py are\n"
      "  --mpirun=PATH           mpirun to launch the mpi backend with\n"
      "  --max-mem-gib=G         skip cases estimated to need more memory\n"
      "  --warmup=N --min-trials=N --max-trials=N --min-time=S "
      "--trial-time=S\n");
}

/// The defaults of the mode; explicit flags override them.
static void applyModeDefaults(bool quick, bool full, Options &o) {
  o.mode = quick ? "quick" : full ? "full" : "default";
  if (quick) {
    o.rows = {1, 5, 32};
    o.features = {64, 97};
    o.permuted = true;
    o.collectiveSizes = {4096, 65536};
    o.compileOps = {1, 10, 100, 1000};
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
    o.maxMemGiB = 12.0;
  } else {
    o.rows = {1, 16, 256, 2048};
    o.features = {256, 1024, 2048};
    o.collectiveSizes = {4096, 65536, 1048576, 16777216};
    o.compileOps = {1, 10, 100, 1000, 10000};
    o.timing.minSeconds = 0.2;
  }
}

/// Applies one flag (other than --quick and --full). Returns false for an
/// unknown flag; `ok` is false after a list that does not parse.
static bool parseFlag(const std::string &a, Options &o, bool &ok) {
  auto val = [&](const char *flag) { return a.substr(std::strlen(flag)); };
  if (a == "--help" || a == "-h") {
    usage();
    std::exit(0);
  } else if (startsWith(a, "--sections=")) {
    auto v = splitNames(val("--sections="));
    o.sections = std::set<std::string>(v.begin(), v.end());
  } else if (startsWith(a, "--backends="))
    o.backends = splitNames(val("--backends="));
  else if (startsWith(a, "--world-sizes="))
    ok = parseList(val("--world-sizes="), o.worldSizes);
  else if (startsWith(a, "--rows="))
    ok = parseList(val("--rows="), o.rows);
  else if (startsWith(a, "--features="))
    ok = parseList(val("--features="), o.features);
  else if (startsWith(a, "--dims="))
    ok = parseList(val("--dims="), o.dims);
  else if (startsWith(a, "--strategies="))
    o.strategies = splitNames(val("--strategies="));
  else if (a == "--permuted")
    o.permuted = true;
  else if (startsWith(a, "--collective-sizes="))
    ok = parseList(val("--collective-sizes="), o.collectiveSizes);
  else if (startsWith(a, "--collective-world-sizes="))
    ok = parseList(val("--collective-world-sizes="), o.collectiveWorldSizes);
  else if (startsWith(a, "--compile-ops="))
    ok = parseList(val("--compile-ops="), o.compileOps);
  else if (startsWith(a, "--json="))
    o.json = val("--json=");
  else if (startsWith(a, "--plot="))
    o.plot = val("--plot=");
  else if (a == "--torch")
    o.torch = 1;
  else if (a == "--no-torch")
    o.torch = 0;
  else if (startsWith(a, "--python="))
    o.python = val("--python=");
  else if (startsWith(a, "--scripts-dir="))
    o.scriptsDir = val("--scripts-dir=");
  else if (startsWith(a, "--mpirun="))
    o.mpirun = val("--mpirun=");
  else if (startsWith(a, "--max-mem-gib="))
    o.maxMemGiB = std::atof(val("--max-mem-gib=").c_str());
  else if (startsWith(a, "--warmup="))
    o.timing.warmup = std::atoi(val("--warmup=").c_str());
  else if (startsWith(a, "--min-trials="))
    o.timing.minTrials = std::atoi(val("--min-trials=").c_str());
  else if (startsWith(a, "--max-trials="))
    o.timing.maxTrials = std::atoi(val("--max-trials=").c_str());
  else if (startsWith(a, "--min-time="))
    o.timing.minSeconds = std::atof(val("--min-time=").c_str());
  else if (startsWith(a, "--trial-time="))
    o.timing.trialSeconds = std::atof(val("--trial-time=").c_str());
  else if (startsWith(a, "--mpi-worker="))
    o.mpiWorker = val("--mpi-worker=");
  else if (startsWith(a, "--mpi-collectives-worker="))
    o.mpiCollectivesWorker = val("--mpi-collectives-worker=");
  else if (startsWith(a, "--mpi-out="))
    o.mpiOut = val("--mpi-out=");
  else
    return false;
  return true;
}

/// Rejects unknown section, strategy and backend names.
static bool checkNames(const Options &o) {
  for (const std::string &s : o.sections)
    if (s != "linear" && s != "targets" && s != "collectives" &&
        s != "compile") {
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
  bool quick = false, full = false;
  std::vector<std::string> rest;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--quick")
      quick = true;
    else if (a == "--full")
      full = true;
    else
      rest.push_back(a);
  }
  if (quick && full) {
    std::fprintf(stderr,
                 "shardlin-bench: --quick and --full exclude each other\n");
    return false;
  }
  // Mode defaults first; explicit flags override them below.
  applyModeDefaults(quick, full, o);
  for (const std::string &a : rest) {
    bool ok = true;
    if (!parseFlag(a, o, ok)) {
      std::fprintf(stderr, "shardlin-bench: unknown option '%s' (--help)\n",
                   a.c_str());
      return false;
    }
    if (!ok) {
      std::fprintf(stderr, "shardlin-bench: bad list in '%s'\n", a.c_str());
      return false;
    }
  }
  if (!checkNames(o))
    return false;
  if (o.torch < 0)
    o.torch = 1;
  return true;
}

} // namespace shardlin::bench
