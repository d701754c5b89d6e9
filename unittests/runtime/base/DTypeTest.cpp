//===- DTypeTest.cpp - f16/bf16 conversions and dtype names ---------------===//
//
// The widening conversions are checked exhaustively against a decoding
// written independently here (ldexp of the fields). The narrowing ones are
// checked on every f16/bf16 value (round trip), on hand-picked rounding cases,
// and on random f32/f64 inputs against a reference that rounds with
// std::nearbyint (round-half-even in the default FP environment) in double,
// where the scaled value is exact.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/base/DType.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace shardlin::rt;

namespace {

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
double doubleOf(uint64_t u) {
  double d;
  std::memcpy(&d, &u, 8);
  return d;
}

bool isHalfNaN(uint16_t h) { return (h & 0x7C00) == 0x7C00 && (h & 0x03FF); }
bool isBf16NaN(uint16_t b) { return (b & 0x7F80) == 0x7F80 && (b & 0x007F); }

/// Decodes an f16 pattern from its fields.
double referenceHalf(uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 0x1F, man = h & 0x3FF;
  double v;
  if (exp == 0)
    v = std::ldexp(double(man), -24);
  else if (exp == 31)
    v = man ? std::numeric_limits<double>::quiet_NaN()
            : std::numeric_limits<double>::infinity();
  else
    v = std::ldexp(double(1024 + man), exp - 25);
  return sign ? -v : v;
}

double referenceBf16(uint16_t b) {
  const int sign = b >> 15, exp = (b >> 7) & 0xFF, man = b & 0x7F;
  double v;
  if (exp == 0)
    v = std::ldexp(double(man), -133);
  else if (exp == 255)
    v = man ? std::numeric_limits<double>::quiet_NaN()
            : std::numeric_limits<double>::infinity();
  else
    v = std::ldexp(double(128 + man), exp - 134);
  return sign ? -v : v;
}

/// The nearest value (ties to even) of a format with `manBits` stored
/// mantissa bits, minimum normal exponent `minExp` and largest finite value
/// `maxFinite`, computed in double. |x| / quantum < 2^(manBits+2) is exact, so
/// nearbyint rounds the exact value once.
double referenceRound(double x, int manBits, int minExp, double maxFinite) {
  if (std::isnan(x) || std::isinf(x) || x == 0)
    return x;
  const double ax = std::fabs(x);
  int e = std::ilogb(ax);
  if (e < minExp)
    e = minExp;
  const double quantum = std::ldexp(1.0, e - manBits);
  double r = std::nearbyint(ax / quantum) * quantum;
  // Values at or beyond max + half an ulp round to Inf (IEEE overflow under
  // round-to-nearest), and nearbyint has already rounded them past max.
  if (r > maxFinite)
    r = std::numeric_limits<double>::infinity();
  return std::copysign(r, x);
}

constexpr double halfMax = 65504.0;
const double bf16Max = std::ldexp(255.0, 120); // (2 - 2^-7) * 2^127

double roundHalf(double x) { return referenceRound(x, 10, -14, halfMax); }
double roundBf16(double x) { return referenceRound(x, 7, -126, bf16Max); }

/// Checks `got` (a 16-bit pattern decoded with `decode`) against `want`,
/// including the sign of zero.
template <typename Decode>
void expectSameValue(uint16_t got, double want, Decode decode, double input) {
  const double g = decode(got);
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(g)) << "input " << input;
    return;
  }
  EXPECT_EQ(g, want) << "input " << input << " got bits 0x" << std::hex << got;
  EXPECT_EQ(std::signbit(g), std::signbit(want)) << "input " << input;
}

} // namespace

TEST(DType, NamesRoundTrip) {
  for (DType t : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    auto parsed = parseDType(dtypeName(t));
    ASSERT_TRUE(parsed.has_value()) << dtypeName(t);
    EXPECT_EQ(*parsed, t);
  }
  EXPECT_STREQ(dtypeName(DType::BF16), "bf16");
  EXPECT_EQ(dtypeSize(DType::F16), 2u);
  EXPECT_EQ(dtypeSize(DType::F64), 8u);
  EXPECT_FALSE(parseDType("f8").has_value());
  EXPECT_FALSE(parseDType("F32").has_value());
  EXPECT_FALSE(parseDType("").has_value());
  EXPECT_FALSE(parseDType("f32 ").has_value());
}

TEST(DType, HalfExhaustiveRoundTrip) {
  for (uint32_t i = 0; i < 65536; ++i) {
    const uint16_t h = uint16_t(i);
    const float f = halfToFloat(h);
    const double want = referenceHalf(h);
    if (isHalfNaN(h)) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << h;
      EXPECT_TRUE(bitsOf(f) & 0x00400000u) << "not quiet: " << std::hex << h;
      const uint16_t back = floatToHalf(f);
      EXPECT_TRUE(isHalfNaN(back)) << std::hex << h;
      EXPECT_TRUE(back & 0x0200) << "not quiet: " << std::hex << h;
      EXPECT_EQ(back & 0x8000, h & 0x8000);
      continue;
    }
    ASSERT_EQ(double(f), want) << std::hex << h;
    EXPECT_EQ(std::signbit(f), bool(h & 0x8000));
    ASSERT_EQ(floatToHalf(f), h) << std::hex << h;
    // The same value arriving as a double must also come back unchanged.
    double d = f;
    uint16_t viaDouble = 0;
    convertFromF64(DType::F16, &d, &viaDouble, 1);
    ASSERT_EQ(viaDouble, h) << std::hex << h;
  }
}

TEST(DType, Bf16ExhaustiveRoundTrip) {
  for (uint32_t i = 0; i < 65536; ++i) {
    const uint16_t b = uint16_t(i);
    const float f = bf16ToFloat(b);
    if (isBf16NaN(b)) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << b;
      EXPECT_TRUE(bitsOf(f) & 0x00400000u) << "not quiet: " << std::hex << b;
      const uint16_t back = floatToBf16(f);
      EXPECT_TRUE(isBf16NaN(back)) << std::hex << b;
      EXPECT_TRUE(back & 0x0040) << "not quiet: " << std::hex << b;
      EXPECT_EQ(back & 0x8000, b & 0x8000);
      continue;
    }
    ASSERT_EQ(double(f), referenceBf16(b)) << std::hex << b;
    // bf16 is the top half of an f32.
    EXPECT_EQ(bitsOf(f), uint32_t(b) << 16);
    ASSERT_EQ(floatToBf16(f), b) << std::hex << b;
    double d = f;
    uint16_t viaDouble = 0;
    convertFromF64(DType::BF16, &d, &viaDouble, 1);
    ASSERT_EQ(viaDouble, b) << std::hex << b;
  }
}

TEST(DType, HalfKnownRounding) {
  const float inf = std::numeric_limits<float>::infinity();
  struct Case {
    float in;
    uint16_t want;
  } cases[] = {
      {1.0f, 0x3C00},
      {-2.0f, 0xC000},
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
      // 1 + 2^-11 is half-way between 1 (even) and 1 + 2^-10 (odd).
      {1.0f + std::ldexp(1.0f, -11), 0x3C00},
      // 1 + 3*2^-11 is half-way between 0x3C01 (odd) and 0x3C02 (even).
      {1.0f + 3 * std::ldexp(1.0f, -11), 0x3C02},
      // Just above the tie rounds up.
      {1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20), 0x3C01},
      {65504.0f, 0x7BFF},       // max finite
      {65519.99f, 0x7BFF},      // just below max + half ulp
      {65520.0f, 0x7C00},       // max + half ulp: ties away to Inf
      {-65520.0f, 0xFC00},
      {1e10f, 0x7C00},
      {inf, 0x7C00},
      {-inf, 0xFC00},
      {std::ldexp(1.0f, -24), 0x0001},                   // smallest subnormal
      {std::ldexp(1.0f, -25), 0x0000},                   // tie with 0 -> 0
      {-std::ldexp(1.0f, -25), 0x8000},                  // keeps the sign
      {std::ldexp(1.0f, -25) * 1.0000001f, 0x0001},      // above the tie
      {3 * std::ldexp(1.0f, -25), 0x0002},               // tie 1|2 -> 2
      {std::ldexp(1023.0f, -24), 0x03FF},                // largest subnormal
      {std::ldexp(1.0f, -14), 0x0400},                   // smallest normal
      {std::ldexp(1.0f, -14) - std::ldexp(1.0f, -25), 0x0400}, // tie -> even
      {std::ldexp(1.0f, -30), 0x0000},                   // far below
      {std::numeric_limits<float>::denorm_min(), 0x0000},
  };
  for (const Case &c : cases)
    EXPECT_EQ(floatToHalf(c.in), c.want) << "input " << c.in;
  EXPECT_EQ(halfToFloat(0x7BFF), 65504.0f);
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(std::nanf("")))));
  // A signalling NaN whose payload sits only in bits that f16 drops must
  // still become a NaN, not Inf.
  EXPECT_TRUE(isHalfNaN(floatToHalf(floatOf(0x7F800001u))));
  EXPECT_TRUE(isHalfNaN(floatToHalf(floatOf(0xFF800001u))));
}

TEST(DType, Bf16KnownRounding) {
  const float inf = std::numeric_limits<float>::infinity();
  struct Case {
    float in;
    uint16_t want;
  } cases[] = {
      {1.0f, 0x3F80},
      {-0.0f, 0x8000},
      {1.0f + std::ldexp(1.0f, -8), 0x3F80},     // tie -> even
      {1.0f + 3 * std::ldexp(1.0f, -8), 0x3F82}, // tie -> even
      {1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20), 0x3F81},
      {floatOf(0x7F7F0000u), 0x7F7F},                 // max finite
      {floatOf(0x7F7F7FFFu), 0x7F7F},                 // below the tie
      {floatOf(0x7F7F8000u), 0x7F80},                 // tie -> Inf (even)
      {std::numeric_limits<float>::max(), 0x7F80},
      {inf, 0x7F80},
      {-inf, 0xFF80},
      {floatOf(0x00010000u), 0x0001},                 // smallest subnormal
      {floatOf(0x00008000u), 0x0000},                 // tie with 0 -> 0
      {floatOf(0x00018000u), 0x0002},                 // tie 1|2 -> 2
      {floatOf(0x00008001u), 0x0001},
      {floatOf(0x007FFFFFu), 0x0080},                 // carries into normal
  };
  for (const Case &c : cases)
    EXPECT_EQ(floatToBf16(c.in), c.want) << "input bits 0x" << std::hex
                                         << bitsOf(c.in);
  EXPECT_TRUE(isBf16NaN(floatToBf16(floatOf(0x7F800001u))));
  EXPECT_TRUE(isBf16NaN(floatToBf16(floatOf(0xFFC00000u))));
}

// f64 -> f16/bf16 must round once. 1 + 2^-11 + 2^-40 is just above the f16
// tie between 0x3C00 and 0x3C01; in f32 the 2^-40 is lost, leaving the exact
// tie, which would then round to the even 0x3C00.
TEST(DType, F64RoundsOnce) {
  const double h = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  ASSERT_EQ(double(float(h)), 1.0 + std::ldexp(1.0, -11));
  uint16_t out = 0;
  convertFromF64(DType::F16, &h, &out, 1);
  EXPECT_EQ(out, 0x3C01);
  EXPECT_EQ(floatToHalf(float(h)), 0x3C00); // the double rounding it avoids

  const double b = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  convertFromF64(DType::BF16, &b, &out, 1);
  EXPECT_EQ(out, 0x3F81);
  EXPECT_EQ(floatToBf16(float(b)), 0x3F80);

  // Beyond f32's range: still a finite overflow to Inf, and a tiny double
  // (an f32 underflow) still rounds to the right f16 value.
  const double big = 1e300, tiny = 1e-300;
  convertFromF64(DType::F16, &big, &out, 1);
  EXPECT_EQ(out, 0x7C00);
  convertFromF64(DType::BF16, &big, &out, 1);
  EXPECT_EQ(out, 0x7F80);
  convertFromF64(DType::F16, &tiny, &out, 1);
  EXPECT_EQ(out, 0x0000);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  convertFromF64(DType::F16, &nan, &out, 1);
  EXPECT_TRUE(isHalfNaN(out));
  // A double NaN whose payload is only in its low bits.
  const double lowNaN = doubleOf(0x7FF0000000000001ull);
  convertFromF64(DType::BF16, &lowNaN, &out, 1);
  EXPECT_TRUE(isBf16NaN(out));
}

TEST(DType, RandomFloatsRoundToNearest) {
  std::mt19937 rng(1234);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 400000; ++i) {
    const float f = floatOf(bits(rng));
    expectSameValue(floatToHalf(f), roundHalf(f), referenceHalf, f);
    expectSameValue(floatToBf16(f), roundBf16(f), referenceBf16, f);
    if (HasFailure())
      return;
  }
  // Concentrate on f16's range, where random bit patterns rarely land.
  std::uniform_real_distribution<float> mag(-26.0f, 17.0f);
  for (int i = 0; i < 200000; ++i) {
    const float f = std::copysign(std::exp2(mag(rng)), float(i % 2) - 0.5f);
    expectSameValue(floatToHalf(f), roundHalf(f), referenceHalf, f);
    if (HasFailure())
      return;
  }
}

TEST(DType, RandomDoublesRoundToNearestOnce) {
  std::mt19937_64 rng(99);
  std::uniform_int_distribution<uint64_t> bits;
  std::uniform_real_distribution<double> mag(-140.0, 130.0);
  for (int i = 0; i < 300000; ++i) {
    // Half random patterns, half values in the interesting range; both with
    // all 52 mantissa bits random so f32 would often double-round.
    double d = doubleOf(bits(rng));
    if (i % 2) {
      const uint64_t mantissa = bits(rng) & ((uint64_t(1) << 52) - 1);
      d = std::ldexp(1.0 + std::ldexp(double(mantissa), -52),
                     int(std::floor(mag(rng))));
      if (i % 4 == 1)
        d = -d;
    }
    uint16_t h = 0, b = 0;
    convertFromF64(DType::F16, &d, &h, 1);
    convertFromF64(DType::BF16, &d, &b, 1);
    expectSameValue(h, roundHalf(d), referenceHalf, d);
    expectSameValue(b, roundBf16(d), referenceBf16, d);
    if (HasFailure())
      return;
  }
}

TEST(DType, BulkConversionsMatchScalar) {
  const std::vector<double> values = {0.0,  -0.0, 1.0,    -1.5,  3.14159265358979,
                                      1e-7, 1e5,  -70000, 1e-40, 1e300};
  const size_t n = values.size();
  for (DType t : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    SCOPED_TRACE(dtypeName(t));
    std::vector<unsigned char> fromD(n * dtypeSize(t)), fromF(n * dtypeSize(t));
    convertFromF64(t, values.data(), fromD.data(), n);
    std::vector<float> floats(values.begin(), values.end());
    convertFromF32(t, floats.data(), fromF.data(), n);

    std::vector<double> backD(n);
    std::vector<float> backF(n);
    convertToF64(t, fromD.data(), backD.data(), n);
    convertToF32(t, fromF.data(), backF.data(), n);
    for (size_t i = 0; i < n; ++i) {
      const double v = values[i];
      double wantD = 0, wantF = 0;
      switch (t) {
      case DType::F16:
        wantD = roundHalf(v);
        wantF = halfToFloat(floatToHalf(float(v)));
        break;
      case DType::BF16:
        wantD = roundBf16(v);
        wantF = bf16ToFloat(floatToBf16(float(v)));
        break;
      case DType::F32:
        wantD = float(v);
        wantF = float(v);
        break;
      case DType::F64:
        wantD = v;
        wantF = float(v);
        break;
      }
      EXPECT_EQ(backD[i], wantD) << "value " << v;
      EXPECT_EQ(double(backF[i]), wantF) << "value " << v;
      EXPECT_EQ(std::signbit(backD[i]), std::signbit(v)) << "value " << v;
    }
  }
  // Same-type conversions copy bits, NaN payloads included.
  const float nanF = floatOf(0x7FA12345u);
  float outF = 0;
  convertToF32(DType::F32, &nanF, &outF, 1);
  EXPECT_EQ(bitsOf(outF), 0x7FA12345u);
  const double nanD = doubleOf(0x7FF4000000000123ull);
  double outD = 0;
  convertFromF64(DType::F64, &nanD, &outD, 1);
  EXPECT_EQ(std::memcmp(&outD, &nanD, 8), 0);
  // n == 0 touches nothing (null pointers are fine then).
  convertToF32(DType::F16, nullptr, nullptr, 0);
  convertFromF64(DType::F64, nullptr, nullptr, 0);
}
