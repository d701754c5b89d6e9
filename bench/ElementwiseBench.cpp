//===- ElementwiseBench.cpp - The fused elementwise kernel against a copy -===//
//
// The `elementwise` section: a GELU-tanh chain (0.5 x (1 + tanh(0.79788456
// (x + 0.044715 x^3))), 14 nodes) over 64 MiB of f32 (1 MiB with --quick)
// through the host LocalOps, and a plain copy of the same size (copyRows,
// one memcpy), measured in the same run with the rounds interleaved (GELU,
// copy, GELU, copy, ...). Both are reported as bytes read + written per
// second, medians over the rounds; the target is GELU >= 0.5x of the copy
// (issue 13). One thread: the host LocalOps of one rank.
//
//===----------------------------------------------------------------------===//

#include "BenchCommon.h"
#include "BenchRun.h"

#include "ExprTestSupport.h"

#include "shardlin/runtime/LocalOps.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace shardlin::bench {

namespace {

double medianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

} // namespace

void runElementwiseSection(BenchRun &run) {
  run.beginSection("elementwise");
  const Options &o = run.opts;
  if (!o.sections.count("elementwise"))
    return;
  const bool quick = o.mode == "quick";
  const size_t bytes = size_t(quick ? 1 : 64) << 20;
  const int rounds = quick ? 3 : 15;
  // Rows of a (W*B) x F activation: 4096 wide.
  const int64_t cols = 4096, rows = int64_t(bytes / sizeof(float)) / cols;
  const size_t n = size_t(rows * cols);
  std::printf("\n== elementwise: GELU-tanh (host LocalOps, f32, %zu MiB, one "
              "thread) against a copy of the same size; load %.2f ==\n",
              bytes >> 20, run.sectionLoad["elementwise"]);

  std::vector<float> x(n), y(n), copy(n);
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  for (float &v : x)
    v = dist(gen);
  const rt::ExprProgram gelu = rt::testing::geluTanh();
  std::unique_ptr<rt::LocalOps> ops = rt::createHostLocalOps();
  auto runGelu = [&] {
    return ops->elementwise(gelu, {{x.data(), false}}, y.data(), rows, cols,
                            rt::DType::F32);
  };
  auto runCopy = [&] {
    return ops->copyRows(x.data(), bytes, copy.data(), bytes, 1, bytes);
  };
  // Warm-up: faults the pages in, and checks the result.
  rt::Status s = runGelu();
  if (s)
    s = runCopy();
  if (!s) {
    std::printf("FAILED: %s\n", s.message().c_str());
    run.failed = true;
    return;
  }
  int wrong = 0;
  for (size_t i = 0; i < n; i += 997) {
    const double v = x[i];
    const double ref =
        0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
    if (!(std::fabs(y[i] - ref) <= 4e-6 * std::fabs(ref) + 1e-6))
      ++wrong;
  }
  if (wrong) {
    std::printf("FAILED: %d sampled GELU outputs outside 4e-6 rel + 1e-6\n",
                wrong);
    run.failed = true;
  }

  std::vector<double> geluSeconds, copySeconds;
  for (int r = 0; r < rounds; ++r) {
    double t0 = nowSeconds();
    (void)runGelu();
    double t1 = nowSeconds();
    (void)runCopy();
    double t2 = nowSeconds();
    geluSeconds.push_back(t1 - t0);
    copySeconds.push_back(t2 - t1);
  }
  const double traffic = 2.0 * double(bytes); // read + written
  const double geluGBs = traffic / medianOf(geluSeconds) / 1e9;
  const double copyGBs = traffic / medianOf(copySeconds) / 1e9;
  std::printf("%-22s %10s %10s\n", "", "ms", "GB/s");
  std::printf("%-22s %10.3f %10.2f\n", "gelu-tanh (14 nodes)",
              1e3 * medianOf(geluSeconds), geluGBs);
  std::printf("%-22s %10.3f %10.2f\n", "copy (memcpy)",
              1e3 * medianOf(copySeconds), copyGBs);
  std::printf("gelu / copy bandwidth: %.2fx (target >= 0.5x; medians of %d "
              "interleaved rounds)\n",
              geluGBs / copyGBs, rounds);
}

} // namespace shardlin::bench
