//===- LinearSweep.cpp - The linear sweep, its table and checks -----------===//
//
// The linear section: every (backend, W, dim, B, N = K, strategy) of the
// sweep next to the dense OpenBLAS GEMM + bias of the same total work and
// PyTorch's F.linear; the table; and the checks: bytes sent per rank equal
// the cost model's, the sampled outputs match a float64 reference, and
// `auto` never sends more bytes than the byte-cheapest forced strategy
// (measured, and from the model for every B).
//
//===----------------------------------------------------------------------===//

#include "BenchRun.h"

#include "shardlin/Analysis/CostModel.h"

#include <algorithm>
#include <cstdio>

namespace shardlin::bench {

namespace {

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

/// The cases of the sweep, grouped by W (one mpirun per W).
std::vector<Row> buildSweep(const Options &o) {
  std::vector<Row> rows;
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
                row.skipReason =
                    "needs ~" + humanBytes(need) + " > --max-mem-gib";
              }
              rows.push_back(std::move(row));
            }
          }
  return rows;
}

/// The cases of feature size `f` and their references: the dense baselines
/// of its shapes, the threads cases, the mpi cases (one mpirun per W), then
/// PyTorch (while it is available).
void runFeatureSize(BenchRun &run, int64_t f, size_t &done, bool &torchTried) {
  const Options &o = run.opts;
  std::vector<Row> &rows = run.rows;
  TorchInfo &torch = run.torch;
  std::set<DenseKey> shapes;
  for (const Row &r : rows)
    if (!r.skipped && r.c.n == f)
      shapes.insert({r.c.worldSize() * r.c.rows, r.c.n, r.c.k});
  for (const DenseKey &k : shapes)
    run.dense[k] = runDense(k.m, k.n, k.k, cores(), o.timing);

  // Each case through the plan executor and (o.jit) the JIT, one right
  // after the other, the order alternating from case to case so that a
  // drift of the machine's speed favours neither.
  auto withJit = [](LinearCase c) {
    c.jit = true;
    return c;
  };
  std::map<int, std::vector<size_t>> mpiByW;
  for (size_t i = 0; i < rows.size(); ++i) {
    Row &r = rows[i];
    if (r.skipped || r.c.n != f)
      continue;
    if (r.c.backend == "mpi") {
      mpiByW[r.c.worldSize()].push_back(i);
      continue;
    }
    const bool jitFirst = o.jit && r.c.id % 2 == 1;
    if (jitFirst)
      r.jit = runLinearThreads(withJit(r.c), o.timing);
    r.r = runLinearThreads(r.c, o.timing);
    if (o.jit && !jitFirst)
      r.jit = runLinearThreads(withJit(r.c), o.timing);
    if (++done % 20 == 0)
      std::fprintf(stderr, "  ... %zu threads cases done\n", done);
  }
  for (auto &[w, idx] : mpiByW) {
    // One mpirun for the cases of W; with the JIT, each case's plan and
    // JIT runs are adjacent in it.
    std::vector<LinearCase> cases;
    for (size_t i : idx) {
      const bool jitFirst = o.jit && rows[i].c.id % 2 == 1;
      if (jitFirst)
        cases.push_back(withJit(rows[i].c));
      cases.push_back(rows[i].c);
      if (o.jit && !jitFirst)
        cases.push_back(withJit(rows[i].c));
    }
    std::vector<LinearResult> results;
    std::fprintf(stderr, "  ... N=K=%lld: mpirun -np %d, %zu cases\n",
                 (long long)f, w, cases.size());
    rt::Status s = runLinearMpi(cases, o.timing, o.mpirun, results);
    if (!s)
      std::fprintf(stderr, "mpi W=%d: %s\n", w, s.message().c_str());
    for (size_t j = 0, k = 0; j < idx.size(); ++j) {
      Row &row = rows[idx[j]];
      const bool jitFirst = o.jit && row.c.id % 2 == 1;
      if (jitFirst)
        row.jit = results[k++];
      row.r = results[k++];
      if (o.jit && !jitFirst)
        row.jit = results[k++];
    }
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

/// One feature size at a time, so that a case and its references are
/// measured minutes apart at most.
void runSweep(BenchRun &run) {
  std::set<int64_t> featureSizes;
  for (const Row &r : run.rows)
    if (!r.skipped)
      featureSizes.insert(r.c.n);
  size_t done = 0;
  bool torchTried = false;
  if (!run.opts.torch)
    run.torch.message = "skipped (--no-torch, or --quick)";
  for (int64_t f : featureSizes)
    runFeatureSize(run, f, done, torchTried);
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

/// One line of the table (and, when they fail, the bytes per rank and the
/// numerical report), counted in run.checks.
void printRow(BenchRun &run, const Row &row) {
  LinearChecks &checks = run.checks;
  const LinearCase &c = row.c;
  std::printf("%-7s %1d %3lld %5lld %5lld %-13s ", c.backend.c_str(),
              c.worldSize(), (long long)(c.worldSize() == 1 ? -1 : c.dim),
              (long long)c.rows, (long long)c.n, c.strategy.c_str());
  if (row.skipped) {
    std::printf("skipped: %s\n", row.skipReason.c_str());
    return;
  }
  const LinearResult &r = row.r;
  if (!r.ran) {
    ++checks.errors;
    std::printf("FAILED: %s\n", r.error.c_str());
    return;
  }
  ++checks.checked;
  bool bytesOk = r.bytesMatch();
  if (!bytesOk)
    ++checks.mismatches;
  if (r.verifyFailures)
    ++checks.verifyFailures;
  double t = r.timing.median();
  double spread = t > 0 ? 100.0 * (r.timing.max() - r.timing.min()) / t : 0;
  DenseKey key{c.worldSize() * c.rows, c.n, c.k};
  double dt = run.dense.count(key) ? run.dense[key].timing.median() : 0;
  std::string torchMs = "-", torchX = "-";
  if (run.torch.results.count(key)) {
    torchMs = fmt("%.3f", 1e3 * run.torch.results[key].median);
    torchX = fmt("%.2f", t / run.torch.results[key].median);
  }
  // The jit column: the same case through the JIT; its bytes and outputs
  // are checked like the plan's (its bytes must equal the plan's, which
  // equal the cost model's).
  const LinearResult &jr = row.jit;
  std::string jitMs = "-", jitX = "-";
  bool jitOk = true;
  if (run.opts.jit) {
    if (!jr.ran) {
      ++checks.errors;
      jitOk = false;
      jitMs = "FAILED";
    } else {
      ++checks.checked;
      const bool jitBytesOk = jr.bytesMatch() && jr.bytesSent == r.bytesSent;
      if (!jitBytesOk)
        ++checks.mismatches;
      if (jr.verifyFailures)
        ++checks.verifyFailures;
      jitOk = jitBytesOk && !jr.verifyFailures;
      const double jt = jr.timing.median();
      jitMs = fmt("%.3f", 1e3 * jt) + (jitOk ? "" : "!");
      jitX = fmt("%.3f", jt / t);
    }
  }
  std::printf("%-13s %9.3f %6.1f %8.1f %11llu %11llu %-3s %9.3f %7.2f %9s "
              "%7s %9s %6s%s%s\n",
              r.chosen.c_str(), 1e3 * t, spread, c.flops() / t / 1e9,
              (unsigned long long)r.maxBytesSent(),
              (unsigned long long)r.maxBytesPredicted(),
              bytesOk ? (r.verifyFailures ? "NUM" : "yes") : "NO", 1e3 * dt,
              dt > 0 ? t / dt : 0.0, torchMs.c_str(), torchX.c_str(),
              jitMs.c_str(), jitX.c_str(),
              bytesOk ? "" : "   <-- bytes differ from the cost model",
              jitOk ? "" : "   <-- the JIT's run failed its checks");
  if (run.opts.jit && !jr.ran)
    std::printf("    jit: %s\n", jr.error.c_str());
  else if (run.opts.jit && !jr.verifyReport.empty())
    std::printf("    jit: %s", jr.verifyReport.c_str());
  if (!bytesOk) {
    auto list = [](const std::vector<uint64_t> &v) {
      std::string t;
      for (uint64_t b : v)
        t += (t.empty() ? "" : ", ") + std::to_string(b);
      return "[" + t + "]";
    };
    std::printf("    bytes per rank: measured %s, cost model %s%s\n",
                list(r.bytesSent).c_str(), list(r.bytesPredicted).c_str(),
                r.bytesConsistent ? "" : "; and not the same in every trial");
  }
  if (!r.verifyReport.empty())
    std::printf("%s", r.verifyReport.c_str());
}

void printTable(BenchRun &run) {
  std::printf("\n%-7s %1s %3s %5s %5s %-13s %-13s %9s %6s %8s %11s %11s %-3s "
              "%9s %7s %9s %7s %9s %6s\n",
              "backend", "W", "dim", "B", "N=K", "strategy", "lowered", "ms",
              "+-%", "GFLOP/s", "bytes/rank", "predicted", "ok", "dense ms",
              "x dense", "torch ms", "x torch", "jit ms", "x plan");
  for (const Row &row : run.rows)
    printRow(run, row);
}

//===----------------------------------------------------------------------===//
// The checks
//===----------------------------------------------------------------------===//

/// auto vs the cheapest forced strategy, per (backend, W, dim, shape).
void collectAutoChecks(BenchRun &run) {
  std::map<std::string, std::map<std::string, const Row *>> groups;
  for (const Row &row : run.rows)
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
              a.autoChose + ": " + modelBreakdown(c, a.autoChose) + "; " +
              a.cheapest + ": " + modelBreakdown(c, a.cheapest) +
              "; measured " + fmt("%.1f", 1e6 * a.autoSeconds) + " us vs " +
              fmt("%.1f", 1e6 * a.cheapestSeconds) + " us";
    }
    run.autoChecks.push_back(a);
  }
}

void printChecks(const BenchRun &run) {
  const LinearChecks &checks = run.checks;
  int autoViolations = 0;
  for (const AutoCheck &a : run.autoChecks)
    autoViolations += a.autoBytes > a.bestBytes;
  std::printf("\nbytes sent per rank == cost model, every rank, every case: "
              "%s (%d cases, %d mismatches)\n",
              checks.mismatches == 0 ? "yes" : "NO", checks.checked,
              checks.mismatches);
  std::printf("numerical check (sampled rows vs float64): %s (%d cases "
              "failed)\n",
              checks.verifyFailures == 0 ? "all pass" : "FAILURES",
              checks.verifyFailures);
  std::printf("auto never sends more than the cheapest forced strategy: %s "
              "(%zu groups, %d exceptions)\n",
              autoViolations == 0 ? "holds" : "does NOT hold",
              run.autoChecks.size(), autoViolations);
  int autoFaster = 0, shown = 0;
  for (const AutoCheck &a : run.autoChecks) {
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
    std::printf("  ... %d more (all in the JSON's auto_check)\n", shown - 12);
  if (autoViolations)
    std::printf("  where auto sent more bytes, it was nevertheless faster "
                "than the byte-cheapest strategy in %d of %d groups "
                "(measured)\n",
                autoFaster, autoViolations);
}

/// The bands of B in [1, maxRows] where `auto` sends more bytes than the
/// byte-cheapest strategy for one (W, dim, N = K), in the cost model.
void bandsFor(int w, int64_t dim, int64_t f, int64_t maxRows,
              std::vector<AutoBand> &bands) {
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
    uint64_t act = shardlin::estimateCost(s, shardlin::Strategy::Activations, m)
                       .maxBytesSent();
    uint64_t gw = shardlin::estimateCost(s, shardlin::Strategy::GatherWeight, m)
                      .maxBytesSent();
    uint64_t mine = pick == shardlin::Strategy::Activations ? act : gw;
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

std::vector<AutoBand> modelAutoBands(const std::vector<int> &worlds,
                                     const std::vector<int64_t> &features,
                                     int64_t maxRows) {
  std::vector<AutoBand> bands;
  for (int w : worlds) {
    if (w < 2)
      continue;
    for (int64_t dim : {int64_t(1), int64_t(0)})
      for (int64_t f : features)
        bandsFor(w, dim, f, maxRows, bands);
  }
  return bands;
}

/// The same question as the auto check, from the model for every B up to
/// the sweep's largest (bytes are exact, see above).
void printModelBands(BenchRun &run) {
  const Options &o = run.opts;
  int64_t maxB = *std::max_element(o.rows.begin(), o.rows.end());
  run.autoBands =
      modelAutoBands(o.worldSizes, o.features, std::max<int64_t>(maxB, 16384));
  std::printf("cost model, every B in 1..%lld for the sweep's W and N = K: "
              "auto sends more bytes than the byte-cheapest strategy in %zu "
              "band(s) of B%s\n",
              (long long)std::max<int64_t>(maxB, 16384), run.autoBands.size(),
              run.autoBands.empty() ? "" : ":");
  for (const AutoBand &b : run.autoBands)
    std::printf("  W=%d dim=%lld N=K=%lld: B in [%lld, %lld] -> %s "
                "(at B=%lld: %llu B vs %llu B)\n",
                b.w, (long long)b.dim, (long long)b.features, (long long)b.lo,
                (long long)b.hi, b.autoChose.c_str(), (long long)b.lo,
                (unsigned long long)b.autoBytes,
                (unsigned long long)b.bestBytes);
}

} // namespace

void runLinearSection(BenchRun &run) {
  run.beginSection("linear");
  run.doLinear = run.opts.sections.count("linear") > 0;
  if (!run.doLinear)
    return;
  run.rows = buildSweep(run.opts);
  std::printf("\n== linear sweep: %zu cases ==\n", run.rows.size());
  runSweep(run);

  printTable(run);
  collectAutoChecks(run);
  printChecks(run);
  printModelBands(run);
  const TorchInfo &torch = run.torch;
  std::printf("pytorch: %s\n",
              torch.available ? ("torch " + torch.version + ", " +
                                 std::to_string(torch.threads) + " threads")
                                    .c_str()
                              : torch.message.c_str());
  const LinearChecks &checks = run.checks;
  if (checks.mismatches || checks.verifyFailures || checks.errors)
    run.failed = true;
}

} // namespace shardlin::bench
