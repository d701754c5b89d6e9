//===- GradReplicatedTest.cpp - Backward of replicated activations --------===//
//
// Megatron without sequence parallelism: activations that every rank holds
// alike (docs/training.md, "Replicated activations"). The function is one
// dense model of the global view: x is one tensor, so is a replicated
// result y, and the loss is L = <dy, y> with one dy that every rank passes.
// So every rank's gradient of x and of a bias is the whole one, and each
// rank's gradient of a weight its chunk of the whole one.
//
// The norms (RMSNorm, LayerNorm: sums over the last dim, their R x 1
// statistics broadcast along the rows, a weight broadcast along the last
// dim) before an MLP are checked the same way, with x replicated and with x
// split by rows (sequence-split: rank r holds rows [bounds[r], bounds[r+1])
// of x and of y, and L = sum over ranks of <dy_r, y_r>).
//
// Each case is f64, run by the runtime on threads (the plan executor) and
// compiled to native code (shardlin-run --jit's path); the reference is
// the central difference of L, every element of every argument moved by
// +-h on every rank that holds it, @main run again on every rank. h = 2^-20,
// as GradFiniteDiffTest.cpp's; the bound is 1e-6 of the largest finite
// difference of that argument.
//
//===----------------------------------------------------------------------===//

#include "GradGTest.h"
#include "JitTesting.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace rt = ::shardlin::rt;
using namespace shardlin::testkit;

namespace {

constexpr double kStep = 0x1.0p-20;
constexpr double kBound = 1e-6;

/// An argument of @main: whole on every rank (x, a bias), or split along
/// `dim` at `bounds` (a weight), rank r holding chunk r.
struct RepArg {
  std::vector<int64_t> shape;
  int64_t dim = -1;
  std::vector<int64_t> bounds;
};

struct RepCase {
  std::string name, strategy, recompute, mlir;
  int world = 3;
  std::vector<RepArg> args;
  std::vector<int64_t> resultShape;
  /// Where the result is split by rows (x too): rank r's rows; empty where
  /// it is replicated.
  std::vector<int64_t> resultBounds;
};

const char *kW1 = "!w1 = !shardlin.sharded<tensor<5x4xf64>, #shardlin.chunk<"
                  "dim = 0, placements = [0, 1, 2], bounds = [0, 2, 2, 5]>>\n";
const char *kW2 = "!w2 = !shardlin.sharded<tensor<4x5xf64>, #shardlin.chunk<"
                  "dim = 1, placements = [0, 1, 2], bounds = [0, 2, 2, 5]>>\n";

/// An RMSNorm (`layer` false) or LayerNorm of x (rows x 4, `rows` the type's
/// first dim: "3" or "?") then an MLP (tanh) and a residual, in the forms
/// torch-mlir exports norms: sums over the last dim (a linalg.generic into
/// R x 1; LayerNorm's mean a linalg.reduce into R, expanded to R x 1), the
/// statistics broadcast along the rows ((d0, d1) -> (d0, 0)) and the norm's
/// weight (and LayerNorm's bias) along the last dim.
std::string normMlp(bool layer, const std::string &rows,
                    const std::string &layouts1, const std::string &layouts2) {
  const std::string tx = "tensor<" + rows + "x4xf64>";
  const std::string tr = "tensor<" + rows + "x1xf64>";
  const std::string th = rows == "?" ? "tensor<?x5xf64>" : "tensor<3x?xf64>";
  const std::string dyn = rows == "?" ? "(%n)" : "()";
  const std::string attr = rows == "?" ? "" : " {shardlin.replicated}";
  std::string s =
      std::string(kW1) + kW2 +
      "#id = affine_map<(d0, d1) -> (d0, d1)>\n"
      "#row = affine_map<(d0, d1) -> (d0, 0)>\n"
      "#col = affine_map<(d0, d1) -> (d1)>\n"
      "func.func @main(%x: " +
      tx + attr +
      ", %g: tensor<4xf64> {shardlin.replicated}, %beta: tensor<4xf64> "
      "{shardlin.replicated}, %w1: !w1, %b1: tensor<5xf64> "
      "{shardlin.replicated}, %w2: !w2, %b2: tensor<4xf64> "
      "{shardlin.replicated}) -> " +
      tx +
      " {\n"
      "  %c0 = arith.constant 0 : index\n"
      "  %n = tensor.dim %x, %c0 : " +
      tx +
      "\n"
      "  %zero = arith.constant 0.0 : f64\n"
      "  %four = arith.constant 4.0 : f64\n"
      "  %eps = arith.constant 1.0e-5 : f64\n"
      "  %e = tensor.empty" +
      dyn + " : " + tx +
      "\n"
      "  %e1 = tensor.empty" +
      dyn + " : " + tr +
      "\n"
      "  %i = linalg.fill ins(%zero : f64) outs(%e1 : " +
      tr + ") -> " + tr + "\n";
  std::string centred = "%x";
  if (layer) {
    const std::string tv = "tensor<" + rows + "xf64>";
    s += "  %ev = tensor.empty" + dyn + " : " + tv +
         "\n"
         "  %iv = linalg.fill ins(%zero : f64) outs(%ev : " +
         tv + ") -> " + tv +
         "\n"
         "  %sum = linalg.reduce ins(%x : " +
         tx + ") outs(%iv : " + tv +
         ") dimensions = [1]\n"
         "    (%a: f64, %acc: f64) {\n"
         "      %t = arith.addf %a, %acc : f64\n"
         "      linalg.yield %t : f64\n"
         "    }\n"
         "  %sum1 = tensor.expand_shape %sum [[0, 1]] output_shape [" +
         (rows == "?" ? std::string("%n") : rows) + ", 1] : " + tv + " into " +
         tr +
         "\n"
         "  %mean = linalg.generic {indexing_maps = [#id, #id], "
         "iterator_types = [\"parallel\", \"parallel\"]} ins(%sum1 : " +
         tr + ") outs(%e1 : " + tr +
         ") {\n"
         "  ^bb0(%a: f64, %o: f64):\n"
         "    %t = arith.divf %a, %four : f64\n"
         "    linalg.yield %t : f64\n"
         "  } -> " +
         tr +
         "\n"
         "  %xc = linalg.generic {indexing_maps = [#id, #row, #id], "
         "iterator_types = [\"parallel\", \"parallel\"]} ins(%x, %mean : " +
         tx + ", " + tr + ") outs(%e : " + tx +
         ") {\n"
         "  ^bb0(%a: f64, %m: f64, %o: f64):\n"
         "    %t = arith.subf %a, %m : f64\n"
         "    linalg.yield %t : f64\n"
         "  } -> " +
         tx + "\n";
    centred = "%xc";
  }
  s += "  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = "
       "[\"parallel\", \"parallel\"]} ins(" +
       centred + " : " + tx + ") outs(%e : " + tx +
       ") {\n"
       "  ^bb0(%a: f64, %o: f64):\n"
       "    %t = arith.mulf %a, %a : f64\n"
       "    linalg.yield %t : f64\n"
       "  } -> " +
       tx +
       "\n"
       "  %ss = linalg.generic {indexing_maps = [#id, #row], iterator_types = "
       "[\"parallel\", \"reduction\"]} ins(%sq : " +
       tx + ") outs(%i : " + tr +
       ") {\n"
       "  ^bb0(%a: f64, %acc: f64):\n"
       "    %t = arith.addf %a, %acc : f64\n"
       "    linalg.yield %t : f64\n"
       "  } -> " +
       tr +
       "\n"
       "  %rs = linalg.generic {indexing_maps = [#id, #id], iterator_types = "
       "[\"parallel\", \"parallel\"]} ins(%ss : " +
       tr + ") outs(%e1 : " + tr +
       ") {\n"
       "  ^bb0(%a: f64, %o: f64):\n"
       "    %m = arith.divf %a, %four : f64\n"
       "    %p = arith.addf %m, %eps : f64\n"
       "    %r = math.rsqrt %p : f64\n"
       "    linalg.yield %r : f64\n"
       "  } -> " +
       tr +
       "\n"
       "  %nx = linalg.generic {indexing_maps = [#id, #row, #col, #col, #id], "
       "iterator_types = [\"parallel\", \"parallel\"]} ins(" +
       centred + ", %rs, %g, %beta : " + tx + ", " + tr +
       ", tensor<4xf64>, tensor<4xf64>) outs(%e : " + tx +
       ") {\n"
       "  ^bb0(%a: f64, %r: f64, %w: f64, %b: f64, %o: f64):\n"
       "    %t = arith.mulf %a, %r : f64\n"
       "    %u = arith.mulf %t, %w : f64\n" +
       (layer ? "    %v = arith.addf %u, %b : f64\n"
                "    linalg.yield %v : f64\n"
              : "    %v = arith.mulf %u, %b : f64\n"
                "    linalg.yield %v : f64\n") +
       "  } -> " + tx +
       "\n"
       "  %h = shardlin.linear %nx, %w1, %b1" +
       layouts1 + " : (" + tx + ", !w1, tensor<5xf64>) -> " + th +
       "\n"
       "  %a = math.tanh %h : " +
       th +
       "\n"
       "  %y = shardlin.linear %a, %w2, %b2" +
       layouts2 + " : (" + th + ", !w2, tensor<4xf64>) -> " + tx +
       "\n"
       "  %r = arith.addf %y, %x : " +
       tx +
       "\n"
       "  return %r : " +
       tx +
       "\n"
       "}\n";
  return s;
}

std::vector<RepCase> replicatedCases() {
  const RepArg x{{3, 4}}, b1{{5}}, b2{{4}};
  const RepArg w1{{5, 4}, 0, {0, 2, 2, 5}}, w2{{4, 5}, 1, {0, 2, 2, 5}};
  std::vector<RepCase> all;
  // replicated -> features (col-wise, its bias chunked), tanh,
  // features -> replicated (row-wise, an all_reduce), a residual.
  RepCase mlp{"mlp_residual", "activations", "always",
              std::string(kW1) + kW2 +
                  R"(func.func @main(%x: tensor<3x4xf64> {shardlin.replicated}, %w1: !w1, %b1: tensor<5xf64> {shardlin.replicated}, %w2: !w2, %b2: tensor<4xf64> {shardlin.replicated}) -> tensor<3x4xf64> {
  %h = shardlin.linear %x, %w1, %b1 layouts replicated -> features : (tensor<3x4xf64>, !w1, tensor<5xf64>) -> tensor<3x?xf64>
  %a = math.tanh %h : tensor<3x?xf64>
  %y = shardlin.linear %a, %w2, %b2 layouts features -> replicated : (tensor<3x?xf64>, !w2, tensor<4xf64>) -> tensor<3x4xf64>
  %r = arith.addf %y, %x : tensor<3x4xf64>
  return %r : tensor<3x4xf64>
})",
              3, {x, w1, b1, w2, b2}, {3, 4}};
  all.push_back(mlp);
  RepCase saved = mlp;
  saved.name = "mlp_residual_saved";
  saved.recompute = "never";
  all.push_back(saved);
  // replicated -> replicated, K split: x's chunk (local_chunk), an
  // all_reduce, the bias once.
  all.push_back({"row_all_reduce", "activations", "always",
                 std::string(kW2) +
                     R"(func.func @main(%x: tensor<3x5xf64> {shardlin.replicated}, %w: !w2, %b: tensor<4xf64> {shardlin.replicated}) -> tensor<3x4xf64> {
  %y = shardlin.linear %x, %w, %b layouts replicated -> replicated : (tensor<3x5xf64>, !w2, tensor<4xf64>) -> tensor<3x4xf64>
  return %y : tensor<3x4xf64>
})",
                 3, {{{3, 5}}, w2, b2}, {3, 4}});
  // replicated -> replicated, N split: the rank's features, all_gather'd.
  all.push_back({"col_all_gather", "activations", "always",
                 std::string(kW1) +
                     R"(func.func @main(%x: tensor<3x4xf64> {shardlin.replicated}, %w: !w1, %b: tensor<5xf64> {shardlin.replicated}) -> tensor<3x5xf64> {
  %y = shardlin.linear %x, %w, %b layouts replicated -> replicated : (tensor<3x4xf64>, !w1, tensor<5xf64>) -> tensor<3x5xf64>
  %s = math.tanh %y : tensor<3x5xf64>
  return %s : tensor<3x5xf64>
})",
                 3, {x, w1, b1}, {3, 5}});
  // replicated -> replicated, the weight gathered whole.
  all.push_back({"gather_weight", "gather-weight", "always",
                 std::string(kW2) +
                     R"(func.func @main(%x: tensor<3x5xf64> {shardlin.replicated}, %w: !w2, %b: tensor<4xf64> {shardlin.replicated}) -> tensor<3x4xf64> {
  %y = shardlin.linear %x, %w, %b layouts replicated -> replicated : (tensor<3x5xf64>, !w2, tensor<4xf64>) -> tensor<3x4xf64>
  return %y : tensor<3x4xf64>
})",
                 3, {{{3, 5}}, w2, b2}, {3, 4}});
  // The norms before an MLP: x replicated, and x split by rows (rank 1
  // holds none). RMSNorm's "bias" is a second weight (x * r * g * beta).
  const RepArg g{{4}}, beta{{4}};
  for (bool layer : {false, true}) {
    const std::string norm = layer ? "layernorm" : "rmsnorm";
    all.push_back({norm + "_mlp_replicated",
                   "activations",
                   "always",
                   normMlp(layer, "3", " layouts replicated -> features",
                           " layouts features -> replicated"),
                   3,
                   {x, g, beta, w1, b1, w2, b2},
                   {3, 4}});
    // Saved: the native path does not split the run-time rows of a plain
    // rank-local x by the chunk rule, which recomputing the gathered rows
    // asks of it (the corpus's imported modules run recomputed natively).
    const RepArg rows{{5, 4}, 0, {0, 2, 2, 5}};
    all.push_back({norm + "_mlp_rows",
                   "activations",
                   "never",
                   normMlp(layer, "?", "", ""),
                   3,
                   {rows, g, beta, w1, b1, w2, b2},
                   {5, 4},
                   {0, 2, 2, 5}});
  }
  return all;
}

int64_t count(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

RankTensor tensorOf(const std::vector<double> &v, std::vector<int64_t> shape) {
  RankTensor t;
  t.shape = std::move(shape);
  t.bytes.resize(v.size() * sizeof(double));
  if (!v.empty()) // An empty chunk: no bytes (memcpy takes no null pointer).
    std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
  return t;
}

/// Element e of a 2-D or 1-D global `a`: its rank and its index in that
/// rank's chunk (-1 where `a` is whole: every rank, at e).
std::pair<int, int64_t> ownerOf(const RepArg &a, int64_t e) {
  if (a.dim < 0)
    return {-1, e};
  const int64_t cols = a.shape.size() == 2 ? a.shape[1] : 1;
  const int64_t row = e / cols, col = e % cols;
  const int64_t at = a.dim == 0 ? row : col;
  for (size_t r = 0; r + 1 < a.bounds.size(); ++r) {
    const int64_t lo = a.bounds[r], hi = a.bounds[r + 1];
    if (at < lo || at >= hi)
      continue;
    return {int(r), a.dim == 0 ? (row - lo) * cols + col
                               : row * (hi - lo) + col - lo};
  }
  return {-2, 0};
}

/// Rank r's value of argument `a` from its global values.
RankTensor chunkOf(const RepArg &a, const std::vector<double> &g, int r) {
  if (a.dim < 0)
    return tensorOf(g, a.shape);
  std::vector<int64_t> shape = a.shape;
  shape[a.dim] = a.bounds[r + 1] - a.bounds[r];
  std::vector<double> local(count(shape));
  for (int64_t e = 0; e < count(a.shape); ++e)
    if (auto [owner, at] = ownerOf(a, e); owner == r)
      local[at] = g[e];
  return tensorOf(local, shape);
}

struct Runner {
  const RepCase &c;
  const rt::Program &forward;
  std::vector<std::vector<double>> args;
  std::vector<double> dy;

  std::vector<RankTensor> rankArgs(int r) const {
    std::vector<RankTensor> out;
    for (size_t i = 0; i < c.args.size(); ++i)
      out.push_back(chunkOf(c.args[i], args[i], r));
    return out;
  }
  /// L = <dy, y>, y the replicated result (rank 0's; every rank's equal).
  double loss() const {
    std::vector<std::vector<RankTensor>> y;
    rt::RunOptions options;
    options.worldSize = c.world;
    options.blasThreads = 1;
    rt::Status s = runWithTensors(
        forward, options, [&](int r) { return rankArgs(r); }, y);
    EXPECT_TRUE(s) << s.message();
    if (!s)
      return 0;
    double l = 0;
    if (!c.resultBounds.empty()) {
      // Rank r's rows of y against its rows of dy.
      const RepArg split{c.resultShape, 0, c.resultBounds};
      for (int r = 0; r < c.world; ++r) {
        const RankTensor dyr = chunkOf(split, dy, r);
        const double *yr =
            reinterpret_cast<const double *>(y[r].at(0).bytes.data());
        const double *d = reinterpret_cast<const double *>(dyr.bytes.data());
        for (size_t e = 0; e < dyr.bytes.size() / sizeof(double); ++e)
          l += d[e] * yr[e];
      }
      return l;
    }
    const double *y0 =
        reinterpret_cast<const double *>(y[0].at(0).bytes.data());
    for (size_t e = 0; e < dy.size(); ++e)
      l += dy[e] * y0[e];
    for (int r = 1; r < c.world; ++r)
      EXPECT_EQ(y[r].at(0).bytes, y[0].at(0).bytes) << "rank " << r;
    return l;
  }
};

/// Every rank's gradients (@main_backward's results) of `c` with `data`.
rt::Status runReplicatedBackward(const RepCase &c, const Runner &data,
                                 const BackwardRun &run,
                                 std::vector<std::vector<RankTensor>> &grads) {
  rt::RunOptions options;
  options.worldSize = c.world;
  options.blasThreads = 1;
  std::vector<std::vector<RankTensor>> saved;
  if (run.numSaved > 0) {
    rt::Status s = runWithTensors(
        *run.saving, options, [&](int r) { return data.rankArgs(r); }, saved,
        run.savingExecutor);
    if (!s)
      return s;
  }
  return runWithTensors(
      *run.backward, options,
      [&](int r) {
        std::vector<RankTensor> a = data.rankArgs(r);
        a.push_back(
            c.resultBounds.empty()
                ? tensorOf(data.dy, c.resultShape)
                : chunkOf({c.resultShape, 0, c.resultBounds}, data.dy, r));
        if (run.numSaved > 0)
          a.insert(a.end(), saved[r].begin() + 1, saved[r].end());
        return a;
      },
      grads, run.backwardExecutor);
}

enum class Path { Threads, Jit };

class GradReplicated
    : public ::testing::TestWithParam<std::tuple<RepCase, Path>> {};

TEST_P(GradReplicated, EveryRanksGradientMatchesFiniteDifferences) {
  const auto &[c, path] = GetParam();
  BackwardPrograms programs;
  rt::Status s = compileBackwardMlir(c.mlir, c.strategy, /*fuse=*/true,
                                     c.recompute, programs);
  ASSERT_TRUE(s) << s.message();
  JitBackward jit;
  BackwardRun run = backwardRunOf(programs);
  if (path == Path::Jit) {
    s = jitBackwardMlir(c.mlir, c.strategy, /*fuse=*/true, c.recompute, jit);
    ASSERT_TRUE(s) << s.message();
    run = jit.run();
  }
  ASSERT_EQ(run.numSaved > 0, c.recompute == "never");
  // Random values in +-[0.25, 1) (never zero), the same on every run.
  uint64_t state = 0x9e3779b97f4a7c15ull;
  auto random = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double u = double(state >> 11) * 0x1.0p-53;
    return (u < 0.5 ? -1.0 : 1.0) * (0.25 + 1.5 * std::fabs(u - 0.5));
  };
  Runner data{c, programs.forward, {}, {}};
  for (const RepArg &a : c.args) {
    data.args.emplace_back(count(a.shape));
    std::generate(data.args.back().begin(), data.args.back().end(), random);
  }
  data.dy.resize(count(c.resultShape));
  std::generate(data.dy.begin(), data.dy.end(), random);

  std::vector<std::vector<RankTensor>> grads;
  s = runReplicatedBackward(c, data, run, grads);
  ASSERT_TRUE(s) << s.message();
  for (size_t i = 0; i < c.args.size(); ++i) {
    const RepArg &a = c.args[i];
    std::vector<double> fd(count(a.shape));
    for (size_t e = 0; e < fd.size(); ++e) {
      const double v = data.args[i][e];
      data.args[i][e] = v + kStep;
      const double up = data.loss();
      data.args[i][e] = v - kStep;
      const double down = data.loss();
      data.args[i][e] = v;
      fd[e] = (up - down) / (2 * kStep);
    }
    double scale = 0;
    for (double d : fd)
      scale = std::max(scale, std::fabs(d));
    ASSERT_GT(scale, 0.0) << "argument " << i << " has no gradient to check";
    for (int r = 0; r < c.world; ++r) {
      const RankTensor &g = grads[r].at(i);
      ASSERT_EQ(g.shape, chunkOf(a, data.args[i], r).shape)
          << "argument " << i << " on rank " << r;
      const double *got = reinterpret_cast<const double *>(g.bytes.data());
      for (size_t e = 0; e < fd.size(); ++e) {
        auto [owner, at] = ownerOf(a, int64_t(e));
        if (owner != -1 && owner != r)
          continue;
        EXPECT_LE(std::fabs(got[at] - fd[e]), kBound * scale)
            << "argument " << i << " element " << e << " on rank " << r
            << ": backward " << got[at] << ", finite difference " << fd[e];
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, GradReplicated,
    ::testing::Combine(::testing::ValuesIn(replicatedCases()),
                       ::testing::Values(Path::Threads, Path::Jit)),
    [](const ::testing::TestParamInfo<std::tuple<RepCase, Path>> &info) {
      return std::get<0>(info.param).name +
             (std::get<1>(info.param) == Path::Jit ? "_jit" : "_threads");
    });

} // namespace
