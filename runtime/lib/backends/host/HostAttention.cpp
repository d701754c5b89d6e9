//===- HostAttention.cpp - attention's softmax and RoPE on the host -------===//
//
// The row kernels of attention (exec/Attention.cpp runs the GEMMs around
// them) and the rotary embedding, as LocalOps.h specifies them. The
// softmax's row is computed in its type T (f32 or f64): the maximum first,
// so exp never overflows, then the sum, then one multiplication by its
// inverse per element. f32's exp is VectorMath.h's (within 3e-7 of the
// exact value), so its loops vectorize (compiled at -O3, for each x86-64
// level: TargetClones.h).
//
//===----------------------------------------------------------------------===//

#include "backends/host/HostAttention.h"
#include "backends/host/TargetClones.h"
#include "backends/host/VectorMath.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

namespace shardlin::rt {

namespace {

/// exp in T: the vectorizable float exp of VectorMath.h (within 3e-7
/// relative) for f32, libm's for f64.
inline float expOf(float x) { return vmath::exp(x); }
inline double expOf(double x) { return std::exp(x); }

/// One row: x = scale * s + mask over the `live` keys (the causal ones),
/// then exp(x - max) / sum, zeros after them. Each pass a loop of its own,
/// so the affine and exp passes vectorize.
template <typename T>
void softmaxRow(T *row, const T *m, int64_t live, int64_t cols, T scale) {
  const T negInf = -std::numeric_limits<T>::infinity();
  if (m)
    for (int64_t j = 0; j < live; ++j)
      row[j] = scale * row[j] + m[j];
  else
    for (int64_t j = 0; j < live; ++j)
      row[j] = scale * row[j];
  T most = negInf;
  for (int64_t j = 0; j < live; ++j)
    most = row[j] > most ? row[j] : most;
  if (most == negInf) {
    // Fully masked: zeros, never the NaN of -inf - -inf. (A NaN score
    // makes the sum, and so the row, NaN.)
    std::fill(row, row + cols, T(0));
    return;
  }
  for (int64_t j = 0; j < live; ++j)
    row[j] = expOf(row[j] - most);
  T sum = 0;
  for (int64_t j = 0; j < live; ++j)
    sum += row[j];
  const T inv = T(1) / sum;
  for (int64_t j = 0; j < live; ++j)
    row[j] *= inv;
  std::fill(row + live, row + cols, T(0));
}

template <typename T>
void softmaxRows(T *s, const T *mask, int64_t rows, int64_t cols, T scale,
                 bool causal) {
  for (int64_t i = 0; i < rows; ++i)
    // Keys after the query are masked: exp(-inf) = 0.
    softmaxRow(s + i * cols, mask ? mask + i * cols : nullptr,
               causal ? std::min<int64_t>(cols, i + 1) : cols, cols, scale);
}

SHARDLIN_TARGET_CLONES
void softmaxRowsF32(float *s, const float *mask, int64_t rows, int64_t cols,
                    float scale, bool causal) {
  softmaxRows(s, mask, rows, cols, scale, causal);
}

template <typename T>
void softmaxGradRows(const T *p, T *ds, int64_t rows, int64_t cols, T scale) {
  for (int64_t i = 0; i < rows; ++i) {
    const T *pr = p + i * cols;
    T *dr = ds + i * cols;
    T dot = 0;
    for (int64_t j = 0; j < cols; ++j)
      dot += pr[j] * dr[j];
    for (int64_t j = 0; j < cols; ++j)
      dr[j] = scale * pr[j] * (dr[j] - dot);
  }
}

/// Widens n elements of type t at src into dst (T: float, for every type
/// but f64, or double), exactly.
template <typename T>
void widen(DType t, const void *src, T *dst, size_t n) {
  if (t == DType::F64) {
    const double *d = static_cast<const double *>(src);
    std::copy(d, d + n, dst); // T is double (a table of x's type)
  } else if (t == DType::F32) {
    const float *f = static_cast<const float *>(src);
    std::copy(f, f + n, dst);
  } else if constexpr (std::is_same_v<T, float>) {
    convertToF32(t, src, dst, n);
  }
}

/// One row of heads * headDim elements at position p, in T.
template <typename T>
void rotateRow(T *row, const T *c, const T *s, int64_t heads, int64_t half,
               T sign) {
  for (int64_t h = 0; h < heads; ++h) {
    T *x1 = row + h * 2 * half;
    T *x2 = x1 + half;
    for (int64_t i = 0; i < half; ++i) {
      const T a = x1[i], b = x2[i], sn = sign * s[i];
      x1[i] = a * c[i] - b * sn;
      x2[i] = b * c[i] + a * sn;
    }
  }
}

template <typename T>
void ropeAs(const void *x, const void *cos, const void *sin, DType tableType,
            void *y, int64_t batch, int64_t seq, int64_t heads,
            int64_t headDim, bool inverse, DType dtype) {
  const int64_t half = headDim / 2, width = heads * headDim;
  const size_t elt = dtypeSize(dtype);
  const size_t tableSize = static_cast<size_t>(seq * half);
  std::vector<T> c(tableSize), s(tableSize);
  std::vector<T> row(static_cast<size_t>(width));
  widen(tableType, cos, c.data(), c.size());
  widen(tableType, sin, s.data(), s.size());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t p = 0; p < seq; ++p) {
      const size_t at = size_t((b * seq + p) * width) * elt;
      widen(dtype, static_cast<const char *>(x) + at, row.data(), row.size());
      rotateRow(row.data(), c.data() + p * half, s.data() + p * half, heads,
                half, inverse ? T(-1) : T(1));
      char *out = static_cast<char *>(y) + at;
      if constexpr (std::is_same_v<T, double>) {
        std::copy(row.begin(), row.end(), reinterpret_cast<double *>(out));
      } else if (dtype == DType::F32) {
        std::copy(row.begin(), row.end(), reinterpret_cast<float *>(out));
      } else {
        convertFromF32(dtype, row.data(), out, row.size());
      }
    }
}

} // namespace

void attentionSoftmaxOnHost(void *s, const void *mask, int64_t rows,
                            int64_t cols, double scale, bool causal,
                            DType dtype) {
  if (dtype == DType::F64)
    softmaxRows(static_cast<double *>(s), static_cast<const double *>(mask),
                rows, cols, scale, causal);
  else
    softmaxRowsF32(static_cast<float *>(s), static_cast<const float *>(mask),
                   rows, cols, float(scale), causal);
}

void attentionSoftmaxGradOnHost(const void *p, void *ds, int64_t rows,
                                int64_t cols, double scale, DType dtype) {
  if (dtype == DType::F64)
    softmaxGradRows(static_cast<const double *>(p), static_cast<double *>(ds),
                    rows, cols, scale);
  else
    softmaxGradRows(static_cast<const float *>(p), static_cast<float *>(ds),
                    rows, cols, float(scale));
}

void ropeOnHost(const void *x, const void *cos, const void *sin,
                DType tableType, void *y, int64_t batch, int64_t seq,
                int64_t heads, int64_t headDim, bool inverse, DType dtype) {
  if (dtype == DType::F64)
    ropeAs<double>(x, cos, sin, tableType, y, batch, seq, heads, headDim,
                   inverse, dtype);
  else
    ropeAs<float>(x, cos, sin, tableType, y, batch, seq, heads, headDim,
                  inverse, dtype);
}

} // namespace shardlin::rt
