//===- Targets.cpp - The performance targets and PyTorch ------------------===//
//
// The targets section: the ratios of the performance targets (threads W = 1
// and W = 2 against the dense OpenBLAS GEMM + bias on all cores), measured
// with the runs interleaved (dense, shardlin, dense, shardlin, ...), and W = 1
// against PyTorch's F.linear, also interleaved. runTorch, the PyTorch helper
// launcher, also serves the linear sweep.
//
//===----------------------------------------------------------------------===//

#include "BenchRun.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace shardlin::bench {

namespace {

/// The median of `v`; 0 when it is empty.
double medianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n == 0 ? 0.0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// Fills the ratio of the medians (and of the best rounds) of `mine`
/// against `reference`, and whether it is within t.limit.
void setRatio(TargetRatio &t, const std::vector<double> &mine,
              const std::vector<double> &reference) {
  t.measured = true;
  t.shardlinSeconds = medianOf(mine);
  t.referenceSeconds = medianOf(reference);
  t.ratio = t.shardlinSeconds / t.referenceSeconds;
  t.ratioOfMins = *std::min_element(mine.begin(), mine.end()) /
                  *std::min_element(reference.begin(), reference.end());
  t.met = t.ratio <= t.limit;
}

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
    DenseResult d =
        runDense(c.worldSize() * c.rows, c.n, c.k, denseThreads, opt);
    dense.push_back(d.timing.median());
    LinearResult r = runLinearThreads(c, opt);
    if (!r.ran) {
      t.note = "failed: " + r.error;
      return t;
    }
    mine.push_back(r.timing.median());
  }
  setRatio(t, mine, dense);
  return t;
}

/// Interleaves `rounds` of (plan executor, JIT) on the case and compares
/// the medians: the JIT's overhead over the plan where the GEMMs dominate.
TargetRatio jitVsPlan(const std::string &name, const std::string &desc,
                      LinearCase c, double limit, const TimingOptions &opt,
                      int rounds) {
  TargetRatio t;
  t.name = name;
  t.description = desc;
  t.limit = limit;
  std::vector<double> plan, jit;
  for (int i = 0; i < rounds; ++i)
    for (bool compiled : {false, true}) {
      c.jit = compiled;
      LinearResult r = runLinearThreads(c, opt);
      if (!r.ran || r.verifyFailures) {
        t.note = (compiled ? "jit failed: " : "plan failed: ") +
                 (r.ran ? r.verifyReport : r.error);
        return t;
      }
      (compiled ? jit : plan).push_back(r.timing.median());
    }
  setRatio(t, jit, plan);
  return t;
}

/// W = 1 against the dense GEMM of the same shape (f^3), and W = 2 with
/// every dim and strategy against the dense GEMM of the same total work;
/// the JIT against the plan executor at W = 1 and W = 2 (auto, both dims).
void measureTargets(BenchRun &run, int64_t f, int rounds) {
  const Options &o = run.opts;
  std::vector<TargetRatio> &targets = run.targets;
  LinearCase one;
  one.backend = "threads";
  one.rows = f;
  one.n = one.k = f;
  one.placements = {0};
  one.strategy = "local";
  targets.push_back(interleaved("w1_vs_dense",
                                "threads W=1 f32 " + std::to_string(f) +
                                    "^3 vs OpenBLAS GEMM+bias, " +
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
          "threads W=2 (1 BLAS thread/rank) dim " + std::to_string(dim) + " " +
              s + ", B=" + std::to_string(f / 2) + "/rank N=K=" +
              std::to_string(f) + " vs " + std::to_string(cores()) +
              "-thread dense " + std::to_string(f) + "^3",
          two, cores(), 1.25, o.timing, rounds));
    }
  if (!o.jit)
    return;
  targets.push_back(jitVsPlan("w1_jit_vs_plan",
                              "threads W=1 f32 " + std::to_string(f) +
                                  "^3 jit vs plan executor",
                              one, 1.05, o.timing, rounds));
  for (int64_t dim : {int64_t(1), int64_t(0)}) {
    LinearCase two = one;
    two.rows = f / 2;
    two.placements = {0, 1};
    two.dim = dim;
    two.strategy = "auto";
    targets.push_back(jitVsPlan(
        "w2_dim" + std::to_string(dim) + "_jit_vs_plan",
        "threads W=2 dim " + std::to_string(dim) + " auto, B=" +
            std::to_string(f / 2) + "/rank N=K=" + std::to_string(f) +
            " jit vs plan executor",
        two, 1.05, o.timing, rounds));
  }
}

void printTargets(const BenchRun &run) {
  const Options &o = run.opts;
  for (const TargetRatio &t : run.targets)
    std::printf("  %-34s %s: %.3f ms vs %.3f ms = %.3fx (best rounds "
                "%.3fx; limit %.2fx) %s\n",
                t.name.c_str(), t.description.c_str(), 1e3 * t.shardlinSeconds,
                1e3 * t.referenceSeconds, t.ratio, t.ratioOfMins, t.limit,
                !t.measured         ? t.note.c_str()
                : o.mode == "quick" ? "(smoke: not a measurement)"
                : t.met             ? "MET"
                                    : "MISSED");
}

/// The per-shape ratios of the rounds against PyTorch, their count of wins
/// and geometric mean, into `torchTarget`, and their lines.
void reportTorchRounds(TorchTarget &torchTarget,
                       const std::set<DenseKey> &shapes,
                       std::map<DenseKey, std::vector<double>> &mine,
                       std::map<DenseKey, std::vector<double>> &theirs,
                       int torchRounds) {
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
    ts.shardlinSeconds = medianOf(mine[k]);
    ts.torchSeconds = medianOf(theirs[k]);
    torchTarget.shapes.push_back(ts);
    double ratio = ts.shardlinSeconds / ts.torchSeconds;
    logSum += std::log(ratio);
    torchTarget.faster += ratio < 1.0;
    std::printf("    B=%-5lld N=K=%-5lld shardlin %9.4f ms  torch %9.4f "
                "ms  = %.2fx\n",
                (long long)k.m, (long long)k.n, 1e3 * ts.shardlinSeconds,
                1e3 * ts.torchSeconds, ratio);
  }
  if (!torchTarget.shapes.empty())
    torchTarget.geomean = std::exp(logSum / torchTarget.shapes.size());
  std::printf("    faster in %d of %zu shapes, geometric mean %.3fx\n",
              torchTarget.faster, torchTarget.shapes.size(),
              torchTarget.geomean);
}

/// W = 1 against PyTorch, interleaved: a round runs every shape on
/// shardlin, then every shape in one PyTorch process.
void compareWithTorch(BenchRun &run) {
  const Options &o = run.opts;
  TorchTarget &torchTarget = run.torchTarget;
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
  if (!torchTarget.message.empty()) {
    std::printf("  W=1 vs torch: %s\n", torchTarget.message.c_str());
    return;
  }
  reportTorchRounds(torchTarget, shapes, mine, theirs, torchRounds);
}

} // namespace

TorchInfo runTorch(const Options &o, const std::set<DenseKey> &shapes) {
  TorchInfo info;
  std::string list;
  for (const DenseKey &s : shapes)
    list += (list.empty() ? "" : ";") + std::to_string(s.m) + "," +
            std::to_string(s.n) + "," + std::to_string(s.k);
  info.threads = cores();
  PeerRun peer = runTorchPeer(
      o.python, o.scriptsDir + "/torch_linear.py",
      " --threads=" + std::to_string(info.threads), o.timing, list,
      [&](std::istream &ls) {
        DenseKey k;
        TorchResult r;
        ls >> k.m >> k.n >> k.k >> r.median >> r.min >> r.max >> r.iters >>
            r.trials;
        info.results[k] = r;
      });
  info.available = peer.available;
  info.version = peer.version;
  info.message = peer.message;
  return info;
}

void runTargetsSection(BenchRun &run) {
  run.beginSection("targets");
  const Options &o = run.opts;
  if (!o.sections.count("targets"))
    return;
  const bool quick = o.mode == "quick";
  const int64_t f = quick ? 256 : 2048;
  const int rounds = quick ? 1 : 5;
  std::printf("\n== targets (interleaved with the reference, %d rounds; load "
              "%.2f) ==\n",
              rounds, run.sectionLoad["targets"]);
  measureTargets(run, f, rounds);
  printTargets(run);
  if (o.torch)
    compareWithTorch(run);
}

} // namespace shardlin::bench
