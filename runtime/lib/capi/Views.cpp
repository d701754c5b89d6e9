//===- Views.cpp - The C ABI's strided views, read and checked ------------===//

#include "capi/Views.h"

#include "capi/Entries.h"
#include "capi/Errors.h"
#include "shardlin/runtime/base/Buffer.h"
#include "shardlin/runtime/program/Program.h"

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstring>
#include <utility>

namespace shardlin::rt::capi {

bool View::dense() const {
  if (elements == 0)
    return true;
  int64_t expected = 1;
  for (int64_t i = rank() - 1; i >= 0; --i) {
    if (sizes[i] != 1 && strides[i] != expected)
      return false;
    expected *= sizes[i];
  }
  return true;
}

std::string View::shape() const { return formatShape(sizes); }

Status toDType(int value, const char *what, DType &out) {
  switch (value) {
  case SHARDLIN_F16:
    out = DType::F16;
    return Status::ok();
  case SHARDLIN_BF16:
    out = DType::BF16;
    return Status::ok();
  case SHARDLIN_F32:
    out = DType::F32;
    return Status::ok();
  case SHARDLIN_F64:
    out = DType::F64;
    return Status::ok();
  }
  return invalid(std::string(what) + " " + str(value) +
                 " is not a shardlin_dtype (SHARDLIN_F16 = 0, SHARDLIN_BF16 = "
                 "1, SHARDLIN_F32 = 2, SHARDLIN_F64 = 3)");
}

Status readView(const shardlin_memref *memref, const char *name, DType dtype,
                int64_t expectedRank, View &out) {
  out = View();
  out.name = name;
  out.elt = dtypeSize(dtype);
  if (!memref)
    return invalid(out.name + " is null (a shardlin_memref is required)");
  const int64_t rank = memref->rank;
  if (rank < 0 || rank > kMaxViewRank)
    return invalid(out.name + " has rank " + str(rank) + ", out of range [0, " +
                   str(kMaxViewRank) + "]");
  if (expectedRank >= 0 && rank != expectedRank)
    return invalid(out.name + " has rank " + str(rank) + ", expected " +
                   str(expectedRank));
  if (!memref->descriptor)
    return invalid(out.name + " has a null descriptor");

  // The ranked descriptor's fields where a C compiler puts them, which is
  // where shardlin_view_storage has them; copied out rather than read
  // through a struct the caller's (smaller) descriptor may not fill.
  const char *d = static_cast<const char *>(memref->descriptor);
  void *aligned = nullptr;
  int64_t offset = 0;
  std::memcpy(&aligned, d + offsetof(shardlin_view_storage, aligned),
              sizeof aligned);
  std::memcpy(&offset, d + offsetof(shardlin_view_storage, offset),
              sizeof offset);
  out.sizes.resize(rank);
  out.strides.resize(rank);
  const char *dims = d + offsetof(shardlin_view_storage, sizes_and_strides);
  if (rank > 0) {
    std::memcpy(out.sizes.data(), dims, rank * sizeof(int64_t));
    std::memcpy(out.strides.data(), dims + rank * sizeof(int64_t),
                rank * sizeof(int64_t));
  }

  if (offset < 0)
    return invalid(out.name + " has a negative offset (" + str(offset) + ")");
  for (int64_t i = 0; i < rank; ++i)
    if (out.sizes[i] < 0)
      return invalid(out.name + " has a negative size (" + str(out.sizes[i]) +
                     ") in dim " + str(i));
  Status counted = checkedNumElements(out.sizes, out.elements, out.elt);
  if (!counted)
    return invalid(out.name + ": " + counted.message());
  if (out.elements == 0)
    return Status::ok();

  // The stride of a dim of size 1 is never used (MLIR leaves any value
  // there); the others must be non-negative.
  int64_t last = offset;
  for (int64_t i = 0; i < rank; ++i) {
    if (out.sizes[i] == 1) {
      out.strides[i] = 0;
      continue;
    }
    if (out.strides[i] < 0)
      return invalid(out.name + " has a negative stride (" +
                     str(out.strides[i]) + ") in dim " + str(i) +
                     "; negative strides are not supported");
    int64_t reach = 0;
    if (__builtin_mul_overflow(out.sizes[i] - 1, out.strides[i], &reach) ||
        __builtin_add_overflow(last, reach, &last))
      return invalid(out.name + ": offset " + str(offset) +
                     " + the extent of " + "sizes " + out.shape() +
                     " overflows int64 elements");
  }
  int64_t end = 0, endBytes = 0;
  if (__builtin_add_overflow(last, int64_t(1), &end) ||
      __builtin_mul_overflow(end, static_cast<int64_t>(out.elt), &endBytes))
    return invalid(out.name + ": its last element (" + str(last) +
                   ") is beyond the int64 byte range");
  if (!aligned)
    return invalid(out.name + " has a null data pointer (aligned) but " +
                   str(out.elements) + " elements");
  out.data = static_cast<char *>(aligned) + offset * out.elt;
  out.spanBytes = (last - offset + 1) * static_cast<int64_t>(out.elt);
  return Status::ok();
}

Status checkOneAddressPerElement(const View &out) {
  if (out.elements == 0)
    return Status::ok();
  std::vector<std::pair<int64_t, int64_t>> dims; // (stride, dim)
  for (int64_t i = 0; i < out.rank(); ++i)
    if (out.sizes[i] > 1)
      dims.push_back({out.strides[i], i});
  std::sort(dims.begin(), dims.end());
  // Dims in order of stride: each must step over all the inner ones.
  int64_t innerExtent = 0; // the largest offset the inner dims reach
  for (const auto &[stride, i] : dims) {
    if (stride <= innerExtent)
      return invalid(out.name + " " + out.shape() +
                     " gives more than one element one address (dim " + str(i) +
                     " has stride " + str(stride) +
                     "): an output needs one address per element");
    innerExtent += (out.sizes[i] - 1) * stride;
  }
  return Status::ok();
}

Status checkDisjoint(const View &out, const View &in, bool allowSame) {
  if (out.elements == 0 || in.elements == 0)
    return Status::ok();
  if (allowSame && out.data == in.data && out.sizes == in.sizes &&
      out.strides == in.strides && out.elt == in.elt)
    return Status::ok();
  const uintptr_t a = reinterpret_cast<uintptr_t>(out.data);
  const uintptr_t b = reinterpret_cast<uintptr_t>(in.data);
  if (a < b + static_cast<uintptr_t>(in.spanBytes) &&
      b < a + static_cast<uintptr_t>(out.spanBytes))
    return invalid(out.name + " overlaps " + in.name +
                   " in memory: an output must not share memory with an "
                   "input" +
                   (allowSame ? std::string(" (in place, pass the same view "
                                            "for both)")
                              : std::string()));
  return Status::ok();
}

namespace {

/// Calls row(viewRow, denseRow) for every innermost row of `v`, in
/// row-major order; a rank-0 view is one row of one element.
template <typename RowFn> void forEachRow(const View &v, RowFn row) {
  const int64_t rank = v.rank();
  if (v.elements == 0)
    return;
  const int64_t inner = rank == 0 ? 1 : v.sizes[rank - 1];
  const int64_t rowBytes = inner * static_cast<int64_t>(v.elt);
  std::vector<int64_t> index(rank > 0 ? rank - 1 : 0, 0);
  int64_t viewOffset = 0; // in elements
  for (int64_t denseOffset = 0;; denseOffset += rowBytes) {
    row(v.data + viewOffset * static_cast<int64_t>(v.elt), denseOffset);
    // Next row: an odometer over the outer dims.
    int64_t d = static_cast<int64_t>(index.size()) - 1;
    for (; d >= 0; --d) {
      viewOffset += v.strides[d];
      if (++index[d] < v.sizes[d])
        break;
      viewOffset -= index[d] * v.strides[d];
      index[d] = 0;
    }
    if (d < 0)
      return;
  }
}

/// Copies one row of `n` elements of `elt` bytes, `stride` elements apart
/// in the view and adjacent in the dense buffer.
void copyRow(const char *src, int64_t srcStride, char *dst, int64_t dstStride,
             int64_t n, size_t elt) {
  if (n == 1 || (srcStride == 1 && dstStride == 1)) {
    std::memcpy(dst, src, static_cast<size_t>(n) * elt);
    return;
  }
  for (int64_t j = 0; j < n; ++j)
    std::memcpy(dst + j * dstStride * elt, src + j * srcStride * elt, elt);
}

} // namespace

void copyViewToDense(const View &v, char *dense) {
  const int64_t n = v.rank() == 0 ? 1 : v.sizes.back();
  const int64_t stride = v.rank() == 0 ? 1 : v.strides.back();
  forEachRow(v, [&](const char *viewRow, int64_t denseOffset) {
    copyRow(viewRow, stride, dense + denseOffset, 1, n, v.elt);
  });
}

void copyDenseToView(const char *dense, const View &v) {
  const int64_t n = v.rank() == 0 ? 1 : v.sizes.back();
  const int64_t stride = v.rank() == 0 ? 1 : v.strides.back();
  forEachRow(v, [&](char *viewRow, int64_t denseOffset) {
    copyRow(dense + denseOffset, 1, viewRow, stride, n, v.elt);
  });
}

Status viewInit(shardlin_memref *view, shardlin_view_storage *storage,
                void *data, int64_t rank, const int64_t *sizes) {
  const std::string fn = "shardlin_view_init";
  if (!view || !storage)
    return invalid(fn + ": view and storage must not be null");
  if (rank < 0 || rank > SHARDLIN_MAX_VIEW_RANK)
    return invalid(fn + ": rank " + str(rank) + " is out of range [0, " +
                   str(SHARDLIN_MAX_VIEW_RANK) + "]");
  if (rank > 0 && !sizes)
    return invalid(fn + ": sizes is null for rank " + str(rank));
  for (int64_t i = 0; i < rank; ++i)
    if (sizes[i] < 0)
      return invalid(fn + ": size " + str(sizes[i]) + " of dim " + str(i) +
                     " is negative");
  *storage = shardlin_view_storage();
  storage->allocated = data;
  storage->aligned = data;
  storage->offset = 0;
  int64_t stride = 1;
  for (int64_t i = rank - 1; i >= 0; --i) {
    storage->sizes_and_strides[i] = sizes[i];
    storage->sizes_and_strides[rank + i] = stride;
    // Saturates instead of overflowing: such a view is refused when used.
    if (sizes[i] > 0 && __builtin_mul_overflow(stride, sizes[i], &stride))
      stride = INT64_MAX;
  }
  view->rank = rank;
  view->descriptor = storage;
  return Status::ok();
}

} // namespace shardlin::rt::capi
