//===- BackwardNumericTest.cpp - Backward functions against finite differences
//===//
//
// Each case is a function @f run through --shardlin-generate-backward (and
// --lower-sharded-linear) with some options; then, on W simulated ranks in
// float64 (SpmdInterpreter.h):
//   - the lowered @f gives every rank the result of the high-level @f (the
//     interpreter's shardlin.linear is the definition y = x A^T + b);
//   - @f_forward_saving, when there is one, gives those results too, and the
//     values @f_backward takes;
//   - @f_backward's gradients equal central finite differences of the loss
//     L = sum over ranks r of <dy_r, y_r> (random dy_r), evaluated with the
//     high-level @f: every element of every rank's plain arguments, of the
//     sharded weights (assembled from every rank's chunk gradient) and of the
//     replicated biases (the same full gradient on every rank).
// Inputs are random, never zeros; each rank's plain inputs differ.
//
//===----------------------------------------------------------------------===//

#include "SpmdInterpreter.h"

#include "shardlin/Analysis/CostModel.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinDialect.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"
#include "shardlin/Dialect/Shardlin/Backward/Passes.h"
#include "shardlin/Dialect/Shardlin/Transforms/ElementwiseChains.h"
#include "shardlin/Dialect/Shardlin/Transforms/Passes.h"
#include "shardlin/runtime/base/ChunkLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

using namespace mlir;
using namespace mlir::shardlin;
using ::shardlin::testing::Tensor;

namespace {

struct Case {
  const char *name;
  /// One public function @f.
  std::string source;
  int64_t worldSize;
  /// The arguments every rank holds alike (biases).
  std::vector<unsigned> replicated;
  /// Per rank, the size of an argument's first dynamic dim (its other
  /// dynamic dims are 2).
  std::vector<int64_t> rows = {};
};

struct Options {
  const char *name;
  /// Of shardlin-generate-backward, also given to lower-sharded-linear
  /// (without `recompute`).
  const char *backward;
  const char *lowering;
  /// If set, @f is lowered with these options first: the pass then
  /// differentiates lowered IR (biases found by bias_add, gemm and
  /// local_chunk).
  const char *prelower = nullptr;
};

std::vector<std::vector<Tensor>> randomArgs(func::FuncOp f, const Case &c,
                                            std::mt19937 &rng) {
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  auto fill = [&](std::vector<int64_t> shape) {
    Tensor t = Tensor::zeros(std::move(shape));
    for (double &v : t.data) {
      v = dist(rng);
      if (std::fabs(v) < 0.05) // never (near) zero
        v += v < 0 ? -0.1 : 0.1;
    }
    return t;
  };
  std::vector<std::vector<Tensor>> args;
  for (auto [i, type] : llvm::enumerate(f.getArgumentTypes())) {
    std::vector<Tensor> perRank;
    if (auto sharded = dyn_cast<ShardedType>(type)) {
      Tensor g = fill({sharded.getShape().begin(), sharded.getShape().end()});
      perRank.assign(c.worldSize, g);
    } else {
      auto t = cast<RankedTensorType>(type);
      auto shapeOn = [&](int64_t r) {
        std::vector<int64_t> shape;
        bool first = true;
        for (int64_t d : t.getShape()) {
          if (!ShapedType::isDynamic(d)) {
            shape.push_back(d);
            continue;
          }
          shape.push_back(first ? c.rows.at(r) : 2);
          first = false;
        }
        return shape;
      };
      if (llvm::is_contained(c.replicated, i))
        perRank.assign(c.worldSize, fill(shapeOn(0)));
      else
        for (int64_t r = 0; r < c.worldSize; ++r)
          perRank.push_back(fill(shapeOn(r)));
    }
    args.push_back(std::move(perRank));
  }
  return args;
}

void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }
void PrintTo(const Options &o, std::ostream *os) { *os << o.backward; }

/// A parameterized fixture with the dialects the tests parse and the passes
/// their pipelines name.
template <typename Param>
class WithBackwardPasses : public ::testing::TestWithParam<Param> {
protected:
  void SetUp() override {
    registry.insert<ShardlinDialect, func::FuncDialect>();
    registerElementwiseDialects(registry);
    static bool registered = [] {
      registerShardlinPasses();
      registerShardlinBackwardPasses();
      return true;
    }();
    (void)registered;
  }
  DialectRegistry registry;
};

class BackwardNumeric : public WithBackwardPasses<std::tuple<Case, Options>> {};

/// The loss sum_r <dy_r, y_r> of the high-level function.
double loss(func::FuncOp f, int64_t w,
            const std::vector<std::vector<Tensor>> &args,
            const std::vector<std::vector<Tensor>> &dys) {
  std::vector<std::vector<Tensor>> ys;
  std::string error;
  if (!::shardlin::testing::runSpmd(f, w, args, ys, error))
    return std::nan("");
  double l = 0.0;
  for (size_t i = 0; i < ys.size(); ++i)
    for (int64_t r = 0; r < w; ++r)
      for (size_t e = 0; e < ys[i][r].data.size(); ++e)
        l += dys[i][r].data[e] * ys[i][r].data[e];
  return l;
}

void expectClose(const std::vector<double> &got,
                 const std::vector<double> &want, const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t e = 0; e < got.size(); ++e)
    EXPECT_NEAR(got[e], want[e], 1e-6 * (1.0 + std::fabs(want[e])))
        << what << " element " << e;
}

/// Fails the test unless every op of `f` is one the runtime runs (the ops
/// of its op table, elementwise chains it accepts, which ElementwiseChains
/// decides as the translator does) or one of the three that backward
/// functions add and the runtime is yet to run (sum_rows, all_reduce,
/// from_local; docs/training.md), or a size computation or fpowi exponent
/// (isSizeComputation). An expand_shape's dynamic sizes are
/// the dims of one tensor at the same positions, as the translator needs.
void expectRunnable(func::FuncOp f) {
  ElementwiseChains chains;
  EXPECT_TRUE(succeeded(chains.analyze(f.getBody().front())))
      << "@" << f.getSymName().str();
  f.walk([&](Operation *op) {
    if (op->getParentOp() != f.getOperation() || chains.contains(op))
      return;
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
      Value like;
      for (auto [i, size] : llvm::enumerate(expand.getMixedOutputShape()))
        if (auto v = dyn_cast<Value>(size)) {
          auto dim = v.getDefiningOp<tensor::DimOp>();
          ASSERT_TRUE(dim && dim.getConstantIndex() == static_cast<int64_t>(i))
              << "an expand_shape size that is not tensor.dim %t, " << i;
          EXPECT_TRUE(!like || like == dim.getSource());
          like = dim.getSource();
        }
      return;
    }
    EXPECT_TRUE(
        (isa<LocalShardOp, LocalChunkOp, AllGatherOp, AllToAllOp,
             ReduceScatterOp, GemmOp, BiasAddOp, ConvertOp,
             tensor::CollapseShapeOp, tensor::DimOp, func::ReturnOp, SumRowsOp,
             AllReduceOp, FromLocalOp>(op)) ||
        isSizeComputation(*op))
        << "@" << f.getSymName().str() << " holds '"
        << op->getName().getStringRef().str() << "'";
  });
}

TEST_P(BackwardNumeric, GradientsMatchFiniteDifferences) {
  const auto &[c, options] = GetParam();
  const int64_t w = c.worldSize;
  MLIRContext ctx(registry);
  OwningOpRef<ModuleOp> original = parseSourceString<ModuleOp>(c.source, &ctx);
  ASSERT_TRUE(original);
  if (options.prelower) {
    PassManager pre(&ctx);
    ASSERT_TRUE(succeeded(parsePassPipeline(
        std::string("func.func(lower-sharded-linear{") + options.prelower +
            "})",
        pre)));
    ASSERT_TRUE(succeeded(pre.run(*original)));
  }
  OwningOpRef<ModuleOp> module = original->clone();
  PassManager pm(&ctx);
  std::string pipeline = std::string("shardlin-generate-backward{") +
                         options.backward +
                         "},func.func(lower-sharded-linear{" +
                         options.lowering + "})";
  ASSERT_TRUE(succeeded(parsePassPipeline(pipeline, pm))) << pipeline;
  ASSERT_TRUE(succeeded(pm.run(*module))) << pipeline;

  auto f = original->lookupSymbol<func::FuncOp>("f");
  auto lowered = module->lookupSymbol<func::FuncOp>("f");
  auto backward = module->lookupSymbol<func::FuncOp>("f_backward");
  auto saving = module->lookupSymbol<func::FuncOp>("f_forward_saving");
  ASSERT_TRUE(f) << "no @f";
  ASSERT_TRUE(lowered) << "no lowered @f";
  ASSERT_TRUE(backward) << "no @f_backward in\n"
                        << [&] {
                             std::string text;
                             llvm::raw_string_ostream os(text);
                             module->print(os);
                             return text;
                           }();
  lowered.walk([&](LinearOp) { FAIL() << "@f is not lowered"; });
  expectRunnable(backward);
  if (saving)
    expectRunnable(saving);

  std::mt19937 rng(1234);
  std::vector<std::vector<Tensor>> args = randomArgs(f, c, rng);
  std::vector<std::vector<Tensor>> ys, lys;
  std::string error;
  ASSERT_TRUE(::shardlin::testing::runSpmd(f, w, args, ys, error)) << error;
  ASSERT_TRUE(::shardlin::testing::runSpmd(lowered, w, args, lys, error))
      << error;
  for (size_t i = 0; i < ys.size(); ++i)
    for (int64_t r = 0; r < w; ++r)
      expectClose(lys[i][r].data, ys[i][r].data,
                  "lowered result " + std::to_string(i) + " on rank " +
                      std::to_string(r));

  std::vector<std::vector<Tensor>> dys;
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (auto &y : ys) {
    std::vector<Tensor> perRank;
    for (const Tensor &t : y) {
      Tensor d = Tensor::zeros(t.shape);
      for (double &v : d.data)
        v = dist(rng);
      perRank.push_back(d);
    }
    dys.push_back(perRank);
  }

  std::vector<std::vector<Tensor>> backArgs = args;
  llvm::append_range(backArgs, dys);
  const unsigned numSaved = backward.getNumArguments() - backArgs.size();
  EXPECT_EQ(numSaved == 0, !saving) << "saved values without a saving forward";
  if (saving) {
    std::vector<std::vector<Tensor>> fs;
    ASSERT_TRUE(::shardlin::testing::runSpmd(saving, w, args, fs, error))
        << error;
    ASSERT_EQ(fs.size(), ys.size() + numSaved);
    for (size_t i = 0; i < ys.size(); ++i)
      for (int64_t r = 0; r < w; ++r)
        expectClose(fs[i][r].data, ys[i][r].data, "@f_forward_saving result");
    backArgs.insert(backArgs.end(), fs.begin() + ys.size(), fs.end());
  }
  std::vector<std::vector<Tensor>> grads;
  ASSERT_TRUE(::shardlin::testing::runSpmd(backward, w, backArgs, grads, error))
      << error;
  ASSERT_EQ(grads.size(), args.size());

  const double eps = 1e-6;
  for (auto [index, type] : llvm::enumerate(f.getArgumentTypes())) {
    const size_t i = index; // captured by the lambdas below
    auto sharded = dyn_cast<ShardedType>(type);
    const bool together = sharded || llvm::is_contained(c.replicated, i);
    // The gradient every rank should hold, or each rank's own.
    std::vector<std::vector<double>> want(w);
    for (int64_t r = 0; r < w; ++r) {
      if (together && r > 0) {
        want[r] = want[0];
        continue;
      }
      const Tensor &base = args[i][r];
      for (size_t e = 0; e < base.data.size(); ++e) {
        auto perturbed = [&](double delta) {
          std::vector<std::vector<Tensor>> a = args;
          for (int64_t s = 0; s < w; ++s)
            if (together || s == r)
              a[i][s].data[e] += delta;
          return loss(f, w, a, dys);
        };
        want[r].push_back((perturbed(eps) - perturbed(-eps)) / (2 * eps));
      }
    }
    for (int64_t r = 0; r < w; ++r) {
      const std::string what = std::string(c.name) + " (" + options.name +
                               "): gradient of argument " + std::to_string(i) +
                               " on rank " + std::to_string(r);
      if (!sharded) {
        expectClose(grads[i][r].data, want[r], what);
        continue;
      }
      // Rank r holds the gradient of its own chunk of the weight.
      const int64_t d = sharded.getSharding().getDim();
      std::vector<int64_t> placements(
          sharded.getSharding().getPlacements().begin(),
          sharded.getSharding().getPlacements().end());
      ::shardlin::rt::Range range =
          ::shardlin::rt::ChunkLayout(sharded.getShape()[d], placements)
              .ofRank(r);
      Tensor all = args[i][r];
      all.data = want[r];
      expectClose(
          grads[i][r].data,
          [&] {
            std::vector<int64_t> shape = all.shape;
            std::vector<double> chunk;
            int64_t outer = 1, inner = 1;
            for (int64_t k = 0; k < d; ++k)
              outer *= shape[k];
            for (size_t k = d + 1; k < shape.size(); ++k)
              inner *= shape[k];
            for (int64_t o = 0; o < outer; ++o)
              for (int64_t k = 0; k < range.size; ++k)
                for (int64_t in = 0; in < inner; ++in)
                  chunk.push_back(
                      all.data[(o * shape[d] + range.offset + k) * inner + in]);
            return chunk;
          }(),
          what + " (its chunk)");
    }
  }
}

//===----------------------------------------------------------------------===//
// The cases
//===----------------------------------------------------------------------===//

/// @f: one linear with a bias, y = x A^T + b, x of `batch` x K rows, A (N x
/// K) split along `dim` over the ranks in `placements`, elements `elt`.
std::string linearSource(const std::string &batch, int64_t n, int64_t k,
                         int dim, const std::string &placements,
                         const std::string &elt) {
  const std::string x = "tensor<" + batch + "x" + std::to_string(k) + "x" +
                        elt + ">";
  const std::string w = "!shardlin.sharded<tensor<" + std::to_string(n) +
                        "x" + std::to_string(k) + "x" + elt +
                        ">, #shardlin.chunk<dim = " + std::to_string(dim) +
                        ", placements = [" + placements + "]>>";
  const std::string b = "tensor<" + std::to_string(n) + "x" + elt + ">";
  const std::string y = "tensor<" + batch + "x" + std::to_string(n) + "x" +
                        elt + ">";
  return "func.func @f(%x: " + x + ", %w: " + w + ", %b: " + b + ") -> " + y +
         " {\n  %y = shardlin.linear %x, %w, %b : (" + x + ", " + w + ", " +
         b + ") -> " + y + "\n  return %y : " + y + "\n}\n";
}

const Case kCases[] = {
    // Col-wise, N = 7 over 3 ranks (3, 3, 1), permuted placements.
    {"col_wise",
     linearSource("4", 7, 5, 0, "2, 0, 1", "f64"),
     3,
     {2}},
    // Row-wise, K = 5 over 4 ranks (2, 2, 1, 0: an empty chunk), a
    // multi-hop permutation, a 3-D input.
    {"row_wise_empty_chunk",
     linearSource("2x3", 6, 5, 1, "3, 1, 0, 2", "f64"),
     4,
     {2}},
    // A 1-D input (one row), no bias.
    {"one_d",
     R"mlir(func.func @f(%x: tensor<5xf64>, %w: !shardlin.sharded<tensor<4x5xf64>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<4xf64> {
  %y = shardlin.linear %x, %w : (tensor<5xf64>, !shardlin.sharded<tensor<4x5xf64>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<4xf64>
  return %y : tensor<4xf64>
}
)mlir",
     2,
     {}},
    // An MLP with GELU (tanh form, tensor ops), F = 7 over 3 ranks, and a
    // residual add.
    {
        "mlp_gelu_tanh",
        R"mlir(func.func @f(%x: tensor<3x4xf64>, %w1: !shardlin.sharded<tensor<7x4xf64>, #shardlin.chunk<dim = 0, placements = [1, 2, 0]>>, %b1: tensor<7xf64>, %w2: !shardlin.sharded<tensor<4x7xf64>, #shardlin.chunk<dim = 1, placements = [1, 2, 0]>>, %b2: tensor<4xf64>) -> tensor<3x4xf64> {
  %h = shardlin.linear %x, %w1, %b1 : (tensor<3x4xf64>, !shardlin.sharded<tensor<7x4xf64>, #shardlin.chunk<dim = 0, placements = [1, 2, 0]>>, tensor<7xf64>) -> tensor<3x7xf64>
  %half = arith.constant dense<0.5> : tensor<3x7xf64>
  %one = arith.constant dense<1.0> : tensor<3x7xf64>
  %c = arith.constant dense<0.7978845608028654> : tensor<3x7xf64>
  %k = arith.constant dense<0.044715> : tensor<3x7xf64>
  %h2 = arith.mulf %h, %h : tensor<3x7xf64>
  %h3 = arith.mulf %h2, %h : tensor<3x7xf64>
  %t0 = arith.mulf %k, %h3 : tensor<3x7xf64>
  %t1 = arith.addf %h, %t0 : tensor<3x7xf64>
  %t2 = arith.mulf %c, %t1 : tensor<3x7xf64>
  %t3 = math.tanh %t2 : tensor<3x7xf64>
  %t4 = arith.addf %one, %t3 : tensor<3x7xf64>
  %t5 = arith.mulf %half, %h : tensor<3x7xf64>
  %a = arith.mulf %t5, %t4 : tensor<3x7xf64>
  %y = shardlin.linear %a, %w2, %b2 : (tensor<3x7xf64>, !shardlin.sharded<tensor<4x7xf64>, #shardlin.chunk<dim = 1, placements = [1, 2, 0]>>, tensor<4xf64>) -> tensor<3x4xf64>
  %r = arith.addf %y, %x : tensor<3x4xf64>
  return %r : tensor<3x4xf64>
}
)mlir",
        3,
        {2, 4}},
    // GELU-tanh as torch-mlir writes it (x^3 as math.fpowi of a captured
    // i64), then x^-2 as fpowi of a splat i32, F = 5 over 2 ranks.
    {
        "mlp_fpowi",
        R"mlir(#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @f(%x: tensor<3x4xf64>, %w1: !shardlin.sharded<tensor<5x4xf64>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, %b1: tensor<5xf64>, %w2: !shardlin.sharded<tensor<4x5xf64>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<3x4xf64> {
  %c3 = arith.constant 3 : i64
  %k = arith.constant 0.044715 : f64
  %c = arith.constant 0.7978845608028654 : f64
  %one = arith.constant 1.0 : f64
  %half = arith.constant 0.5 : f64
  %h = shardlin.linear %x, %w1, %b1 : (tensor<3x4xf64>, !shardlin.sharded<tensor<5x4xf64>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, tensor<5xf64>) -> tensor<3x5xf64>
  %e = tensor.empty() : tensor<3x5xf64>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%h : tensor<3x5xf64>) outs(%e : tensor<3x5xf64>) {
  ^bb0(%in: f64, %out: f64):
    %0 = math.fpowi %in, %c3 : f64, i64
    %1 = arith.mulf %0, %k : f64
    %2 = arith.addf %in, %1 : f64
    %3 = arith.mulf %2, %c : f64
    %4 = math.tanh %3 : f64
    %5 = arith.addf %4, %one : f64
    %6 = arith.mulf %5, %half : f64
    %7 = arith.mulf %in, %6 : f64
    linalg.yield %7 : f64
  } -> tensor<3x5xf64>
  %y = shardlin.linear %g, %w2 : (tensor<3x5xf64>, !shardlin.sharded<tensor<4x5xf64>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<3x4xf64>
  %m2 = arith.constant dense<-2> : tensor<3x4xi32>
  %r = math.fpowi %y, %m2 : tensor<3x4xf64>, tensor<3x4xi32>
  return %r : tensor<3x4xf64>
}
)mlir",
        2,
        {2}},
    // SwiGLU written as one linalg.generic (silu(gate) * up), F = 5 over 2
    // ranks, a 3-D input, the down projection's bias only.
    {
        "swiglu_generic",
        R"mlir(#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @f(%x: tensor<2x2x3xf64>, %wg: !shardlin.sharded<tensor<5x3xf64>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, %wu: !shardlin.sharded<tensor<5x3xf64>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, %wd: !shardlin.sharded<tensor<3x5xf64>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, %bd: tensor<3xf64>) -> tensor<2x2x3xf64> {
  %g = shardlin.linear %x, %wg : (tensor<2x2x3xf64>, !shardlin.sharded<tensor<5x3xf64>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<2x2x5xf64>
  %u = shardlin.linear %x, %wu : (tensor<2x2x3xf64>, !shardlin.sharded<tensor<5x3xf64>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<2x2x5xf64>
  %e = tensor.empty() : tensor<2x2x5xf64>
  %a = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g, %u : tensor<2x2x5xf64>, tensor<2x2x5xf64>) outs(%e : tensor<2x2x5xf64>) {
  ^bb0(%gi: f64, %ui: f64, %o: f64):
    %one = arith.constant 1.0 : f64
    %n = arith.negf %gi : f64
    %ex = math.exp %n : f64
    %d = arith.addf %one, %ex : f64
    %s = arith.divf %gi, %d : f64
    %p = arith.mulf %s, %ui : f64
    linalg.yield %p : f64
  } -> tensor<2x2x5xf64>
  %y = shardlin.linear %a, %wd, %bd : (tensor<2x2x5xf64>, !shardlin.sharded<tensor<3x5xf64>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, tensor<3xf64>) -> tensor<2x2x3xf64>
  return %y : tensor<2x2x3xf64>
}
)mlir",
        2,
        {4}},
    // Dynamic batch: 2, 0 and 3 rows on the three ranks; a ReLU MLP
    // (maximumf) with a residual.
    {
        "dynamic_relu_mlp",
        R"mlir(func.func @f(%x: tensor<?x4xf64>, %w1: !shardlin.sharded<tensor<5x4xf64>, #shardlin.chunk<dim = 0, placements = [0, 2, 1]>>, %b1: tensor<5xf64>, %w2: !shardlin.sharded<tensor<4x5xf64>, #shardlin.chunk<dim = 1, placements = [0, 2, 1]>>, %b2: tensor<4xf64>) -> tensor<?x4xf64> {
  %h = shardlin.linear %x, %w1, %b1 : (tensor<?x4xf64>, !shardlin.sharded<tensor<5x4xf64>, #shardlin.chunk<dim = 0, placements = [0, 2, 1]>>, tensor<5xf64>) -> tensor<?x5xf64>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %h, %c0 : tensor<?x5xf64>
  %e = tensor.empty(%n) : tensor<?x5xf64>
  %zero = arith.constant 0.0 : f64
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<?x5xf64>) -> tensor<?x5xf64>
  %a = arith.maximumf %h, %z : tensor<?x5xf64>
  %y = shardlin.linear %a, %w2, %b2 : (tensor<?x5xf64>, !shardlin.sharded<tensor<4x5xf64>, #shardlin.chunk<dim = 1, placements = [0, 2, 1]>>, tensor<4xf64>) -> tensor<?x4xf64>
  %r = arith.addf %y, %x : tensor<?x4xf64>
  return %r : tensor<?x4xf64>
}
)mlir",
        3,
        {2, 4},
        {2, 0, 3}},
    // Row-wise with an empty chunk on rows of run-time sizes (1, 3, 0, 2
    // rows on the four ranks, batch x 2), the result used twice.
    {"dynamic_row_wise",
     R"mlir(func.func @f(%x: tensor<?x2x5xf64>, %w: !shardlin.sharded<tensor<3x5xf64>, #shardlin.chunk<dim = 1, placements = [2, 3, 1, 0]>>, %b: tensor<3xf64>) -> tensor<?x2x3xf64> {
  %y = shardlin.linear %x, %w, %b : (tensor<?x2x5xf64>, !shardlin.sharded<tensor<3x5xf64>, #shardlin.chunk<dim = 1, placements = [2, 3, 1, 0]>>, tensor<3xf64>) -> tensor<?x2x3xf64>
  %s = arith.mulf %y, %y : tensor<?x2x3xf64>
  return %s : tensor<?x2x3xf64>
}
)mlir",
     4,
     {2},
     {1, 3, 0, 2}},
    // W = 1 with GELU (erf form) on a 2-D batch of dynamic dims.
    {"single_rank_gelu_erf",
     R"mlir(func.func @f(%x: tensor<?x?x3xf64>, %w: !shardlin.sharded<tensor<4x3xf64>, #shardlin.chunk<dim = 0, placements = [0]>>, %b: tensor<4xf64>) -> tensor<?x?x4xf64> {
  %h = shardlin.linear %x, %w, %b : (tensor<?x?x3xf64>, !shardlin.sharded<tensor<4x3xf64>, #shardlin.chunk<dim = 0, placements = [0]>>, tensor<4xf64>) -> tensor<?x?x4xf64>
  %a = linalg.elementwise kind=#linalg.elementwise_kind<erf> ins(%h : tensor<?x?x4xf64>) outs(%h : tensor<?x?x4xf64>) -> tensor<?x?x4xf64>
  %p = arith.mulf %a, %h : tensor<?x?x4xf64>
  return %p : tensor<?x?x4xf64>
}
)mlir",
     1,
     {2},
     {3}},
    // The other elementwise ops, a rank-local vector broadcast along the
    // rows (not fusable), and a bias computed from two arguments.
    {"elementwise_zoo",
     R"mlir(#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @f(%x: tensor<3x4xf64>, %v: tensor<6xf64>, %w1: !shardlin.sharded<tensor<6x4xf64>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, %b1: tensor<6xf64>, %s: tensor<6xf64>, %w2: !shardlin.sharded<tensor<2x6xf64>, #shardlin.chunk<dim = 1, placements = [0, 1]>>) -> (tensor<3x2xf64>, tensor<3x6xf64>) {
  %bb = arith.mulf %b1, %s : tensor<6xf64>
  %h = shardlin.linear %x, %w1, %bb : (tensor<3x4xf64>, !shardlin.sharded<tensor<6x4xf64>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, tensor<6xf64>) -> tensor<3x6xf64>
  %e = tensor.empty() : tensor<3x6xf64>
  %m = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%h, %v : tensor<3x6xf64>, tensor<6xf64>) outs(%e : tensor<3x6xf64>) {
  ^bb0(%hi: f64, %vi: f64, %o: f64):
    %a = math.absf %hi : f64
    %l = math.log %a : f64
    %q = math.sqrt %a : f64
    %rq = math.rsqrt %a : f64
    %ex = math.exp %vi : f64
    %t1 = arith.subf %l, %q : f64
    %t2 = arith.mulf %t1, %rq : f64
    %t3 = arith.divf %t2, %ex : f64
    %mn = arith.minimumf %t3, %vi : f64
    %mx = arith.maxnumf %mn, %hi : f64
    %c = arith.cmpf olt, %hi, %vi : f64
    %sel = arith.select %c, %mx, %t3 : f64
    %ng = arith.negf %sel : f64
    linalg.yield %ng : f64
  } -> tensor<3x6xf64>
  %y = shardlin.linear %m, %w2 : (tensor<3x6xf64>, !shardlin.sharded<tensor<2x6xf64>, #shardlin.chunk<dim = 1, placements = [0, 1]>>) -> tensor<3x2xf64>
  return %y, %m : tensor<3x2xf64>, tensor<3x6xf64>
}
)mlir",
     2,
     {3, 4}},
    // Two blocks and residuals on a 1-D input, the first weight used twice
    // (tied), f32 and f16 interpreted exactly (the program's structure:
    // f32 partial sums, converts).
    {"two_blocks_tied_f16",
     R"mlir(func.func @f(%x: tensor<6xf16>, %w1: !shardlin.sharded<tensor<5x6xf16>, #shardlin.chunk<dim = 0, placements = [3, 1, 0, 2]>>, %w2: !shardlin.sharded<tensor<6x5xf16>, #shardlin.chunk<dim = 1, placements = [3, 1, 0, 2]>>, %b: tensor<6xf16>) -> tensor<6xf16> {
  %h1 = shardlin.linear %x, %w1 : (tensor<6xf16>, !shardlin.sharded<tensor<5x6xf16>, #shardlin.chunk<dim = 0, placements = [3, 1, 0, 2]>>) -> tensor<5xf16>
  %a1 = math.tanh %h1 : tensor<5xf16>
  %y1 = shardlin.linear %a1, %w2, %b : (tensor<5xf16>, !shardlin.sharded<tensor<6x5xf16>, #shardlin.chunk<dim = 1, placements = [3, 1, 0, 2]>>, tensor<6xf16>) -> tensor<6xf16>
  %r1 = arith.addf %y1, %x : tensor<6xf16>
  %h2 = shardlin.linear %r1, %w1 : (tensor<6xf16>, !shardlin.sharded<tensor<5x6xf16>, #shardlin.chunk<dim = 0, placements = [3, 1, 0, 2]>>) -> tensor<5xf16>
  %a2 = math.erf %h2 : tensor<5xf16>
  %y2 = shardlin.linear %a2, %w2 : (tensor<5xf16>, !shardlin.sharded<tensor<6x5xf16>, #shardlin.chunk<dim = 1, placements = [3, 1, 0, 2]>>) -> tensor<6xf16>
  %r2 = arith.addf %y2, %r1 : tensor<6xf16>
  return %r2 : tensor<6xf16>
}
)mlir",
     4,
     {3}},
    // bf16, row-wise with a bias (f32 partial sums and bias in f32).
    {"row_wise_bf16",
     linearSource("3", 2, 7, 1, "1, 2, 0", "bf16"),
     3,
     {2}},
};

const Options kOptions[] = {
    {"activations_recompute", "strategy=activations recompute=always",
     "strategy=activations"},
    {"activations_save", "strategy=activations recompute=never",
     "strategy=activations"},
    {"unfused_save", "strategy=activations fuse-blocks=false recompute=never",
     "strategy=activations fuse-blocks=false"},
    {"unfused_recompute",
     "strategy=activations fuse-blocks=false recompute=always",
     "strategy=activations fuse-blocks=false"},
    {"gather_weight_recompute", "strategy=gather-weight recompute=always",
     "strategy=gather-weight"},
    {"gather_weight_save", "strategy=gather-weight recompute=never",
     "strategy=gather-weight"},
    {"auto", "", ""},
    // The pass on IR that is lowered already.
    {"prelowered_save", "recompute=never", "", "strategy=activations"},
    {"prelowered_gather_weight", "recompute=always", "",
     "strategy=gather-weight"},
    // A cap that the lowering fits and the saved values may not.
    {"auto_capped", "memory-cap-mib=0.002", "memory-cap-mib=0.002"},
};

INSTANTIATE_TEST_SUITE_P(
    Cases, BackwardNumeric,
    ::testing::Combine(::testing::ValuesIn(kCases),
                       ::testing::ValuesIn(kOptions)),
    [](const ::testing::TestParamInfo<std::tuple<Case, Options>> &info) {
      return std::string(std::get<0>(info.param).name) + "_" +
             std::get<1>(info.param).name;
    });

//===----------------------------------------------------------------------===//
// Bytes: every rank's traffic in a backward function, counted as the
// runtime counts it, equals the cost model's (CostModel.h, "Backward
// functions"), recomputed and saved.
//===----------------------------------------------------------------------===//

struct BytesCase {
  const char *name;
  std::string source;
  int64_t worldSize;
  std::vector<unsigned> replicated;
  const char *strategy;
  /// The cost model's figures for the backward, recomputed or not.
  std::function<::shardlin::StrategyCost(bool recompute)> expected;
};

void PrintTo(const BytesCase &c, std::ostream *os) { *os << c.name; }

class BackwardBytes : public WithBackwardPasses<std::tuple<BytesCase, bool>> {};

TEST_P(BackwardBytes, EqualTheCostModel) {
  const auto &[c, recompute] = GetParam();
  MLIRContext ctx(registry);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(c.source, &ctx);
  ASSERT_TRUE(module);
  auto f = module->lookupSymbol<func::FuncOp>("f");
  Case numeric{c.name, c.source, c.worldSize, c.replicated};
  std::mt19937 rng(7);
  std::vector<std::vector<Tensor>> args = randomArgs(f, numeric, rng);
  PassManager pm(&ctx);
  std::string pipeline = std::string("shardlin-generate-backward{strategy=") +
                         c.strategy +
                         " recompute=" + (recompute ? "always" : "never") + "}";
  ASSERT_TRUE(succeeded(parsePassPipeline(pipeline, pm)));
  ASSERT_TRUE(succeeded(pm.run(*module)));
  auto backward = module->lookupSymbol<func::FuncOp>("f_backward");
  auto saving = module->lookupSymbol<func::FuncOp>("f_forward_saving");
  ASSERT_TRUE(backward);
  EXPECT_EQ(!saving, recompute);

  std::vector<std::vector<Tensor>> ys, backArgs = args;
  std::string error;
  ASSERT_TRUE(::shardlin::testing::runSpmd(f, c.worldSize, args, ys, error))
      << error;
  std::vector<std::vector<Tensor>> fs;
  if (saving) {
    ASSERT_TRUE(
        ::shardlin::testing::runSpmd(saving, c.worldSize, args, fs, error))
        << error;
  }
  for (const auto &y : ys)
    backArgs.push_back(y); // any dy of the right shapes
  if (saving)
    backArgs.insert(backArgs.end(), fs.begin() + ys.size(), fs.end());
  std::vector<std::vector<Tensor>> grads;
  std::vector<uint64_t> sent;
  ASSERT_TRUE(::shardlin::testing::runSpmd(backward, c.worldSize, backArgs,
                                           grads, error, &sent))
      << error;
  ::shardlin::StrategyCost want = c.expected(recompute);
  for (int64_t r = 0; r < c.worldSize; ++r)
    EXPECT_EQ(sent[r], want.bytesSent[r]) << c.name << " rank " << r;
}

/// A linear's case: linearSource's MLIR of one linear with a bias (argument
/// 2, the same on every rank) and the cost model's figures for its shape.
BytesCase linearBytesCase(const char *name, const std::string &batch,
                          int64_t rows, int64_t n, int64_t k, int dim,
                          std::vector<int64_t> placements,
                          const std::string &elt, int64_t elementBytes,
                          ::shardlin::Strategy strategy) {
  std::string list;
  for (int64_t p : placements)
    list += (list.empty() ? "" : ", ") + std::to_string(p);
  // LinearShape's fields in order: rows, n, k, dim, placements, elementBytes.
  const ::shardlin::LinearShape s{rows, n, k, dim, std::move(placements),
                                  elementBytes};
  const bool gather = strategy == ::shardlin::Strategy::GatherWeight;
  return {name,
          linearSource(batch, n, k, dim, list, elt),
          static_cast<int64_t>(s.placements.size()),
          {2},
          gather ? "gather-weight" : "activations",
          [s, strategy](bool recompute) {
            return ::shardlin::estimateBackwardCost(s, strategy, {}, recompute,
                                                    true);
          }};
}

/// A fused block's shape for the cost model: rows, k, f, n, colLinears,
/// placements, elementBytes (BlockShape's fields in order).
using BlockShape = ::shardlin::BlockShape;

const BytesCase kBytesCases[] = {
    linearBytesCase("col_wise_uneven", "4", 4, 7, 5, 0, {2, 0, 1}, "f32", 4,
                    ::shardlin::Strategy::Activations),
    linearBytesCase("row_wise_f16_empty_chunk", "2x3", 6, 6, 5, 1, {3, 1, 0, 2},
                    "f16", 2, ::shardlin::Strategy::Activations),
    linearBytesCase("gather_weight_dim0_bf16", "4", 4, 7, 5, 0, {1, 2, 0},
                    "bf16", 2, ::shardlin::Strategy::GatherWeight),
    linearBytesCase("gather_weight_dim1", "3", 3, 6, 5, 1, {3, 1, 0, 2}, "f64",
                    8, ::shardlin::Strategy::GatherWeight),
    // A fused MLP, F = 10 over 3 ranks, both biases: 2(W-1)·B·H elements,
    // the b1 gradient's chunks, and X again if recomputed.
    {"fused_mlp",
     R"mlir(func.func @f(%x: tensor<2x3x8xf32>, %w1: !shardlin.sharded<tensor<10x8xf32>, #shardlin.chunk<dim = 0, placements = [2, 0, 1]>>, %b1: tensor<10xf32>, %w2: !shardlin.sharded<tensor<8x10xf32>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>, %b2: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %h = shardlin.linear %x, %w1, %b1 : (tensor<2x3x8xf32>, !shardlin.sharded<tensor<10x8xf32>, #shardlin.chunk<dim = 0, placements = [2, 0, 1]>>, tensor<10xf32>) -> tensor<2x3x10xf32>
  %t = math.tanh %h : tensor<2x3x10xf32>
  %y = shardlin.linear %t, %w2, %b2 : (tensor<2x3x10xf32>, !shardlin.sharded<tensor<8x10xf32>, #shardlin.chunk<dim = 1, placements = [2, 0, 1]>>, tensor<8xf32>) -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}
)mlir",
     3,
     {2, 4},
     "activations",
     [](bool recompute) {
       return ::shardlin::estimateFusedBlockBackwardCost(
           BlockShape{6, 8, 10, 8, 1, {2, 0, 1}, 4}, {}, recompute, 1);
     }},
    // A bf16 SwiGLU: two col-wise linears, no bias; dx's partial sums f32.
    {"fused_swiglu_bf16",
     R"mlir(func.func @f(%x: tensor<4x6xbf16>, %wg: !shardlin.sharded<tensor<16x6xbf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, %wu: !shardlin.sharded<tensor<16x6xbf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>>, %wd: !shardlin.sharded<tensor<6x16xbf16>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<4x6xbf16> {
  %g = shardlin.linear %x, %wg : (tensor<4x6xbf16>, !shardlin.sharded<tensor<16x6xbf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<4x16xbf16>
  %u = shardlin.linear %x, %wu : (tensor<4x6xbf16>, !shardlin.sharded<tensor<16x6xbf16>, #shardlin.chunk<dim = 0, placements = [1, 0]>>) -> tensor<4x16xbf16>
  %s = math.tanh %g : tensor<4x16xbf16>
  %a = arith.mulf %s, %u : tensor<4x16xbf16>
  %y = shardlin.linear %a, %wd : (tensor<4x16xbf16>, !shardlin.sharded<tensor<6x16xbf16>, #shardlin.chunk<dim = 1, placements = [1, 0]>>) -> tensor<4x6xbf16>
  return %y : tensor<4x6xbf16>
}
)mlir",
     2,
     {},
     "activations",
     [](bool recompute) {
       return ::shardlin::estimateFusedBlockBackwardCost(
           BlockShape{4, 6, 16, 6, 2, {1, 0}, 2}, {}, recompute, 0);
     }},
};

INSTANTIATE_TEST_SUITE_P(
    Cases, BackwardBytes,
    ::testing::Combine(::testing::ValuesIn(kBytesCases), ::testing::Bool()),
    [](const ::testing::TestParamInfo<std::tuple<BytesCase, bool>> &info) {
      return std::string(std::get<0>(info.param).name) +
             (std::get<1>(info.param) ? "_recompute" : "_save");
    });

} // namespace
