//===- AttentionReference.h - float64 attention, its gradients, RoPE -*- C++ -*-===//
//
// The attention tests' reference: global tensors [B, S, heads * D], plain
// loops in float64, written from the definitions (docs/runtime.md,
// "Attention and RoPE"), independent of the runtime's code. `localOf`
// restricts a reference to one rank's heads, as the runtime computes them.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_TEST_ATTENTIONREFERENCE_H
#define SHARDLIN_RUNTIME_TEST_ATTENTIONREFERENCE_H

#include "shardlin/runtime/base/DType.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace shardlin::rt::test {

/// The sizes and options of one global attention.
struct AttnSpec {
  int64_t b = 1, s = 1, hq = 1, hkv = 1, d = 1;
  double scale = 1.0;
  bool causal = false;
  bool mask = false;
  int64_t group() const { return hq / hkv; }
};

/// The global inputs (mask [S, S] if spec.mask).
struct AttnInputs {
  std::vector<double> q, k, v, dO, mask;
};

/// The reference's outputs restricted to query heads [qb, qe) and kv heads
/// [kb, ke): o and dq of those query heads, dk and dv of those kv heads
/// summed over those query heads only (the rank-local partial sums).
struct AttnOutputs {
  std::vector<double> o, dq, dk, dv;
};

inline double &at(std::vector<double> &x, int64_t heads, const AttnSpec &sp,
                  int64_t b, int64_t i, int64_t h, int64_t d) {
  return x[size_t(((b * sp.s + i) * heads + h) * sp.d + d)];
}

inline AttnOutputs referenceAttention(const AttnSpec &sp, AttnInputs in,
                                      int64_t qb, int64_t qe, int64_t kb,
                                      int64_t ke) {
  const int64_t nq = qe - qb, nkv = ke - kb, S = sp.s, D = sp.d;
  AttnOutputs out;
  out.o.assign(size_t(sp.b * S * nq * D), 0.0);
  out.dq = out.o;
  out.dk.assign(size_t(sp.b * S * nkv * D), 0.0);
  out.dv = out.dk;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> p(size_t(S * S)), dp(size_t(S * S));
  for (int64_t b = 0; b < sp.b; ++b)
    for (int64_t h = qb; h < qe; ++h) {
      const int64_t t = h / sp.group();
      // P: softmax over keys of scale q.k + mask, causal keys j <= i.
      for (int64_t i = 0; i < S; ++i) {
        double most = -inf;
        for (int64_t j = 0; j < S; ++j) {
          double x = 0;
          for (int64_t d = 0; d < D; ++d)
            x += at(in.q, sp.hq, sp, b, i, h, d) * at(in.k, sp.hkv, sp, b, j, t, d);
          x = sp.scale * x + (sp.mask ? in.mask[size_t(i * S + j)] : 0.0);
          if (sp.causal && j > i)
            x = -inf;
          p[size_t(i * S + j)] = x;
          most = std::max(most, x);
        }
        double sum = 0;
        for (int64_t j = 0; j < S; ++j) {
          double &e = p[size_t(i * S + j)];
          e = most == -inf ? 0.0 : std::exp(e - most);
          sum += e;
        }
        for (int64_t j = 0; j < S; ++j)
          p[size_t(i * S + j)] = sum > 0 ? p[size_t(i * S + j)] / sum : 0.0;
      }
      // O = P V; dP = dO V^T; delta = rowsum(dO o O); dS = P (dP - delta).
      for (int64_t i = 0; i < S; ++i) {
        double delta = 0;
        for (int64_t d = 0; d < D; ++d) {
          double o = 0;
          for (int64_t j = 0; j < S; ++j)
            o += p[size_t(i * S + j)] * at(in.v, sp.hkv, sp, b, j, t, d);
          at(out.o, nq, sp, b, i, h - qb, d) = o;
          delta += o * at(in.dO, sp.hq, sp, b, i, h, d);
        }
        for (int64_t j = 0; j < S; ++j) {
          double x = 0;
          for (int64_t d = 0; d < D; ++d)
            x += at(in.dO, sp.hq, sp, b, i, h, d) * at(in.v, sp.hkv, sp, b, j, t, d);
          dp[size_t(i * S + j)] = p[size_t(i * S + j)] * (x - delta);
        }
      }
      for (int64_t i = 0; i < S; ++i)
        for (int64_t d = 0; d < D; ++d) {
          double x = 0;
          for (int64_t j = 0; j < S; ++j)
            x += dp[size_t(i * S + j)] * at(in.k, sp.hkv, sp, b, j, t, d);
          at(out.dq, nq, sp, b, i, h - qb, d) = sp.scale * x;
        }
      if (t < kb || t >= ke)
        continue;
      for (int64_t j = 0; j < S; ++j)
        for (int64_t d = 0; d < D; ++d) {
          double xk = 0, xv = 0;
          for (int64_t i = 0; i < S; ++i) {
            xk += dp[size_t(i * S + j)] * at(in.q, sp.hq, sp, b, i, h, d);
            xv += p[size_t(i * S + j)] * at(in.dO, sp.hq, sp, b, i, h, d);
          }
          at(out.dk, nkv, sp, b, j, t - kb, d) += sp.scale * xk;
          at(out.dv, nkv, sp, b, j, t - kb, d) += xv;
        }
    }
  return out;
}

/// Heads [hb, he) of a [B, S, heads * D] tensor.
inline std::vector<double> headsOfTensor(const std::vector<double> &x,
                                         const AttnSpec &sp, int64_t heads,
                                         int64_t hb, int64_t he) {
  std::vector<double> y;
  for (int64_t row = 0; row < sp.b * sp.s; ++row)
    for (int64_t h = hb; h < he; ++h)
      for (int64_t d = 0; d < sp.d; ++d)
        y.push_back(x[size_t((row * heads + h) * sp.d + d)]);
  return y;
}

/// Rotate-half RoPE of x [rows = B * S, heads * D] with tables [S, D/2].
inline std::vector<double> referenceRope(const std::vector<double> &x,
                                         const std::vector<double> &cos,
                                         const std::vector<double> &sin,
                                         int64_t b, int64_t s, int64_t heads,
                                         int64_t d, bool inverse) {
  std::vector<double> y(x.size());
  const int64_t half = d / 2;
  for (int64_t row = 0; row < b * s; ++row)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < half; ++i) {
        const int64_t p = row % s;
        const size_t a = size_t((row * heads + h) * d + i), c = a + size_t(half);
        const double cs = cos[size_t(p * half + i)];
        const double sn = (inverse ? -1 : 1) * sin[size_t(p * half + i)];
        y[a] = x[a] * cs - x[c] * sn;
        y[c] = x[c] * cs + x[a] * sn;
      }
  return y;
}

/// `v` rounded to type t (its values replaced by what t holds), and its
/// bytes in t.
inline std::vector<uint8_t> storeAs(DType t, std::vector<double> &v) {
  std::vector<uint8_t> bytes(v.size() * dtypeSize(t) + 1);
  convertFromF64(t, v.data(), bytes.data(), v.size());
  convertToF64(t, bytes.data(), v.data(), v.size());
  return bytes;
}

/// max |got - want| / max |want|: the normwise relative error.
inline double relativeError(const std::vector<double> &got,
                            const std::vector<double> &want) {
  if (got.size() != want.size())
    return std::numeric_limits<double>::infinity();
  double err = 0, mag = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (!std::isfinite(got[i])) // NaN, or the poison left unwritten
      return std::numeric_limits<double>::infinity();
    err = std::max(err, std::fabs(got[i] - want[i]));
    mag = std::max(mag, std::fabs(want[i]));
  }
  return mag > 0 ? err / mag : err;
}

} // namespace shardlin::rt::test

#endif // SHARDLIN_RUNTIME_TEST_ATTENTIONREFERENCE_H
