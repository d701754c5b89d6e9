//===- Report.cpp - The summary, the JSON and the plot --------------------===//
//
// After the sections: the targets derived from their results (W = 1 vs
// PyTorch, W = 2 compute-bound vs dense, compile time), the summary lines,
// the JSON (--json, or a temporary file for --plot) and the plot.
//
//===----------------------------------------------------------------------===//

#include "BenchRun.h"

#include <cblas.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace shardlin::bench {

namespace {

//===----------------------------------------------------------------------===//
// Targets derived from the sections
//===----------------------------------------------------------------------===//

struct Derived {
  std::string name, text;
  bool met = false, applicable = false;
};

/// W = 1 vs PyTorch: the interleaved rounds of the targets section if they
/// ran, else the sweep's W = 1 threads cases.
Derived w1VsTorch(BenchRun &run) {
  const TorchTarget &torchTarget = run.torchTarget;
  TorchInfo &torch = run.torch;
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
    for (const Row &row : run.rows) {
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
  return d;
}

/// W = 2, compute dominated, vs the all-core dense GEMM, on `backend`.
/// False when the sweep has no such case.
bool w2ComputeBound(BenchRun &run, const char *backend, Derived &e) {
  e.name = std::string("w2_compute_bound_vs_dense_") + backend;
  int within = 0, total = 0;
  std::string list;
  for (const Row &row : run.rows) {
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
    double ratio = row.r.timing.median() / run.dense[key].timing.median();
    ++total;
    within += ratio <= 1.25;
    list += " dim" + std::to_string(row.c.dim) + "/B" +
            std::to_string(row.c.rows) + "/N=K" + std::to_string(row.c.n) +
            ":" + fmt("%.2fx", ratio);
  }
  if (total == 0)
    return false;
  e.applicable = true;
  e.met = within == total;
  e.text = std::string(backend) + " W=2 auto within 1.25x of dense in " +
           std::to_string(within) + "/" + std::to_string(total) +
           " compute-bound shapes:" + list;
  return true;
}

/// 10,000 linears parse + lower in under 2 s, with a flat per-op time.
Derived compileTarget(const BenchRun &run) {
  Derived c;
  c.name = "lower_10000_under_2s_flat";
  const CompileResult *big = nullptr, *ref = nullptr;
  for (const CompileResult &r : run.compiles) {
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
  return c;
}

/// Derived from the sweep: W = 1 vs PyTorch, and W = 2 where compute
/// dominates (the cost model's GEMM time >= 90% of its estimate); and from
/// the compile section.
std::vector<Derived> deriveTargets(BenchRun &run) {
  std::vector<Derived> derived;
  if (run.doLinear) {
    derived.push_back(w1VsTorch(run));
    // The W = 2 target is about the threads backend; mpi is reported
    // alongside.
    for (const char *backend : {"threads", "mpi"}) {
      Derived e;
      if (w2ComputeBound(run, backend, e))
        derived.push_back(e);
    }
  }
  derived.push_back(compileTarget(run));
  return derived;
}

//===----------------------------------------------------------------------===//
// Summary
//===----------------------------------------------------------------------===//

void printSummary(const BenchRun &run, const std::vector<Derived> &derived) {
  const Options &o = run.opts;
  std::printf("\n== summary (load %.2f at start, %.2f at end; %.0f s) ==\n",
              run.loadStart, run.loadEnd, nowSeconds() - run.t0);
  std::printf("  other processes used %.0f%% of the cores during the run (",
              100 * run.foreignAll);
  const char *sep = "";
  // Every section was opened, selected or not, so each has its figure.
  for (const char *name : {"targets", "linear", "collectives", "compile"})
    if (o.sections.count(name)) {
      std::printf("%s%s %.0f%%", sep, name, 100 * run.sectionForeign.at(name));
      sep = ", ";
    }
  std::printf(")%s\n", run.foreignAll > 0.1 ? ": timings are disturbed, rerun "
                                              "when the machine is quiet"
                                            : "");
  const bool quickMode = o.mode == "quick";
  for (const TargetRatio &t : run.targets)
    std::printf("  [%s] %s: %.3fx (best rounds %.3fx; limit %.2fx)\n",
                !t.measured ? "n/a"
                : quickMode ? "smoke"
                : t.met     ? "MET"
                            : "MISSED",
                t.description.c_str(), t.ratio, t.ratioOfMins, t.limit);
  for (const auto &d : derived)
    std::printf("  [%s] %s\n",
                !d.applicable ? "n/a"
                : d.met       ? "MET"
                              : "MISSED",
                d.text.c_str());
  if (run.doLinear)
    std::printf("  [%s] bytes sent per rank == cost model in every case\n",
                run.checks.mismatches == 0 && run.checks.errors == 0
                    ? "MET"
                    : "MISSED");
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

void writeTiming(Json &j, const Timing &t) {
  j.field("median_s", t.median())
      .field("min_s", t.min())
      .field("max_s", t.max())
      .field("iters", t.iters)
      .field("trials", t.trials);
}

void writeMachine(Json &j, const BenchRun &run) {
  j.key("machine").beginObject();
  j.field("cores", cores())
      .field("load_start", run.loadStart)
      .field("load_end", run.loadEnd)
      .field("openblas", std::string(openblas_get_config()))
      .field("seconds", nowSeconds() - run.t0);
  j.key("load_at_section_start").beginObject();
  for (auto &[name, l] : run.sectionLoad)
    j.field(name, l);
  j.endObject();
  j.field("foreign_cpu_share", run.foreignAll);
  j.key("foreign_cpu_share_by_section").beginObject();
  for (auto &[name, f] : run.sectionForeign)
    j.field(name, f);
  j.endObject();
  j.endObject();
}

void writeTimingOptions(Json &j, const TimingOptions &t) {
  j.key("timing").beginObject();
  j.field("warmup", t.warmup)
      .field("min_trials", t.minTrials)
      .field("max_trials", t.maxTrials)
      .field("min_seconds", t.minSeconds)
      .field("trial_seconds", t.trialSeconds);
  j.endObject();
}

/// The measured part of a case that ran.
void writeLinearResult(Json &j, const BenchRun &run, const Row &row) {
  const LinearCase &c = row.c;
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
  if (run.dense.count(key))
    j.field("dense_s", run.dense.at(key).timing.median());
  if (run.torch.results.count(key))
    j.field("torch_s", run.torch.results.at(key).median);
}

void writeLinear(Json &j, const BenchRun &run) {
  j.key("linear").beginArray();
  for (const Row &row : run.rows) {
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
    if (row.skipped)
      j.field("skipped", row.skipReason);
    else if (!row.r.ran)
      j.field("error", row.r.error);
    else
      writeLinearResult(j, run, row);
    j.endObject();
  }
  j.endArray();
}

void writeDense(Json &j, const BenchRun &run) {
  j.key("dense").beginArray();
  for (auto &[k, d] : run.dense) {
    j.beginObject();
    j.field("m", k.m).field("n", k.n).field("k", k.k).field("threads",
                                                            d.threads);
    writeTiming(j, d.timing);
    j.field("gflops", 2.0 * k.m * k.n * k.k / d.timing.median() / 1e9);
    j.endObject();
  }
  j.endArray();
}

void writeTorch(Json &j, const TorchInfo &torch) {
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
}

void writeAutoChecks(Json &j, const BenchRun &run) {
  j.key("auto_check").beginArray();
  for (const AutoCheck &a : run.autoChecks) {
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
  for (const AutoBand &b : run.autoBands) {
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
}

void writeCollectives(Json &j, const BenchRun &run) {
  j.key("collectives").beginArray();
  for (const CollectiveResult &c : run.collectives) {
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
}

void writeCompiles(Json &j, const BenchRun &run) {
  j.key("compile").beginArray();
  for (const CompileResult &c : run.compiles) {
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
}

void writeW1VsTorch(Json &j, const TorchTarget &torchTarget) {
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
}

void writeTargets(Json &j, const BenchRun &run,
                  const std::vector<Derived> &derived) {
  j.key("targets").beginArray();
  for (const TargetRatio &t : run.targets) {
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
}

/// Writes everything to `jsonPath`; a failed write fails the run.
void writeJson(BenchRun &run, const std::vector<Derived> &derived,
               const std::string &jsonPath) {
  const Options &o = run.opts;
  Json j;
  j.beginObject();
  writeMachine(j, run);
  j.field("mode", o.mode);
  writeTimingOptions(j, o.timing);
  writeLinear(j, run);
  writeDense(j, run);
  writeTorch(j, run.torch);
  writeAutoChecks(j, run);
  writeCollectives(j, run);
  writeCompiles(j, run);
  writeW1VsTorch(j, run.torchTarget);
  writeTargets(j, run, derived);
  j.field("bytes_all_match",
          run.checks.mismatches == 0 && run.checks.errors == 0);
  j.field("failed", run.failed);
  j.endObject();
  std::ofstream out(jsonPath);
  out << j.str() << "\n";
  if (!out) {
    std::fprintf(stderr, "shardlin-bench: cannot write %s\n", jsonPath.c_str());
    run.failed = true;
  } else if (!o.json.empty()) {
    std::printf("\nwrote %s\n", jsonPath.c_str());
  }
}

//===----------------------------------------------------------------------===//
// Plot
//===----------------------------------------------------------------------===//

void plot(const Options &o, const std::string &jsonPath) {
  const std::string script = o.scriptsDir + "/plot.py";
  if (!fileExists(o.python) || !fileExists(script)) {
    std::printf("plot skipped: %s or %s not found\n", o.python.c_str(),
                script.c_str());
    return;
  }
  std::string out;
  int rc =
      capture(shellQuote(o.python) + " " + shellQuote(script) + " " +
                  shellQuote(jsonPath) + " " + shellQuote(o.plot) + " 2>&1",
              out);
  if (rc == 0)
    std::printf("wrote %s\n", o.plot.c_str());
  else
    std::printf("plot skipped: %s",
                out.empty() ? "plot.py failed\n" : out.c_str());
}

} // namespace

int reportSummary(BenchRun &run) {
  const Options &o = run.opts;
  std::vector<Derived> derived = deriveTargets(run);
  run.endSection();
  run.foreignAll = foreignShare(run.cpuStart, cpuSnapshot());
  run.loadEnd = loadAverage();
  printSummary(run, derived);

  // --plot without --json plots from a temporary JSON file.
  std::string jsonPath = o.json;
  std::string tmpJson;
  if (jsonPath.empty() && !o.plot.empty()) {
    tmpJson = makeTempDir() + "/bench.json";
    jsonPath = tmpJson;
  }
  if (!jsonPath.empty())
    writeJson(run, derived, jsonPath);
  if (!o.plot.empty())
    plot(o, jsonPath);
  if (!tmpJson.empty()) {
    std::string rm =
        "rm -rf " + shellQuote(tmpJson.substr(0, tmpJson.rfind('/')));
    (void)std::system(rm.c_str());
  }
  if (run.failed)
    std::printf("\nshardlin-bench: FAILED (see above)\n");
  return run.failed ? 1 : 0;
}

} // namespace shardlin::bench
