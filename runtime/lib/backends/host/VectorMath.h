//===- VectorMath.h - Branch-free float exp, log, tanh, erf -----*- C++ -*-===//
//
// libm's expf/logf/tanhf/erff are scalar calls: a loop over them does not
// vectorize, and a fused elementwise chain (a GELU) would run at a fraction
// of memory bandwidth. These are written so that a loop calling them
// vectorizes: no branches (both sides of every range are computed and one
// is selected), bit manipulation through memcpy, polynomials in Horner form.
//
// Each is a range reduction plus a polynomial whose coefficients were fitted
// for this file (Chebyshev fits in 40-digit arithmetic with mpmath; the fit
// errors are given with each). Accuracy against the double libm, measured by
// runtime/test/ElementwiseTest.cpp (VectorMath.*) over dense sweeps:
//   exp   max relative error <= 3e-7 where the result is normal;
//   log   <= 3e-7 relative, absolute <= 1e-7 near x = 1;
//   tanh  <= 4e-7 relative (1.8e-7 measured);
//   erf   <= 4e-7 relative;
// where the result is a normal float (a subnormal result is within a
// subnormal step).
// Special values follow libm: NaN in, NaN out; exp(-inf) = 0, exp overflow
// = inf; log(0) = -inf, log(x < 0) = NaN, log(inf) = inf; tanh(+-inf) = +-1,
// erf(+-inf) = +-1; odd functions keep the sign of zero.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_CPU_VECTORMATH_H
#define SHARDLIN_RUNTIME_LIB_CPU_VECTORMATH_H

#include <cstdint>
#include <cstring>

namespace shardlin::rt::vmath {

#if defined(__GNUC__)
#define SHARDLIN_VMATH_INLINE inline __attribute__((always_inline))
#else
#define SHARDLIN_VMATH_INLINE inline
#endif

SHARDLIN_VMATH_INLINE uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

SHARDLIN_VMATH_INLINE float fromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

/// 2^n for an integer n in [-126, 127], as a float.
SHARDLIN_VMATH_INLINE float pow2(int32_t n) {
  return fromBits(static_cast<uint32_t>(n + 127) << 23);
}

/// |x|, with the sign bit cleared (NaN stays NaN).
SHARDLIN_VMATH_INLINE float absBits(float x) {
  return fromBits(bitsOf(x) & 0x7fffffffu);
}

/// The polynomial c0 x^n + c1 x^(n-1) + ... + cn in Horner's form,
/// ((c0 x + c1) x + ...) x + cn: one multiply-add per coefficient, unrolled
/// at compile time.
SHARDLIN_VMATH_INLINE float horner(float, float c) { return c; }
template <typename... Cs>
SHARDLIN_VMATH_INLINE float horner(float x, float c0, float c1, Cs... rest) {
  return horner(x, c0 * x + c1, rest...);
}

/// |magnitude| with the sign of `sign`.
SHARDLIN_VMATH_INLINE float withSignOf(float magnitude, float sign) {
  return fromBits((bitsOf(magnitude) & 0x7fffffffu) |
                  (bitsOf(sign) & 0x80000000u));
}

/// e^x. x = n ln2 + r with |r| <= ln2 / 2 (n = round(x / ln2), ln2 split in
/// two so n ln2 is exact for the n that occur); e^r by a degree-6
/// polynomial (fit error 2.5e-9 relative); then 2^n applied as two factors
/// 2^(n/2) 2^(n - n/2), each a normal float, so results from overflow (inf)
/// down through the subnormals come out of one multiply chain.
SHARDLIN_VMATH_INLINE float exp(float x) {
  // Beyond these the result is inf (e^89 > FLT_MAX) or 0 (e^-104 is under
  // half the smallest subnormal); clamping keeps n in [-150, 129].
  // NaN goes through as 0 (converting NaN to an integer is undefined) and
  // comes back as x at the end.
  const float xn = x != x ? 0.0f : x;
  const float xc = xn < -104.0f ? -104.0f : (xn > 89.0f ? 89.0f : xn);
  // round(xc / ln2) with the 1.5 * 2^23 trick: adding it pushes the
  // fraction out of the mantissa (round to nearest even).
  const float shifter = 12582912.0f;
  const float t = xc * 1.44269504088896341f + shifter;
  const float n = t - shifter;
  const float r = (xc - n * 0.693145751953125f) - n * 1.42860682030941723e-6f;
  const float p = horner(r, 0.0013941108433972675f, 0.0083751263981533357f,
                         0.041666352896775157f, 0.16666415514653275f,
                         0.50000000471177577f, 1.0000000377162138f, 1.0f);
  const int32_t ni = static_cast<int32_t>(n);
  const int32_t half = ni >> 1; // floor(n / 2): in [-75, 64].
  const float result = p * pow2(half) * pow2(ni - half);
  return x != x ? x : result;
}

/// The natural logarithm. x = m 2^e with m in [sqrt(1/2), sqrt(2));
/// log(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.1716, by its series
/// to s^9 (truncation error 3e-10 relative); log(x) = e ln2 + log(m).
/// Subnormal x is scaled by 2^23 first.
SHARDLIN_VMATH_INLINE float log(float x) {
  const bool subnormal = x < 1.17549435e-38f;
  const float xs = subnormal ? x * 8388608.0f : x;
  const uint32_t bits = bitsOf(xs);
  int32_t e = static_cast<int32_t>((bits >> 23) & 0xff) - 127;
  float m = fromBits((bits & 0x007fffffu) | 0x3f800000u); // [1, 2)
  const bool high = m > 1.41421356f;
  m = high ? m * 0.5f : m;
  e = high ? e + 1 : e;
  e = subnormal ? e - 23 : e;
  const float f = m - 1.0f; // exact
  const float s = f / (m + 1.0f);
  const float s2 = s * s;
  const float q =
      horner(s2, 1.0f / 9.0f, 1.0f / 7.0f, 1.0f / 5.0f, 1.0f / 3.0f);
  // log(m) = 2s + 2s s2 q; computed as f - (f - 2s) ... would lose less,
  // but 2s(1 + s2 q) is within the bound above.
  const float logm = 2.0f * s + 2.0f * s * (s2 * q);
  const float ef = static_cast<float>(e);
  float result =
      ef * 0.693145751953125f + (ef * 1.42860682030941723e-6f + logm);
  result = x == 0.0f ? -__builtin_huge_valf() : result;
  result = x < 0.0f ? __builtin_nanf("") : result;
  result = x == __builtin_huge_valf() ? x : result;
  return x != x ? x : result;
}

/// tanh. tanh|x| = m / (m + 2) with m = e^(2|x|) - 1, and the sign of x
/// (so tanh(-0) = -0). m is computed without cancellation: 2|x| = n ln2 + r
/// (|r| <= ln2 / 2, n >= 0, as in exp), e^r - 1 = r + r^2 P(r) with P the
/// Taylor polynomial of (e^r - 1 - r) / r^2 to degree 5 (truncation below
/// 2e-8 relative), and m = 2^n (e^r - 1) + (2^n - 1), whose two terms do not
/// cancel for n >= 0 (and 2^n - 1 is exact). One polynomial and one
/// division, with no second branch for small |x| to compute and select.
/// |x| is clamped to 10 (tanh rounds to 1 from 9.01 on). Measured max
/// relative error 1.8e-7 (VectorMath.TanhAccuracyAndEdges).
SHARDLIN_VMATH_INLINE float tanh(float x) {
  const float a = absBits(x);
  const float y = 2.0f * (a > 10.0f ? 10.0f : a); // NaN goes through as NaN
  const float shifter = 12582912.0f;
  const float n = (y * 1.44269504088896341f + shifter) - shifter;
  const float r = (y - n * 0.693145751953125f) - n * 1.42860682030941723e-6f;
  const float p = horner(r, 1.0f / 5040.0f, 1.0f / 720.0f, 1.0f / 120.0f,
                         1.0f / 24.0f, 1.0f / 6.0f, 0.5f);
  const float expm1r = r + r * (r * p);
  // n is in [0, 15] for y in [0, 20] (a NaN y is replaced, as in exp).
  const float s = pow2(static_cast<int32_t>(y != y ? 0.0f : n));
  const float m = s * expm1r + (s - 1.0f);
  const float result = withSignOf(m / (m + 2.0f), x);
  return x != x ? x : result;
}

/// erf. |x| < 1.25: x P(x^2), P of degree 7 (fit error 1.1e-9 relative);
/// otherwise 1 - erfc(|x|); both with the sign of x. erfc(x) = e^(-x^2) g(t),
/// t = 1 / (1 + x / 2) and g a degree-6 polynomial (fit error 1.4e-8
/// relative on [1.25, 4]). |x| is clamped to 4, where erf rounds to 1.
SHARDLIN_VMATH_INLINE float erf(float x) {
  const float a = absBits(x);
  const float y = x * x;
  const float p = horner(y, -7.6166892638834881e-6f, 0.00010418097656600243f,
                         -0.00083448536109215089f, 0.0052095896582402905f,
                         -0.026860568279096274f, 0.1128368362516748f,
                         -0.37612630916223402f, 1.1283791661217898f);
  const float small = x * p;
  const float ac = a > 4.0f ? 4.0f : (a < 1.25f ? 1.25f : a);
  const float t = 1.0f / (1.0f + 0.5f * ac);
  const float g =
      horner(t, -0.075307670469567461f, 0.0046191493864315017f,
             0.33104039198661035f, 0.14645282581725278f, 0.31521746658598441f,
             0.2764711472016299f, 0.00039144424249239771f);
  const float erfc = exp(-(ac * ac)) * g;
  const float result = withSignOf(a < 1.25f ? small : 1.0f - erfc, x);
  return x != x ? x : result;
}

} // namespace shardlin::rt::vmath

#endif // SHARDLIN_RUNTIME_LIB_CPU_VECTORMATH_H
