//===- Report.cpp - The summary, the JSON and the plot --------------------===//
//
// After the sections: the targets derived from their results (W = 1 vs
// PyTorch, W = 2 compute-bound vs dense, compile time), the summary lines,
// the JSON (--json, or a temporary file for --plot) and the plot.
//
//===----------------------------------------------------------------------===//

#include "BenchRun.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <system_error>

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

/// Compute-dominated: a GEMM big enough to run at the BLAS's full rate
/// (every dim of the dense GEMM >= 512) and, in the cost model, a
/// communication estimate under 10% of the GEMM estimate (each rank's GEMM
/// is 2 B N K flops whatever W).
bool computeBound(const LinearCase &c, const std::string &chosen) {
  double est = modelEstimateUs(c, chosen);
  double gemmUs = 2.0 * c.rows * c.n * c.k / 1e5;
  return est > 0 && gemmUs / est >= 0.9 &&
         std::min({c.worldSize() * c.rows, c.n, c.k}) >= 512;
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
    if (!computeBound(row.c, row.r.chosen))
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

/// The JIT within 1.05x of the plan executor on every compute-bound case
/// of the sweep on `backend` (each measured right after the other). False
/// when the sweep ran no such pair.
bool jitComputeBound(BenchRun &run, const char *backend, Derived &e) {
  e.name = std::string("jit_compute_bound_vs_plan_") + backend;
  int within = 0, total = 0;
  double worst = 0, logSum = 0, logSumMin = 0;
  std::string worstCase;
  for (const Row &row : run.rows) {
    if (row.skipped || !row.r.ran || !row.jit.ran ||
        row.c.backend != backend || !computeBound(row.c, row.r.chosen))
      continue;
    const double ratio = row.jit.timing.median() / row.r.timing.median();
    ++total;
    within += ratio <= 1.05;
    logSum += std::log(ratio);
    logSumMin += std::log(row.jit.timing.min() / row.r.timing.min());
    if (ratio > worst) {
      worst = ratio;
      worstCase = row.c.label();
    }
  }
  if (total == 0)
    return false;
  e.applicable = true;
  e.met = within == total;
  e.text = std::string(backend) + " jit within 1.05x of the plan executor " +
           "in " + std::to_string(within) + "/" + std::to_string(total) +
           " compute-bound cases; geometric mean " +
           fmt("%.3fx", std::exp(logSum / total)) + " (of the best trials " +
           fmt("%.3fx", std::exp(logSumMin / total)) + "), worst " +
           fmt("%.3fx", worst) + " (" + worstCase + ")";
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
    for (const char *backend : {"threads", "mpi"}) {
      Derived e;
      if (jitComputeBound(run, backend, e))
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
//
// Written with llvm::json::OStream, pretty-printed, except that an object
// that is an element of an array is written on one line (one line per
// result keeps the files small and diffable). Numbers are written as "%.6g"
// writes them (6 significant digits, what the results have always carried);
// a value that is not finite is written as null.

namespace json = llvm::json;

/// Writes the attribute `key` with the number `v` as "%.6g" writes it, or
/// null if it is not finite.
void num(json::OStream &j, llvm::StringRef key, double v) {
  j.attributeBegin(key);
  if (std::isfinite(v)) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    j.rawValue(buf);
  } else {
    j.value(nullptr);
  }
  j.attributeEnd();
}

/// JSON strings are UTF-8; anything else (e.g. bytes of an error message) is
/// repaired rather than written as is.
json::Value str(const std::string &s) {
  return json::isUTF8(s) ? json::Value(s) : json::Value(json::fixUTF8(s));
}

/// An element of an array: an object on one line.
void lineObject(json::OStream &j,
                llvm::function_ref<void(json::OStream &)> body) {
  j.rawValue([&](llvm::raw_ostream &os) {
    json::OStream line(os);
    line.object([&] { body(line); });
  });
}

template <typename T> json::Value array(const std::vector<T> &v) {
  json::Array a;
  for (const T &x : v)
    a.push_back(x);
  return a;
}

void writeTiming(json::OStream &j, const Timing &t) {
  num(j, "median_s", t.median());
  num(j, "min_s", t.min());
  num(j, "max_s", t.max());
  j.attribute("iters", t.iters);
  j.attribute("trials", t.trials);
}

void writeMachine(json::OStream &j, const BenchRun &run) {
  j.attributeObject("machine", [&] {
    j.attribute("cores", cores());
    num(j, "load_start", run.loadStart);
    num(j, "load_end", run.loadEnd);
    j.attribute("openblas", str(openblas_get_config()));
    num(j, "seconds", nowSeconds() - run.t0);
    j.attributeObject("load_at_section_start", [&] {
      for (auto &[name, l] : run.sectionLoad)
        num(j, name, l);
    });
    num(j, "foreign_cpu_share", run.foreignAll);
    j.attributeObject("foreign_cpu_share_by_section", [&] {
      for (auto &[name, f] : run.sectionForeign)
        num(j, name, f);
    });
  });
}

void writeTimingOptions(json::OStream &j, const TimingOptions &t) {
  j.attributeObject("timing", [&] {
    j.attribute("warmup", t.warmup);
    j.attribute("min_trials", t.minTrials);
    j.attribute("max_trials", t.maxTrials);
    num(j, "min_seconds", t.minSeconds);
    num(j, "trial_seconds", t.trialSeconds);
  });
}

/// The measured part of a case that ran.
void writeLinearResult(json::OStream &j, const BenchRun &run, const Row &row) {
  const LinearCase &c = row.c;
  const LinearResult &r = row.r;
  j.attribute("lowered", str(r.chosen));
  j.attribute("model_choice", str(modelChoice(c)));
  writeTiming(j, r.timing);
  num(j, "gflops", c.flops() / r.timing.median() / 1e9);
  j.attribute("blas_threads", r.blasThreads);
  num(j, "compile_s", r.compileSeconds);
  j.attribute("bytes_sent", array(r.bytesSent));
  j.attribute("bytes_predicted", array(r.bytesPredicted));
  j.attribute("bytes_sent_max", r.maxBytesSent());
  j.attribute("bytes_predicted_max", r.maxBytesPredicted());
  j.attribute("bytes_match", r.bytesMatch());
  j.attribute("verify_failures", r.verifyFailures);
  DenseKey key{c.worldSize() * c.rows, c.n, c.k};
  if (run.dense.count(key))
    num(j, "dense_s", run.dense.at(key).timing.median());
  if (run.torch.results.count(key))
    num(j, "torch_s", run.torch.results.at(key).median);
}

void writeLinear(json::OStream &j, const BenchRun &run) {
  j.attributeArray("linear", [&] {
    for (const Row &row : run.rows)
      lineObject(j, [&](json::OStream &o) {
        const LinearCase &c = row.c;
        o.attribute("backend", str(c.backend));
        o.attribute("world_size", c.worldSize());
        o.attribute("dim", c.dim);
        o.attribute("rows", c.rows);
        o.attribute("n", c.n);
        o.attribute("k", c.k);
        o.attribute("strategy", str(c.strategy));
        o.attribute("placements", array(c.placements));
        if (row.skipped)
          o.attribute("skipped", str(row.skipReason));
        else if (!row.r.ran)
          o.attribute("error", str(row.r.error));
        else
          writeLinearResult(o, run, row);
        if (!row.skipped && run.opts.jit)
          o.attributeObject("jit", [&] {
            const LinearResult &r = row.jit;
            if (!r.ran) {
              o.attribute("error", str(r.error));
              return;
            }
            writeTiming(o, r.timing);
            num(o, "compile_s", r.compileSeconds);
            o.attribute("bytes_sent", array(r.bytesSent));
            o.attribute("bytes_match", r.bytesMatch());
            o.attribute("verify_failures", r.verifyFailures);
            if (row.r.ran)
              num(o, "vs_plan", r.timing.median() / row.r.timing.median());
          });
      });
  });
}

void writeDense(json::OStream &j, const BenchRun &run) {
  j.attributeArray("dense", [&] {
    for (auto &[k, d] : run.dense)
      lineObject(j, [&](json::OStream &o) {
        o.attribute("m", k.m);
        o.attribute("n", k.n);
        o.attribute("k", k.k);
        o.attribute("threads", d.threads);
        writeTiming(o, d.timing);
        num(o, "gflops", 2.0 * k.m * k.n * k.k / d.timing.median() / 1e9);
      });
  });
}

void writeTorch(json::OStream &j, const TorchInfo &torch) {
  j.attributeObject("torch", [&] {
    j.attribute("available", torch.available);
    j.attribute("version", str(torch.version));
    j.attribute("message", str(torch.message));
    j.attribute("threads", torch.threads);
    j.attributeArray("results", [&] {
      for (auto &[k, t] : torch.results)
        lineObject(j, [&](json::OStream &o) {
          o.attribute("m", k.m);
          o.attribute("n", k.n);
          o.attribute("k", k.k);
          num(o, "median_s", t.median);
          num(o, "min_s", t.min);
          num(o, "max_s", t.max);
          o.attribute("iters", t.iters);
          o.attribute("trials", t.trials);
        });
    });
  });
}

void writeAutoChecks(json::OStream &j, const BenchRun &run) {
  j.attributeArray("auto_check", [&] {
    for (const AutoCheck &a : run.autoChecks)
      lineObject(j, [&](json::OStream &o) {
        o.attribute("where", str(a.where));
        o.attribute("auto_lowered", str(a.autoChose));
        o.attribute("auto_bytes", a.autoBytes);
        o.attribute("cheapest_forced", str(a.cheapest));
        o.attribute("cheapest_bytes", a.bestBytes);
        o.attribute("holds", a.autoBytes <= a.bestBytes);
        num(o, "auto_s", a.autoSeconds);
        num(o, "cheapest_s", a.cheapestSeconds);
        if (!a.why.empty())
          o.attribute("why", str(a.why));
      });
  });
  j.attributeArray("auto_model_bands", [&] {
    for (const AutoBand &b : run.autoBands)
      lineObject(j, [&](json::OStream &o) {
        o.attribute("world_size", b.w);
        o.attribute("dim", b.dim);
        o.attribute("n_k", b.features);
        o.attribute("rows_lo", b.lo);
        o.attribute("rows_hi", b.hi);
        o.attribute("auto_lowered", str(b.autoChose));
        o.attribute("auto_bytes_at_lo", b.autoBytes);
        o.attribute("cheapest_bytes_at_lo", b.bestBytes);
      });
  });
}

void writeCollectives(json::OStream &j, const BenchRun &run) {
  j.attributeArray("collectives", [&] {
    for (const CollectiveResult &c : run.collectives)
      lineObject(j, [&](json::OStream &o) {
        o.attribute("backend", str(c.backend));
        o.attribute("world_size", c.worldSize);
        if (!c.error.empty()) {
          o.attribute("error", str(c.error));
          return;
        }
        o.attribute("op", str(c.op));
        o.attribute("size_bytes", c.sizeBytes);
        writeTiming(o, c.timing);
        num(o, "algbw_GBps", c.algbw);
        num(o, "busbw_GBps", c.busbw);
        o.attribute("bytes_sent", c.bytesSent);
        o.attribute("bytes_expected", c.bytesExpected);
        o.attribute("bytes_match", c.bytesMatch);
      });
  });
}

void writeCompiles(json::OStream &j, const BenchRun &run) {
  j.attributeArray("compile", [&] {
    for (const CompileResult &c : run.compiles)
      lineObject(j, [&](json::OStream &o) {
        o.attribute("ops", c.ops);
        if (!c.error.empty()) {
          o.attribute("error", str(c.error));
          return;
        }
        num(o, "parse_s", c.parseSeconds);
        num(o, "lower_s", c.lowerSeconds);
        num(o, "translate_s", c.translateSeconds);
        num(o, "parse_lower_s", c.parseLowerSeconds());
        num(o, "us_per_op", 1e6 * c.parseLowerSeconds() / c.ops);
        o.attribute("samples", c.samples);
      });
  });
}

void writeW1VsTorch(json::OStream &j, const TorchTarget &torchTarget) {
  j.attributeObject("w1_vs_torch", [&] {
    j.attribute("version", str(torchTarget.version));
    j.attribute("message", str(torchTarget.message));
    j.attribute("faster", torchTarget.faster);
    num(j, "geomean_ratio", torchTarget.geomean);
    j.attributeArray("shapes", [&] {
      for (const TorchShape &t : torchTarget.shapes)
        lineObject(j, [&](json::OStream &o) {
          o.attribute("rows", t.rows);
          o.attribute("n_k", t.features);
          num(o, "shardlin_s", t.shardlinSeconds);
          num(o, "torch_s", t.torchSeconds);
          num(o, "ratio", t.shardlinSeconds / t.torchSeconds);
        });
    });
  });
}

void writeTargets(json::OStream &j, const BenchRun &run,
                  const std::vector<Derived> &derived) {
  j.attributeArray("targets", [&] {
    for (const TargetRatio &t : run.targets)
      lineObject(j, [&](json::OStream &o) {
        o.attribute("name", str(t.name));
        o.attribute("description", str(t.description));
        num(o, "shardlin_s", t.shardlinSeconds);
        num(o, "reference_s", t.referenceSeconds);
        num(o, "ratio", t.ratio);
        num(o, "ratio_of_mins", t.ratioOfMins);
        num(o, "limit", t.limit);
        o.attribute("met", t.met);
        if (!t.note.empty())
          o.attribute("note", str(t.note));
      });
    for (const auto &d : derived)
      lineObject(j, [&](json::OStream &o) {
        o.attribute("name", str(d.name));
        o.attribute("description", str(d.text));
        o.attribute("applicable", d.applicable);
        o.attribute("met", d.met);
      });
  });
}

/// Writes everything to `jsonPath`; a failed write fails the run.
void writeJson(BenchRun &run, const std::vector<Derived> &derived,
               const std::string &jsonPath) {
  const Options &o = run.opts;
  std::error_code ec;
  llvm::raw_fd_ostream out(jsonPath, ec);
  if (!ec) {
    json::OStream j(out, /*IndentSize=*/2);
    j.object([&] {
      writeMachine(j, run);
      j.attribute("mode", str(o.mode));
      writeTimingOptions(j, o.timing);
      writeLinear(j, run);
      writeDense(j, run);
      writeTorch(j, run.torch);
      writeAutoChecks(j, run);
      writeCollectives(j, run);
      writeCompiles(j, run);
      writeW1VsTorch(j, run.torchTarget);
      writeTargets(j, run, derived);
      j.attribute("bytes_all_match",
                  run.checks.mismatches == 0 && run.checks.errors == 0);
      j.attribute("failed", run.failed);
    });
    out << "\n";
    out.close();
  }
  if (ec || out.has_error()) {
    out.clear_error();
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
