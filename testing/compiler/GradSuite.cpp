//===- GradSuite.cpp - The gradient suite ---------------------------------===//
//
// A representative sweep of backward functions (GradTesting.h), small
// enough that the threads suite runs in seconds: each case exercises
// several of the dimensions issue 26 lists (dims and strategies, fused and
// unfused blocks with residuals, uneven, empty and permuted chunks, N-D,
// 1-D and per-rank batch sizes, every dtype, recomputed and saved forward
// values) rather than every combination.
//
//===----------------------------------------------------------------------===//

#include "GradTesting.h"

namespace shardlin::testkit {

namespace {

/// A case of `model` on `placements` in `dtype`: the sharded part that
/// linears and blocks share (ShardedSpec), and the recompute option.
GradCase gradCase(GradCase::Model model, std::vector<int64_t> placements,
                  rt::DType dtype, const char *recompute) {
  GradCase c;
  c.model = model;
  ShardedSpec &sharded = model == GradCase::Model::Linear
                             ? static_cast<ShardedSpec &>(c.linear)
                             : static_cast<ShardedSpec &>(c.block);
  sharded.placements = std::move(placements);
  sharded.dtype = dtype;
  c.recompute = recompute;
  return c;
}

} // namespace

GradCase gradLinearCase(int64_t dim, int64_t n, int64_t k,
                        std::vector<int64_t> placements,
                        std::vector<int64_t> batch, bool bias, rt::DType dtype,
                        const char *recompute, const char *strategy) {
  GradCase c = gradCase(GradCase::Model::Linear, std::move(placements), dtype,
                        recompute);
  c.linear.dim = dim;
  c.linear.n = n;
  c.linear.k = k;
  c.linear.batch = std::move(batch);
  c.linear.bias = bias;
  c.linear.strategy = strategy;
  return c;
}

GradCase gradBlockCase(BlockKind kind, Activation act, OpForm form,
                       std::vector<int64_t> placements, int64_t f,
                       rt::DType dtype, bool fuse, bool residual,
                       const char *recompute) {
  GradCase c = gradCase(GradCase::Model::Block, std::move(placements), dtype,
                        recompute);
  c.block.kind = kind;
  c.block.activation = act;
  c.block.form = form;
  c.block.h = 8;
  c.block.f = f;
  c.block.fuse = fuse;
  c.block.residual = residual;
  return c;
}

std::vector<GradCase> gradSuite() {
  using D = rt::DType;
  std::vector<GradCase> all;
  // Linears: col-wise (N split) uneven and permuted; row-wise with an empty
  // K chunk and a 2-D batch, saved; 1-D; per-rank rows (one rank has none);
  // W = 1.
  all.push_back(
      gradLinearCase(0, 11, 19, {2, 3, 0, 1}, {5}, true, D::F32, "always"));
  all.push_back(
      gradLinearCase(1, 11, 5, {1, 2, 3, 0}, {2, 3}, true, D::F64, "never"));
  all.push_back(gradLinearCase(0, 7, 9, {2, 0, 1}, {}, true, D::F16, "never"));
  {
    GradCase c = gradLinearCase(1, 6, 10, {1, 2, 0}, {rt::kDynamic}, true,
                                D::BF16, "always");
    c.linear.rankBatch = {{4}, {0}, {2}};
    all.push_back(c);
  }
  all.push_back(gradLinearCase(1, 5, 7, {0}, {3}, true, D::F64, "always"));
  // Gather-weight: the weight's gradient is a reduce_scatter of every
  // rank's; with a bias, the bias's is an all_reduce.
  all.push_back(gradLinearCase(1, 9, 10, {2, 0, 1}, {4}, false, D::F32, "never",
                               "gather-weight"));
  all.push_back(gradLinearCase(0, 9, 6, {1, 0}, {3}, true, D::F64, "always",
                               "gather-weight"));

  // Blocks.
  using K = BlockKind;
  using A = Activation;
  using F = OpForm;
  all.push_back(gradBlockCase(K::Mlp, A::GeluTanh, F::Arith, {3, 1, 0, 2}, 18,
                              D::F32, true, true, "always"));
  {
    GradCase c = gradBlockCase(K::Mlp, A::Relu, F::LinalgGeneric, {1, 2, 0}, 13,
                               D::F64, false, false, "never");
    c.block.batch = {2, 3};
    all.push_back(c);
  }
  all.push_back(gradBlockCase(K::SwiGlu, A::Silu, F::Arith, {1, 0}, 10, D::BF16,
                              true, true, "never"));
  all.push_back(gradBlockCase(K::SwiGlu, A::Silu, F::LinalgElementwise,
                              {2, 0, 3, 1}, 3, D::F16, false, true, "always"));
  {
    GradCase c = gradBlockCase(K::Mlp, A::Silu, F::LinalgElementwise, {1, 0},
                               12, D::F32, true, true, "auto");
    c.block.blocks = 2;
    all.push_back(c);
  }
  {
    GradCase c = gradBlockCase(K::Mlp, A::GeluErf, F::Arith, {0, 2, 1}, 11,
                               D::F16, true, false, "never");
    c.block.batch = {};
    all.push_back(c);
  }
  {
    GradCase c = gradBlockCase(K::Mlp, A::GeluTanh, F::Arith, {2, 0, 1}, 14,
                               D::F32, true, true, "never");
    c.block.batch = {rt::kDynamic};
    c.block.rankBatch = {{3}, {0}, {5}};
    all.push_back(c);
  }
  {
    GradCase c = gradBlockCase(K::SwiGlu, A::Silu, F::Arith, {0, 1, 2}, 9,
                               D::F64, true, false, "always");
    c.block.rowPlacements = {2, 1, 0}; // not fusable: two layers
    all.push_back(c);
  }
  {
    GradCase c = gradBlockCase(K::Mlp, A::Relu, F::Arith, {1, 0}, 10, D::F32,
                               true, true, "always");
    c.block.strategy = "gather-weight";
    c.block.colBias = c.block.rowBias = false;
    all.push_back(c);
  }
  return all;
}

} // namespace shardlin::testkit
