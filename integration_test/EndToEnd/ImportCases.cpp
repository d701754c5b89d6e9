//===- ImportCases.cpp - Upstream shard + linalg modules, run end to end
//---===//

#include "ImportCases.h"

#include "ErrorBound.h"
#include "LinearTesting.h"
#include "shardlin/Analysis/CostModel.h"
#include "shardlin/runtime/base/ChunkLayout.h"
#include "shardlin/runtime/program/ProgramText.h"
#include "shardlin/runtime/tooling/Npy.h"
#include "shardlin/runtime/tooling/Runner.h"

#include <cmath>
#include <ostream>
#include <random>

namespace shardlin::e2e {

namespace rt = ::shardlin::rt;
using testkit::joinDims;
using testkit::tensorType;

namespace {

/// The name of `value` in `table`, an enum's values with their names.
template <typename E, size_t N>
const char *nameIn(const std::pair<E, const char *> (&table)[N], E value) {
  for (const auto &[e, name] : table)
    if (e == value)
      return name;
  return "";
}

const char *xName(ImportCase::X x) {
  using X = ImportCase::X;
  static const std::pair<X, const char *> names[] = {
      {X::Replicated, "repl"}, {X::Rows, "rows"}, {X::Features, "feat"}};
  return nameIn(names, x);
}

const char *weightName(ImportCase::Weight w) {
  using W = ImportCase::Weight;
  static const std::pair<W, const char *> names[] = {
      {W::KN, "kn"}, {W::NKMap, "nkmap"}, {W::NKTranspose, "nktr"}};
  return nameIn(names, w);
}

const char *biasName(ImportCase::Bias b) {
  using B = ImportCase::Bias;
  static const std::pair<B, const char *> names[] = {
      {B::None, "nobias"},
      {B::Generic, "generic"},
      {B::BroadcastAdd, "bcastadd"},
      {B::Init, "init"}};
  return nameIn(names, b);
}

int64_t product(const std::vector<int64_t> &v) {
  int64_t p = 1;
  for (int64_t d : v)
    p *= d;
  return p;
}

/// `shard.sharding @tp split_axes = ...` of a tensor split along `dim` (-1:
/// replicated), with offsets if given.
std::string sharding(const std::string &name, int dim,
                     const std::vector<int64_t> &offsets) {
  std::string axes = "[[]]";
  if (dim == 0)
    axes = "[[0]]";
  else if (dim == 1)
    axes = "[[], [0]]";
  std::string s = "  %" + name + " = shard.sharding @tp split_axes = " + axes;
  if (dim >= 0 && !offsets.empty())
    s += " sharded_dims_offsets = [" + joinDims(offsets, ", ") + "]";
  return s + " : !shard.sharding\n";
}

/// Both forms of shard.shard on `value`, as upstream's tests write them;
/// returns the annotated value's name.
std::string annotate(std::string &s, const std::string &value,
                     const std::string &shardingName, const std::string &type) {
  s += "  %" + value + "_s = shard.shard %" + value + " to %" + shardingName +
       " : " + type + "\n";
  s += "  %" + value + "_u = shard.shard %" + value + "_s to %" + shardingName +
       " annotate_for_users : " + type + "\n";
  return value + "_u";
}

std::string elementType(rt::DType t) { return rt::dtypeName(t); }

bool narrow(rt::DType t) { return t == rt::DType::F16 || t == rt::DType::BF16; }

std::string linearText(const ImportCase &c) {
  const rt::DType t = c.dtype;
  const std::string T = elementType(t);
  const int64_t m = product(c.batch);
  const bool nk = c.weight != ImportCase::Weight::KN;
  const std::string X = tensorType(c.xShape(), t);
  const std::string Y = tensorType(c.yShape(), t);
  const std::string W =
      nk ? tensorType({c.n, c.k}, t) : tensorType({c.k, c.n}, t);
  const std::string B = tensorType({c.n}, t);
  const std::string XM = tensorType({m, c.k}, t);
  const std::string MN = tensorType({m, c.n}, t);
  const bool bias = c.bias != ImportCase::Bias::None;
  std::string s = "shard.grid @tp(shape = " + std::to_string(c.w) + ")\n";
  s += "#id = affine_map<(d0, d1) -> (d0, d1)>\n";
  s += "#bc = affine_map<(d0, d1) -> (d1)>\n";
  s += "func.func @main(%x: " + X + ", %w: " + W;
  if (bias)
    s += ", %b: " + B;
  s += ") -> " + Y + " {\n";
  const int xDim = c.x == ImportCase::X::Rows       ? 0
                   : c.x == ImportCase::X::Features ? 1
                                                    : -1;
  s +=
      sharding("sx", xDim,
               c.x == ImportCase::X::Features ? c.weightOffsets : c.rowOffsets);
  // The weight's split dim: N (col-wise) or K, in the module's orientation.
  const int wDim = c.colWise ? (nk ? 0 : 1) : (nk ? 1 : 0);
  s += sharding("sw", wDim, c.weightOffsets);
  s += sharding("sy", c.replicatedResult ? -1 : 0, c.rowOffsets);
  std::string x = annotate(s, "x", "sx", X);
  std::string w = annotate(s, "w", "sw", W);
  if (c.batch.size() == 2) {
    s += "  %x2 = tensor.collapse_shape %" + x + " [[0, 1], [2]] : " + X +
         " into " + XM + "\n";
    x = "x2";
  }
  std::string maps;
  if (c.weight == ImportCase::Weight::NKTranspose) {
    const std::string KN = tensorType({c.k, c.n}, t);
    s += "  %et = tensor.empty() : " + KN + "\n";
    s += "  %wt = linalg.transpose ins(%" + w + " : " + W +
         ") outs(%et : " + KN + ") permutation = [1, 0]\n";
    w = "wt";
  } else if (c.weight == ImportCase::Weight::NKMap) {
    maps = " indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, "
           "affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> "
           "(d0, d1)>]";
  }
  const std::string WM =
      c.weight == ImportCase::Weight::NKMap ? W : tensorType({c.k, c.n}, t);
  s += "  %e = tensor.empty() : " + MN + "\n";
  if (c.bias == ImportCase::Bias::Init) {
    s += "  %init = linalg.broadcast ins(%b : " + B + ") outs(%e : " + MN +
         ") dimensions = [0]\n";
  } else {
    s += "  %zero = arith.constant 0.0 : " + T + "\n";
    s += "  %init = linalg.fill ins(%zero : " + T + ") outs(%e : " + MN +
         ") -> " + MN + "\n";
  }
  s += "  %mm = linalg.matmul" + maps + " ins(%" + x + ", %" + w + " : " + XM +
       ", " + WM + ") outs(%init : " + MN + ") -> " + MN + "\n";
  std::string y = "mm";
  if (c.bias == ImportCase::Bias::Generic) {
    s += "  %e2 = tensor.empty() : " + MN + "\n";
    s += "  %yb = linalg.generic {indexing_maps = [#id, #bc, #id], "
         "iterator_types = [\"parallel\", \"parallel\"]} ins(%mm, %b : " +
         MN + ", " + B + ") outs(%e2 : " + MN + ") {\n";
    s += "  ^bb0(%p: " + T + ", %q: " + T + ", %o: " + T + "):\n";
    s += "    %r = arith.addf %p, %q : " + T + "\n";
    s += "    linalg.yield %r : " + T + "\n";
    s += "  } -> " + MN + "\n";
    y = "yb";
  } else if (c.bias == ImportCase::Bias::BroadcastAdd) {
    s += "  %e3 = tensor.empty() : " + MN + "\n";
    s += "  %bb = linalg.broadcast ins(%b : " + B + ") outs(%e3 : " + MN +
         ") dimensions = [0]\n";
    s += "  %e4 = tensor.empty() : " + MN + "\n";
    s += "  %yb = linalg.add ins(%mm, %bb : " + MN + ", " + MN +
         ") outs(%e4 : " + MN + ") -> " + MN + "\n";
    y = "yb";
  }
  if (c.batch.size() == 2) {
    s += "  %y3 = tensor.expand_shape %" + y + " [[0, 1], [2]] output_shape [" +
         std::to_string(c.batch[0]) + ", " + std::to_string(c.batch[1]) + ", " +
         std::to_string(c.n) + "] : " + MN + " into " + Y + "\n";
    y = "y3";
  }
  y = annotate(s, y, "sy", Y);
  s += "  return %" + y + " : " + Y + "\n}\n";
  return s;
}

/// GELU (tanh form) on tensors of `type`, in arith / math ops with splat
/// constants: 0.5 h (1 + tanh(0.7978845608028654 (h + 0.044715 h^3))).
std::string gelu(std::string &s, const std::string &h, const std::string &type,
                 const std::string &T) {
  auto c = [&](const std::string &name, const char *v) {
    s += "  %" + name + " = arith.constant dense<" + v + "> : " + type + "\n";
  };
  auto op = [&](const std::string &res, const char *o, const std::string &a,
                const std::string &b) {
    s += "  %" + res + " = " + o + " %" + a + (b.empty() ? "" : ", %" + b) +
         " : " + type + "\n";
  };
  (void)T;
  c("c_half", "0.5");
  c("c_one", "1.0");
  c("c_a", "0.7978845608028654");
  c("c_b", "0.044715");
  op("g2", "arith.mulf", h, h);
  op("g3", "arith.mulf", "g2", h);
  op("g4", "arith.mulf", "c_b", "g3");
  op("g5", "arith.addf", h, "g4");
  op("g6", "arith.mulf", "c_a", "g5");
  op("g7", "math.tanh", "g6", "");
  op("g8", "arith.addf", "c_one", "g7");
  op("g9", "arith.mulf", h, "g8");
  op("g10", "arith.mulf", "c_half", "g9");
  return "g10";
}

/// The end of a block: its last matmul, a (m x f) times w2 (f x h) into the
/// result (m x h, type X) from a zero init (%zero, of element type T,
/// defined before), the residual x if any, the result's sharding and the
/// return.
std::string downProjection(const ImportCase &c, const std::string &a,
                           const std::string &w2, const std::string &x,
                           const std::string &X, const std::string &MF,
                           const std::string &W2, const std::string &T) {
  std::string s = "  %e2 = tensor.empty() : " + X + "\n";
  s += "  %i2 = linalg.fill ins(%zero : " + T + ") outs(%e2 : " + X + ") -> " +
       X + "\n";
  s += "  %y = linalg.matmul ins(%" + a + ", %" + w2 + " : " + MF + ", " + W2 +
       ") outs(%i2 : " + X + ") -> " + X + "\n";
  std::string y = "y";
  if (c.residual) {
    s += "  %z = arith.addf %y, %" + x + " : " + X + "\n";
    y = "z";
  }
  y = annotate(s, y, "sx", X);
  s += "  return %" + y + " : " + X + "\n}\n";
  return s;
}

/// A block's @main up to its first op: the grid, the signature (x, then
/// `params`, returning x's type X) and the shardings of x's rows (sx), of
/// the first layers' weights (s1, N split) and of the down projection's
/// (s2, K split).
std::string blockStart(const ImportCase &c, const std::string &X,
                       const std::string &params) {
  std::string s = "shard.grid @tp(shape = " + std::to_string(c.w) + ")\n";
  s += "func.func @main(%x: " + X + ", " + params + ") -> " + X + " {\n";
  s += sharding("sx", 0, c.rowOffsets);
  s += sharding("s1", 1, c.weightOffsets);
  s += sharding("s2", 0, c.weightOffsets);
  return s;
}

std::string mlpText(const ImportCase &c) {
  const rt::DType t = c.dtype;
  const std::string T = elementType(t);
  const int64_t m = product(c.batch), h = c.k, f = c.n;
  const std::string X = tensorType({m, h}, t);
  const std::string W1 = tensorType({h, f}, t), W2 = tensorType({f, h}, t);
  const std::string B1 = tensorType({f}, t), MF = tensorType({m, f}, t);
  std::string s =
      blockStart(c, X, "%w1: " + W1 + ", %b1: " + B1 + ", %w2: " + W2);
  const std::string x = annotate(s, "x", "sx", X);
  const std::string w1 = annotate(s, "w1", "s1", W1);
  const std::string w2 = annotate(s, "w2", "s2", W2);
  s += "  %e = tensor.empty() : " + MF + "\n";
  s += "  %bb = linalg.broadcast ins(%b1 : " + B1 + ") outs(%e : " + MF +
       ") dimensions = [0]\n";
  s += "  %h = linalg.matmul ins(%" + x + ", %" + w1 + " : " + X + ", " + W1 +
       ") outs(%bb : " + MF + ") -> " + MF + "\n";
  std::string a;
  if (narrow(t)) {
    // torch-mlir's idiom: the activation in f32 between extf and truncf.
    const std::string F32 = tensorType({m, f}, rt::DType::F32);
    s += "  %hf = arith.extf %h : " + MF + " to " + F32 + "\n";
    const std::string g = gelu(s, "hf", F32, "f32");
    s += "  %a = arith.truncf %" + g + " : " + F32 + " to " + MF + "\n";
    a = "a";
  } else {
    a = gelu(s, "h", MF, T);
  }
  s += "  %zero = arith.constant 0.0 : " + T + "\n";
  return s + downProjection(c, a, w2, x, X, MF, W2, T);
}

/// SwiGLU: y = (silu(x Wg) * (x Wu)) W2 (+ x), silu(g) = g / (1 + exp(-g)),
/// in arith / math ops on tensors (in f32 between extf and truncf for f16
/// and bf16); the gate and the up projection share the gathered x.
std::string swigluText(const ImportCase &c) {
  const rt::DType t = c.dtype;
  const std::string T = elementType(t);
  const int64_t m = product(c.batch), h = c.k, f = c.n;
  const std::string X = tensorType({m, h}, t);
  const std::string W1 = tensorType({h, f}, t), W2 = tensorType({f, h}, t);
  const std::string MF = tensorType({m, f}, t);
  std::string s =
      blockStart(c, X, "%wg: " + W1 + ", %wu: " + W1 + ", %w2: " + W2);
  const std::string x = annotate(s, "x", "sx", X);
  const std::string wg = annotate(s, "wg", "s1", W1);
  const std::string wu = annotate(s, "wu", "s1", W1);
  const std::string w2 = annotate(s, "w2", "s2", W2);
  s += "  %zero = arith.constant 0.0 : " + T + "\n";
  for (const char *p : {"g", "u"}) {
    const std::string name = p;
    s += "  %e_" + name + " = tensor.empty() : " + MF + "\n";
    s += "  %i_" + name + " = linalg.fill ins(%zero : " + T + ") outs(%e_" +
         name + " : " + MF + ") -> " + MF + "\n";
    s += "  %" + name + " = linalg.matmul ins(%" + x + ", %" +
         (name == "g" ? wg : wu) + " : " + X + ", " + W1 + ") outs(%i_" + name +
         " : " + MF + ") -> " + MF + "\n";
  }
  const std::string F = narrow(t) ? tensorType({m, f}, rt::DType::F32) : MF;
  std::string g = "g", u = "u";
  if (narrow(t)) {
    s += "  %gf = arith.extf %g : " + MF + " to " + F + "\n";
    s += "  %uf = arith.extf %u : " + MF + " to " + F + "\n";
    g = "gf";
    u = "uf";
  }
  s += "  %c_one = arith.constant dense<1.0> : " + F + "\n";
  s += "  %ng = arith.negf %" + g + " : " + F + "\n";
  s += "  %ex = math.exp %ng : " + F + "\n";
  s += "  %den = arith.addf %c_one, %ex : " + F + "\n";
  s += "  %sg = arith.divf %" + g + ", %den : " + F + "\n";
  s += "  %prod = arith.mulf %sg, %" + u + " : " + F + "\n";
  std::string a = "prod";
  if (narrow(t)) {
    s += "  %a = arith.truncf %prod : " + F + " to " + MF + "\n";
    a = "a";
  }
  return s + downProjection(c, a, w2, x, X, MF, W2, T);
}

/// Values in +-[0.25, 1] (never zero), rounded to the dtype: the bytes and
/// the same values exactly in float64.
testkit::HostTensor randomTensor(rt::DType t, int64_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> mag(0.25, 1.0);
  testkit::HostTensor h;
  std::vector<double> v(static_cast<size_t>(count));
  for (double &e : v)
    e = (rng() & 1 ? -1.0 : 1.0) * mag(rng);
  h.bytes.resize(static_cast<size_t>(count) * rt::dtypeSize(t));
  rt::convertFromF64(t, v.data(), h.bytes.data(), count);
  h.values.resize(v.size());
  rt::convertToF64(t, h.bytes.data(), h.values.data(), count);
  return h;
}

uint64_t seedOf(const std::string &name, const char *what) {
  return std::hash<std::string>{}(name + "/" + what);
}

/// The float64 reference of the global output and its error scale.
testkit::Reference reference(const ImportCase &c,
                             const std::vector<testkit::HostTensor> &args) {
  const int64_t m = product(c.batch);
  const std::vector<double> &x = args[0].values;
  testkit::Reference ref;
  if (c.kind == ImportCase::Kind::Linear) {
    const bool nk = c.weight != ImportCase::Weight::KN;
    const std::vector<double> &w = args[1].values;
    const bool bias = c.bias != ImportCase::Bias::None;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        double y = 0, scale = 0;
        for (int64_t k = 0; k < c.k; ++k) {
          const double p =
              x[i * c.k + k] * (nk ? w[j * c.k + k] : w[k * c.n + j]);
          y += p;
          scale += std::fabs(p);
        }
        if (bias) {
          y += args[2].values[j];
          scale += std::fabs(args[2].values[j]);
        }
        ref.y.push_back(y);
        ref.scale.push_back(scale);
      }
    return ref;
  }
  // The blocks: a = the activation of row i, y = a W2 (+ x). MLP:
  // a = gelu(x W1 + b1), whose scale carries the error of h through GELU
  // (|gelu'| < 1.13). SwiGLU: a = silu(g) u, g = x Wg, u = x Wu, whose scale
  // carries the errors of g (|silu'| < 1.1) and of u.
  const int64_t h = c.k, f = c.n;
  const bool swiglu = c.kind == ImportCase::Kind::SwiGlu;
  const std::vector<double> &w1 = args[1].values, &w2 = args[3].values;
  const std::vector<double> &second = args[2].values; // Wu or b1
  for (int64_t i = 0; i < m; ++i) {
    std::vector<double> a(f), sa(f);
    for (int64_t j = 0; j < f; ++j) {
      if (swiglu) {
        double g = 0, u = 0, sg = 0, su = 0;
        for (int64_t k = 0; k < h; ++k) {
          g += x[i * h + k] * w1[k * f + j];
          u += x[i * h + k] * second[k * f + j];
          sg += std::fabs(x[i * h + k] * w1[k * f + j]);
          su += std::fabs(x[i * h + k] * second[k * f + j]);
        }
        const double silu = g / (1 + std::exp(-g));
        a[j] = silu * u;
        sa[j] = std::fabs(a[j]) + 1.2 * sg * std::fabs(u) +
                std::fabs(silu) * su + 1.2 * sg * su;
        continue;
      }
      double v = second[j], s = std::fabs(second[j]);
      for (int64_t k = 0; k < h; ++k) {
        v += x[i * h + k] * w1[k * f + j];
        s += std::fabs(x[i * h + k] * w1[k * f + j]);
      }
      a[j] = 0.5 * v *
             (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
      sa[j] = std::fabs(a[j]) + 1.2 * s;
    }
    for (int64_t k = 0; k < h; ++k) {
      double y = c.residual ? x[i * h + k] : 0;
      double s = std::fabs(y);
      for (int64_t j = 0; j < f; ++j) {
        y += a[j] * w2[j * h + k];
        s += sa[j] * std::fabs(w2[j * h + k]);
      }
      ref.y.push_back(y);
      ref.scale.push_back(s);
    }
  }
  return ref;
}

/// Rank r's range of x's leading dim.
rt::Range rowsOf(const ImportCase &c, int r) {
  std::vector<int64_t> placements;
  for (int i = 0; i < c.w; ++i)
    placements.push_back(i);
  return rt::ChunkLayout(c.batch[0], placements, c.rowOffsets).ofRank(r);
}

std::string describe(const rt::Status &s) {
  return s.isOk() ? std::string() : s.message();
}

} // namespace

std::string ImportCase::name() const {
  std::string s = kind == Kind::Mlp      ? "mlp"
                  : kind == Kind::SwiGlu ? "swiglu"
                                         : (colWise ? "col" : "row");
  s += "_W" + std::to_string(w) + "_x" + xName(x);
  if (kind == Kind::Linear)
    s += std::string("_") + weightName(weight) + "_" + biasName(bias) +
         (replicatedResult ? "_yrepl" : "_yrows");
  else if (residual)
    s += "_residual";
  s += "_B" + joinDims(batch, "x") + "_K" + std::to_string(k) + "N" +
       std::to_string(n);
  if (!rowOffsets.empty())
    s += "_ro" + joinDims(rowOffsets, "x");
  if (!weightOffsets.empty())
    s += "_wo" + joinDims(weightOffsets, "x");
  if (perRankFiles)
    s += "_rankfiles";
  return s + "_" + rt::dtypeName(dtype);
}

void PrintTo(const ImportCase &c, std::ostream *os) { *os << c.name(); }

std::vector<int64_t> ImportCase::xShape() const {
  std::vector<int64_t> s = batch;
  s.push_back(k);
  return s;
}

std::vector<int64_t> ImportCase::yShape() const {
  std::vector<int64_t> s = batch;
  s.push_back(kind == Kind::Linear ? n : k);
  return s;
}

std::map<rt::OpCode, int> ImportCase::expectedCollectives() const {
  using rt::OpCode;
  if (kind != Kind::Linear)
    return {{OpCode::AllGather, 1}, {OpCode::ReduceScatter, 1}};
  if (x == X::Rows)
    return colWise ? std::map<OpCode, int>{{OpCode::AllGather, 1},
                                           {OpCode::AllToAll, 1}}
                   : std::map<OpCode, int>{{OpCode::AllToAll, 1},
                                           {OpCode::ReduceScatter, 1}};
  // Replicated x (or x split on K): never gathered; the result's layout
  // says the one collective.
  if (colWise)
    return {{replicatedResult ? OpCode::AllGather : OpCode::AllToAll, 1}};
  return {{replicatedResult ? OpCode::AllReduce : OpCode::ReduceScatter, 1}};
}

bool ImportCase::unevenRows() const {
  if (x != X::Rows || rowOffsets.size() < 2)
    return false;
  for (size_t i = 2; i < rowOffsets.size(); ++i)
    if (rowOffsets[i] - rowOffsets[i - 1] != rowOffsets[1] - rowOffsets[0])
      return true;
  return false;
}

std::string importMlir(const ImportCase &c) {
  switch (c.kind) {
  case ImportCase::Kind::Linear:
    return linearText(c);
  case ImportCase::Kind::Mlp:
    return mlpText(c);
  case ImportCase::Kind::SwiGlu:
    return swigluText(c);
  }
  return "";
}

int64_t runImportCase(const ImportCase &c, const std::string &backend,
                      int onlyRank, const std::string &dir, std::string &report,
                      const CompileImport &compile) {
  const std::string who = c.name();
  rt::Program program;
  rt::RunConfig config;
  const std::string text = importMlir(c);
  if (rt::Status s = compile
                         ? compile(text, program, config.executor)
                         : testkit::compileMlir(text, "activations", program);
      !s) {
    report += who + ": " + s.message() + "\n";
    return 1;
  }
  int64_t failures = 0;
  // The collectives: exactly the expected ones; a replicated x is never
  // gathered (an all_gather, if any, is along the features).
  std::map<rt::OpCode, int> got;
  for (const rt::Instr &in : program.instrs) {
    if (in.op == rt::OpCode::AllGather || in.op == rt::OpCode::AllToAll ||
        in.op == rt::OpCode::ReduceScatter || in.op == rt::OpCode::AllReduce)
      ++got[in.op];
    if (in.op == rt::OpCode::AllGather && c.x != ImportCase::X::Rows &&
        in.along.dim == 0) {
      report += who + ": an all_gather along the rows of a replicated x\n";
      ++failures;
    }
  }
  // Compiled code's collectives are not instructions: the run's traffic
  // checks them (below).
  if (!compile && got != c.expectedCollectives()) {
    std::string list;
    for (const auto &[op, count] : got)
      list +=
          std::string(" ") + rt::opCodeName(op) + " x" + std::to_string(count);
    report += who + ": unexpected collectives:" + list + "\n" +
              rt::serializeProgram(program);
    ++failures;
  }
  if (program.worldSize != c.w) {
    report += who + ": the program runs on " +
              std::to_string(program.worldSize) + " ranks, the grid has " +
              std::to_string(c.w) + "\n";
    return failures + 1;
  }

  // The inputs, global.
  const rt::DType t = c.dtype;
  std::vector<std::vector<int64_t>> shapes = {c.xShape()};
  std::vector<const char *> names = {"x"};
  if (c.kind == ImportCase::Kind::Linear) {
    shapes.push_back(c.weight == ImportCase::Weight::KN
                         ? std::vector<int64_t>{c.k, c.n}
                         : std::vector<int64_t>{c.n, c.k});
    names.push_back("w");
    if (c.bias != ImportCase::Bias::None) {
      shapes.push_back({c.n});
      names.push_back("b");
    }
  } else if (c.kind == ImportCase::Kind::Mlp) {
    shapes.push_back({c.k, c.n});
    shapes.push_back({c.n});
    shapes.push_back({c.n, c.k});
    names.insert(names.end(), {"w1", "b1", "w2"});
  } else {
    shapes.push_back({c.k, c.n});
    shapes.push_back({c.k, c.n});
    shapes.push_back({c.n, c.k});
    names.insert(names.end(), {"wg", "wu", "w2"});
  }
  std::vector<testkit::HostTensor> args;
  config.backend = backend;
  config.blasThreads = 1;
  for (size_t i = 0; i < shapes.size(); ++i) {
    args.push_back(randomTensor(t, product(shapes[i]), seedOf(who, names[i])));
    const std::string path = dir + "/" + names[i] + ".npy";
    if (rt::Status s = rt::writeNpy(path, t, shapes[i], args[i].bytes.data());
        !s) {
      report += who + ": " + s.message() + "\n";
      return failures + 1;
    }
    config.argPaths.push_back(path);
  }
  if (c.perRankFiles && c.x == ImportCase::X::Rows) {
    // Each rank's own shard of x, cut as the module's offsets say.
    rt::ChunkSpec spec;
    for (int r = 0; r < c.w; ++r)
      spec.placements.push_back(r);
    spec.bounds = c.rowOffsets;
    for (int r = 0; r < c.w; ++r) {
      std::vector<uint8_t> chunk;
      rt::extractLocalChunk(args[0].bytes.data(), c.xShape(), t, spec, r,
                            chunk);
      std::vector<int64_t> shape = c.xShape();
      shape[0] = rowsOf(c, r).size;
      const std::string path = dir + "/x." + std::to_string(r) + ".npy";
      if (rt::Status s = rt::writeNpy(path, t, shape, chunk.data()); !s) {
        report += who + ": " + s.message() + "\n";
        return failures + 1;
      }
    }
    config.argPaths[0] = dir + "/x.{rank}.npy";
  }

  const testkit::Reference ref = reference(c, args);
  const int64_t cols = c.yShape().back();
  const int64_t inner = product(c.yShape()) / c.batch[0] / cols; // 3-D: B
  const double bound = shardlin::testing::roundingErrorBound(
      t, c.w + (c.kind == ImportCase::Kind::Linear ? 2 : 4));
  // Rank r's part of the reference: its rows, or all of it.
  auto expected = [&](int r, testkit::Reference &part,
                      std::vector<int64_t> &shape) {
    shape = c.yShape();
    if (c.replicatedResult) {
      part = ref;
      return;
    }
    const rt::Range rows = rowsOf(c, r);
    shape[0] = rows.size;
    const size_t from = static_cast<size_t>(rows.offset * inner * cols),
                 to = static_cast<size_t>((rows.offset + rows.size) * inner *
                                          cols);
    part.y.assign(ref.y.begin() + from, ref.y.begin() + to);
    part.scale.assign(ref.scale.begin() + from, ref.scale.begin() + to);
  };
  auto check = [&](const std::string &path, const std::string &what,
                   const testkit::Reference &part,
                   const std::vector<int64_t> &shape) {
    rt::NpyArray out;
    if (rt::Status s = rt::readNpy(path, out); !s) {
      report += who + " " + what + ": " + s.message() + "\n";
      return int64_t{1};
    }
    if (out.shape != shape) {
      report += who + " " + what + ": shape [" + joinDims(out.shape, ", ") +
                "], expected [" + joinDims(shape, ", ") + "]\n";
      return int64_t{1};
    }
    return testkit::compareWithReference(who + " " + what, t, out.data, cols,
                                         part.y, part.scale, bound, report);
  };

  // Each rank's own result ({rank}), then the global one.
  config.outPaths = {dir + "/y.{rank}.npy"};
  std::vector<rt::RankResult> ranks;
  if (std::string e =
          describe(rt::runProgramWithFiles(program, config, &ranks));
      !e.empty()) {
    report += who + ": " + e + "\n";
    return failures + 1;
  }
  // One collective call per expected collective, on every rank this
  // process ran (the plan's and the compiled code's alike), and the
  // compiled code's exchange of uneven row counts (the plan executor
  // exchanges sizes before it runs).
  int expectedCalls = compile && c.unevenRows() ? 1 : 0;
  for (const auto &[op, count] : c.expectedCollectives())
    expectedCalls += count;
  for (const rt::RankResult &r : ranks)
    if (r.stats.calls != static_cast<uint64_t>(expectedCalls)) {
      report += who + ": a rank made " + std::to_string(r.stats.calls) +
                " collective calls, expected " + std::to_string(expectedCalls) +
                "\n";
      ++failures;
    }
  // An all_reduce's bytes are the cost model's (allReduceTraffic): the
  // M x N partial products, f32 for f16 / bf16.
  if (c.expectedCollectives() ==
      std::map<rt::OpCode, int>{{rt::OpCode::AllReduce, 1}})
    for (const rt::RankResult &r : ranks) {
      uint64_t sent = 0;
      for (const auto &[out, in] :
           allReduceTraffic(static_cast<uint64_t>(product(c.batch) * c.n),
                            narrow(t) ? 4 : rt::dtypeSize(t), c.w, r.rank))
        sent += out;
      if (r.stats.bytesSent != sent) {
        report += who + ": rank " + std::to_string(r.rank) + " sent " +
                  std::to_string(r.stats.bytesSent) +
                  " bytes, the cost model's all-reduce " +
                  std::to_string(sent) + "\n";
        ++failures;
      }
    }
  for (int r = 0; r < c.w; ++r) {
    if (onlyRank >= 0 && r != onlyRank)
      continue;
    testkit::Reference part;
    std::vector<int64_t> shape;
    expected(r, part, shape);
    failures += check(dir + "/y." + std::to_string(r) + ".npy",
                      "rank " + std::to_string(r), part, shape);
  }
  config.outPaths = {dir + "/y.npy"};
  if (std::string e = describe(rt::runProgramWithFiles(program, config));
      !e.empty()) {
    report += who + " (global result): " + e + "\n";
    return failures + 1;
  }
  if (onlyRank <= 0)
    failures += check(dir + "/y.npy", "global result", ref, c.yShape());
  return failures;
}

//===----------------------------------------------------------------------===//
// The cases
//===----------------------------------------------------------------------===//

namespace {

const rt::DType kAllDTypes[] = {rt::DType::F32, rt::DType::F64, rt::DType::F16,
                                rt::DType::BF16};

/// Skewed offsets of n over w with empty shards (floor(n i^2 / w^2)), as
/// in E2ESupport.cpp's explicit bounds.
std::vector<int64_t> skewed(int64_t n, int64_t w) {
  std::vector<int64_t> o;
  for (int64_t i = 0; i <= w; ++i)
    o.push_back(n * i * i / (w * w));
  return o;
}

void addLinears(std::vector<ImportCase> &all, int w, bool small) {
  using C = ImportCase;
  // Every weight orientation and bias form, both splits, even.
  for (bool col : {true, false})
    for (C::Weight wt :
         {C::Weight::KN, C::Weight::NKMap, C::Weight::NKTranspose})
      for (C::Bias b : {C::Bias::Generic, C::Bias::BroadcastAdd, C::Bias::Init,
                        C::Bias::None}) {
        if (small && b != C::Bias::Generic && b != C::Bias::Init)
          continue;
        C c;
        c.w = w;
        c.colWise = col;
        c.weight = wt;
        c.bias = b;
        c.k = 4 * w;
        c.n = 3 * w;
        c.batch = {2 * w};
        c.x = C::X::Rows;
        all.push_back(c);
        // The replicated forms: x replicated, the result replicated or
        // split on its rows; a row-wise layer's x split on K.
        if (small && wt != C::Weight::KN)
          continue;
        for (bool replicatedResult : {true, false}) {
          C r = c;
          r.x = col ? C::X::Replicated : C::X::Features;
          r.replicatedResult = replicatedResult;
          all.push_back(r);
          if (!col) {
            r.x = C::X::Replicated;
            all.push_back(r);
          }
        }
      }
  // Uneven sharded_dims_offsets with empty shards, on the weight and on
  // the rows, every dtype; per-rank files for x.
  for (bool col : {true, false})
    for (rt::DType dt : kAllDTypes) {
      C c;
      c.w = w;
      c.dtype = dt;
      c.colWise = col;
      c.weight = col ? C::Weight::KN : C::Weight::NKMap;
      c.k = 11;
      c.n = 10;
      c.batch = {7};
      c.weightOffsets = skewed(col ? c.n : c.k, w);
      c.rowOffsets = skewed(7, w);
      c.x = C::X::Rows;
      all.push_back(c);
      c.perRankFiles = true;
      c.bias = C::Bias::BroadcastAdd;
      all.push_back(c);
      C r = c;
      r.perRankFiles = false;
      r.x = col ? C::X::Replicated : C::X::Features;
      r.replicatedResult = true;
      all.push_back(r);
      r.replicatedResult = false;
      all.push_back(r);
    }
  // N-D: a 3-D x split on its leading dim, collapsed around the matmul.
  for (bool col : {true, false})
    for (rt::DType dt : {rt::DType::F32, rt::DType::BF16}) {
      C c;
      c.w = w;
      c.dtype = dt;
      c.colWise = col;
      c.batch = {w + 1, 3};
      c.rowOffsets = skewed(w + 1, w);
      c.k = 9;
      c.n = 13;
      c.weightOffsets = skewed(col ? c.n : c.k, w);
      all.push_back(c);
    }
}

void addMlps(std::vector<ImportCase> &all, int w) {
  for (rt::DType dt : kAllDTypes)
    for (bool uneven : {false, true}) {
      ImportCase c;
      c.kind = ImportCase::Kind::Mlp;
      c.w = w;
      c.dtype = dt;
      c.k = 8;
      c.n = uneven ? 13 : 4 * w;
      c.batch = {uneven ? 10 : 2 * w};
      if (uneven) {
        c.rowOffsets = skewed(10, w);
        c.weightOffsets = skewed(13, w);
      }
      c.residual = uneven || dt == rt::DType::F32;
      all.push_back(c);
      c.kind = ImportCase::Kind::SwiGlu;
      all.push_back(c);
    }
}

} // namespace

std::vector<ImportCase> importThreadsCases() {
  std::vector<ImportCase> all;
  addLinears(all, 4, false);
  addLinears(all, 3, true);
  addMlps(all, 4);
  addMlps(all, 2);
  return all;
}

std::vector<ImportCase> importJitCases() {
  std::vector<ImportCase> all;
  for (int w : {4, 3})
    for (ImportCase::Weight wt :
         {ImportCase::Weight::KN, ImportCase::Weight::NKMap,
          ImportCase::Weight::NKTranspose})
      for (ImportCase::Bias b :
           {ImportCase::Bias::Generic, ImportCase::Bias::BroadcastAdd,
            ImportCase::Bias::Init, ImportCase::Bias::None})
        for (rt::DType dt : kAllDTypes) {
          ImportCase c;
          c.w = w;
          c.dtype = dt;
          c.weight = wt;
          c.bias = b;
          c.x = ImportCase::X::Replicated;
          c.replicatedResult = true;
          c.k = 4 * w + 1;
          c.n = 3 * w;
          c.batch = {5};
          all.push_back(c);
        }
  // The threads suite's small set and blocks, x split on its rows at
  // uneven offsets included: each rank's x then has its own row count, which
  // the compiled code exchanges (shardlin.gather_bounds) before the
  // collectives that stack the rows and split them back.
  addLinears(all, 4, true);
  addMlps(all, 3);
  return all;
}

std::vector<ImportCase> importMpiCases(int w) {
  std::vector<ImportCase> all;
  if (w < 2)
    return all;
  addLinears(all, w, true);
  addMlps(all, w);
  return all;
}

} // namespace shardlin::e2e
