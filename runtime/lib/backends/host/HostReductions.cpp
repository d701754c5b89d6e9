//===- HostReductions.cpp - Column sums and row reductions on the host ---===//
//
// reduceLast (a norm's sum or maximum over the last dim): each row from its
// init, combining x[i, 0], x[i, 1], ... in order in the accumulator type
// (the scalar loop: one row's order leaves nothing to vectorize without
// reassociating, which would change the bits).
//
// sumRows (a bias's gradient: the sum of the rows of dy) in the order
// LocalOps.h fixes: each column from +0, adding rows 0, 1, ..., rows - 1 in
// the accumulator type. The loop runs over a block of columns per row, so
// it vectorizes across columns (each lane one column, adding its rows in
// order) without changing any column's order: the sums are those of the
// scalar loop, bit for bit, on every x86-64 level (no FMA can form from
// additions alone). A block of accumulators stays in L1 while the rows
// stream past; f16/bf16 rows are widened a block at a time.
//
//===----------------------------------------------------------------------===//

#include "backends/host/HostReductions.h"
#include "backends/host/TargetClones.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace shardlin::rt {

namespace {

/// Columns per block: 2048 accumulators (8 KiB in f32, 16 KiB in f64) stay
/// in L1 with the row segment being added.
constexpr int64_t kColumnBlock = 2048;

SHARDLIN_TARGET_CLONES
void addRowF32(float *__restrict acc, const float *__restrict row,
               int64_t n) {
  for (int64_t j = 0; j < n; ++j)
    acc[j] += row[j];
}

SHARDLIN_TARGET_CLONES
void addRowF64(double *__restrict acc, const double *__restrict row,
               int64_t n) {
  for (int64_t j = 0; j < n; ++j)
    acc[j] += row[j];
}

void addRow(float *acc, const float *row, int64_t n) {
  addRowF32(acc, row, n);
}
void addRow(double *acc, const double *row, int64_t n) {
  addRowF64(acc, row, n);
}

/// Sums the rows of x (element type T, the accumulator's) into acc, one
/// block of columns at a time; acc holds cols elements.
template <typename T>
void sumRowsAs(const T *x, T *acc, int64_t rows, int64_t cols) {
  std::fill(acc, acc + cols, T(0));
  for (int64_t c0 = 0; c0 < cols; c0 += kColumnBlock) {
    const int64_t n = std::min(kColumnBlock, cols - c0);
    for (int64_t i = 0; i < rows; ++i)
      addRow(acc + c0, x + i * cols + c0, n);
  }
}

/// LocalOps::reduceLast's combinations (the CUDA kernel's, bit for bit).
template <typename C> C combineAs(ExprOp op, C x, C acc) {
  if (op == ExprOp::Add)
    return x + acc;
  const bool xNan = std::isnan(x), accNan = std::isnan(acc);
  if (xNan || accNan) {
    if (op == ExprOp::Maximum)
      return xNan ? x : acc;
    return xNan ? acc : x; // MaxNum: the other one (NaN if both are)
  }
  if (x == acc) // -0 < +0
    return std::signbit(x) ? acc : x;
  return x > acc ? x : acc;
}

/// Rows of x (element type T) reduced from init into y, accumulating in C.
template <typename T, typename C>
void reduceLastAs(ExprOp op, const T *x, const T *init, T *y, int64_t rows,
                  int64_t cols) {
  for (int64_t i = 0; i < rows; ++i) {
    C acc = static_cast<C>(init[i]);
    const T *row = x + i * cols;
    for (int64_t j = 0; j < cols; ++j)
      acc = combineAs<C>(op, static_cast<C>(row[j]), acc);
    y[i] = static_cast<T>(acc);
  }
}

} // namespace

void reduceLastOnHost(ExprOp op, const void *x, const void *init, void *y,
                      int64_t rows, int64_t cols, DType dtype) {
  if (rows == 0)
    return;
  if (dtype == DType::F64) {
    reduceLastAs<double, double>(op, static_cast<const double *>(x),
                                 static_cast<const double *>(init),
                                 static_cast<double *>(y), rows, cols);
    return;
  }
  if (dtype == DType::F32) {
    reduceLastAs<float, float>(op, static_cast<const float *>(x),
                               static_cast<const float *>(init),
                               static_cast<float *>(y), rows, cols);
    return;
  }
  // f16/bf16: each row widened (exact) and reduced in f32, the result
  // rounded once.
  const size_t elt = dtypeSize(dtype);
  std::vector<float> row(static_cast<size_t>(cols));
  std::vector<float> acc(static_cast<size_t>(rows));
  convertToF32(dtype, init, acc.data(), static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) {
    convertToF32(dtype, static_cast<const char *>(x) + i * cols * elt,
                 row.data(), static_cast<size_t>(cols));
    float a = acc[size_t(i)];
    for (int64_t j = 0; j < cols; ++j)
      a = combineAs<float>(op, row[size_t(j)], a);
    acc[size_t(i)] = a;
  }
  convertFromF32(dtype, acc.data(), y, static_cast<size_t>(rows));
}

void sumRowsOnHost(const void *x, DType from, void *y, DType to, int64_t rows,
                   int64_t cols) {
  if (cols == 0)
    return;
  if (from == DType::F64) {
    sumRowsAs(static_cast<const double *>(x), static_cast<double *>(y), rows,
              cols);
    return;
  }
  if (from == DType::F32) {
    sumRowsAs(static_cast<const float *>(x), static_cast<float *>(y), rows,
              cols);
    return;
  }
  // f16/bf16: widen a block of each row (exact), add in f32, and round the
  // sums once if the result is narrow.
  const size_t elt = dtypeSize(from);
  const int64_t block = std::min(kColumnBlock, cols);
  std::vector<float> acc(static_cast<size_t>(cols), 0.0f);
  std::vector<float> row(static_cast<size_t>(block));
  for (int64_t c0 = 0; c0 < cols; c0 += kColumnBlock) {
    const int64_t n = std::min(kColumnBlock, cols - c0);
    for (int64_t i = 0; i < rows; ++i) {
      convertToF32(from, static_cast<const char *>(x) + (i * cols + c0) * elt,
                   row.data(), static_cast<size_t>(n));
      addRow(acc.data() + c0, row.data(), n);
    }
  }
  if (to == DType::F32)
    std::copy(acc.begin(), acc.end(), static_cast<float *>(y));
  else
    convertFromF32(to, acc.data(), y, static_cast<size_t>(cols));
}

} // namespace shardlin::rt
