//===- LinearBench.cpp - Timing compiled linears and the dense baseline ---===//

#include "BenchCommon.h"
#include "JitTesting.h"

#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/exec/Execute.h"
#include "shardlin/runtime/exec/Gemm.h"
#include "shardlin/runtime/backends/Mpi.h"
#include "shardlin/runtime/tooling/Runner.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <unistd.h>

namespace shardlin::bench {

//===----------------------------------------------------------------------===//
// Compiling
//===----------------------------------------------------------------------===//

rt::Status compileLinear(const LinearCase &c, rt::Program &out) {
  testkit::LinearSpec spec = c.spec();
  spec.strategy = c.worldSize() == 1 ? "auto" : c.strategy;
  return testkit::compileLinear(spec, out,
                                testkit::CompileMessage::Diagnostics);
}

rt::Status compileCase(const LinearCase &c, CompiledCase &out) {
  SHARDLIN_RETURN_IF_ERROR(compileLinear(c, out.program));
  out.chosen = programStrategy(out.program);
  out.executors = nullptr;
  if (!c.jit)
    return rt::Status::ok();
  testkit::LinearSpec spec = c.spec();
  spec.strategy = c.worldSize() == 1 ? "auto" : c.strategy;
  testkit::JitProgram jit;
  SHARDLIN_RETURN_IF_ERROR(testkit::jitLinear(
      spec, jit, testkit::CompileMessage::Diagnostics));
  out.program = std::move(jit.program);
  out.executors = std::move(jit.executors);
  return rt::Status::ok();
}

//===----------------------------------------------------------------------===//
// The ranks of one case
//===----------------------------------------------------------------------===//

namespace {

/// One case on the ranks this process runs, through the in-memory run API
/// (rt::runProgram, rt::runRank), which builds each rank's plan and agrees
/// that every rank is ready before the first collective. bind gives rank r
/// its rows of X (`rowsOf(r)`, B x K), its chunk of the global weight `a`
/// (N x K) and the bias, and an output of NaN, so that an element the plan
/// never writes fails the check. The run hook times the bound plan with the
/// timing protocol (timeOnRank), checks the output and gathers every rank's
/// bytes, failures and consistency: result(0) is complete on rank 0 (times,
/// every rank's bytes); the other ranks fill what they know.
class LinearRanks {
public:
  LinearRanks(const LinearCase &c, const CompiledCase &compiled,
              std::function<const float *(int rank)> rowsOf, const float *a,
              const float *bias, const TimingOptions &opt)
      : c_(c), program_(compiled.program), executors_(compiled.executors),
        rowsOf_(std::move(rowsOf)), a_(a), bias_(bias), opt_(opt),
        ranks_(c.worldSize()) {}

  rt::RankCallbacks callbacks() {
    rt::RankCallbacks callbacks;
    callbacks.executor = executors_;
    callbacks.bind = [this](const rt::Plan &plan, rt::RankDevice &,
                            rt::RankBuffers &buffers) {
      Rank &me = ranks_[plan.rank()];
      me.x = rowsOf_(plan.rank());
      const rt::Argument &w = program_.args[1];
      rt::extractLocalChunk(a_, w.globalShape, rt::DType::F32, w.sharding,
                            plan.rank(), me.chunk);
      me.y.assign(static_cast<size_t>(c_.rows * c_.n), NAN);
      buffers.args = {me.x, me.chunk.data(), bias_};
      buffers.results = {me.y.data()};
      return rt::Status::ok();
    };
    callbacks.run = [this](rt::RankRun &run) { return timeAndCheck(run); };
    return callbacks;
  }

  LinearResult &result(int rank) { return ranks_[rank].result; }

private:
  struct Rank {
    const float *x = nullptr;
    std::vector<uint8_t> chunk;
    std::vector<float> y;
    LinearResult result;
  };

  rt::Status timeAndCheck(rt::RankRun &run) {
    rt::Communicator &comm = run.comm();
    const int rank = run.plan().rank();
    Rank &me = ranks_[rank];
    LinearResult &result = me.result;
    uint64_t bytes = 0;
    bool consistent = true;
    SHARDLIN_RETURN_IF_ERROR(timeOnRank(
        comm, opt_, [&] { return run.execute(); }, result.timing, bytes,
        consistent));

    std::string report;
    int64_t failures =
        verifyRows(c_, rank, me.x, a_, bias_, me.y.data(), report);

    // Every rank's bytes, failures and consistency to every rank.
    std::vector<double> all;
    SHARDLIN_RETURN_IF_ERROR(gatherDoubles(
        comm, {double(bytes), double(failures), consistent ? 1.0 : 0.0},
        all));
    result.bytesSent.clear();
    result.verifyFailures = 0;
    result.bytesConsistent = true;
    for (int r = 0; r < comm.worldSize(); ++r) {
      result.bytesSent.push_back(static_cast<uint64_t>(all[3 * r]));
      result.verifyFailures += static_cast<int64_t>(all[3 * r + 1]);
      result.bytesConsistent &= all[3 * r + 2] != 0.0;
    }
    result.verifyReport = report;
    return rt::Status::ok();
  }

  const LinearCase &c_;
  const rt::Program &program_;
  const rt::RankCallbacks::MakeExecutor executors_;
  const std::function<const float *(int)> rowsOf_;
  const float *a_, *bias_;
  const TimingOptions &opt_;
  std::vector<Rank> ranks_; // by rank
};

} // namespace

LinearResult runLinearThreads(const LinearCase &c, const TimingOptions &opt) {
  LinearResult result;
  const int w = c.worldSize();
  CompiledCase compiledCase;
  double t0 = nowSeconds();
  rt::Status compiled = compileCase(c, compiledCase);
  result.compileSeconds = nowSeconds() - t0;
  if (!compiled) {
    result.error = compiled.message();
    return result;
  }
  result.chosen = compiledCase.chosen;
  result.bytesPredicted = predictBytes(c, result.chosen);

  // The whole input X (W*B x K) once; rank r's x is its block of rows, the
  // same values the dense baseline multiplies.
  std::vector<float> x(static_cast<size_t>(w * c.rows * c.k));
  std::vector<float> a(static_cast<size_t>(c.n * c.k)), b(c.n);
  fillUniform(x.data(), x.size(), kSeedX);
  fillUniform(a.data(), a.size(), kSeedA);
  fillUniform(b.data(), b.size(), kSeedB);

  // One BLAS thread per rank when ranks fill the cores (what shardlin-run
  // does: cores / ranks, at least 1).
  result.blasThreads = std::max(1, cores() / w);
  rt::RunOptions options; // threads
  options.worldSize = w;
  options.blasThreads = result.blasThreads;

  LinearRanks ranks(
      c, compiledCase, [&](int r) { return x.data() + r * c.rows * c.k; },
      a.data(), b.data(), opt);
  rt::Status ran =
      rt::runProgram(compiledCase.program, options, ranks.callbacks());
  if (!ran) {
    result.error = ran.message();
    return result;
  }
  const LinearResult &first = ranks.result(0);
  result.ran = true;
  result.timing = first.timing;
  result.bytesSent = first.bytesSent;
  result.bytesConsistent = first.bytesConsistent;
  result.verifyFailures = first.verifyFailures;
  for (int r = 0; r < w; ++r)
    result.verifyReport += ranks.result(r).verifyReport;
  return result;
}

//===----------------------------------------------------------------------===//
// The dense baseline
//===----------------------------------------------------------------------===//

DenseResult runDense(int64_t m, int64_t n, int64_t k, int threads,
                     const TimingOptions &opt) {
  DenseResult d;
  d.m = m;
  d.n = n;
  d.k = k;
  d.threads = threads;
  std::vector<float> x(static_cast<size_t>(m * k)), a(static_cast<size_t>(n * k)),
      b(n), y(static_cast<size_t>(m * n));
  fillUniform(x.data(), x.size(), kSeedX);
  fillUniform(a.data(), a.size(), kSeedA);
  fillUniform(b.data(), b.size(), kSeedB);
  rt::setBlasThreads(threads);
  auto once = [&] {
    // y = b on every row, then y += x A^T: GEMM + bias in one BLAS call.
    for (int64_t i = 0; i < m; ++i)
      std::memcpy(y.data() + i * n, b.data(), n * sizeof(float));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(m), int(n),
                int(k), 1.0f, x.data(), int(k), a.data(), int(k), 1.0f,
                y.data(), int(n));
  };
  double warm = 0;
  for (int i = 0; i < std::max(1, opt.warmup); ++i) {
    double t0 = nowSeconds();
    once();
    warm = nowSeconds() - t0;
  }
  int iters = 1, trials = 1;
  planTrials(warm, opt, iters, trials);
  d.timing.iters = iters;
  d.timing.trials = trials;
  for (int t = 0; t < trials; ++t) {
    double t0 = nowSeconds();
    for (int i = 0; i < iters; ++i)
      once();
    d.timing.perRun.push_back((nowSeconds() - t0) / iters);
  }
  return d;
}

//===----------------------------------------------------------------------===//
// MPI: launcher and worker
//===----------------------------------------------------------------------===//

std::vector<std::string> mpirunFlags(int np) {
  std::vector<std::string> f;
  if (geteuid() == 0)
    f.push_back("--allow-run-as-root");
  // More ranks than cores is part of the sweep; no binding, so that the
  // ranks share the cores the way the threads backend's threads do.
  f.insert(f.end(), {"--oversubscribe", "--bind-to", "none", "-np",
                     std::to_string(np)});
  return f;
}

static std::string selfExe() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0)
    return "shardlin-bench";
  buf[n] = 0;
  return buf;
}

std::string shellQuote(const std::string &s) {
  std::string o = "'";
  for (char ch : s)
    o += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return o + "'";
}

std::string timingFlags(const TimingOptions &o) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                " --warmup=%d --min-trials=%d --max-trials=%d --min-time=%g "
                "--trial-time=%g",
                o.warmup, o.minTrials, o.maxTrials, o.minSeconds,
                o.trialSeconds);
  return buf;
}

/// Runs `mpirun` with this executable and `workerArgs`; output to `log`.
rt::Status launchMpi(const std::string &mpirun, int np,
                     const std::string &workerArgs, const std::string &log) {
  std::string cmd = shellQuote(mpirun);
  for (const std::string &f : mpirunFlags(np))
    cmd += " " + shellQuote(f);
  cmd += " " + shellQuote(selfExe()) + workerArgs + " > " + shellQuote(log) +
         " 2>&1";
  int rc = std::system(cmd.c_str());
  if (rc != 0) {
    std::ifstream in(log);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    if (text.size() > 2000)
      text = "..." + text.substr(text.size() - 2000);
    return rt::Status::internal("'" + cmd + "' failed (status " +
                             std::to_string(rc) + "):\n" + text);
  }
  return rt::Status::ok();
}

rt::Status
launchMpiWorker(const std::string &mpirun, int np,
                const std::string &workerArgs, const std::string &dir,
                const TimingOptions &opt,
                const std::function<void(std::istringstream &)> &onLine) {
  const std::string outPath = dir + "/out.txt";
  rt::Status launched = launchMpi(
      mpirun, np,
      workerArgs + " --mpi-out=" + shellQuote(outPath) + timingFlags(opt),
      dir + "/log.txt");
  // Read whatever the worker wrote, even after a failure.
  std::ifstream in(outPath);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    onLine(ls);
  }
  return launched;
}

static std::string tempDir() {
  const char *t = std::getenv("TMPDIR");
  std::string pattern = std::string(t && *t ? t : "/tmp") + "/shardlin-bench-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back(0);
  if (!mkdtemp(buf.data()))
    return "/tmp";
  return buf.data();
}

std::string makeTempDir() { return tempDir(); }

rt::Status runLinearMpi(const std::vector<LinearCase> &cases,
                        const TimingOptions &opt, const std::string &mpirun,
                        std::vector<LinearResult> &results) {
  results.assign(cases.size(), LinearResult());
  if (cases.empty())
    return rt::Status::ok();
  const int w = cases[0].worldSize();
  const std::string dir = tempDir();
  const std::string casesPath = dir + "/cases.txt";
  {
    std::ofstream out(casesPath);
    for (size_t i = 0; i < cases.size(); ++i) {
      const LinearCase &c = cases[i];
      out << i << " " << c.dim << " " << c.rows << " " << c.n << " " << c.k
          << " " << c.strategy << " " << (c.jit ? 1 : 0) << " "
          << c.placements.size();
      for (int64_t p : c.placements)
        out << " " << p;
      out << "\n";
    }
  }
  rt::Status launched = launchMpiWorker(
      mpirun, w, " --mpi-worker=" + shellQuote(casesPath), dir, opt,
      [&](std::istringstream &ls) {
        size_t id;
        LinearResult r;
        int ran = 0, consistent = 0, w2 = 0, trials = 0;
        if (!(ls >> id) || id >= cases.size())
          return;
        ls >> ran >> r.chosen >> r.compileSeconds >> r.blasThreads >>
            r.timing.iters >> trials >> consistent >> r.verifyFailures >> w2;
        for (int t = 0; t < trials; ++t) {
          double v;
          ls >> v;
          r.timing.perRun.push_back(v);
        }
        r.timing.trials = trials;
        for (int q = 0; q < w2; ++q) {
          uint64_t v;
          ls >> v;
          r.bytesSent.push_back(v);
        }
        r.ran = ran != 0;
        r.bytesConsistent = consistent != 0;
        std::string rest;
        std::getline(ls, rest);
        if (!rest.empty() && rest[0] == ' ')
          rest.erase(0, 1);
        // The error text, with newlines escaped as \n.
        for (size_t p = 0; (p = rest.find("\\n", p)) != std::string::npos;)
          rest.replace(p, 2, "\n");
        if (!r.ran)
          r.error = rest.empty() ? "failed" : rest;
        else
          r.verifyReport = rest;
        r.bytesPredicted = predictBytes(cases[id], r.chosen);
        results[id] = std::move(r);
      });
  for (size_t i = 0; i < cases.size(); ++i)
    if (!results[i].ran && results[i].error.empty())
      results[i].error = launched ? "no result from the MPI worker"
                                  : launched.message();
  std::string rm = "rm -rf " + shellQuote(dir);
  (void)std::system(rm.c_str());
  return launched;
}

static std::string oneLine(std::string s) {
  for (size_t p = 0; (p = s.find('\n', p)) != std::string::npos;)
    s.replace(p, 1, "\\n");
  return s;
}

int mpiWorkerMain(int argc, char **argv, const std::string &casesPath,
                  const std::string &outPath, const TimingOptions &opt) {
  std::unique_ptr<rt::MpiSession> session;
  rt::Status s = rt::MpiSession::create(&argc, &argv, session);
  if (!s) {
    std::fprintf(stderr, "shardlin-bench worker: %s\n", s.message().c_str());
    return 1;
  }
  std::unique_ptr<rt::Communicator> comm;
  s = rt::createMpiCommunicator(rt::CommOptions(), comm);
  if (!s) {
    std::fprintf(stderr, "shardlin-bench worker: %s\n", s.message().c_str());
    return 1;
  }
  const int rank = comm->rank(), w = comm->worldSize();
  // Ranks per host: all of them here (one machine).
  int local = w;
  if (const char *e = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE"))
    local = std::max(1, std::atoi(e));
  const int blasThreads = std::max(1, cores() / local);
  rt::setBlasThreads(blasThreads);

  std::ifstream in(casesPath);
  std::ofstream out;
  if (rank == 0)
    out.open(outPath);
  std::string line;
  int exitCode = 0;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    LinearCase c;
    size_t id, np;
    int jit = 0;
    ls >> id >> c.dim >> c.rows >> c.n >> c.k >> c.strategy >> jit >> np;
    c.jit = jit != 0;
    c.backend = "mpi";
    c.placements.resize(np);
    for (size_t i = 0; i < np; ++i)
      ls >> c.placements[i];
    LinearResult r;
    r.blasThreads = blasThreads;
    CompiledCase compiled;
    double t0 = nowSeconds();
    rt::Status st = static_cast<int>(np) == w
                        ? compileCase(c, compiled)
                        : rt::Status::internal("case for W = " +
                                            std::to_string(np) + " under " +
                                            std::to_string(w) + " processes");
    r.compileSeconds = nowSeconds() - t0;
    if (st) {
      r.chosen = compiled.chosen;
      // This rank's rows of the global X: the same values as the dense run.
      std::vector<float> x(static_cast<size_t>(c.rows * c.k));
      std::vector<float> a(static_cast<size_t>(c.n * c.k)), b(c.n);
      fillUniform(x.data(), x.size(), kSeedX, int64_t(rank) * c.rows * c.k);
      fillUniform(a.data(), a.size(), kSeedA);
      fillUniform(b.data(), b.size(), kSeedB);
      LinearRanks ranks(
          c, compiled, [&](int) { return x.data(); }, a.data(), b.data(),
          opt);
      std::unique_ptr<rt::RankDevice> device = rt::createHostDevice();
      st = rt::runRank(rt::SharedProgram(compiled.program), *comm, *device,
                       ranks.callbacks())
               .status;
      const LinearResult &mine = ranks.result(rank);
      r.timing = mine.timing;
      r.bytesSent = mine.bytesSent;
      r.bytesConsistent = mine.bytesConsistent;
      r.verifyFailures = mine.verifyFailures;
      r.verifyReport = mine.verifyReport;
    }
    // Rank 0 reports; other ranks' verification reports are gathered as
    // counts only.
    if (rank == 0) {
      out << id << " " << (st ? 1 : 0) << " "
          << (r.chosen.empty() ? "-" : r.chosen) << " " << r.compileSeconds
          << " " << r.blasThreads << " " << r.timing.iters << " "
          << r.timing.perRun.size() << " " << (r.bytesConsistent ? 1 : 0)
          << " " << r.verifyFailures << " " << r.bytesSent.size();
      char buf[64];
      for (double v : r.timing.perRun) {
        std::snprintf(buf, sizeof buf, " %.9g", v);
        out << buf;
      }
      for (uint64_t v : r.bytesSent)
        out << " " << v;
      out << " " << oneLine(st ? r.verifyReport : st.message()) << "\n";
      out.flush();
    }
    if (!st) {
      std::fprintf(stderr, "rank %d: %s: %s\n", rank, c.label().c_str(),
                   st.message().c_str());
      exitCode = 1;
      // A failed collective leaves the communicator unusable.
      break;
    }
  }
  return exitCode;
}

} // namespace shardlin::bench
