//===- DType.cpp - Element types and 16-bit float conversions ------------===//
//
// The narrowing conversions (f32/f64 -> f16/bf16) share one rounding routine
// that works on the source's bit pattern. Working on bits rather than on
// floating-point arithmetic keeps the result independent of the FPU rounding
// mode and of x87/FMA contraction, and lets f64 -> f16 round once, directly
// from the double: going through float would round twice, and a double just
// above a half-way point could land exactly on it in float and then tie to
// even in the wrong direction.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/base/DType.h"

#include <cstring>
#include <type_traits>

namespace shardlin::rt {

const char *dtypeName(DType t) {
  switch (t) {
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  }
  // Only reachable through a value cast from an out-of-range integer; a
  // printable name keeps error messages that embed it readable.
  return "<invalid dtype>";
}

std::optional<DType> parseDType(const std::string &name) {
  if (name == "f16")
    return DType::F16;
  if (name == "bf16")
    return DType::BF16;
  if (name == "f32")
    return DType::F32;
  if (name == "f64")
    return DType::F64;
  return std::nullopt;
}

namespace {

/// An IEEE-style binary format: `ExpBits` exponent bits, `ManBits` stored
/// mantissa bits, bias 2^(ExpBits-1) - 1.
template <int ExpBits, int ManBits> struct Format {
  static constexpr int expBits = ExpBits;
  static constexpr int manBits = ManBits;
  static constexpr int bias = (1 << (ExpBits - 1)) - 1;
  static constexpr uint64_t expMask = (uint64_t(1) << ExpBits) - 1;
  static constexpr uint64_t manMask = (uint64_t(1) << ManBits) - 1;
};

using Binary16 = Format<5, 10>;
using BFloat16 = Format<8, 7>;
using Binary32 = Format<8, 23>;
using Binary64 = Format<11, 52>;

/// Rounds the value whose `Src` bit pattern is `bits` to the nearest `Dst`
/// value (ties to even) and returns the 16-bit `Dst` pattern. Overflow gives
/// Inf; NaN gives a quiet NaN that keeps the payload's high bits.
template <typename Src, typename Dst> uint16_t roundToNarrow(uint64_t bits) {
  static_assert(Src::manBits > Dst::manBits && Src::expBits >= Dst::expBits,
                "narrowing conversions only");
  const uint64_t sign = (bits >> (Src::expBits + Src::manBits)) & 1;
  const uint64_t exp = (bits >> Src::manBits) & Src::expMask;
  const uint64_t man = bits & Src::manMask;
  const uint16_t signOut =
      static_cast<uint16_t>(sign << (Dst::expBits + Dst::manBits));
  const uint16_t infOut =
      static_cast<uint16_t>(signOut | (Dst::expMask << Dst::manBits));

  if (exp == Src::expMask) {
    if (man == 0)
      return infOut;
    // Keep the payload's top bits and set the quiet bit, so the result is a
    // NaN even when only low payload bits were set.
    const uint64_t quiet = uint64_t(1) << (Dst::manBits - 1);
    return static_cast<uint16_t>(infOut | quiet |
                                 (man >> (Src::manBits - Dst::manBits)));
  }

  // The value is sig * 2^(scale), with sig an integer.
  uint64_t sig = exp ? (man | (uint64_t(1) << Src::manBits)) : man;
  if (sig == 0)
    return signOut;
  const int64_t scale = (exp ? int64_t(exp) : int64_t(1)) - Src::bias -
                        Src::manBits;
  int lead = Src::manBits; // Position of sig's highest set bit.
  while (!(sig >> lead))
    --lead;
  const int64_t trueExp = scale + lead; // floor(log2(|value|)).

  // The quantum of the destination at this magnitude: normals have manBits
  // bits after the leading one, subnormals share the quantum of the smallest
  // normal binade.
  const int64_t minNormalExp = 1 - Dst::bias;
  const int64_t binadeExp = trueExp > minNormalExp ? trueExp : minNormalExp;
  const int64_t quantumExp = binadeExp - Dst::manBits;

  // `rounded` counts quanta. The shift is never positive for the narrowing
  // formats above (the source has more mantissa bits and at least the same
  // exponent range), so only right shifts with rounding occur.
  const int64_t shift = quantumExp - scale;
  uint64_t rounded;
  if (shift <= 0) {
    rounded = sig << -shift;
  } else if (shift > Src::manBits + 1) {
    // |value| < 2^(lead+1) * 2^scale <= half a quantum: rounds to zero.
    rounded = 0;
  } else {
    rounded = sig >> shift;
    const uint64_t rem = sig & ((uint64_t(1) << shift) - 1);
    const uint64_t half = uint64_t(1) << (shift - 1);
    if (rem > half || (rem == half && (rounded & 1)))
      ++rounded;
  }

  // `rounded` includes the leading one for normals (>= 2^manBits). Adding it
  // to (field - 1) << manBits produces the right encoding even when rounding
  // carried into the next binade, or from the largest subnormal into the
  // smallest normal, or past the largest finite value into the Inf pattern.
  const int64_t field = binadeExp + Dst::bias; // >= 1.
  const uint64_t magnitude =
      (uint64_t(field - 1) << Dst::manBits) + rounded;
  if (magnitude >= (Dst::expMask << Dst::manBits))
    return infOut;
  return static_cast<uint16_t>(signOut | magnitude);
}

/// Widens a 16-bit pattern of format `Narrow` to an f32 bit pattern (exact).
template <typename Narrow> uint32_t widenToF32Bits(uint16_t h) {
  const uint32_t sign = uint32_t(h >> (Narrow::expBits + Narrow::manBits)) & 1;
  const uint32_t exp = (h >> Narrow::manBits) & Narrow::expMask;
  const uint32_t man = h & Narrow::manMask;
  const uint32_t signOut = sign << 31;
  constexpr int manShift = Binary32::manBits - Narrow::manBits;

  if (exp == Narrow::expMask) {
    if (man == 0)
      return signOut | 0x7F800000u;
    // Quiet the NaN (bit 22), keeping the payload.
    return signOut | 0x7FC00000u | (man << manShift);
  }
  if (exp == 0) {
    if (man == 0)
      return signOut;
    if (Narrow::expBits == Binary32::expBits)
      return signOut | (man << manShift); // bf16 subnormals are f32 subnormals.
    // f16 subnormal: normalise into an f32 normal.
    int e = 1 - Narrow::bias;
    uint32_t m = man;
    while (!(m & (uint32_t(1) << Narrow::manBits))) {
      m <<= 1;
      --e;
    }
    m &= Narrow::manMask;
    return signOut | (uint32_t(e + Binary32::bias) << 23) | (m << manShift);
  }
  const uint32_t e = exp - Narrow::bias + Binary32::bias;
  return signOut | (e << 23) | (man << manShift);
}

uint16_t doubleToHalf(double d) {
  return roundToNarrow<Binary64, Binary16>(bitCast<uint64_t>(d));
}

uint16_t doubleToBf16(double d) {
  return roundToNarrow<Binary64, BFloat16>(bitCast<uint64_t>(d));
}

} // namespace

float halfToFloat(uint16_t h) {
  return bitCast<float>(widenToF32Bits<Binary16>(h));
}

uint16_t floatToHalf(float f) {
  return roundToNarrow<Binary32, Binary16>(bitCast<uint32_t>(f));
}

float bf16ToFloat(uint16_t b) {
  return bitCast<float>(widenToF32Bits<BFloat16>(b));
}

uint16_t floatToBf16(float f) {
  return roundToNarrow<Binary32, BFloat16>(bitCast<uint32_t>(f));
}

namespace {

// Each narrow format is rounded from the wide type directly (f64 -> f16 in
// one step, never through f32, which would round twice).
uint16_t toHalf(float f) { return floatToHalf(f); }
uint16_t toHalf(double d) { return doubleToHalf(d); }
uint16_t toBf16(float f) { return floatToBf16(f); }
uint16_t toBf16(double d) { return doubleToBf16(d); }

/// n elements of From to To: a copy where they are the same type, else a
/// static_cast each (f64 -> f32 rounds to nearest even; f32 -> f64 is exact).
template <typename From, typename To>
void castEach(const void *src, void *dst, size_t n) {
  if constexpr (std::is_same_v<From, To>) {
    if (n)
      std::memmove(dst, src, n * sizeof(To));
  } else {
    const auto *s = static_cast<const From *>(src);
    auto *d = static_cast<To *>(dst);
    for (size_t i = 0; i < n; ++i)
      d[i] = static_cast<To>(s[i]);
  }
}

} // namespace

template <typename Wide>
void convertToWide(DType t, const void *src, Wide *dst, size_t n) {
  switch (t) {
  case DType::F16: {
    const auto *s = static_cast<const uint16_t *>(src);
    for (size_t i = 0; i < n; ++i)
      dst[i] = halfToFloat(s[i]); // Exact in either wide type.
    return;
  }
  case DType::BF16: {
    const auto *s = static_cast<const uint16_t *>(src);
    for (size_t i = 0; i < n; ++i)
      dst[i] = bf16ToFloat(s[i]);
    return;
  }
  case DType::F32:
    return castEach<float, Wide>(src, dst, n);
  case DType::F64:
    return castEach<double, Wide>(src, dst, n);
  }
}

template <typename Wide>
void convertFromWide(DType t, const Wide *src, void *dst, size_t n) {
  switch (t) {
  case DType::F16: {
    auto *d = static_cast<uint16_t *>(dst);
    for (size_t i = 0; i < n; ++i)
      d[i] = toHalf(src[i]);
    return;
  }
  case DType::BF16: {
    auto *d = static_cast<uint16_t *>(dst);
    for (size_t i = 0; i < n; ++i)
      d[i] = toBf16(src[i]);
    return;
  }
  case DType::F32:
    return castEach<Wide, float>(src, dst, n);
  case DType::F64:
    return castEach<Wide, double>(src, dst, n);
  }
}

template void convertToWide(DType, const void *, float *, size_t);
template void convertToWide(DType, const void *, double *, size_t);
template void convertFromWide(DType, const float *, void *, size_t);
template void convertFromWide(DType, const double *, void *, size_t);

void convertToF32(DType t, const void *src, float *dst, size_t n) {
  convertToWide(t, src, dst, n);
}

void convertFromF32(DType t, const float *src, void *dst, size_t n) {
  convertFromWide(t, src, dst, n);
}

void convertToF64(DType t, const void *src, double *dst, size_t n) {
  convertToWide(t, src, dst, n);
}

void convertFromF64(DType t, const double *src, void *dst, size_t n) {
  convertFromWide(t, src, dst, n);
}

bool isConversion(DType from, DType to) {
  auto narrow = [](DType t) { return t == DType::F16 || t == DType::BF16; };
  return (from == DType::F32 && narrow(to)) || (narrow(from) && to == DType::F32);
}

} // namespace shardlin::rt
