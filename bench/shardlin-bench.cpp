//===- shardlin-bench.cpp - The shardlin benchmark suite ------------------===//
//
//   shardlin-bench [--quick | --full] [options]
//
// Sections (all by default; --sections=linear,targets,collectives,compile):
//   linear       every (backend, W, dim, B, N = K, strategy) of the sweep:
//                time, GFLOP/s, bytes sent per rank (measured by the
//                communicator, checked exactly against the cost model), next
//                to the dense OpenBLAS GEMM + bias of the same total work on
//                all cores and PyTorch's F.linear (when installed);
//   targets      the ratios of the performance targets, measured with the
//                runs interleaved (dense, shardlin, dense, shardlin, ...);
//   collectives  all_gather / reduce_scatter / all_to_all on the
//                communicators, nccl-tests' algbw and busbw;
//   compile      parse + lower time of modules of 1 ... 10,000 linears.
//
// Output: a table on stdout, --json=PATH, --plot=PATH (bench/plot.py).
// Exit status 1 if any byte count differs from the prediction, any output
// fails the numerical check, or any case fails to run.
//
//===----------------------------------------------------------------------===//

#include "BenchCommon.h"

#include "shardlin/Analysis/CostModel.h"
#include "shardlin/runtime/Gemm.h"
#include "shardlin/runtime/MpiCommunicator.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

#ifndef SHARDLIN_BENCH_SOURCE_DIR
#define SHARDLIN_BENCH_SOURCE_DIR "bench"
#endif
#ifndef SHARDLIN_BENCH_MPIEXEC
#define SHARDLIN_BENCH_MPIEXEC ""
#endif

using namespace shardlin::bench;
namespace rt = ::shardlin::rt;

namespace {

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

struct Options {
  std::string mode = "default"; // quick | default | full
  std::set<std::string> sections = {"linear", "targets", "collectives",
                                    "compile"};
  std::vector<std::string> backends = {"threads", "mpi"};
  std::vector<int> worldSizes = {1, 2, 4};
  std::vector<int64_t> rows, features;
  std::vector<int64_t> dims = {1, 0};
  std::vector<std::string> strategies = {"activations", "gather-weight",
                                         "auto"};
  std::vector<uint64_t> collectiveSizes;
  std::vector<int> collectiveWorldSizes = {2, 4};
  std::vector<int> compileOps;
  bool permuted = false; // non-identity placements (and W = 4: multi-hop)
  std::string json, plot;
  int torch = -1; // -1: default for the mode
  std::string python = "/usr/bin/python3";
  std::string scriptsDir = SHARDLIN_BENCH_SOURCE_DIR;
  std::string mpirun = SHARDLIN_BENCH_MPIEXEC;
  double maxMemGiB = 8.0;
  TimingOptions timing;
  // Worker modes (internal).
  std::string mpiWorker, mpiCollectivesWorker, mpiOut;
};

bool startsWith(const std::string &s, const char *p) {
  return s.rfind(p, 0) == 0;
}

template <typename T> bool parseList(const std::string &s, std::vector<T> &out) {
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

std::vector<std::string> splitNames(const std::string &s) {
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
      "  --dims=LIST             weight sharding dims: 1 (K split), 0 (N split)\n"
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
      "  --warmup=N --min-trials=N --max-trials=N --min-time=S --trial-time=S\n");
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
    std::fprintf(stderr, "shardlin-bench: --quick and --full exclude each other\n");
    return false;
  }
  o.mode = quick ? "quick" : full ? "full" : "default";
  // Mode defaults first; explicit flags override them below.
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
    o.collectiveSizes = {1024,      16384,      262144,    4194304,
                         67108864, 268435456};
    o.compileOps = {1, 10, 100, 1000, 10000};
    o.maxMemGiB = 12.0;
  } else {
    o.rows = {1, 16, 256, 2048};
    o.features = {256, 1024, 2048};
    o.collectiveSizes = {4096, 65536, 1048576, 16777216};
    o.compileOps = {1, 10, 100, 1000, 10000};
    o.timing.minSeconds = 0.2;
  }
  for (const std::string &a : rest) {
    auto val = [&](const char *flag) { return a.substr(std::strlen(flag)); };
    bool ok = true;
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
    else {
      std::fprintf(stderr, "shardlin-bench: unknown option '%s' (--help)\n",
                   a.c_str());
      return false;
    }
    if (!ok) {
      std::fprintf(stderr, "shardlin-bench: bad list in '%s'\n", a.c_str());
      return false;
    }
  }
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
  if (o.torch < 0)
    o.torch = 1;
  return true;
}

//===----------------------------------------------------------------------===//
// Environment
//===----------------------------------------------------------------------===//

int cores() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

double loadAverage() {
  std::ifstream in("/proc/loadavg");
  double l = -1;
  in >> l;
  return l;
}

/// CPU time of the whole machine (busy jiffies, in seconds) and of this
/// process with its waited-for children (mpirun ranks, python helpers), to
/// tell how much of the machine other processes used during a section.
struct CpuSnapshot {
  double wall = 0, machineBusy = 0, own = 0;
};

CpuSnapshot cpuSnapshot() {
  CpuSnapshot c;
  c.wall = nowSeconds();
  std::ifstream in("/proc/stat");
  std::string tag;
  in >> tag;
  double v[10] = {0};
  for (int i = 0; i < 10 && in; ++i)
    in >> v[i];
  const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
  // user nice system idle iowait irq softirq steal guest guest_nice; guest
  // time is already counted in user.
  double busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
  c.machineBusy = busy / hz;
  rusage self, children;
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  auto secs = [](const timeval &t) { return t.tv_sec + 1e-6 * t.tv_usec; };
  c.own = secs(self.ru_utime) + secs(self.ru_stime) +
          secs(children.ru_utime) + secs(children.ru_stime);
  return c;
}

/// Share of the machine's cores that other processes kept busy between two
/// snapshots (0 = quiet, 1 = every core taken).
double foreignShare(const CpuSnapshot &a, const CpuSnapshot &b) {
  double wall = b.wall - a.wall;
  if (wall <= 0)
    return 0;
  double foreign = (b.machineBusy - a.machineBusy) - (b.own - a.own);
  return std::clamp(foreign / (wall * cores()), 0.0, 1.0);
}

bool fileExists(const std::string &p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

/// Runs a shell command, captures its stdout, returns its exit status.
int capture(const std::string &cmd, std::string &out) {
  out.clear();
  FILE *f = popen(cmd.c_str(), "r");
  if (!f)
    return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0)
    out.append(buf, n);
  int rc = pclose(f);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

std::string fmt(const char *f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string humanBytes(double b) {
  const char *units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (b >= 1024 && u < 3) {
    b /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", b, units[u]);
  return buf;
}

//===----------------------------------------------------------------------===//
// The sweep
//===----------------------------------------------------------------------===//

std::vector<int64_t> placementsFor(int w, bool permuted) {
  std::vector<int64_t> p(w);
  for (int i = 0; i < w; ++i)
    p[i] = i;
  if (permuted) {
    if (w == 4)
      p = {3, 1, 0, 2}; // a multi-hop permutation
    else
      std::reverse(p.begin(), p.end());
  }
  return p;
}

/// Rough peak memory of one case on the threads backend (all ranks plus the
/// dense baseline's buffers), to skip what does not fit.
double estimateBytes(const LinearCase &c) {
  const double w = c.worldSize(), b = c.rows, n = c.n, k = c.k;
  double bytes = 4 * (w * b * k + 2 * n * k + w * b * n); // X, A, chunks, Y
  if (c.worldSize() > 1) {
    shardlin::LinearShape s;
    s.rows = c.rows;
    s.n = c.n;
    s.k = c.k;
    s.dim = c.dim;
    s.placements = c.placements;
    double worst = 0;
    for (auto st :
         {shardlin::Strategy::Activations, shardlin::Strategy::GatherWeight}) {
      auto cost = shardlin::estimateCost(s, st, shardlin::MachineModel());
      double sum = 0;
      for (uint64_t e : cost.peakExtraBytes)
        sum += double(e);
      worst = std::max(worst, sum);
    }
    bytes += worst;
  }
  return bytes;
}

struct Row {
  LinearCase c;
  LinearResult r;
  bool skipped = false;
  std::string skipReason;
};

struct DenseKey {
  int64_t m, n, k;
  bool operator<(const DenseKey &o) const {
    return std::tie(m, n, k) < std::tie(o.m, o.n, o.k);
  }
};

struct TorchResult {
  double median = 0, min = 0, max = 0;
  int iters = 0, trials = 0;
};

struct TorchInfo {
  bool available = false;
  std::string message, version;
  int threads = 0;
  std::map<DenseKey, TorchResult> results;
};

TorchInfo runTorch(const Options &o, const std::set<DenseKey> &shapes) {
  TorchInfo info;
  const std::string script = o.scriptsDir + "/torch_linear.py";
  if (!fileExists(o.python)) {
    info.message = "skipped: " + o.python + " not found";
    return info;
  }
  if (!fileExists(script)) {
    info.message = "skipped: " + script + " not found";
    return info;
  }
  std::string list;
  for (const DenseKey &s : shapes)
    list += (list.empty() ? "" : ";") + std::to_string(s.m) + "," +
            std::to_string(s.n) + "," + std::to_string(s.k);
  info.threads = cores();
  char flags[256];
  std::snprintf(flags, sizeof flags,
                " --threads=%d --warmup=%d --min-trials=%d --max-trials=%d "
                "--min-time=%g --trial-time=%g",
                info.threads, o.timing.warmup, o.timing.minTrials,
                o.timing.maxTrials, o.timing.minSeconds, o.timing.trialSeconds);
  std::string out;
  int rc = capture(shellQuote(o.python) + " " + shellQuote(script) + flags +
                       " --shapes=" + shellQuote(list) + " 2>&1",
                   out);
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string tag;
    ls >> tag;
    if (tag == "torch") {
      ls >> info.version;
      info.available = true;
    } else if (tag == "unavailable") {
      std::getline(ls, info.message);
    } else if (tag == "result") {
      DenseKey k;
      TorchResult r;
      ls >> k.m >> k.n >> k.k >> r.median >> r.min >> r.max >> r.iters >>
          r.trials;
      info.results[k] = r;
    }
  }
  if (rc != 0 || !info.available) {
    info.available = false;
    if (info.message.empty())
      info.message = "helper failed (status " + std::to_string(rc) + "): " +
                     out.substr(0, 500);
    info.message = "skipped: " + info.message;
  }
  return info;
}

/// The strategy cheapest in bytes among the forced ones, for the auto check.
struct AutoCheck {
  std::string where;
  uint64_t autoBytes = 0, bestBytes = 0;
  std::string autoChose, cheapest, why;
  double autoSeconds = 0, cheapestSeconds = 0;
};

//===----------------------------------------------------------------------===//
// Targets (interleaved runs)
//===----------------------------------------------------------------------===//

struct TorchShape {
  int64_t rows = 0, features = 0;
  double shardlinSeconds = 0, torchSeconds = 0;
};
struct TorchTarget {
  std::string message, version; // message: why it was not measured
  std::vector<TorchShape> shapes;
  int faster = 0;
  double geomean = 0;
};

struct TargetRatio {
  std::string name, description;
  double shardlinSeconds = 0, referenceSeconds = 0, ratio = 0, limit = 0;
  /// Best round against best round: less sensitive to bursts of load from
  /// other processes than the medians.
  double ratioOfMins = 0;
  bool met = false;
  bool measured = false;
  std::string note;
};

/// Interleaves `rounds` of (reference, shardlin) and compares medians.
TargetRatio interleaved(const std::string &name, const std::string &desc,
                        const LinearCase &c, int denseThreads, double limit,
                        const TimingOptions &opt, int rounds) {
  TargetRatio t;
  t.name = name;
  t.description = desc;
  t.limit = limit;
  std::vector<double> dense, mine;
  for (int i = 0; i < rounds; ++i) {
    DenseResult d = runDense(c.worldSize() * c.rows, c.n, c.k, denseThreads,
                             opt);
    dense.push_back(d.timing.median());
    LinearResult r = runLinearThreads(c, opt);
    if (!r.ran) {
      t.note = "failed: " + r.error;
      return t;
    }
    mine.push_back(r.timing.median());
  }
  auto med = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  };
  t.measured = true;
  t.shardlinSeconds = med(mine);
  t.referenceSeconds = med(dense);
  t.ratio = t.shardlinSeconds / t.referenceSeconds;
  t.ratioOfMins = *std::min_element(mine.begin(), mine.end()) /
                  *std::min_element(dense.begin(), dense.end());
  t.met = t.ratio <= limit;
  return t;
}

//===----------------------------------------------------------------------===//
// Reporting
//===----------------------------------------------------------------------===//

/// Where `auto` sends more bytes than the byte-cheapest strategy, from the
/// cost model alone (the sweep shows measured bytes equal the model's
/// exactly, so this covers every B, not just the sweep's): for each (W, dim,
/// N = K), the ranges of B in [1, maxRows] where it happens.
struct AutoBand {
  int w = 0;
  int64_t dim = 0, features = 0, lo = 0, hi = 0;
  uint64_t autoBytes = 0, bestBytes = 0; // at lo
  std::string autoChose;
};

std::vector<AutoBand> modelAutoBands(const std::vector<int> &worlds,
                                     const std::vector<int64_t> &features,
                                     int64_t maxRows) {
  std::vector<AutoBand> bands;
  for (int w : worlds) {
    if (w < 2)
      continue;
    for (int64_t dim : {int64_t(1), int64_t(0)})
      for (int64_t f : features) {
        shardlin::LinearShape s;
        s.n = s.k = f;
        s.dim = dim;
        s.placements.resize(w);
        for (int i = 0; i < w; ++i)
          s.placements[i] = i;
        AutoBand cur;
        bool open = false;
        for (int64_t b = 1; b <= maxRows; ++b) {
          s.rows = b;
          const shardlin::MachineModel m;
          auto pick = shardlin::chooseStrategy(s, m, 0);
          uint64_t act = shardlin::estimateCost(
                             s, shardlin::Strategy::Activations, m)
                             .maxBytesSent();
          uint64_t gw = shardlin::estimateCost(
                            s, shardlin::Strategy::GatherWeight, m)
                            .maxBytesSent();
          uint64_t mine =
              pick == shardlin::Strategy::Activations ? act : gw;
          bool worse = mine > std::min(act, gw);
          if (worse && !open) {
            open = true;
            cur = AutoBand();
            cur.w = w;
            cur.dim = dim;
            cur.features = f;
            cur.lo = b;
            cur.autoBytes = mine;
            cur.bestBytes = std::min(act, gw);
            cur.autoChose = shardlin::strategyName(*pick);
          }
          if (open && (!worse || b == maxRows)) {
            cur.hi = worse ? b : b - 1;
            bands.push_back(cur);
            open = false;
          }
        }
      }
  }
  return bands;
}

void writeTiming(Json &j, const Timing &t) {
  j.field("median_s", t.median())
      .field("min_s", t.min())
      .field("max_s", t.max())
      .field("iters", t.iters)
      .field("trials", t.trials);
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  if (!parseArgs(argc, argv, o)) {
    usage();
    return 2;
  }
  if (!o.mpiWorker.empty())
    return mpiWorkerMain(argc, argv, o.mpiWorker, o.mpiOut, o.timing);
  if (!o.mpiCollectivesWorker.empty()) {
    std::vector<uint64_t> sizes;
    parseList(o.mpiCollectivesWorker, sizes);
    return mpiCollectivesWorkerMain(argc, argv, sizes, o.mpiOut, o.timing);
  }

  // The mpi backend needs the runtime built with MPI and an mpirun.
  bool haveMpi = rt::mpiAvailable() && !o.mpirun.empty() &&
                 fileExists(o.mpirun);
  std::string mpiNote;
  if (std::find(o.backends.begin(), o.backends.end(), "mpi") !=
          o.backends.end() &&
      !haveMpi) {
    mpiNote = !rt::mpiAvailable() ? "the runtime was built without MPI"
                                  : "no mpirun (" + o.mpirun + ")";
    std::printf("mpi backend skipped: %s\n", mpiNote.c_str());
    o.backends.erase(std::remove(o.backends.begin(), o.backends.end(), "mpi"),
                     o.backends.end());
  }

  const double loadStart = loadAverage();
  const CpuSnapshot cpuStart = cpuSnapshot();
  const double t0 = nowSeconds();
  bool failed = false;
  std::printf("shardlin-bench (%s): %d cores, load %.2f, OpenBLAS %s\n",
              o.mode.c_str(), cores(), loadStart, openblas_get_config());
  std::printf("timing: %d warm-up, then %d..%d trials of back-to-back runs "
              "(~%.3g s each, ~%.3g s in all); figures are medians over "
              "trials\n",
              o.timing.warmup, o.timing.minTrials, o.timing.maxTrials,
              o.timing.trialSeconds, o.timing.minSeconds);

  // The targets first: a run that waited for a quiet machine measures them
  // while it is quietest.
  std::map<std::string, double> sectionLoad; // 1-min load when it started
  // Share of the cores other processes used during each section.
  std::map<std::string, double> sectionForeign;
  CpuSnapshot cpuMark = cpuStart;
  //===--- Targets ----------------------------------------------------------===//
  std::vector<TargetRatio> targets;
  TorchTarget torchTarget;
  sectionLoad["targets"] = loadStart;
  if (o.sections.count("targets")) {
    const bool quick = o.mode == "quick";
    const int64_t f = quick ? 256 : 2048;
    const int rounds = quick ? 1 : 5;
    std::printf("\n== targets (interleaved with the reference, %d rounds; load "
                "%.2f) ==\n",
                rounds, sectionLoad["targets"]);
    LinearCase one;
    one.backend = "threads";
    one.rows = f;
    one.n = one.k = f;
    one.placements = {0};
    one.strategy = "local";
    targets.push_back(interleaved(
        "w1_vs_dense",
        "threads W=1 f32 " + std::to_string(f) + "^3 vs OpenBLAS GEMM+bias, " +
            std::to_string(cores()) + " threads",
        one, cores(), 1.05, o.timing, rounds));
    for (int64_t dim : {int64_t(1), int64_t(0)})
      for (std::string s : {"auto", "activations", "gather-weight"}) {
        LinearCase two = one;
        two.rows = f / 2;
        two.placements = {0, 1};
        two.dim = dim;
        two.strategy = s;
        targets.push_back(interleaved(
            "w2_dim" + std::to_string(dim) + "_" + s + "_vs_dense",
            "threads W=2 (1 BLAS thread/rank) dim " + std::to_string(dim) +
                " " + s + ", B=" + std::to_string(f / 2) + "/rank N=K=" +
                std::to_string(f) + " vs " + std::to_string(cores()) +
                "-thread dense " + std::to_string(f) + "^3",
            two, cores(), 1.25, o.timing, rounds));
      }
    for (const TargetRatio &t : targets)
      std::printf("  %-34s %s: %.3f ms vs %.3f ms = %.3fx (best rounds "
                  "%.3fx; limit %.2fx) %s\n",
                  t.name.c_str(), t.description.c_str(),
                  1e3 * t.shardlinSeconds, 1e3 * t.referenceSeconds, t.ratio,
                  t.ratioOfMins, t.limit,
                  !t.measured             ? t.note.c_str()
                  : o.mode == "quick"     ? "(smoke: not a measurement)"
                  : t.met                 ? "MET"
                                          : "MISSED");

    // W = 1 against PyTorch, interleaved: a round runs every shape on
    // shardlin, then every shape in one PyTorch process.
    if (o.torch) {
      std::set<DenseKey> shapes;
      for (int64_t f : o.features)
        for (int64_t b : o.rows)
          shapes.insert({b, f, f});
      std::map<DenseKey, std::vector<double>> mine, theirs;
      const int torchRounds = 3;
      for (int round = 0; round < torchRounds && torchTarget.message.empty();
           ++round) {
        for (const DenseKey &k : shapes) {
          LinearCase c;
          c.rows = k.m;
          c.n = k.n;
          c.k = k.k;
          c.placements = {0};
          c.strategy = "local";
          LinearResult r = runLinearThreads(c, o.timing);
          if (r.ran)
            mine[k].push_back(r.timing.median());
        }
        TorchInfo t = runTorch(o, shapes);
        if (!t.available) {
          torchTarget.message = "PyTorch " + t.message;
          break;
        }
        torchTarget.version = t.version;
        for (auto &[k, r] : t.results)
          theirs[k].push_back(r.median);
      }
      auto med = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        size_t n = v.size();
        return n == 0 ? 0.0
                      : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
      };
      if (torchTarget.message.empty()) {
        std::printf("  W=1 vs torch %s F.linear (%d threads each, %d "
                    "interleaved rounds):\n",
                    torchTarget.version.c_str(), cores(), torchRounds);
        double logSum = 0;
        for (const DenseKey &k : shapes) {
          if (mine[k].empty() || theirs[k].empty())
            continue;
          TorchShape ts;
          ts.rows = k.m;
          ts.features = k.n;
          ts.shardlinSeconds = med(mine[k]);
          ts.torchSeconds = med(theirs[k]);
          torchTarget.shapes.push_back(ts);
          double ratio = ts.shardlinSeconds / ts.torchSeconds;
          logSum += std::log(ratio);
          torchTarget.faster += ratio < 1.0;
          std::printf("    B=%-5lld N=K=%-5lld shardlin %9.4f ms  torch %9.4f "
                      "ms  = %.2fx\n",
                      (long long)k.m, (long long)k.n,
                      1e3 * ts.shardlinSeconds, 1e3 * ts.torchSeconds, ratio);
        }
        if (!torchTarget.shapes.empty())
          torchTarget.geomean = std::exp(logSum / torchTarget.shapes.size());
        std::printf("    faster in %d of %zu shapes, geometric mean %.3fx\n",
                    torchTarget.faster, torchTarget.shapes.size(),
                    torchTarget.geomean);
      } else {
        std::printf("  W=1 vs torch: %s\n", torchTarget.message.c_str());
      }
    }
  }

  sectionForeign["targets"] = foreignShare(cpuMark, cpuSnapshot());
  cpuMark = cpuSnapshot();
  sectionLoad["linear"] = loadAverage();

  //===--- The linear sweep -------------------------------------------------===//
  std::vector<Row> rows;
  std::map<DenseKey, DenseResult> dense;
  TorchInfo torch;
  const bool doLinear = o.sections.count("linear") > 0;
  if (doLinear) {
    // Cases grouped by W (one mpirun per W).
    int id = 0;
    for (int w : o.worldSizes)
      for (const std::string &backend : o.backends)
        for (int64_t f : o.features)
          for (int64_t b : o.rows)
            for (int64_t dim : o.dims) {
              if (w == 1 && dim != o.dims.front())
                continue; // W = 1 has no sharding to speak of
              for (const std::string &s : o.strategies) {
                if (w == 1 && s != o.strategies.front())
                  continue;
                Row row;
                row.c.id = id++;
                row.c.backend = backend;
                row.c.dim = dim;
                row.c.rows = b;
                row.c.n = row.c.k = f;
                row.c.placements = placementsFor(w, o.permuted);
                row.c.strategy = w == 1 ? "local" : s;
                double need = estimateBytes(row.c);
                if (need > o.maxMemGiB * (1ull << 30)) {
                  row.skipped = true;
                  row.skipReason = "needs ~" + humanBytes(need) +
                                   " > --max-mem-gib";
                }
                rows.push_back(std::move(row));
              }
            }

    std::printf("\n== linear sweep: %zu cases ==\n", rows.size());
    // One feature size at a time, so that a case and its references are
    // measured minutes apart at most: the dense baselines of its shapes, the
    // threads cases, the mpi cases (one mpirun per W), then PyTorch.
    std::set<int64_t> featureSizes;
    for (const Row &r : rows)
      if (!r.skipped)
        featureSizes.insert(r.c.n);
    size_t done = 0;
    bool torchTried = false;
    if (!o.torch)
      torch.message = "skipped (--no-torch, or --quick)";
    for (int64_t f : featureSizes) {
      std::set<DenseKey> shapes;
      for (const Row &r : rows)
        if (!r.skipped && r.c.n == f)
          shapes.insert({r.c.worldSize() * r.c.rows, r.c.n, r.c.k});
      for (const DenseKey &k : shapes)
        dense[k] = runDense(k.m, k.n, k.k, cores(), o.timing);

      std::map<int, std::vector<size_t>> mpiByW;
      for (size_t i = 0; i < rows.size(); ++i) {
        Row &r = rows[i];
        if (r.skipped || r.c.n != f)
          continue;
        if (r.c.backend == "mpi") {
          mpiByW[r.c.worldSize()].push_back(i);
          continue;
        }
        r.r = runLinearThreads(r.c, o.timing);
        if (++done % 20 == 0)
          std::fprintf(stderr, "  ... %zu threads cases done\n", done);
      }
      for (auto &[w, idx] : mpiByW) {
        std::vector<LinearCase> cases;
        for (size_t i : idx)
          cases.push_back(rows[i].c);
        std::vector<LinearResult> results;
        std::fprintf(stderr, "  ... N=K=%lld: mpirun -np %d, %zu cases\n",
                     (long long)f, w, cases.size());
        rt::Status s = runLinearMpi(cases, o.timing, o.mpirun, results);
        if (!s)
          std::fprintf(stderr, "mpi W=%d: %s\n", w, s.message().c_str());
        for (size_t j = 0; j < idx.size(); ++j)
          rows[idx[j]].r = results[j];
      }
      if (o.torch && (!torchTried || torch.available)) {
        TorchInfo t = runTorch(o, shapes);
        torchTried = true;
        torch.available = t.available;
        torch.message = t.message;
        torch.version = t.version;
        torch.threads = t.threads;
        torch.results.insert(t.results.begin(), t.results.end());
      }
    }
  }

  //===--- The table --------------------------------------------------------===//
  int mismatches = 0, verifyFailures = 0, errors = 0, checked = 0;
  std::vector<AutoCheck> autoChecks;
  std::vector<AutoBand> autoBands;
  if (doLinear) {
    std::printf("\n%-7s %1s %3s %5s %5s %-13s %-13s %9s %6s %8s %11s %11s %-3s "
                "%9s %7s %9s %7s\n",
                "backend", "W", "dim", "B", "N=K", "strategy", "lowered",
                "ms", "+-%", "GFLOP/s", "bytes/rank", "predicted", "ok",
                "dense ms", "x dense", "torch ms", "x torch");
    for (const Row &row : rows) {
      const LinearCase &c = row.c;
      std::printf("%-7s %1d %3lld %5lld %5lld %-13s ", c.backend.c_str(),
                  c.worldSize(), (long long)(c.worldSize() == 1 ? -1 : c.dim),
                  (long long)c.rows, (long long)c.n, c.strategy.c_str());
      if (row.skipped) {
        std::printf("skipped: %s\n", row.skipReason.c_str());
        continue;
      }
      const LinearResult &r = row.r;
      if (!r.ran) {
        ++errors;
        std::printf("FAILED: %s\n", r.error.c_str());
        continue;
      }
      ++checked;
      bool bytesOk = r.bytesMatch();
      if (!bytesOk)
        ++mismatches;
      if (r.verifyFailures)
        ++verifyFailures;
      double t = r.timing.median();
      double spread = t > 0 ? 100.0 * (r.timing.max() - r.timing.min()) / t : 0;
      DenseKey key{c.worldSize() * c.rows, c.n, c.k};
      double dt = dense.count(key) ? dense[key].timing.median() : 0;
      std::string torchMs = "-", torchX = "-";
      if (torch.results.count(key)) {
        torchMs = fmt("%.3f", 1e3 * torch.results[key].median);
        torchX = fmt("%.2f", t / torch.results[key].median);
      }
      std::printf("%-13s %9.3f %6.1f %8.1f %11llu %11llu %-3s %9.3f %7.2f %9s "
                  "%7s%s\n",
                  r.chosen.c_str(), 1e3 * t, spread, c.flops() / t / 1e9,
                  (unsigned long long)r.maxBytesSent(),
                  (unsigned long long)r.maxBytesPredicted(),
                  bytesOk ? (r.verifyFailures ? "NUM" : "yes") : "NO",
                  1e3 * dt, dt > 0 ? t / dt : 0.0, torchMs.c_str(),
                  torchX.c_str(),
                  bytesOk ? "" : "   <-- bytes differ from the cost model");
      if (!bytesOk) {
        auto list = [](const std::vector<uint64_t> &v) {
          std::string t;
          for (uint64_t b : v)
            t += (t.empty() ? "" : ", ") + std::to_string(b);
          return "[" + t + "]";
        };
        std::printf("    bytes per rank: measured %s, cost model %s%s\n",
                    list(r.bytesSent).c_str(), list(r.bytesPredicted).c_str(),
                    r.bytesConsistent ? ""
                                      : "; and not the same in every trial");
      }
      if (!r.verifyReport.empty())
        std::printf("%s", r.verifyReport.c_str());
    }

    // auto vs the cheapest forced strategy, per (backend, W, dim, shape).
    std::map<std::string, std::map<std::string, const Row *>> groups;
    for (const Row &row : rows)
      if (!row.skipped && row.r.ran && row.c.worldSize() > 1) {
        char key[160];
        std::snprintf(key, sizeof key, "%s W=%d dim=%lld B=%lld N=K=%lld",
                      row.c.backend.c_str(), row.c.worldSize(),
                      (long long)row.c.dim, (long long)row.c.rows,
                      (long long)row.c.n);
        groups[key][row.c.strategy] = &row;
      }
    for (auto &[key, g] : groups) {
      if (!g.count("auto") || !g.count("activations") ||
          !g.count("gather-weight"))
        continue;
      AutoCheck a;
      a.where = key;
      a.autoBytes = g["auto"]->r.maxBytesSent();
      a.autoChose = g["auto"]->r.chosen;
      uint64_t act = g["activations"]->r.maxBytesSent();
      uint64_t gw = g["gather-weight"]->r.maxBytesSent();
      a.bestBytes = std::min(act, gw);
      a.cheapest = act <= gw ? "activations" : "gather-weight";
      a.autoSeconds = g["auto"]->r.timing.median();
      a.cheapestSeconds = g[a.cheapest]->r.timing.median();
      if (a.autoBytes > a.bestBytes) {
        const LinearCase &c = g["auto"]->c;
        a.why = "the model (latency 2 us per collective per peer, 10 GB/s, "
                "100 GFLOP/s) estimates " +
                a.autoChose + ": " + modelBreakdown(c, a.autoChose) +
                "; " + a.cheapest + ": " + modelBreakdown(c, a.cheapest) +
                "; measured " + fmt("%.1f", 1e6 * a.autoSeconds) + " us vs " +
                fmt("%.1f", 1e6 * a.cheapestSeconds) + " us";
      }
      autoChecks.push_back(a);
    }
    int autoViolations = 0;
    for (const AutoCheck &a : autoChecks)
      autoViolations += a.autoBytes > a.bestBytes;
    std::printf("\nbytes sent per rank == cost model, every rank, every case: "
                "%s (%d cases, %d mismatches)\n",
                mismatches == 0 ? "yes" : "NO", checked, mismatches);
    std::printf("numerical check (sampled rows vs float64): %s (%d cases "
                "failed)\n",
                verifyFailures == 0 ? "all pass" : "FAILURES", verifyFailures);
    std::printf("auto never sends more than the cheapest forced strategy: %s "
                "(%zu groups, %d exceptions)\n",
                autoViolations == 0 ? "holds" : "does NOT hold",
                autoChecks.size(), autoViolations);
    int autoFaster = 0, shown = 0;
    for (const AutoCheck &a : autoChecks) {
      if (a.autoBytes <= a.bestBytes)
        continue;
      autoFaster += a.autoSeconds < a.cheapestSeconds;
      if (++shown > 12)
        continue;
      std::printf("  %s: auto -> %s sends %llu B > %s %llu B; %s\n",
                  a.where.c_str(), a.autoChose.c_str(),
                  (unsigned long long)a.autoBytes, a.cheapest.c_str(),
                  (unsigned long long)a.bestBytes, a.why.c_str());
    }
    if (shown > 12)
      std::printf("  ... %d more (all in the JSON's auto_check)\n",
                  shown - 12);
    if (autoViolations)
      std::printf("  where auto sent more bytes, it was nevertheless faster "
                  "than the byte-cheapest strategy in %d of %d groups "
                  "(measured)\n",
                  autoFaster, autoViolations);
    // The same question from the model for every B up to the sweep's
    // largest (bytes are exact, see above).
    int64_t maxB = *std::max_element(o.rows.begin(), o.rows.end());
    autoBands = modelAutoBands(o.worldSizes, o.features, std::max<int64_t>(
                                                             maxB, 16384));
    std::printf("cost model, every B in 1..%lld for the sweep's W and N = K: "
                "auto sends more bytes than the byte-cheapest strategy in %zu "
                "band(s) of B%s\n",
                (long long)std::max<int64_t>(maxB, 16384), autoBands.size(),
                autoBands.empty() ? "" : ":");
    for (const AutoBand &b : autoBands)
      std::printf("  W=%d dim=%lld N=K=%lld: B in [%lld, %lld] -> %s "
                  "(at B=%lld: %llu B vs %llu B)\n",
                  b.w, (long long)b.dim, (long long)b.features,
                  (long long)b.lo, (long long)b.hi, b.autoChose.c_str(),
                  (long long)b.lo, (unsigned long long)b.autoBytes,
                  (unsigned long long)b.bestBytes);
    std::printf("pytorch: %s\n",
                torch.available
                    ? ("torch " + torch.version + ", " +
                       std::to_string(torch.threads) + " threads")
                          .c_str()
                    : torch.message.c_str());
    if (mismatches || verifyFailures || errors)
      failed = true;
  }

  //===--- Collectives ------------------------------------------------------===//
  std::vector<CollectiveResult> collectives;
  sectionForeign["linear"] = foreignShare(cpuMark, cpuSnapshot());
  cpuMark = cpuSnapshot();
  sectionLoad["collectives"] = loadAverage();
  if (o.sections.count("collectives")) {
    std::printf("\n== collectives (f32; size = nccl-tests' size; load %.2f) ==\n",
                sectionLoad["collectives"]);
    for (const std::string &backend : o.backends)
      for (int w : o.collectiveWorldSizes) {
        if (w < 2)
          continue;
        std::vector<CollectiveResult> rs;
        if (backend == "threads") {
          rs = runCollectivesThreads(w, o.collectiveSizes, o.timing);
        } else {
          rt::Status s =
              runCollectivesMpi(w, o.collectiveSizes, o.timing, o.mpirun, rs);
          if (!s) {
            CollectiveResult e;
            e.backend = "mpi";
            e.worldSize = w;
            e.error = s.message();
            rs.push_back(e);
          }
        }
        collectives.insert(collectives.end(), rs.begin(), rs.end());
      }
    std::printf("%-7s %1s %-14s %10s %10s %9s %9s %11s %11s %-3s\n", "backend",
                "W", "collective", "size", "time us", "algbw", "busbw",
                "bytes/rank", "expected", "ok");
    for (const CollectiveResult &c : collectives) {
      if (!c.error.empty()) {
        std::printf("%-7s %1d FAILED: %s\n", c.backend.c_str(), c.worldSize,
                    c.error.c_str());
        failed = true;
        continue;
      }
      if (!c.bytesMatch)
        failed = true;
      std::printf("%-7s %1d %-14s %10s %10.1f %9.2f %9.2f %11llu %11llu %-3s\n",
                  c.backend.c_str(), c.worldSize, c.op.c_str(),
                  humanBytes(c.sizeBytes).c_str(), 1e6 * c.timing.median(),
                  c.algbw, c.busbw, (unsigned long long)c.bytesSent,
                  (unsigned long long)c.bytesExpected,
                  c.bytesMatch ? "yes" : "NO");
    }
    std::printf("(algbw, busbw in GB/s; busbw = algbw * (W-1)/W for all three, "
                "as nccl-tests)\n");
  }

  //===--- Compile time -----------------------------------------------------===//
  std::vector<CompileResult> compiles;
  sectionForeign["collectives"] = foreignShare(cpuMark, cpuSnapshot());
  cpuMark = cpuSnapshot();
  sectionLoad["compile"] = loadAverage();
  if (o.sections.count("compile")) {
    std::printf("\n== compile time: parse + lower (strategy=auto, W=4; load "
                "%.2f) ==\n",
                sectionLoad["compile"]);
    std::printf("%7s %10s %10s %10s %12s %12s %12s\n", "linears", "parse ms",
                "lower ms", "translate", "parse+lower", "us/op", "all us/op");
    for (int ops : o.compileOps) {
      int samples = ops >= 10000 ? 3 : ops >= 1000 ? 3 : 5;
      CompileResult c = runCompileBench(ops, samples);
      compiles.push_back(c);
      if (!c.error.empty()) {
        std::printf("%7d FAILED: %s\n", ops, c.error.c_str());
        failed = true;
        continue;
      }
      std::printf("%7d %10.2f %10.2f %10.2f %12.2f %12.2f %12.2f\n", ops,
                  1e3 * c.parseSeconds, 1e3 * c.lowerSeconds,
                  1e3 * c.translateSeconds, 1e3 * c.parseLowerSeconds(),
                  1e6 * c.parseLowerSeconds() / ops,
                  1e6 * c.totalSeconds() / ops);
    }
  }

  //===--- Target summary ---------------------------------------------------===//
  // Derived from the sweep: W = 1 vs PyTorch, and W = 2 where compute
  // dominates (the cost model's GEMM time >= 90% of its estimate).
  struct Derived {
    std::string name, text;
    bool met = false, applicable = false;
  };
  std::vector<Derived> derived;
  if (doLinear) {
    // W = 1 vs PyTorch.
    Derived d;
    d.name = "w1_vs_pytorch";
    if (!torchTarget.shapes.empty()) {
      d.applicable = true;
      d.met = torchTarget.faster == static_cast<int>(torchTarget.shapes.size());
      d.text = "threads W=1 faster than torch F.linear (interleaved rounds) "
               "in " +
               std::to_string(torchTarget.faster) + "/" +
               std::to_string(torchTarget.shapes.size()) +
               " shapes; geometric mean " + fmt("%.3fx", torchTarget.geomean);
    } else if (!torch.available) {
      d.text = "PyTorch " + torch.message;
    } else {
      int faster = 0, total = 0;
      std::string worst;
      double worstRatio = 0;
      for (const Row &row : rows) {
        if (row.skipped || !row.r.ran || row.c.worldSize() != 1 ||
            row.c.backend != "threads")
          continue;
        DenseKey key{row.c.rows, row.c.n, row.c.k};
        if (!torch.results.count(key))
          continue;
        double ratio = row.r.timing.median() / torch.results[key].median;
        ++total;
        faster += ratio < 1.0;
        if (ratio > worstRatio) {
          worstRatio = ratio;
          worst = "B=" + std::to_string(row.c.rows) +
                  " N=K=" + std::to_string(row.c.n);
        }
      }
      d.applicable = total > 0;
      d.met = total > 0 && faster == total;
      d.text = "threads W=1 faster than torch F.linear in " +
               std::to_string(faster) + "/" + std::to_string(total) +
               " shapes; worst " + fmt("%.2fx", worstRatio) + " at " + worst;
    }
    derived.push_back(d);
    // W = 2, compute dominated, vs the all-core dense GEMM: the target is
    // about the threads backend; mpi is reported alongside.
    for (const char *backend : {"threads", "mpi"}) {
      Derived e;
      e.name = std::string("w2_compute_bound_vs_dense_") + backend;
      int within = 0, total = 0;
      std::string list;
      for (const Row &row : rows) {
        if (row.skipped || !row.r.ran || row.c.worldSize() != 2 ||
            row.c.backend != backend || row.c.strategy != "auto")
          continue;
        // Compute-dominated: a GEMM big enough to run at the BLAS's full
        // rate (every dim of the dense GEMM >= 512) and a communication
        // estimate under 10% of the GEMM estimate in the cost model.
        double est = modelEstimateUs(row.c, row.r.chosen);
        double gemmUs = 2.0 * row.c.rows * row.c.n * row.c.k / 1e5;
        if (est <= 0 || gemmUs / est < 0.9 ||
            std::min({2 * row.c.rows, row.c.n, row.c.k}) < 512)
          continue;
        DenseKey key{2 * row.c.rows, row.c.n, row.c.k};
        double ratio = row.r.timing.median() / dense[key].timing.median();
        ++total;
        within += ratio <= 1.25;
        list += " dim" + std::to_string(row.c.dim) + "/B" +
                std::to_string(row.c.rows) + "/N=K" +
                std::to_string(row.c.n) + ":" + fmt("%.2fx", ratio);
      }
      if (total == 0)
        continue;
      e.applicable = true;
      e.met = within == total;
      e.text = std::string(backend) + " W=2 auto within 1.25x of dense in " +
               std::to_string(within) + "/" + std::to_string(total) +
               " compute-bound shapes:" + list;
      derived.push_back(e);
    }
  }
  {
    Derived c;
    c.name = "lower_10000_under_2s_flat";
    const CompileResult *big = nullptr, *ref = nullptr;
    for (const CompileResult &r : compiles) {
      if (!r.error.empty())
        continue;
      if (r.ops == 10000)
        big = &r;
      if (r.ops == 100)
        ref = &r;
    }
    if (big && ref) {
      double perBig = big->parseLowerSeconds() / big->ops;
      double perRef = ref->parseLowerSeconds() / ref->ops;
      c.applicable = true;
      // Flat: per-op time at 10,000 within 2x of that at 100 (a quadratic
      // pass would be ~100x).
      c.met = big->parseLowerSeconds() < 2.0 && perBig / perRef < 2.0;
      c.text = "10,000 linears parse+lower in " +
               fmt("%.3f s", big->parseLowerSeconds()) + "; per op " +
               fmt("%.1f us", 1e6 * perBig) + " vs " +
               fmt("%.1f us", 1e6 * perRef) + " at 100 (" +
               fmt("%.2fx", perBig / perRef) + ")";
    } else {
      c.text = "not measured (needs --compile-ops with 100 and 10000)";
    }
    derived.push_back(c);
  }

  sectionForeign["compile"] = foreignShare(cpuMark, cpuSnapshot());
  const double foreignAll = foreignShare(cpuStart, cpuSnapshot());
  const double loadEnd = loadAverage();
  std::printf("\n== summary (load %.2f at start, %.2f at end; %.0f s) ==\n",
              loadStart, loadEnd, nowSeconds() - t0);
  std::printf("  other processes used %.0f%% of the cores during the run (",
              100 * foreignAll);
  {
    const char *sep = "";
    for (const char *name : {"targets", "linear", "collectives", "compile"})
      if (o.sections.count(name)) {
        std::printf("%s%s %.0f%%", sep, name, 100 * sectionForeign[name]);
        sep = ", ";
      }
  }
  std::printf(")%s\n", foreignAll > 0.1 ? ": timings are disturbed, rerun "
                                           "when the machine is quiet"
                                         : "");
  const bool quickMode = o.mode == "quick";
  for (const TargetRatio &t : targets)
    std::printf("  [%s] %s: %.3fx (best rounds %.3fx; limit %.2fx)\n",
                !t.measured  ? "n/a"
                : quickMode ? "smoke"
                : t.met     ? "MET"
                            : "MISSED",
                t.description.c_str(), t.ratio, t.ratioOfMins, t.limit);
  for (const auto &d : derived)
    std::printf("  [%s] %s\n",
                !d.applicable ? "n/a" : d.met ? "MET" : "MISSED",
                d.text.c_str());
  if (doLinear)
    std::printf("  [%s] bytes sent per rank == cost model in every case\n",
                mismatches == 0 && errors == 0 ? "MET" : "MISSED");

  //===--- JSON -------------------------------------------------------------===//
  std::string jsonPath = o.json;
  std::string tmpJson;
  if (jsonPath.empty() && !o.plot.empty()) {
    tmpJson = makeTempDir() + "/bench.json";
    jsonPath = tmpJson;
  }
  if (!jsonPath.empty()) {
    Json j;
    j.beginObject();
    j.key("machine").beginObject();
    j.field("cores", cores())
        .field("load_start", loadStart)
        .field("load_end", loadEnd)
        .field("openblas", std::string(openblas_get_config()))
        .field("seconds", nowSeconds() - t0);
    j.key("load_at_section_start").beginObject();
    for (auto &[name, l] : sectionLoad)
      j.field(name, l);
    j.endObject();
    j.field("foreign_cpu_share", foreignAll);
    j.key("foreign_cpu_share_by_section").beginObject();
    for (auto &[name, f] : sectionForeign)
      j.field(name, f);
    j.endObject();
    j.endObject();
    j.field("mode", o.mode);
    j.key("timing").beginObject();
    j.field("warmup", o.timing.warmup)
        .field("min_trials", o.timing.minTrials)
        .field("max_trials", o.timing.maxTrials)
        .field("min_seconds", o.timing.minSeconds)
        .field("trial_seconds", o.timing.trialSeconds);
    j.endObject();
    j.key("linear").beginArray();
    for (const Row &row : rows) {
      const LinearCase &c = row.c;
      j.beginObject();
      j.field("backend", c.backend)
          .field("world_size", c.worldSize())
          .field("dim", c.dim)
          .field("rows", c.rows)
          .field("n", c.n)
          .field("k", c.k)
          .field("strategy", c.strategy);
      j.key("placements").beginArray();
      for (int64_t p : c.placements)
        j.value(p);
      j.endArray();
      if (row.skipped) {
        j.field("skipped", row.skipReason);
      } else if (!row.r.ran) {
        j.field("error", row.r.error);
      } else {
        const LinearResult &r = row.r;
        j.field("lowered", r.chosen).field("model_choice", modelChoice(c));
        writeTiming(j, r.timing);
        j.field("gflops", c.flops() / r.timing.median() / 1e9)
            .field("blas_threads", r.blasThreads)
            .field("compile_s", r.compileSeconds);
        j.key("bytes_sent").beginArray();
        for (uint64_t b : r.bytesSent)
          j.value(b);
        j.endArray();
        j.key("bytes_predicted").beginArray();
        for (uint64_t b : r.bytesPredicted)
          j.value(b);
        j.endArray();
        j.field("bytes_sent_max", r.maxBytesSent())
            .field("bytes_predicted_max", r.maxBytesPredicted())
            .field("bytes_match", r.bytesMatch())
            .field("verify_failures", r.verifyFailures);
        DenseKey key{c.worldSize() * c.rows, c.n, c.k};
        if (dense.count(key))
          j.field("dense_s", dense[key].timing.median());
        if (torch.results.count(key))
          j.field("torch_s", torch.results[key].median);
      }
      j.endObject();
    }
    j.endArray();
    j.key("dense").beginArray();
    for (auto &[k, d] : dense) {
      j.beginObject();
      j.field("m", k.m).field("n", k.n).field("k", k.k).field("threads",
                                                               d.threads);
      writeTiming(j, d.timing);
      j.field("gflops", 2.0 * k.m * k.n * k.k / d.timing.median() / 1e9);
      j.endObject();
    }
    j.endArray();
    j.key("torch").beginObject();
    j.field("available", torch.available)
        .field("version", torch.version)
        .field("message", torch.message)
        .field("threads", torch.threads);
    j.key("results").beginArray();
    for (auto &[k, t] : torch.results) {
      j.beginObject();
      j.field("m", k.m).field("n", k.n).field("k", k.k);
      j.field("median_s", t.median).field("min_s", t.min).field("max_s", t.max);
      j.field("iters", t.iters).field("trials", t.trials);
      j.endObject();
    }
    j.endArray();
    j.endObject();
    j.key("auto_check").beginArray();
    for (const AutoCheck &a : autoChecks) {
      j.beginObject();
      j.field("where", a.where)
          .field("auto_lowered", a.autoChose)
          .field("auto_bytes", a.autoBytes)
          .field("cheapest_forced", a.cheapest)
          .field("cheapest_bytes", a.bestBytes)
          .field("holds", a.autoBytes <= a.bestBytes)
          .field("auto_s", a.autoSeconds)
          .field("cheapest_s", a.cheapestSeconds);
      if (!a.why.empty())
        j.field("why", a.why);
      j.endObject();
    }
    j.endArray();
    j.key("auto_model_bands").beginArray();
    for (const AutoBand &b : autoBands) {
      j.beginObject();
      j.field("world_size", b.w)
          .field("dim", b.dim)
          .field("n_k", b.features)
          .field("rows_lo", b.lo)
          .field("rows_hi", b.hi)
          .field("auto_lowered", b.autoChose)
          .field("auto_bytes_at_lo", b.autoBytes)
          .field("cheapest_bytes_at_lo", b.bestBytes);
      j.endObject();
    }
    j.endArray();
    j.key("collectives").beginArray();
    for (const CollectiveResult &c : collectives) {
      j.beginObject();
      j.field("backend", c.backend).field("world_size", c.worldSize);
      if (!c.error.empty()) {
        j.field("error", c.error);
      } else {
        j.field("op", c.op).field("size_bytes", c.sizeBytes);
        writeTiming(j, c.timing);
        j.field("algbw_GBps", c.algbw)
            .field("busbw_GBps", c.busbw)
            .field("bytes_sent", c.bytesSent)
            .field("bytes_expected", c.bytesExpected)
            .field("bytes_match", c.bytesMatch);
      }
      j.endObject();
    }
    j.endArray();
    j.key("compile").beginArray();
    for (const CompileResult &c : compiles) {
      j.beginObject();
      j.field("ops", c.ops);
      if (!c.error.empty())
        j.field("error", c.error);
      else
        j.field("parse_s", c.parseSeconds)
            .field("lower_s", c.lowerSeconds)
            .field("translate_s", c.translateSeconds)
            .field("parse_lower_s", c.parseLowerSeconds())
            .field("us_per_op", 1e6 * c.parseLowerSeconds() / c.ops)
            .field("samples", c.samples);
      j.endObject();
    }
    j.endArray();
    j.key("w1_vs_torch").beginObject();
    j.field("version", torchTarget.version)
        .field("message", torchTarget.message)
        .field("faster", torchTarget.faster)
        .field("geomean_ratio", torchTarget.geomean);
    j.key("shapes").beginArray();
    for (const TorchShape &t : torchTarget.shapes) {
      j.beginObject();
      j.field("rows", t.rows)
          .field("n_k", t.features)
          .field("shardlin_s", t.shardlinSeconds)
          .field("torch_s", t.torchSeconds)
          .field("ratio", t.shardlinSeconds / t.torchSeconds);
      j.endObject();
    }
    j.endArray();
    j.endObject();
    j.key("targets").beginArray();
    for (const TargetRatio &t : targets) {
      j.beginObject();
      j.field("name", t.name)
          .field("description", t.description)
          .field("shardlin_s", t.shardlinSeconds)
          .field("reference_s", t.referenceSeconds)
          .field("ratio", t.ratio)
          .field("ratio_of_mins", t.ratioOfMins)
          .field("limit", t.limit)
          .field("met", t.met);
      if (!t.note.empty())
        j.field("note", t.note);
      j.endObject();
    }
    for (const auto &d : derived) {
      j.beginObject();
      j.field("name", d.name)
          .field("description", d.text)
          .field("applicable", d.applicable)
          .field("met", d.met);
      j.endObject();
    }
    j.endArray();
    j.field("bytes_all_match", mismatches == 0 && errors == 0);
    j.field("failed", failed);
    j.endObject();
    std::ofstream out(jsonPath);
    out << j.str() << "\n";
    if (!out) {
      std::fprintf(stderr, "shardlin-bench: cannot write %s\n",
                   jsonPath.c_str());
      failed = true;
    } else if (!o.json.empty()) {
      std::printf("\nwrote %s\n", jsonPath.c_str());
    }
  }

  //===--- Plot -------------------------------------------------------------===//
  if (!o.plot.empty()) {
    const std::string script = o.scriptsDir + "/plot.py";
    if (!fileExists(o.python) || !fileExists(script)) {
      std::printf("plot skipped: %s or %s not found\n", o.python.c_str(),
                  script.c_str());
    } else {
      std::string out;
      int rc = capture(shellQuote(o.python) + " " + shellQuote(script) + " " +
                           shellQuote(jsonPath) + " " + shellQuote(o.plot) +
                           " 2>&1",
                       out);
      if (rc == 0)
        std::printf("wrote %s\n", o.plot.c_str());
      else
        std::printf("plot skipped: %s", out.empty() ? "plot.py failed\n"
                                                    : out.c_str());
    }
  }
  if (!tmpJson.empty()) {
    std::string rm = "rm -rf " + shellQuote(tmpJson.substr(
                                     0, tmpJson.rfind('/')));
    (void)std::system(rm.c_str());
  }
  if (failed)
    std::printf("\nshardlin-bench: FAILED (see above)\n");
  return failed ? 1 : 0;
}
