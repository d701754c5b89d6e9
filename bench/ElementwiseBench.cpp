//===- ElementwiseBench.cpp - Fused elementwise kernels against a copy ----===//
//
// The `elementwise` section, one thread (the host LocalOps and the OpenBLAS
// GEMM of one rank), in two parts:
//
//  1. Kernels over 64 MiB of f32 results (1 MiB with --quick), 4096 wide:
//     a plain copy (copyRows, one memcpy), the GELU-tanh chain (0.5 x (1 +
//     tanh(0.79788456 (x + 0.044715 x^3))), 14 nodes) through its fused
//     loop and through the generic node-by-node evaluation
//     (HostLocalOpsOptions::activationKernels = false), the other fused
//     activations (GELU-erf, SiLU, ReLU of x + a bias row, SwiGLU's
//     silu(g) * u) and single ops (neg, exp, log, tanh, erf) through the
//     generic evaluation. All in interleaved rounds (each round runs every
//     kernel once, in order), medians over the rounds; GB/s count bytes read
//     + written. The target: GELU-tanh >= 0.5x of the copy's GB/s (issue 13).
//  2. A col-wise GEMM + GELU-tanh (the fused block's first GEMM and chain),
//     C = X W^T + b then the chain over C, run as the GEMM's epilogue
//     (GemmBackend::runWithEpilogue: blocks of rows of C, the chain on each
//     right after it) and separately (run, then one elementwise pass), in
//     interleaved rounds, one BLAS thread.
//
// Every kernel's output is sampled against a float64 reference once.
//
//===----------------------------------------------------------------------===//

#include "BenchCommon.h"
#include "BenchRun.h"

#include "ExprTestSupport.h"

#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/exec/Gemm.h"
#include "shardlin/runtime/exec/LocalOps.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace shardlin::bench {

namespace {

double medianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// Runs each of `kernels` once per round, `rounds` times; returns each one's
/// seconds per round.
std::vector<std::vector<double>>
interleaved(const std::vector<std::function<rt::Status()>> &kernels,
            int rounds, rt::Status &status) {
  std::vector<std::vector<double>> seconds(kernels.size());
  for (int r = 0; r < rounds && status; ++r)
    for (size_t k = 0; k < kernels.size() && status; ++k) {
      const double t0 = nowSeconds();
      status = kernels[k]();
      seconds[k].push_back(nowSeconds() - t0);
    }
  return seconds;
}

using rt::ExprOp;
using rt::testing::Builder;

/// One kernel of part 1: its program, its inputs (full or a row), and the
/// LocalOps that runs it.
struct Kernel {
  std::string name;
  rt::ExprProgram expr;
  std::vector<bool> rowVector;
  bool generic = false;
  /// Inputs must be positive (log).
  bool positive = false;
};

std::vector<Kernel> kernels() {
  std::vector<Kernel> k;
  k.push_back({"gelu-tanh (14 nodes)", rt::testing::geluTanh(), {false}});
  k.push_back({"gelu-tanh, generic", rt::testing::geluTanh(), {false}, true});
  k.push_back({"gelu-erf", rt::testing::geluErf(), {false}});
  k.push_back({"silu", rt::testing::silu(), {false}});
  {
    Builder b;
    b.op(ExprOp::Maximum, b.op(ExprOp::Add, b.input(0), b.input(1)),
         b.constant(0));
    k.push_back({"relu(x + bias)", b.p, {false, true}});
  }
  {
    rt::ExprProgram s = rt::testing::silu();
    Builder b;
    b.p = s;
    b.op(ExprOp::Mul, static_cast<int>(s.nodes.size()) - 1, b.input(1));
    k.push_back({"silu(g) * u", b.p, {false, false}});
  }
  for (ExprOp op :
       {ExprOp::Neg, ExprOp::Exp, ExprOp::Log, ExprOp::Tanh, ExprOp::Erf}) {
    Builder b;
    b.op(op, b.input(0));
    k.push_back({std::string(rt::exprOpName(op)) + ", generic", b.p, {false},
                 true, op == ExprOp::Log});
  }
  return k;
}

void kernelsPart(BenchRun &run, bool quick) {
  const size_t bytes = size_t(quick ? 1 : 64) << 20;
  const int rounds = quick ? 3 : 15;
  const int64_t cols = 4096, rows = int64_t(bytes / sizeof(float)) / cols;
  const size_t n = size_t(rows * cols);
  std::printf("\n== elementwise: fused kernels (host LocalOps, f32, %zu MiB "
              "results, one thread) against a copy of the same size; load "
              "%.2f ==\n",
              bytes >> 20, run.sectionLoad["elementwise"]);

  std::mt19937 gen(5);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<float> x(n), x2(n), positive(n), y(n), copy(n);
  std::vector<float> row(static_cast<size_t>(cols));
  for (size_t i = 0; i < n; ++i) {
    x[i] = dist(gen);
    x2[i] = dist(gen);
    positive[i] = std::fabs(x[i]) + 0.125f;
  }
  for (float &v : row)
    v = dist(gen);
  std::unique_ptr<rt::LocalOps> fused = rt::createHostLocalOps();
  std::unique_ptr<rt::LocalOps> generic =
      rt::createHostLocalOps(rt::HostLocalOpsOptions{false});

  const std::vector<Kernel> ks = kernels();
  std::vector<std::function<rt::Status()>> calls;
  calls.push_back(
      [&] { return fused->copyRows(x.data(), bytes, copy.data(), bytes, 1, bytes); });
  std::vector<std::vector<rt::ExprOperand>> operands(ks.size());
  for (size_t k = 0; k < ks.size(); ++k) {
    const Kernel &kn = ks[k];
    operands[k].push_back({kn.positive ? positive.data() : x.data(), false});
    if (kn.rowVector.size() > 1)
      operands[k].push_back({kn.rowVector[1] ? row.data() : x2.data(),
                             bool(kn.rowVector[1])});
    rt::LocalOps *ops = kn.generic ? generic.get() : fused.get();
    calls.push_back([&, k, ops] {
      return ops->elementwise(ks[k].expr, operands[k], y.data(), rows, cols,
                              rt::DType::F32);
    });
  }

  // Warm-up (faults the pages in) and a check of every kernel's output.
  rt::Status status = calls[0]();
  for (size_t k = 0; k < ks.size() && status; ++k) {
    status = calls[k + 1]();
    int wrong = 0;
    for (size_t i = 0; i < n && status; i += 997) {
      std::vector<double> at;
      for (const rt::ExprOperand &o : operands[k])
        at.push_back(static_cast<const float *>(
            o.data)[o.rowVector ? i % size_t(cols) : i]);
      const double ref = rt::testing::referenceAt(ks[k].expr, at);
      if (!(std::fabs(y[i] - ref) <= 4e-6 * std::fabs(ref) + 1e-6))
        ++wrong;
    }
    if (wrong) {
      std::printf("FAILED: %s: %d sampled outputs outside 4e-6 rel + 1e-6\n",
                  ks[k].name.c_str(), wrong);
      run.failed = true;
    }
  }
  std::vector<std::vector<double>> seconds =
      status ? interleaved(calls, rounds, status) : decltype(seconds){};
  if (!status) {
    std::printf("FAILED: %s\n", status.message().c_str());
    run.failed = true;
    return;
  }
  const double copyGBs = 2.0 * double(bytes) / medianOf(seconds[0]) / 1e9;
  std::printf("%-24s %10s %10s %10s %10s\n", "", "ms", "GB/s", "x copy",
              "ns/elt");
  std::printf("%-24s %10.3f %10.2f %10s %10.3f\n", "copy (memcpy)",
              1e3 * medianOf(seconds[0]), copyGBs, "1.00",
              1e9 * medianOf(seconds[0]) / double(n));
  double geluRatio = 0;
  for (size_t k = 0; k < ks.size(); ++k) {
    const double s = medianOf(seconds[k + 1]);
    // Bytes read (full operands; a row is negligible) + written.
    size_t full = 1;
    for (size_t o = 1; o < ks[k].rowVector.size(); ++o)
      full += ks[k].rowVector[o] ? 0 : 1;
    const double gbs = double(full + 1) * double(bytes) / s / 1e9;
    if (k == 0)
      geluRatio = gbs / copyGBs;
    std::printf("%-24s %10.3f %10.2f %10.2f %10.3f\n", ks[k].name.c_str(),
                1e3 * s, gbs, gbs / copyGBs, 1e9 * s / double(n));
  }
  std::printf("gelu-tanh / copy bandwidth: %.2fx (target >= 0.5x; medians of "
              "%d interleaved rounds)\n",
              geluRatio, rounds);
}

/// Part 2: X (m x k) W^T (n x k) + b, then GELU-tanh over C, fused and not.
void gemmPart(BenchRun &run, bool quick) {
  struct Shape {
    int64_t m, n, k;
  };
  const std::vector<Shape> shapes =
      quick ? std::vector<Shape>{{512, 256, 32}}
            : std::vector<Shape>{{4096, 1024, 1024}, {8192, 1024, 64}};
  const int rounds = quick ? 2 : 5;
  const int threadsBefore = rt::getBlasThreads();
  rt::setBlasThreads(1);
  std::printf("\n== elementwise: col-wise GEMM + GELU-tanh, the chain as the "
              "GEMM's epilogue (blocks of rows) or a pass of its own (f32, "
              "one thread, medians of %d interleaved rounds) ==\n",
              rounds);
  std::printf("%-22s %12s %12s %10s %12s\n", "m x n x k", "fused ms",
              "separate ms", "fused/sep", "chain alone");
  const rt::ExprProgram gelu = rt::testing::geluTanh();
  std::unique_ptr<rt::GemmBackend> gemm = rt::createCpuGemm();
  std::unique_ptr<rt::LocalOps> ops = rt::createHostLocalOps();
  std::mt19937 gen(9);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (const Shape &s : shapes) {
    std::vector<float> a(size_t(s.m * s.k)), w(size_t(s.n * s.k)),
        bias(size_t(s.n)), c(size_t(s.m * s.n)), c2(c.size());
    for (std::vector<float> *v : {&a, &w, &bias})
      for (float &e : *v)
        e = dist(gen);
    rt::GemmOp op;
    op.m = s.m;
    op.n = s.n;
    op.k = s.k;
    op.transB = true;
    op.a = a.data();
    op.lda = s.k;
    op.b = w.data();
    op.ldb = s.k;
    op.bias = bias.data();
    op.ldc = s.n;
    std::vector<rt::ExprOperand> onC = {{c.data(), false}},
                                 onC2 = {{c2.data(), false}};
    auto fusedRun = [&] {
      rt::GemmOp o = op;
      o.c = c.data();
      return gemm->runWithEpilogue(o, {&gelu, &onC, c.data()}, *ops);
    };
    auto separate = [&] {
      rt::GemmOp o = op;
      o.c = c2.data();
      rt::Status st = gemm->run(o);
      return st ? ops->elementwise(gelu, onC2, c2.data(), s.m, s.n,
                                   rt::DType::F32)
                : st;
    };
    auto chain = [&] {
      return ops->elementwise(gelu, onC2, c2.data(), s.m, s.n, rt::DType::F32);
    };
    rt::Status status = fusedRun();
    if (status)
      status = separate();
    // The two agree (the same sgemm calls per element, the same chain).
    size_t differ = 0;
    for (size_t i = 0; i < c.size() && status; i += 101)
      differ += !(std::fabs(c[i] - c2[i]) <= 1e-5f * (1 + std::fabs(c2[i])));
    std::vector<std::vector<double>> seconds =
        status ? interleaved({fusedRun, separate, chain}, rounds, status)
               : decltype(seconds){};
    if (!status || differ) {
      std::printf("FAILED: %s\n", status ? "fused and separate results differ"
                                         : status.message().c_str());
      run.failed = true;
      break;
    }
    const double f = medianOf(seconds[0]), sep = medianOf(seconds[1]);
    const std::string shape = std::to_string(s.m) + " x " +
                              std::to_string(s.n) + " x " +
                              std::to_string(s.k);
    std::printf("%-22s %12.3f %12.3f %10.3f %10.3f ms\n", shape.c_str(),
                1e3 * f, 1e3 * sep, f / sep, 1e3 * medianOf(seconds[2]));
  }
  rt::setBlasThreads(threadsBefore);
}

} // namespace

void runElementwiseSection(BenchRun &run) {
  run.beginSection("elementwise");
  const Options &o = run.opts;
  if (!o.sections.count("elementwise"))
    return;
  const bool quick = o.mode == "quick";
  kernelsPart(run, quick);
  gemmPart(run, quick);
}

} // namespace shardlin::bench
