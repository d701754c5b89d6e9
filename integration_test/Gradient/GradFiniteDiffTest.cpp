//===- GradFiniteDiffTest.cpp - Backward functions against finite differences -===//
//
// A few small f64 cases, all through the real runtime (rt::runProgram on
// threads), none through a simulator: the loss is L = sum over ranks r of
// <dy_r, y_r>, y_r rank r's result of the lowered @main; every element of
// every argument (each rank's input, each weight and bias element, which
// every rank sees) is moved by +-h, @main run again on every rank, and the
// central difference (L(+h) - L(-h)) / 2h compared with what
// @main_backward computed for that element (a weight's element on the rank
// that holds its chunk; a bias's on every rank). h = 2^-20: the truncation
// error h^2 |L'''| / 6 and the rounding error of L (about 2^-52 sum |dy y| /
// h) are both below 1e-8 of the gradient's magnitude here; the bound is
// 1e-6 of it.
//
//===----------------------------------------------------------------------===//

#include "GradGTest.h"

#include "shardlin/runtime/base/ChunkLayout.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace rt = ::shardlin::rt;
using namespace shardlin::testkit;

namespace {

constexpr double kStep = 0x1.0p-20;
constexpr double kBound = 1e-6;

std::vector<GradCase> finiteDifferenceCases() {
  std::vector<GradCase> all;
  all.push_back(
      gradLinearCase(1, 3, 5, {2, 0, 1}, {2}, true, rt::DType::F64, "never"));

  GradCase mlp =
      gradBlockCase(BlockKind::Mlp, Activation::GeluTanh, OpForm::Arith, {1, 0},
                    5, rt::DType::F64, true, true, "always");
  mlp.block.h = 4;
  mlp.block.batch = {2};
  all.push_back(mlp);

  GradCase glu = mlp;
  glu.block.kind = BlockKind::SwiGlu;
  glu.block.fuse = false;
  glu.block.placements = {2, 0, 1};
  glu.block.batch = {rt::kDynamic};
  glu.block.rankBatch = {{1}, {0}, {2}};
  glu.recompute = "never";
  all.push_back(glu);
  return all;
}

double loss(const GradCase &c, const rt::Program &forward,
            const GradData &data) {
  const size_t numArgs = gradArguments(c).size();
  std::vector<std::vector<RankTensor>> y;
  rt::Status s = runWithTensors(
      forward, threadsOptions(c),
      [&](int rank) {
        std::vector<RankTensor> args;
        for (size_t i = 0; i < numArgs; ++i)
          args.push_back(argumentOf(c, data, i, rank));
        return args;
      },
      y);
  EXPECT_TRUE(s) << s.message();
  double l = 0;
  for (int r = 0; s && r < c.worldSize(); ++r) {
    const std::vector<double> &dy = data.dy[r].values;
    const double *yr = reinterpret_cast<const double *>(y[r][0].bytes.data());
    for (size_t e = 0; e < dy.size(); ++e)
      l += dy[e] * yr[e];
  }
  return l;
}

void setElement(HostTensor &t, size_t e, double v) {
  t.values[e] = v;
  std::memcpy(t.bytes.data() + e * sizeof(double), &v, sizeof(double));
}

class GradFiniteDifferences : public ::testing::TestWithParam<GradCase> {};

TEST_P(GradFiniteDifferences, EveryElementOfEveryArgument) {
  const GradCase &c = GetParam();
  BackwardPrograms programs;
  rt::Status s = compileBackward(c, programs);
  ASSERT_TRUE(s) << s.message();
  GradData data = makeGradData(c);
  std::vector<std::vector<RankTensor>> grads;
  s = runBackward(c, data, backwardRunOf(programs), threadsOptions(c), grads);
  ASSERT_TRUE(s) << s.message();
  const GradReference ref = gradReference(c, data); // the magnitudes
  const std::vector<GradArgument> args = gradArguments(c);

  // What the backward computed for element e of argument i on `rank`.
  auto computed = [&](size_t i, int rank, size_t e) {
    return reinterpret_cast<const double *>(grads[rank][i].bytes.data())[e];
  };
  auto check = [&](double fd, double got, double scale,
                   const std::string &what) {
    EXPECT_LE(std::fabs(fd - got), kBound * std::max(scale, 1e-3))
        << what << ": finite difference " << fd << ", backward " << got;
  };
  auto centralDifference = [&](HostTensor &t, size_t e) {
    const double v = t.values[e];
    setElement(t, e, v + kStep);
    const double up = loss(c, programs.forward, data);
    setElement(t, e, v - kStep);
    const double down = loss(c, programs.forward, data);
    setElement(t, e, v);
    return (up - down) / (2 * kStep);
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const GradArgument &a = args[i];
    const std::string arg = "argument " + std::to_string(i);
    // One value moved on every rank at once: the sum of the per-rank
    // gradients, not what a Plain argument's rank-local gradient is.
    ASSERT_NE(a.kind, GradArgument::Kind::Plain)
        << "no finite-difference case has a bias inside a linalg.generic";
    if (a.kind == GradArgument::Kind::Local) {
      for (int r = 0; r < c.worldSize(); ++r)
        for (size_t e = 0; e < data.inputs[r].values.size(); ++e)
          check(centralDifference(data.inputs[r], e), computed(i, r, e),
                ref[i][r].scale[e],
                arg + " rank " + std::to_string(r) + " element " +
                    std::to_string(e));
      continue;
    }
    for (size_t e = 0; e < data.args[i].values.size(); ++e) {
      const double fd = centralDifference(data.args[i], e);
      const std::string what = arg + " element " + std::to_string(e);
      if (a.kind == GradArgument::Kind::Replicated) {
        for (int r = 0; r < c.worldSize(); ++r)
          check(fd, computed(i, r, e), ref[i][0].scale[e],
                what + " on rank " + std::to_string(r));
        continue;
      }
      // The element's chunk, its rank and its index in that chunk.
      const int64_t cols = a.shape[1];
      const int64_t row = int64_t(e) / cols, col = int64_t(e) % cols;
      const int64_t at = a.dim == 0 ? row : col;
      const rt::ChunkLayout layout(a.shape[a.dim], a.placements);
      for (int r = 0; r < c.worldSize(); ++r) {
        const rt::Range range = layout.ofRank(r);
        if (at < range.offset || at >= range.offset + range.size)
          continue;
        const size_t local =
            a.dim == 0 ? size_t((row - range.offset) * cols + col)
                       : size_t(row * range.size + col - range.offset);
        check(fd, computed(i, r, local), ref[i][0].scale[e],
              what + " on rank " + std::to_string(r));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Small, GradFiniteDifferences,
                         ::testing::ValuesIn(finiteDifferenceCases()),
                         GradCaseName());

} // namespace
