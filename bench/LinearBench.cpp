//===- LinearBench.cpp - Timing compiled linears and the dense baseline ---===//

#include "BenchCommon.h"

#include "shardlin/Execution/ProgramBuilder.h"
#include "shardlin/runtime/Buffer.h"
#include "shardlin/runtime/Gemm.h"
#include "shardlin/runtime/MpiCommunicator.h"
#include "shardlin/runtime/Plan.h"
#include "shardlin/runtime/Runner.h"
#include "shardlin/runtime/ThreadsCommunicator.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace shardlin::bench {

//===----------------------------------------------------------------------===//
// Compiling
//===----------------------------------------------------------------------===//

static std::string joinInts(const std::vector<int64_t> &v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s;
}

std::string linearMlir(const LinearCase &c) {
  auto t = [](int64_t a, int64_t b) {
    return "tensor<" + std::to_string(a) + "x" + std::to_string(b) + "xf32>";
  };
  const std::string x = t(c.rows, c.k), y = t(c.rows, c.n);
  const std::string b = "tensor<" + std::to_string(c.n) + "xf32>";
  const std::string w = "!shardlin.sharded<" + t(c.n, c.k) +
                        ", #shardlin.chunk<dim = " + std::to_string(c.dim) +
                        ", placements = [" + joinInts(c.placements) + "]>>";
  return "func.func @main(%x: " + x + ", %w: " + w + ", %b: " + b + ") -> " +
         y + " {\n  %y = shardlin.linear %x, %w, %b : (" + x + ", " + w +
         ", " + b + ") -> " + y + "\n  return %y : " + y + "\n}\n";
}

rt::Status compileLinear(const LinearCase &c, rt::Program &out) {
  const std::string text = linearMlir(c);
  mlir::DialectRegistry registry;
  mlir::shardlin::registerExecutionDialects(registry);
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    llvm::raw_string_ostream os(diagnostics);
    os << d.getLocation() << ": " << d.str() << "\n";
    return mlir::success();
  });
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  if (!module)
    return rt::Status::error("parsing failed: " + diagnostics);
  mlir::shardlin::LowerShardedLinearOptions options;
  std::optional<mlir::shardlin::StrategyOption> strategy =
      mlir::shardlin::parseStrategyOption(c.worldSize() == 1 ? "auto"
                                                             : c.strategy);
  if (!strategy)
    return rt::Status::error("unknown strategy '" + c.strategy + "'");
  options.strategy = *strategy;
  mlir::FailureOr<rt::Program> program =
      mlir::shardlin::buildProgram(*module, "main", options);
  if (mlir::failed(program))
    return rt::Status::error("buildProgram failed: " + diagnostics);
  out = std::move(*program);
  return rt::Status::ok();
}

//===----------------------------------------------------------------------===//
// One rank
//===----------------------------------------------------------------------===//

rt::Status runLinearOnRank(const LinearCase &c, const rt::Program &program,
                           rt::Communicator &comm, const float *x,
                           const float *a, const float *bias,
                           const TimingOptions &opt, LinearResult &result) {
  const int rank = comm.rank();
  std::unique_ptr<rt::Plan> plan;
  rt::Status prepared = rt::Plan::build(program, rank, comm.worldSize(),
                                        rt::hostAllocator(), plan);
  std::vector<uint8_t> chunk;
  std::vector<float> y;
  if (prepared) {
    const rt::Argument &w = program.args[1];
    rt::extractLocalChunk(a, w.globalShape, rt::DType::F32, w.sharding, rank,
                          chunk);
    // NaN everywhere, so an element the plan never writes fails the check.
    y.assign(static_cast<size_t>(c.rows * c.n), NAN);
  }
  // Agree that every rank is ready before the first collective, so that a
  // failure on one rank does not leave the others waiting.
  double failed = prepared ? 0.0 : 1.0;
  SHARDLIN_RETURN_IF_ERROR(comm.allReduce(&failed, &failed, 1, rt::DType::F64));
  if (!prepared)
    return prepared;
  if (failed > 0)
    return rt::Status::error("another rank failed to prepare");

  std::unique_ptr<rt::GemmBackend> gemm = rt::createCpuGemm();
  std::vector<const void *> args = {x, chunk.data(), bias};
  std::vector<void *> results = {y.data()};
  auto run = [&] { return plan->run(comm, *gemm, args, results); };
  uint64_t bytes = 0;
  bool consistent = true;
  SHARDLIN_RETURN_IF_ERROR(
      timeOnRank(comm, opt, run, result.timing, bytes, consistent));

  std::string report;
  int64_t failures = verifyRows(c, rank, x, a, bias, y.data(), report);

  // Every rank's bytes, failures and consistency to every rank.
  std::vector<double> all;
  SHARDLIN_RETURN_IF_ERROR(gatherDoubles(
      comm, {double(bytes), double(failures), consistent ? 1.0 : 0.0}, all));
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

static void finishResult(const LinearCase &c, const rt::Program &program,
                         LinearResult &r) {
  r.chosen = programStrategy(program);
  r.bytesPredicted = predictBytes(c, r.chosen);
}

LinearResult runLinearThreads(const LinearCase &c, const TimingOptions &opt) {
  LinearResult result;
  const int w = c.worldSize();
  rt::Program program;
  double t0 = nowSeconds();
  rt::Status compiled = compileLinear(c, program);
  result.compileSeconds = nowSeconds() - t0;
  if (!compiled) {
    result.error = compiled.message();
    return result;
  }
  finishResult(c, program, result);

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
  rt::setBlasThreads(result.blasThreads);

  auto comms = rt::createThreadsGroup(w);
  std::vector<LinearResult> perRank(w);
  std::vector<rt::Status> status(w);
  std::vector<std::thread> threads;
  for (int r = 0; r < w; ++r)
    threads.emplace_back([&, r] {
      status[r] = runLinearOnRank(c, program, *comms[r],
                                  x.data() + r * c.rows * c.k, a.data(),
                                  b.data(), opt, perRank[r]);
    });
  for (std::thread &t : threads)
    t.join();
  for (int r = 0; r < w; ++r)
    if (!status[r]) {
      result.error = "rank " + std::to_string(r) + ": " + status[r].message();
      return result;
    }
  result.ran = true;
  result.timing = perRank[0].timing;
  result.bytesSent = perRank[0].bytesSent;
  result.bytesConsistent = perRank[0].bytesConsistent;
  result.verifyFailures = perRank[0].verifyFailures;
  for (int r = 0; r < w; ++r)
    result.verifyReport += perRank[r].verifyReport;
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
    return rt::Status::error("'" + cmd + "' failed (status " +
                             std::to_string(rc) + "):\n" + text);
  }
  return rt::Status::ok();
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
  const std::string outPath = dir + "/results.txt";
  {
    std::ofstream out(casesPath);
    for (size_t i = 0; i < cases.size(); ++i) {
      const LinearCase &c = cases[i];
      out << i << " " << c.dim << " " << c.rows << " " << c.n << " " << c.k
          << " " << c.strategy << " " << c.placements.size();
      for (int64_t p : c.placements)
        out << " " << p;
      out << "\n";
    }
  }
  rt::Status launched = launchMpi(
      mpirun, w,
      " --mpi-worker=" + shellQuote(casesPath) +
          " --mpi-out=" + shellQuote(outPath) + timingFlags(opt),
      dir + "/log.txt");

  // Read whatever the worker wrote, even after a failure.
  std::ifstream in(outPath);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    size_t id;
    LinearResult r;
    int ran = 0, consistent = 0, w2 = 0, trials = 0;
    if (!(ls >> id) || id >= cases.size())
      continue;
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
  }
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
    ls >> id >> c.dim >> c.rows >> c.n >> c.k >> c.strategy >> np;
    c.backend = "mpi";
    c.placements.resize(np);
    for (size_t i = 0; i < np; ++i)
      ls >> c.placements[i];
    LinearResult r;
    r.blasThreads = blasThreads;
    rt::Program program;
    double t0 = nowSeconds();
    rt::Status st = static_cast<int>(np) == w
                        ? compileLinear(c, program)
                        : rt::Status::error("case for W = " +
                                            std::to_string(np) + " under " +
                                            std::to_string(w) + " processes");
    r.compileSeconds = nowSeconds() - t0;
    if (st) {
      r.chosen = programStrategy(program);
      // This rank's rows of the global X: the same values as the dense run.
      std::vector<float> x(static_cast<size_t>(c.rows * c.k));
      std::vector<float> a(static_cast<size_t>(c.n * c.k)), b(c.n);
      fillUniform(x.data(), x.size(), kSeedX, int64_t(rank) * c.rows * c.k);
      fillUniform(a.data(), a.size(), kSeedA);
      fillUniform(b.data(), b.size(), kSeedB);
      st = runLinearOnRank(c, program, *comm, x.data(), a.data(), b.data(),
                           opt, r);
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
