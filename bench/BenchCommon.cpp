//===- BenchCommon.cpp - Timing, data, the machine, cost-model glue -------===//

#include "BenchCommon.h"

#include "shardlin/Analysis/CostModel.h"
#include "shardlin/runtime/base/ChunkLayout.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace shardlin::bench {

//===----------------------------------------------------------------------===//
// Timing
//===----------------------------------------------------------------------===//

static double sortedAt(std::vector<double> v, double q) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  if (q <= 0)
    return v.front();
  if (q >= 1)
    return v.back();
  // The median of an even count is the mean of the two middle values.
  double pos = q * (v.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = static_cast<size_t>(std::ceil(pos));
  return 0.5 * (v[lo] + v[hi]);
}

double Timing::median() const { return sortedAt(perRun, 0.5); }
double Timing::min() const { return sortedAt(perRun, 0); }
double Timing::max() const { return sortedAt(perRun, 1); }

double nowSeconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

void planTrials(double oneRun, const TimingOptions &opt, int &iters,
                int &trials) {
  oneRun = std::max(oneRun, 1e-7);
  iters = static_cast<int>(std::clamp(std::round(opt.trialSeconds / oneRun),
                                      1.0, double(opt.maxItersPerTrial)));
  trials = static_cast<int>(std::clamp(
      std::ceil(opt.minSeconds / (oneRun * iters)), double(opt.minTrials),
      double(std::max(opt.minTrials, opt.maxTrials))));
}

rt::Status gatherDoubles(rt::Communicator &comm,
                         const std::vector<double> &mine,
                         std::vector<double> &all) {
  const int w = comm.worldSize();
  const int64_t n = static_cast<int64_t>(mine.size());
  std::vector<int64_t> counts(w, n), displs(w);
  for (int r = 0; r < w; ++r)
    displs[r] = r * n;
  all.assign(static_cast<size_t>(n) * w, 0.0);
  return comm.allGatherV(mine.data(), n, all.data(), counts, displs,
                         rt::DType::F64);
}

rt::Status timeOnRank(rt::Communicator &comm, const TimingOptions &opt,
                      const std::function<rt::Status()> &run, Timing &timing,
                      uint64_t &bytesPerRun, bool &bytesConsistent) {
  const int w = comm.worldSize();
  // Warm-up; the last one is timed (after a barrier) to size the trials and
  // counts the bytes of one run.
  double warm = 0;
  for (int i = 0; i < std::max(1, opt.warmup); ++i) {
    SHARDLIN_RETURN_IF_ERROR(comm.barrier());
    comm.resetStats();
    double t0 = nowSeconds();
    SHARDLIN_RETURN_IF_ERROR(run());
    warm = nowSeconds() - t0;
    bytesPerRun = comm.stats().bytesSent;
  }
  std::vector<double> warms;
  SHARDLIN_RETURN_IF_ERROR(gatherDoubles(comm, {warm}, warms));
  double slowest = *std::max_element(warms.begin(), warms.end());
  int iters = 1, trials = 1;
  planTrials(slowest, opt, iters, trials);

  std::vector<double> starts(trials), ends(trials);
  bytesConsistent = true;
  for (int t = 0; t < trials; ++t) {
    SHARDLIN_RETURN_IF_ERROR(comm.barrier());
    comm.resetStats();
    starts[t] = nowSeconds();
    for (int i = 0; i < iters; ++i)
      SHARDLIN_RETURN_IF_ERROR(run());
    ends[t] = nowSeconds();
    if (comm.stats().bytesSent != bytesPerRun * static_cast<uint64_t>(iters))
      bytesConsistent = false;
  }
  std::vector<double> mine = starts, all;
  mine.insert(mine.end(), ends.begin(), ends.end());
  mine.push_back(bytesConsistent ? 1.0 : 0.0);
  SHARDLIN_RETURN_IF_ERROR(gatherDoubles(comm, mine, all));
  const size_t stride = mine.size();
  timing = Timing();
  timing.iters = iters;
  timing.trials = trials;
  for (int t = 0; t < trials; ++t) {
    double first = INFINITY, last = -INFINITY;
    for (int r = 0; r < w; ++r) {
      first = std::min(first, all[r * stride + t]);
      last = std::max(last, all[r * stride + trials + t]);
    }
    timing.perRun.push_back((last - first) / iters);
  }
  for (int r = 0; r < w; ++r)
    if (all[r * stride + 2 * trials] == 0.0)
      bytesConsistent = false;
  return rt::Status::ok();
}

//===----------------------------------------------------------------------===//
// Cases and the cost model
//===----------------------------------------------------------------------===//

double LinearCase::flops() const {
  return 2.0 * worldSize() * double(rows) * double(n) * double(k);
}

std::string LinearCase::label() const {
  std::string s = backend + " W" + std::to_string(worldSize()) + " dim" +
                  std::to_string(dim) + " B" + std::to_string(rows) + " N" +
                  std::to_string(n) + " K" + std::to_string(k) + " " +
                  strategy + (jit ? " jit" : "");
  return s;
}

testkit::LinearSpec LinearCase::spec() const {
  testkit::LinearSpec s;
  s.dim = dim;
  s.n = n;
  s.k = k;
  s.batch = {rows};
  s.placements = placements;
  s.bias = true;
  s.dtype = rt::DType::F32;
  s.strategy = strategy;
  return s;
}

uint64_t LinearResult::maxBytesSent() const {
  return bytesSent.empty() ? 0
                           : *std::max_element(bytesSent.begin(),
                                               bytesSent.end());
}
uint64_t LinearResult::maxBytesPredicted() const {
  return bytesPredicted.empty()
             ? 0
             : *std::max_element(bytesPredicted.begin(), bytesPredicted.end());
}
bool LinearResult::bytesMatch() const {
  return bytesSent == bytesPredicted && bytesConsistent;
}

static LinearShape shapeOf(const LinearCase &c) {
  return LinearShape{c.rows,       c.n, c.k, c.dim,
                     c.placements, /*elementBytes=*/4};
}

std::vector<uint64_t> predictBytes(const LinearCase &c,
                                   const std::string &chosen) {
  if (c.worldSize() == 1)
    return {0};
  std::optional<Strategy> s = parseStrategy(chosen);
  if (!s)
    return std::vector<uint64_t>(c.worldSize(), UINT64_MAX);
  return estimateCost(shapeOf(c), *s, MachineModel()).bytesSent;
}

std::string modelChoice(const LinearCase &c) {
  if (c.worldSize() == 1)
    return "local";
  std::optional<Strategy> s = chooseStrategy(shapeOf(c), MachineModel(), 0);
  return s ? strategyName(*s) : "none";
}

double modelEstimateUs(const LinearCase &c, const std::string &strategy) {
  std::optional<Strategy> s = parseStrategy(strategy);
  if (c.worldSize() == 1 || !s)
    return 0;
  return estimateCost(shapeOf(c), *s, MachineModel()).estimatedUs;
}

std::string modelBreakdown(const LinearCase &c, const std::string &strategy) {
  std::optional<Strategy> s = parseStrategy(strategy);
  if (c.worldSize() == 1 || !s)
    return "";
  const MachineModel m;
  StrategyCost cost = estimateCost(shapeOf(c), *s, m);
  const int w = c.worldSize();
  const double latency = cost.collectives * (w - 1) * m.latencyUs;
  // Per-rank GEMM flops: the same for both strategies with even chunks
  // (2*W*B*N*K/W); the slowest rank's share with uneven ones.
  const int64_t split = c.dim == 1 ? c.k : c.n;
  const double ownMax = double(rt::chunkSplit(split, w));
  const double flops = *s == Strategy::GatherWeight
                           ? 2.0 * c.rows * c.n * c.k
                           : 2.0 * w * c.rows * (c.dim == 1 ? c.n : c.k) *
                                 ownMax;
  const double gemm = flops / (m.gemmGflops * 1e3);
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%d collective%s x %d peer%s x %.0f us = %.1f us latency + "
                "%.1f us bandwidth + %.1f us GEMM = %.1f us",
                cost.collectives, cost.collectives == 1 ? "" : "s", w - 1,
                w == 2 ? "" : "s", m.latencyUs, latency,
                std::max(0.0, cost.estimatedUs - latency - gemm), gemm,
                cost.estimatedUs);
  return buf;
}

std::string programStrategy(const rt::Program &p) {
  // The lowering records its decision on the GEMM it emits, and the
  // translator carries it into the program (Instr::strategy).
  std::vector<std::string> seen;
  std::string names;
  for (const rt::Instr &in : p.instrs) {
    if (in.strategy.empty() ||
        std::find(seen.begin(), seen.end(), in.strategy) != seen.end())
      continue;
    seen.push_back(in.strategy);
    names += (names.empty() ? "" : ",") + in.strategy;
  }
  return names.empty() ? "unrecorded" : names;
}

//===----------------------------------------------------------------------===//
// Data
//===----------------------------------------------------------------------===//

static inline uint64_t splitmix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void fillUniform(float *dst, int64_t count, uint64_t seed, int64_t offset) {
  const uint64_t base = splitmix(seed * 0x632be59bd9b4e019ULL);
  for (int64_t i = 0; i < count; ++i) {
    uint64_t r = splitmix(base ^ static_cast<uint64_t>(offset + i));
    // 24 random bits: exact in f32, uniform in [-1, 1).
    dst[i] = static_cast<float>(static_cast<int64_t>(r >> 40) - (1 << 23)) *
             0x1.0p-23f;
  }
}

int64_t verifyRows(const LinearCase &c, int rank, const float *x,
                   const float *a, const float *bias, const float *y,
                   std::string &report) {
  if (c.rows == 0 || c.n == 0)
    return 0;
  std::vector<int64_t> rows = {0, c.rows / 2, c.rows - 1};
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  const double bound = double(c.k + c.worldSize() + 2) * 0x1.0p-24;
  int64_t failures = 0;
  for (int64_t i : rows)
    for (int64_t j = 0; j < c.n; ++j) {
      double sum = bias[j], scale = std::fabs(bias[j]);
      const float *xi = x + i * c.k;
      const float *aj = a + j * c.k;
      for (int64_t kk = 0; kk < c.k; ++kk) {
        double p = double(xi[kk]) * double(aj[kk]);
        sum += p;
        scale += std::fabs(p);
      }
      double got = y[i * c.n + j];
      double rel = std::fabs(got - sum) / (scale > 0 ? scale : 1);
      if (rel <= bound)
        continue;
      if (++failures <= 3) {
        char line[256];
        std::snprintf(line, sizeof line,
                      "%s rank %d: y[%lld][%lld] = %.9g, reference %.9g "
                      "(|err|/scale %.3g > %.3g)\n",
                      c.label().c_str(), rank, (long long)i, (long long)j, got,
                      sum, rel, bound);
        report += line;
      }
    }
  return failures;
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

PeerRun runTorchPeer(const std::string &python, const std::string &script,
                     const std::string &args, const TimingOptions &timing,
                     const std::string &shapes,
                     const std::function<void(std::istream &)> &onResult) {
  PeerRun peer;
  for (const std::string &path : {python, script})
    if (!fileExists(path)) {
      peer.message = "skipped: " + path + " not found";
      return peer;
    }
  std::string out;
  int rc = capture(shellQuote(python) + " " + shellQuote(script) + args +
                       timingFlags(timing) + " --shapes=" + shellQuote(shapes) +
                       " 2>&1",
                   out);
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string tag;
    ls >> tag;
    if (tag == "torch") {
      ls >> peer.version;
      peer.available = true;
    } else if (tag == "unavailable") {
      std::getline(ls, peer.message);
    } else if (tag == "result") {
      onResult(ls);
    }
  }
  if (rc != 0 || !peer.available) {
    peer.available = false;
    if (peer.message.empty()) {
      std::string tail = out.size() > 800 ? out.substr(out.size() - 800) : out;
      peer.message =
          "helper failed (status " + std::to_string(rc) + "): " + tail;
    }
    peer.message = "skipped: " + peer.message;
  }
  return peer;
}

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

} // namespace shardlin::bench
