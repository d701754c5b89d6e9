//===- DType.h - Element types of the shardlin runtime ----------*- C++ -*-===//
#ifndef SHARDLIN_RUNTIME_DTYPE_H
#define SHARDLIN_RUNTIME_DTYPE_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

namespace shardlin::rt {

/// The element types a sharded linear supports. f16 and bf16 are stored as
/// their 16-bit patterns and computed in f32.
enum class DType : uint8_t { F16, BF16, F32, F64 };

/// Size of one element in bytes.
constexpr size_t dtypeSize(DType t) {
  return t == DType::F64 ? 8 : (t == DType::F32 ? 4 : 2);
}

/// MLIR spelling: "f16", "bf16", "f32", "f64".
const char *dtypeName(DType t);
std::optional<DType> parseDType(const std::string &name);

/// The bits of `from` as a To of the same size (std::bit_cast before
/// C++20): bitCast<uint32_t>(1.0f) is 0x3F800000.
template <typename To, typename From> To bitCast(const From &from) {
  static_assert(sizeof(To) == sizeof(From), "bitCast needs equal sizes");
  To to;
  std::memcpy(&to, &from, sizeof(To));
  return to;
}

/// IEEE binary16 and bfloat16 conversions, round to nearest even; NaN and Inf
/// are preserved.
float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
float bf16ToFloat(uint16_t b);
uint16_t floatToBf16(float f);

/// Whether a conversion op (the runtime's convert, LocalOps::convert)
/// converts `from` to `to`: f32 to f16 or bf16, or back.
bool isConversion(DType from, DType to);

/// Converts `n` elements of type `t` to Wide (float or double: the only
/// two instantiations), and back with rounding to nearest even; for code
/// templated on its compute type. The named forms below are the same.
template <typename Wide>
void convertToWide(DType t, const void *src, Wide *dst, size_t n);
template <typename Wide>
void convertFromWide(DType t, const Wide *src, void *dst, size_t n);

/// Converts `n` elements of type `t` to f32 / f64, and back with rounding.
void convertToF32(DType t, const void *src, float *dst, size_t n);
void convertFromF32(DType t, const float *src, void *dst, size_t n);
void convertToF64(DType t, const void *src, double *dst, size_t n);
void convertFromF64(DType t, const double *src, void *dst, size_t n);

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_DTYPE_H
