//===- GradReference.cpp - Gradient cases, data and float64 references ----===//
//
// The dense model's gradients, written out as numpy would (GradTesting.h),
// each value with its error magnitude: the sum of the absolute values of
// the terms that make it, plus the magnitudes of its inputs carried through
// the derivative (for an activation, |f''(h)| times h's magnitude too), plus
// the value itself for its own rounding. A program that rounds each stored
// tensor once is then within (roundings) * u * magnitude of the reference
// (ErrorBound.h), whatever order it sums in.
//
//===----------------------------------------------------------------------===//

#include "ErrorBound.h"
#include "GradTesting.h"

#include "shardlin/runtime/base/ChunkLayout.h"
#include "shardlin/runtime/tooling/Runner.h"

#include <cmath>
#include <random>

namespace shardlin::testkit {

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

int GradCase::worldSize() const {
  return model == Model::Linear ? linear.worldSize() : block.worldSize();
}

rt::DType GradCase::dtype() const {
  return model == Model::Linear ? linear.dtype : block.dtype;
}

const std::string &GradCase::strategy() const {
  return model == Model::Linear ? linear.strategy : block.strategy;
}

std::string GradCase::mlir() const {
  return model == Model::Linear ? linearMlir(linear) : blockMlir(block);
}

std::vector<int64_t> GradCase::outputShapeOf(int rank) const {
  return model == Model::Linear ? linear.outputShapeOf(rank)
                                : block.inputShapeOf(rank);
}

std::string GradCase::name() const {
  return (model == Model::Linear ? linear.name() : block.name()) + "_" +
         recompute;
}

std::vector<GradArgument> gradArguments(const GradCase &c) {
  using Kind = GradArgument::Kind;
  std::vector<GradArgument> out;
  if (c.model == GradCase::Model::Linear) {
    const LinearSpec &l = c.linear;
    out.push_back({Kind::Local, l.inputShapeOf(0)});
    out.push_back({Kind::Sharded, {l.n, l.k}, l.dim, l.placements});
    if (l.bias)
      out.push_back({Kind::Replicated, {l.n}});
    return out;
  }
  for (const BlockArgument &a : blockArguments(c.block)) {
    GradArgument g;
    g.shape = a.role == BlockArgument::Role::Input ? c.block.inputShapeOf(0)
                                                   : a.shape;
    if (a.sharded) {
      g.kind = Kind::Sharded;
      g.dim = a.dim;
      g.placements = a.placements;
    } else if (a.role == BlockArgument::Role::ColBias &&
               c.block.form == OpForm::LinalgGeneric) {
      // Added inside the generic (BlockTesting.cpp), not by the linear.
      g.kind = Kind::Plain;
    } else if (a.role != BlockArgument::Role::Input) {
      g.kind = Kind::Replicated;
    }
    out.push_back(std::move(g));
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Data
//===----------------------------------------------------------------------===//

namespace {

int64_t numElements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// Uniform in +-[0.25, 1] times `scale` (never zero), rounded to the dtype;
/// `values` are the rounded values.
HostTensor randomTensor(rt::DType dtype, int64_t n, double scale,
                        std::mt19937_64 &rng) {
  std::uniform_real_distribution<double> mag(0.25, 1.0);
  HostTensor t;
  t.values.resize(n);
  for (double &v : t.values)
    v = (rng() & 1 ? -scale : scale) * mag(rng);
  t.bytes.resize(n * rt::dtypeSize(dtype));
  rt::convertFromF64(dtype, t.values.data(), t.bytes.data(), n);
  rt::convertToF64(dtype, t.bytes.data(), t.values.data(), n);
  return t;
}

} // namespace

GradData makeGradData(const GradCase &c, uint64_t seed) {
  GradData d;
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 777);
  if (c.model == GradCase::Model::Block) {
    static_cast<BlockData &>(d) = makeBlockData(c.block, seed);
  } else {
    const LinearSpec &l = c.linear;
    d.args.resize(l.bias ? 3 : 2);
    d.args[1] = randomTensor(l.dtype, l.n * l.k, 1.0, rng);
    if (l.bias)
      d.args[2] = randomTensor(l.dtype, l.n, 1.0, rng);
    for (int r = 0; r < l.worldSize(); ++r)
      d.inputs.push_back(
          randomTensor(l.dtype, numElements(l.inputShapeOf(r)), 1.0, rng));
  }
  for (int r = 0; r < c.worldSize(); ++r)
    d.dy.push_back(
        randomTensor(c.dtype(), numElements(c.outputShapeOf(r)), 1.0, rng));
  return d;
}

RankTensor argumentOf(const GradCase &c, const GradData &data, size_t i,
                      int rank) {
  const GradArgument a = gradArguments(c)[i];
  RankTensor t;
  switch (a.kind) {
  case GradArgument::Kind::Local:
    t.bytes = data.inputs[rank].bytes;
    t.shape = c.model == GradCase::Model::Linear
                  ? c.linear.inputShapeOf(rank)
                  : c.block.inputShapeOf(rank);
    return t;
  case GradArgument::Kind::Sharded: {
    rt::ChunkSpec spec;
    spec.dim = a.dim;
    spec.placements = a.placements;
    rt::extractLocalChunk(data.args[i].bytes.data(), a.shape, c.dtype(), spec,
                          rank, t.bytes);
    t.shape = a.shape;
    t.shape[a.dim] = rt::ChunkLayout(a.shape[a.dim], spec).ofRank(rank).size;
    return t;
  }
  case GradArgument::Kind::Replicated:
  case GradArgument::Kind::Plain:
    t.bytes = data.args[i].bytes;
    t.shape = a.shape;
    return t;
  }
  return t;
}

//===----------------------------------------------------------------------===//
// The dense model, forward and backward
//===----------------------------------------------------------------------===//

namespace {

/// A rows x cols float64 matrix with magnitudes.
struct Mat {
  int64_t rows = 0, cols = 0;
  std::vector<double> v, m;
  Mat() = default;
  Mat(int64_t r, int64_t c) : rows(r), cols(c), v(r * c, 0.0), m(r * c, 0.0) {}
};

/// y = x W^T (+ b): W (n x x.cols) exact, b exact.
Mat linearForward(const Mat &x, const std::vector<double> &w, int64_t n,
                  const std::vector<double> *b) {
  Mat y(x.rows, n);
  const int64_t k = x.cols;
  for (int64_t i = 0; i < x.rows; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0, m = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        const double wv = w[j * k + kk];
        s += x.v[i * k + kk] * wv;
        m += std::fabs(x.v[i * k + kk] * wv) + std::fabs(wv) * x.m[i * k + kk];
      }
      if (b) {
        s += (*b)[j];
        m += std::fabs((*b)[j]);
      }
      y.v[i * n + j] = s;
      y.m[i * n + j] = m;
    }
  return y;
}

/// The backward of y = x W^T + b for dy: dW (n x k) and db (n) accumulate
/// (the sum over ranks); returns dx = dy W.
Mat linearBackward(const Mat &x, const std::vector<double> &w, const Mat &dy,
                   GradTensor &dw, GradTensor *db) {
  const int64_t n = dy.cols, k = x.cols;
  Mat dx(x.rows, k);
  for (int64_t i = 0; i < x.rows; ++i)
    for (int64_t kk = 0; kk < k; ++kk) {
      double s = 0, m = 0;
      for (int64_t j = 0; j < n; ++j) {
        s += dy.v[i * n + j] * w[j * k + kk];
        m += dy.m[i * n + j] * std::fabs(w[j * k + kk]);
      }
      dx.v[i * k + kk] = s;
      dx.m[i * k + kk] = m + std::fabs(s);
    }
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < x.rows; ++i) {
      const double g = dy.v[i * n + j], gm = dy.m[i * n + j];
      for (int64_t kk = 0; kk < k; ++kk) {
        dw.value[j * k + kk] += g * x.v[i * k + kk];
        dw.scale[j * k + kk] +=
            std::fabs(g) * x.m[i * k + kk] + gm * std::fabs(x.v[i * k + kk]);
      }
      if (db) {
        db->value[j] += g;
        db->scale[j] += gm;
      }
    }
  return dx;
}

double act(Activation a, double h) {
  switch (a) {
  case Activation::Relu:
    return h > 0 ? h : 0;
  case Activation::GeluTanh:
    return 0.5 * h *
           (1 + std::tanh(0.7978845608028654 * (h + 0.044715 * h * h * h)));
  case Activation::GeluErf:
    return 0.5 * h * (1 + std::erf(h * 0.7071067811865476));
  case Activation::Silu:
    return h / (1 + std::exp(-h));
  }
  return h;
}

/// f'(h), analytically; ReLU'(0) = 0 (docs/training.md).
double actPrime(Activation a, double h) {
  switch (a) {
  case Activation::Relu:
    return h > 0 ? 1 : 0;
  case Activation::GeluTanh: {
    const double c = 0.7978845608028654;
    const double t = std::tanh(c * (h + 0.044715 * h * h * h));
    return 0.5 * (1 + t) +
           0.5 * h * (1 - t * t) * c * (1 + 3 * 0.044715 * h * h);
  }
  case Activation::GeluErf:
    return 0.5 * (1 + std::erf(h * 0.7071067811865476)) +
           h * std::exp(-0.5 * h * h) * 0.3989422804014327;
  case Activation::Silu: {
    const double s = 1 / (1 + std::exp(-h));
    return s * (1 + h * (1 - s));
  }
  }
  return 1;
}

/// |f''(h)|, for magnitudes only: a central difference of f'.
double actSecond(Activation a, double h) {
  const double e = 1e-4;
  return std::fabs(actPrime(a, h + e) - actPrime(a, h - e)) / (2 * e);
}

Mat toMat(const HostTensor &t, int64_t cols) {
  Mat m(static_cast<int64_t>(t.values.size()) / cols, cols);
  m.v = t.values;
  return m;
}

/// dy as given: exact, its magnitude itself.
Mat gradientMat(const HostTensor &t, int64_t cols) {
  Mat m = toMat(t, cols);
  for (size_t e = 0; e < m.v.size(); ++e)
    m.m[e] = std::fabs(m.v[e]);
  return m;
}

GradTensor zeros(const std::vector<int64_t> &shape) {
  GradTensor t;
  t.value.assign(numElements(shape), 0.0);
  t.scale.assign(t.value.size(), 0.0);
  return t;
}

GradTensor fromMat(const Mat &m) { return {m.v, m.m}; }

/// One rank's block backward (BlockSpec's shapes), accumulating the
/// parameters' gradients; returns dx.
Mat blockRankBackward(const BlockSpec &s, const GradData &data, int rank,
                      GradReference &ref) {
  using Role = BlockArgument::Role;
  const std::vector<BlockArgument> args = blockArguments(s);
  auto find = [&](Role role, int block, int which) {
    return findBlockArgument(args, role, block, which);
  };
  struct Saved {
    Mat x;
    std::vector<Mat> h;
    Mat a;
  };
  // Where argument i's gradient accumulates: rank `rank`'s own for a
  // Plain argument, the sum over ranks otherwise.
  auto slot = [&](int i) -> GradTensor & {
    return ref[i].size() > 1 ? ref[i][rank] : ref[i][0];
  };
  std::vector<Saved> saved(s.blocks);
  Mat x = toMat(data.inputs[rank], s.h);
  for (int b = 0; b < s.blocks; ++b) {
    Saved &sv = saved[b];
    sv.x = x;
    for (int c = 0; c < s.colLinears(); ++c) {
      const int bi = find(Role::ColBias, b, c);
      sv.h.push_back(linearForward(x, data.args[find(Role::ColWeight, b, c)]
                                          .values,
                                   s.f, bi >= 0 ? &data.args[bi].values
                                                : nullptr));
    }
    const Mat &g = sv.h[0];
    sv.a = Mat(g.rows, g.cols);
    for (size_t e = 0; e < g.v.size(); ++e) {
      if (s.kind == BlockKind::Mlp) {
        sv.a.v[e] = act(s.activation, g.v[e]);
        sv.a.m[e] = std::fabs(actPrime(s.activation, g.v[e])) * g.m[e];
      } else {
        const Mat &u = sv.h[1];
        const double sg = act(Activation::Silu, g.v[e]);
        sv.a.v[e] = sg * u.v[e];
        sv.a.m[e] =
            std::fabs(actPrime(Activation::Silu, g.v[e]) * u.v[e]) * g.m[e] +
            std::fabs(sg) * u.m[e];
      }
      sv.a.m[e] += std::fabs(sv.a.v[e]);
    }
    const int rb = find(Role::RowBias, b, 0);
    Mat z = linearForward(sv.a, data.args[find(Role::RowWeight, b, 0)].values,
                          s.h, rb >= 0 ? &data.args[rb].values : nullptr);
    if (s.residual)
      for (size_t e = 0; e < z.v.size(); ++e) {
        z.v[e] += x.v[e];
        z.m[e] += x.m[e] + std::fabs(z.v[e]);
      }
    x = std::move(z);
  }

  Mat dy = gradientMat(data.dy[rank], s.h);
  for (int b = s.blocks - 1; b >= 0; --b) {
    const Saved &sv = saved[b];
    const int rw = find(Role::RowWeight, b, 0), rb = find(Role::RowBias, b, 0);
    Mat da = linearBackward(sv.a, data.args[rw].values, dy, slot(rw),
                            rb >= 0 ? &slot(rb) : nullptr);
    std::vector<Mat> dh(s.colLinears(), Mat(da.rows, da.cols));
    for (size_t e = 0; e < da.v.size(); ++e) {
      const double g = sv.h[0].v[e], gm = sv.h[0].m[e];
      if (s.kind == BlockKind::Mlp) {
        const double p = actPrime(s.activation, g);
        dh[0].v[e] = da.v[e] * p;
        dh[0].m[e] = da.m[e] * std::fabs(p) +
                     std::fabs(da.v[e]) * actSecond(s.activation, g) * gm;
      } else {
        const double u = sv.h[1].v[e], um = sv.h[1].m[e];
        const double sg = act(Activation::Silu, g);
        const double p = actPrime(Activation::Silu, g);
        dh[0].v[e] = da.v[e] * u * p;
        dh[0].m[e] = da.m[e] * std::fabs(u * p) +
                     std::fabs(da.v[e]) * um * std::fabs(p) +
                     std::fabs(da.v[e] * u) * actSecond(Activation::Silu, g) *
                         gm;
        dh[1].v[e] = da.v[e] * sg;
        dh[1].m[e] = da.m[e] * std::fabs(sg) + std::fabs(da.v[e] * p) * gm;
      }
      for (Mat &d : dh)
        d.m[e] += std::fabs(d.v[e]);
    }
    Mat dx(sv.x.rows, sv.x.cols);
    for (int c = 0; c < s.colLinears(); ++c) {
      const int cw = find(Role::ColWeight, b, c);
      const int cb = find(Role::ColBias, b, c);
      Mat part = linearBackward(sv.x, data.args[cw].values, dh[c], slot(cw),
                                cb >= 0 ? &slot(cb) : nullptr);
      for (size_t e = 0; e < dx.v.size(); ++e) {
        dx.v[e] += part.v[e];
        dx.m[e] += part.m[e];
      }
    }
    if (s.residual)
      for (size_t e = 0; e < dx.v.size(); ++e) {
        dx.v[e] += dy.v[e];
        dx.m[e] += dy.m[e] + std::fabs(dx.v[e]);
      }
    dy = std::move(dx);
  }
  return dy;
}

} // namespace

GradReference gradReference(const GradCase &c, const GradData &data) {
  const std::vector<GradArgument> args = gradArguments(c);
  const int w = c.worldSize();
  GradReference ref(args.size());
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].kind == GradArgument::Kind::Local)
      ref[i].resize(w);
    else
      ref[i].assign(args[i].kind == GradArgument::Kind::Plain ? w : 1,
                    zeros(args[i].shape));
  for (int r = 0; r < w; ++r) {
    if (c.model == GradCase::Model::Block) {
      ref[0][r] = fromMat(blockRankBackward(c.block, data, r, ref));
      continue;
    }
    const LinearSpec &l = c.linear;
    Mat x = toMat(data.inputs[r], l.k);
    Mat dy = gradientMat(data.dy[r], l.n);
    ref[0][r] = fromMat(linearBackward(x, data.args[1].values, dy, ref[1][0],
                                       l.bias ? &ref[2][0] : nullptr));
  }
  // The summed gradients' own rounding.
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].kind != GradArgument::Kind::Local)
      for (GradTensor &g : ref[i])
        for (size_t e = 0; e < g.value.size(); ++e)
          g.scale[e] += std::fabs(g.value[e]);
  return ref;
}

double gradErrorBound(const GradCase &c) {
  // Roundings of f16/bf16 stored tensors along the longest path to a
  // gradient, each at most u of its magnitude (the magnitudes carry the
  // earlier ones): per block, the recomputed forward (the col-wise GEMM,
  // the chain, as the forward's W + 4 counts them), dy's gathered copy (exact),
  // dE = dY A2 (once), the chain's derivative (once), the weight gradients'
  // GEMMs (once), dx's partial sums summed over ranks in f32 (up to W - 1
  // additions and one rounding), the residual (once): W + 8. Linears: W +
  // 4. f32 and f64 get ErrorBound.h's fixed bounds.
  const int w = c.worldSize();
  const double roundings = c.model == GradCase::Model::Block ? w + 8 : w + 4;
  return shardlin::testing::roundingErrorBound(c.dtype(), roundings);
}

int64_t checkAllRanks(const GradCase &c, const GradData &data,
                      const std::vector<std::vector<RankTensor>> &results,
                      std::string &report) {
  const GradReference ref = gradReference(c, data);
  int64_t failures = 0;
  for (int r = 0; r < static_cast<int>(results.size()); ++r)
    failures += checkGradients(c, ref, r, results[r], report);
  return failures;
}

int64_t checkGradients(const GradCase &c, const GradReference &ref, int rank,
                       const std::vector<RankTensor> &results,
                       std::string &report) {
  const std::vector<GradArgument> args = gradArguments(c);
  if (results.size() != args.size()) {
    report += c.name() + " rank " + std::to_string(rank) + ": " +
              std::to_string(results.size()) + " results, expected " +
              std::to_string(args.size()) + "\n";
    return 1;
  }
  const double bound = gradErrorBound(c);
  int64_t failures = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const GradArgument &a = args[i];
    const std::string who = c.name() + " rank " + std::to_string(rank) +
                            " gradient " + std::to_string(i);
    const int64_t cols = a.shape.empty() ? 1 : a.shape.back();
    if (a.kind == GradArgument::Kind::Local ||
        a.kind == GradArgument::Kind::Plain) {
      failures += compareWithReference(who, c.dtype(), results[i].bytes, cols,
                                       ref[i][rank].value, ref[i][rank].scale,
                                       bound, report);
      continue;
    }
    if (a.kind == GradArgument::Kind::Replicated) {
      failures += compareWithReference(who, c.dtype(), results[i].bytes, cols,
                                       ref[i][0].value, ref[i][0].scale, bound,
                                       report);
      continue;
    }
    // The rank's chunk of the summed gradient (a 2-D weight).
    const rt::Range range =
        rt::ChunkLayout(a.shape[a.dim], a.placements).ofRank(rank);
    GradTensor chunk;
    const int64_t rows = a.shape[0];
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < cols; ++k) {
        const int64_t at = a.dim == 0 ? r : k;
        if (at < range.offset || at >= range.offset + range.size)
          continue;
        chunk.value.push_back(ref[i][0].value[r * cols + k]);
        chunk.scale.push_back(ref[i][0].scale[r * cols + k]);
      }
    failures += compareWithReference(
        who + " (chunk [" + std::to_string(range.offset) + ", " +
            std::to_string(range.offset + range.size) + ") of dim " +
            std::to_string(a.dim) + ")",
        c.dtype(), results[i].bytes, a.dim == 1 ? range.size : cols,
        chunk.value, chunk.scale, bound, report);
  }
  return failures;
}

} // namespace shardlin::testkit
