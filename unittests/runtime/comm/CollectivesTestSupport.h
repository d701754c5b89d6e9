//===- CollectivesTestSupport.h - Shared by the collectives tests -*- C++
//-*-===//
//
// Helpers of the collectives tests of every backend: random values of each
// dtype as raw bits, poisoned receive buffers, uneven/empty split patterns,
// displacement layouts with gaps, the reference for reductions with its
// error bound, and the per-rank checks of the collective suites
// (CollectiveSuites.h). No GoogleTest here: failures are collected as text
// (Failures) on the rank threads and reported by the test's thread.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_TEST_COLLECTIVESTESTSUPPORT_H
#define SHARDLIN_RUNTIME_TEST_COLLECTIVESTESTSUPPORT_H

#include "shardlin/runtime/comm/Communicator.h"
#include "shardlin/runtime/base/DType.h"
#include "shardlin/runtime/base/Status.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace shardlin::rt::testing {

using Bytes = std::vector<unsigned char>;

constexpr DType kAllDTypes[] = {DType::F16, DType::BF16, DType::F32,
                                DType::F64};

/// Bit layout of an IEEE-style binary format.
struct BitFormat {
  int bits;
  int mantissaBits;
  int bias;
};

inline BitFormat bitFormat(DType t) {
  switch (t) {
  case DType::F16:
    return {16, 10, 15};
  case DType::BF16:
    return {16, 7, 127};
  case DType::F32:
    return {32, 23, 127};
  case DType::F64:
    return {64, 52, 1023};
  }
  return {64, 52, 1023};
}

inline uint64_t loadBits(DType t, const unsigned char *p) {
  uint64_t v = 0;
  std::memcpy(&v, p, dtypeSize(t)); // little-endian host
  return v;
}

inline void storeBits(DType t, unsigned char *p, uint64_t v) {
  std::memcpy(p, &v, dtypeSize(t));
}

/// memcpy / memcmp for possibly empty ranges: an empty vector's data() may
/// be null, which memcpy and memcmp do not accept even for 0 bytes.
inline void copyBytes(void *dst, const void *src, size_t n) {
  if (n != 0)
    std::memcpy(dst, src, n);
}
inline bool sameBytes(const void *a, const void *b, size_t n) {
  return n == 0 || std::memcmp(a, b, n) == 0;
}

/// Exact value of one element (NaN for Inf/NaN patterns, which no test
/// expects to see).
inline double decode(DType t, const unsigned char *p) {
  BitFormat f = bitFormat(t);
  uint64_t v = loadBits(t, p);
  bool negative = (v >> (f.bits - 1)) & 1;
  int expBits = f.bits - 1 - f.mantissaBits;
  uint64_t exp = (v >> f.mantissaBits) & ((uint64_t(1) << expBits) - 1);
  uint64_t mant = v & ((uint64_t(1) << f.mantissaBits) - 1);
  double value;
  if (exp == (uint64_t(1) << expBits) - 1)
    return std::nan("");
  if (exp == 0)
    value = std::ldexp(static_cast<double>(mant), 1 - f.bias - f.mantissaBits);
  else
    value =
        std::ldexp(static_cast<double>(mant | (uint64_t(1) << f.mantissaBits)),
                   static_cast<int>(exp) - f.bias - f.mantissaBits);
  return negative ? -value : value;
}

/// Fills n elements with random finite, non-zero values whose unbiased
/// binary exponent lies in [minExp, maxExp]: random sign and mantissa bits.
/// Built from bits so that data movement tests need no conversion code.
inline void fillRandom(DType t, unsigned char *dst, int64_t n,
                       std::mt19937_64 &rng, int minExp, int maxExp) {
  BitFormat f = bitFormat(t);
  std::uniform_int_distribution<int> expDist(minExp, maxExp);
  for (int64_t i = 0; i < n; ++i) {
    uint64_t sign = rng() & 1;
    uint64_t exp = static_cast<uint64_t>(expDist(rng) + f.bias);
    uint64_t mant = rng() & ((uint64_t(1) << f.mantissaBits) - 1);
    uint64_t v = (sign << (f.bits - 1)) | (exp << f.mantissaBits) | mant;
    storeBits(t, dst + i * dtypeSize(t), v);
  }
}

/// Widest exponent range of normal numbers, for data movement tests.
inline void fillRandomAnyMagnitude(DType t, unsigned char *dst, int64_t n,
                                   std::mt19937_64 &rng) {
  BitFormat f = bitFormat(t);
  int maxExp = f.bias;     // largest finite exponent
  int minExp = 1 - f.bias; // smallest normal exponent
  fillRandom(t, dst, n, rng, minExp, maxExp);
}

/// Values in +-[1/4, 8) for reductions: sums of a few stay far from
/// overflow, and mixed signs exercise cancellation.
inline void fillRandomForSums(DType t, unsigned char *dst, int64_t n,
                              std::mt19937_64 &rng) {
  fillRandom(t, dst, n, rng, -2, 2);
}

/// Receive buffers start as all 0xFF bytes: a NaN in every dtype, which no
/// generated value equals, so an element that was not written shows.
constexpr unsigned char kPoisonByte = 0xFF;

inline bool isPoison(const unsigned char *p, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i)
    if (p[i] != kPoisonByte)
      return false;
  return true;
}

/// PyTorch/DESIGN.md chunking: split = ceil(n / W), chunk i covers
/// [i*split, min(n, (i+1)*split)), possibly empty.
inline std::vector<int64_t> chunkSizes(int64_t n, int w) {
  std::vector<int64_t> sizes(w);
  int64_t split = (n + w - 1) / w;
  for (int i = 0; i < w; ++i)
    sizes[i] = std::max<int64_t>(0, std::min(n - i * split, split));
  return sizes;
}

/// Where W blocks of the given sizes sit in one buffer: a random block order
/// and random gaps (0-2 elements) before each block, plus 2 trailing
/// elements, so that writes out of place or past the end hit poison.
struct Layout {
  std::vector<int64_t> displs;
  int64_t extent = 0; // elements in the buffer
};

inline Layout makeLayout(const std::vector<int64_t> &counts,
                         std::mt19937_64 &rng) {
  int w = static_cast<int>(counts.size());
  std::vector<int> order(w);
  for (int i = 0; i < w; ++i)
    order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  Layout layout;
  layout.displs.assign(w, 0);
  int64_t at = 0;
  for (int b : order) {
    at += static_cast<int64_t>(rng() % 3);
    layout.displs[b] = at;
    at += counts[b];
  }
  layout.extent = at + 2;
  return layout;
}

/// The split patterns every collective is run with, for W ranks: even,
/// chunked with empty chunks at the end, random with zeros, one non-empty
/// rank, all empty, and one large enough to cross the reduction block size.
inline std::vector<std::vector<int64_t>> countPatterns(int w, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<int64_t>> patterns;
  patterns.push_back(std::vector<int64_t>(w, 3));
  patterns.push_back(chunkSizes(5, w));
  patterns.push_back(chunkSizes(2 * w + 1, w));
  std::vector<int64_t> random(w);
  for (auto &c : random)
    c = static_cast<int64_t>(rng() % 6); // 0..5, zeros included
  patterns.push_back(random);
  std::vector<int64_t> one(w, 0);
  one[w - 1] = 7;
  patterns.push_back(one);
  patterns.push_back(std::vector<int64_t>(w, 0));
  std::vector<int64_t> large(w);
  for (int i = 0; i < w; ++i)
    large[i] = 600 + 37 * i;
  patterns.push_back(large);
  return patterns;
}

/// Send-count matrices C[s][d] for allToAllV (rank s sends C[s][d] to d).
inline std::vector<std::vector<std::vector<int64_t>>>
matrixPatterns(int w, uint64_t seed) {
  std::mt19937_64 rng(seed);
  using Matrix = std::vector<std::vector<int64_t>>;
  std::vector<Matrix> patterns;
  // Row-wise linear: every rank sends chunk d of its 5 columns to rank d.
  patterns.push_back(Matrix(w, chunkSizes(5, w)));
  Matrix random(w, std::vector<int64_t>(w));
  for (auto &row : random)
    for (auto &c : row)
      c = static_cast<int64_t>(rng() % 5);
  patterns.push_back(random);
  Matrix diagonal(w, std::vector<int64_t>(w, 0));
  for (int i = 0; i < w; ++i)
    diagonal[i][i] = 4;
  patterns.push_back(diagonal);
  Matrix fromZero(w, std::vector<int64_t>(w, 0));
  for (int d = 0; d < w; ++d)
    fromZero[0][d] = 300 + d;
  patterns.push_back(fromZero);
  patterns.push_back(Matrix(w, std::vector<int64_t>(w, 0)));
  return patterns;
}

/// The sum the runtime promises, emulated: elementwise over sources in rank
/// order, f64 in f64, f32 in f32, f16/bf16 in f32 rounded once.
inline Bytes rankOrderSum(DType t,
                          const std::vector<const unsigned char *> &srcs,
                          int64_t n) {
  const size_t es = dtypeSize(t);
  Bytes out(n * es);
  for (int64_t i = 0; i < n; ++i) {
    unsigned char *o = out.data() + i * es;
    if (t == DType::F64) {
      double acc = decode(t, srcs[0] + i * es);
      for (size_t k = 1; k < srcs.size(); ++k)
        acc += decode(t, srcs[k] + i * es);
      std::memcpy(o, &acc, 8);
      continue;
    }
    float acc = static_cast<float>(decode(t, srcs[0] + i * es));
    for (size_t k = 1; k < srcs.size(); ++k)
      acc += static_cast<float>(decode(t, srcs[k] + i * es));
    if (srcs.size() == 1) { // one source: a bit-exact copy
      std::memcpy(o, srcs[0] + i * es, es);
    } else if (t == DType::F32) {
      std::memcpy(o, &acc, 4);
    } else {
      uint16_t h = t == DType::F16 ? floatToHalf(acc) : floatToBf16(acc);
      std::memcpy(o, &h, 2);
    }
  }
  return out;
}

/// Bound on |computed - exact| for a sum of W terms with sum of magnitudes
/// `sumAbs` and exact (f64) value `exact`:
///  - accumulation in type A (f64 for f64, f32 otherwise) of W terms in rank
///    order: recursive summation errs by at most gamma_{W-1} * sumAbs, with
///    gamma_k = k*u/(1 - k*u) and u = 2^-53 (f64) or 2^-24 (f32). For W = 8
///    that is < 8e-16 * sumAbs for f64 and < 4.2e-7 * sumAbs for f32, inside
///    the 1e-12 / 1e-6 relative bounds asked for;
///  - f16/bf16 then round once to the output: at most u_out * |value| with
///    u_out = 2^-11 (f16) / 2^-8 (bf16), i.e. half of the 2^-10 / 2^-7 ulp
///    of 1, plus half the smallest f16 subnormal (2^-25) should the value be
///    subnormal; no other factor is needed because there is one rounding.
/// With cancellation |exact| can be far below sumAbs, which is why the
/// accumulation term is relative to sumAbs, not to the result.
inline double sumTolerance(DType t, int w, double sumAbs, double exact) {
  double u = t == DType::F64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
  double k = w - 1;
  double acc = k * u / (1 - k * u) * sumAbs;
  double uOut = 0, tiny = 0;
  if (t == DType::F16) {
    uOut = std::ldexp(1.0, -11);
    tiny = std::ldexp(1.0, -25);
  } else if (t == DType::BF16) {
    uOut = std::ldexp(1.0, -8);
    tiny = std::ldexp(1.0, -134);
  }
  return acc + uOut * (std::fabs(exact) + acc) + tiny;
}

/// Checks n reduced elements at `got` against the f64 sum of the sources
/// within sumTolerance only: for sums whose order the backend does not fix
/// (MPI's reductions, NCCL's all-reduce). Returns the first problem, or ""
/// if none.
inline std::string checkSumWithinBound(
    DType t, const std::vector<const unsigned char *> &srcs,
    const unsigned char *got, int64_t n) {
  const size_t es = dtypeSize(t);
  for (int64_t i = 0; i < n; ++i) {
    // The reference is summed in long double: with x86-64's 64-bit
    // significand, up to 8 terms in +-[1/4, 8) of at most 53 bits (all
    // multiples of 2^-54, sum below 2^6) add up exactly, so `exact` is the
    // exact sum even for f64 data.
    long double exactSum = 0, sumAbsL = 0;
    for (const unsigned char *s : srcs) {
      long double v = decode(t, s + i * es);
      exactSum += v;
      sumAbsL += v < 0 ? -v : v;
    }
    double exact = static_cast<double>(exactSum);
    double sumAbs = static_cast<double>(sumAbsL);
    double value = decode(t, got + i * es);
    double tol = sumTolerance(t, static_cast<int>(srcs.size()), sumAbs, exact);
    if (!(std::fabs(static_cast<long double>(value) - exactSum) <= tol))
      return "element " + std::to_string(i) + " = " + std::to_string(value) +
             ", f64 reference " + std::to_string(exact) + ", error " +
             std::to_string(std::fabs(value - exact)) + " > bound " +
             std::to_string(tol);
  }
  return {};
}

/// checkSumWithinBound, and bit for bit against rankOrderSum: for the
/// backends that promise the rank-order sum.
inline std::string checkSum(DType t,
                            const std::vector<const unsigned char *> &srcs,
                            const unsigned char *got, int64_t n) {
  std::string problem = checkSumWithinBound(t, srcs, got, n);
  if (!problem.empty())
    return problem;
  const size_t es = dtypeSize(t);
  Bytes expected = rankOrderSum(t, srcs, n);
  for (int64_t i = 0; i < n; ++i)
    if (std::memcmp(got + i * es, expected.data() + i * es, es) != 0)
      return "element " + std::to_string(i) + " = " +
             std::to_string(decode(t, got + i * es)) +
             " differs in its bits from the rank-order sum " +
             std::to_string(decode(t, expected.data() + i * es));
  return {};
}

//===----------------------------------------------------------------------===//
// Checks shared by the collective suites of every backend
//===----------------------------------------------------------------------===//

/// Collects one rank's failures; checks run on the rank threads and are
/// reported from the test's thread.
class Failures {
public:
  void add(const std::string &what) {
    if (list.size() < 8)
      list.push_back(what);
    else if (list.size() == 8)
      list.push_back("(further failures omitted)");
  }
  std::vector<std::string> list;
};

inline std::string caseName(DType t, int w, size_t pattern) {
  return std::string(dtypeName(t)) + " W=" + std::to_string(w) + " pattern " +
         std::to_string(pattern);
}

inline uint64_t seedOf(DType t, int w, size_t pattern, int rank,
                       uint64_t salt) {
  return (static_cast<uint64_t>(t) + 1) * 1000003ULL + w * 10007ULL +
         pattern * 101ULL + rank + salt * 7919ULL;
}

/// Checks that the collective succeeded and added one call and `bytes`.
inline void checkCall(const Status &st, const CommStats &before,
                      const CommStats &after, uint64_t bytes,
                      const std::string &what, Failures &f) {
  if (!st.isOk()) {
    f.add(what + ": " + st.message());
    return;
  }
  if (after.calls != before.calls + 1)
    f.add(what + ": stats.calls went from " + std::to_string(before.calls) +
          " to " + std::to_string(after.calls));
  if (after.bytesSent - before.bytesSent != bytes)
    f.add(what + ": bytesSent grew by " +
          std::to_string(after.bytesSent - before.bytesSent) + ", expected " +
          std::to_string(bytes));
}

/// Elements of `buf` (extent elements) outside the blocks [displs[i],
/// displs[i] + counts[i]) must still be poison.
inline void checkPoisonOutside(const Bytes &buf, DType t,
                               const std::vector<int64_t> &counts,
                               const std::vector<int64_t> &displs,
                               const std::string &what, Failures &f) {
  const size_t es = dtypeSize(t);
  std::vector<char> written(buf.size() / es, 0);
  for (size_t i = 0; i < counts.size(); ++i)
    for (int64_t k = 0; k < counts[i]; ++k)
      written[displs[i] + k] = 1;
  for (size_t e = 0; e < written.size(); ++e)
    if (!written[e] && !isPoison(buf.data() + e * es, es)) {
      f.add(what + ": element " + std::to_string(e) +
            " outside every received block was overwritten");
      return;
    }
}

} // namespace shardlin::rt::testing

#endif // SHARDLIN_RUNTIME_TEST_COLLECTIVESTESTSUPPORT_H
