//===- Views.h - The C ABI's strided views, read and checked ----*- C++ -*-===//
//
// Internal to the C ABI. A shardlin_memref is MLIR's unranked memref
// descriptor; readView turns one into a View (its first element's
// address, sizes and strides) after checking everything a caller can get
// wrong, with messages that name the argument. The ops then either hand a
// view straight to a collective or BLAS (dense, or a matrix with a leading
// stride) or pack it into a dense row-major buffer and back (copyView).
// Host memory only: the C ABI has no GPU backends.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_CAPI_VIEWS_H
#define SHARDLIN_RUNTIME_LIB_CAPI_VIEWS_H

#include "shardlin-c/Runtime.h"
#include "shardlin/runtime/base/DType.h"
#include "shardlin/runtime/base/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace shardlin::rt::capi {

/// The most dims a view may have: far more than any op uses; a larger
/// rank is a corrupt descriptor.
constexpr int64_t kMaxViewRank = 64;

/// A checked view. Strides are in elements and non-negative.
struct View {
  std::string name;
  /// The element at index (0, .., 0); null when the view has no elements.
  char *data = nullptr;
  std::vector<int64_t> sizes, strides;
  int64_t elements = 0;
  size_t elt = 0;
  /// Every element lies in [data, data + spanBytes); 0 when empty.
  int64_t spanBytes = 0;

  int64_t rank() const { return static_cast<int64_t>(sizes.size()); }
  /// Row-major and contiguous (the strides of size-1 dims do not matter),
  /// or empty.
  bool dense() const;
  /// "[2, 3]"
  std::string shape() const;
};

/// The DType of a shardlin_dtype value, or InvalidArgument naming `what`
/// ("dtype", "out_dtype") and the value.
Status toDType(int value, const char *what, DType &out);

/// Reads and checks `memref`, named `name` in messages, with elements of
/// `dtype`: not null, a rank in [0, kMaxViewRank] (and `expectedRank` if it
/// is >= 0), non-negative sizes, offset and strides, element and byte
/// counts within int64, and a non-null data pointer if it has elements.
Status readView(const shardlin_memref *memref, const char *name, DType dtype,
                int64_t expectedRank, View &out);

/// An output must have one address per element: InvalidArgument if two
/// of its indices may share one (a zero stride, interleaved dims).
Status checkOneAddressPerElement(const View &out);

/// InvalidArgument if `out` shares memory with `in`; with `allowSame`, an
/// `out` that is exactly `in` (same first element, sizes and strides) is
/// fine: an in-place op.
Status checkDisjoint(const View &out, const View &in, bool allowSame = false);

/// Copies the view's elements into `dense` (row-major, `elements` of
/// them), or the other way.
void copyViewToDense(const View &v, char *dense);
void copyDenseToView(const char *dense, const View &v);

} // namespace shardlin::rt::capi

#endif // SHARDLIN_RUNTIME_LIB_CAPI_VIEWS_H
