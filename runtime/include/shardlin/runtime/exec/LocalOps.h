//===- LocalOps.h - Data movement and elementwise ops on a device -*- C++ -*-===//
//
// The few local operations a Plan performs besides collectives and GEMMs:
// strided row copies (packing and unpacking the non-contiguous pieces of a
// collective, local_chunk along an inner dim, copying results out), the
// bias addition and the fused elementwise expression (Expr.h). Each device
// provides them, so a Plan never touches device
// memory from the host. Calls are ordered with the device's other work (for
// CUDA: enqueued on the rank's stream) and do not synchronize.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LOCALOPS_H
#define SHARDLIN_RUNTIME_LOCALOPS_H

#include "shardlin/runtime/base/Buffer.h"
#include "shardlin/runtime/base/DType.h"
#include "shardlin/runtime/base/Expr.h"
#include "shardlin/runtime/base/Status.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace shardlin::rt {

/// One operand of an elementwise expression: a full rows x cols tensor, or
/// a row vector of `cols` elements broadcast over the rows (a bias, a scale).
/// Or a column: `rows` elements, one per row, broadcast along the row (a
/// norm's statistics, R x 1).
struct ExprOperand {
  const void *data = nullptr;
  bool rowVector = false;
  bool column = false;
};

class LocalOps {
public:
  virtual ~LocalOps() = default;
  virtual Device device() const = 0;

  /// Copies `rows` rows of `rowBytes` bytes each: row i from
  /// src + i * srcStride to dst + i * dstStride. Regions must not overlap.
  virtual Status copyRows(const void *src, size_t srcStride, void *dst,
                          size_t dstStride, int64_t rows,
                          size_t rowBytes) = 0;

  /// y[i, j] = x[i, j] + bias[j] for a rows x cols row-major matrix; y may
  /// equal x. f16/bf16 are added in f32 and rounded once.
  virtual Status biasAdd(const void *x, const void *bias, void *y,
                         int64_t rows, int64_t cols, DType dtype) = 0;

  /// y[i, j] = the last node of `expr` (Expr.h) evaluated at (i, j) of a
  /// rows x cols row-major result, ExprOp::Input k reading operands[k] at
  /// (i, j), or at j for a row vector, or at i for a column. Computed in f32 (f16, bf16, f32) or
  /// f64 and rounded once when stored (round to nearest even). y may equal
  /// a full operand (in place) but must not overlap any operand otherwise.
  /// An invalid expression is an InvalidArgument error (validateExpr).
  virtual Status elementwise(const ExprProgram &expr,
                             const std::vector<ExprOperand> &operands, void *y,
                             int64_t rows, int64_t cols, DType dtype) = 0;

  /// y[i] = x[i] converted from `from` to `to`, for n elements, between f32
  /// and f16 or bf16 (either way; see isConversion): widening is exact,
  /// narrowing rounds to nearest even (the rounding of a K split's f32 sum
  /// to the result's type). x and y must not overlap.
  virtual Status convert(const void *x, DType from, void *y, DType to,
                         int64_t n) = 0;

  /// y[j] = the sum over i of x[i, j] for a rows x cols row-major x (of
  /// type `from`) and cols elements of y (of type `to`: `from`, or f32 for
  /// f16/bf16; see isSumRowsResult). Each column is summed in one fixed
  /// order, on every device: from +0, adding row 0, 1, ..., rows - 1, one
  /// rounding per addition in the accumulator type (f64 for f64, f32
  /// otherwise: f16/bf16 rows widened exactly), then rounded once to `to`
  /// (to nearest even; nothing to round for f32 and f64). So devices agree
  /// bit for bit, and 0 rows give +0. x and y must not overlap.
  virtual Status sumRows(const void *x, DType from, void *y, DType to,
                         int64_t rows, int64_t cols) = 0;

  /// y[i] = init[i] combined with x[i, 0], x[i, 1], ..., x[i, cols - 1] in
  /// that order (acc = combine(x[i, j], acc)), for a rows x cols row-major
  /// x and rows elements of init and y, all of type `dtype`: the rank-local
  /// reduction of a norm over the last dim. `combine` is ExprOp::Add,
  /// Maximum (NaN if either is NaN; -0 < +0) or MaxNum (the other operand
  /// if one is NaN). The accumulator is f32 for f16, bf16 and f32 (f16/bf16
  /// widened exactly) and f64 for f64, one rounding per step in it, rounded
  /// once to `dtype` at the end (to nearest even): every device computes
  /// the same bits. 0 columns give init. y may equal init; x must not
  /// overlap y.
  virtual Status reduceLast(ExprOp combine, const void *x, const void *init,
                            void *y, int64_t rows, int64_t cols,
                            DType dtype) = 0;

  /// Attention's softmax (docs/runtime.md, "Attention and RoPE"), in place
  /// on a rows x cols row-major block s of one head's scores (row i: query
  /// i, column j: key j), of type `dtype`, f32 or f64 (attention computes
  /// f16/bf16 in f32): with x[i, j] = scale * s[i, j] + mask[i, j] (mask:
  /// rows x cols of `dtype`, or null), and x = -inf where `causal` and
  /// j > i, s[i, j] becomes exp(x[i, j] - m) / sum_j exp(x[i, j] - m) with
  /// m the row's maximum, in `dtype`. A row whose every x is -inf (fully
  /// masked) becomes 0, never NaN. mask must not overlap s.
  virtual Status attentionSoftmax(void *s, const void *mask, int64_t rows,
                                  int64_t cols, double scale, bool causal,
                                  DType dtype) = 0;

  /// Its backward, in place on ds, which holds dP (the gradient of the
  /// probabilities p, rows x cols) on entry: ds[i, j] = scale * p[i, j] *
  /// (dP[i, j] - sum_k p[i, k] * dP[i, k]), the gradient of the unscaled
  /// scores. f32 or f64 (`dtype`), each row's sum in that type. p and ds
  /// must not overlap.
  virtual Status attentionSoftmaxGrad(const void *p, void *ds, int64_t rows,
                                      int64_t cols, double scale,
                                      DType dtype) = 0;

  /// Rotary position embedding, rotate-half (GPT-NeoX / HF Llama): x and y
  /// are [batch, seq, heads * headDim] of `dtype` (any of f16, bf16, f32,
  /// f64), cos and sin [seq, headDim / 2] of `tableType` (f32 or `dtype`).
  /// Within each head, the pair (x1, x2) = (x[i], x[i + headDim / 2]) at
  /// position p becomes y1 = x1 cos - x2 sin, y2 = x2 cos + x1 sin with
  /// cos = cos[p, i], sin = sin[p, i]; `inverse` rotates by -theta (sin
  /// negated: rope's backward). Computed in f32 (f64 for f64, the tables
  /// widened exactly) and rounded once. y may equal x, must not overlap it
  /// otherwise.
  virtual Status rope(const void *x, const void *cos, const void *sin,
                      DType tableType, void *y, int64_t batch, int64_t seq,
                      int64_t heads, int64_t headDim, bool inverse,
                      DType dtype) = 0;
};

/// The checks every device's attentionSoftmax (grad false: s the scores)
/// and attentionSoftmaxGrad (grad true: s is ds, and p is read) make before
/// they touch memory: f32 or f64, non-negative sizes within int64 bytes, a
/// finite scale, and non-null pointers where there is something to compute
/// (the mask may be null). The messages name the call.
Status checkAttentionSoftmaxArguments(bool grad, const void *s, const void *p,
                                      int64_t rows, int64_t cols, double scale,
                                      DType dtype);

/// The checks every device's rope makes: known types (the tables f32 or
/// `dtype`), non-negative sizes, an even headDim, sizes within int64 bytes,
/// non-null pointers where there is something to compute.
Status checkRopeArguments(const void *x, const void *cos, const void *sin,
                          DType tableType, const void *y, int64_t batch,
                          int64_t seq, int64_t heads, int64_t headDim,
                          DType dtype);

/// The checks every device's reduceLast makes before it touches memory: a
/// known dtype and combination, non-negative sizes within int64 bytes, and
/// non-null pointers where there is something to read or write.
Status checkReduceLastArguments(ExprOp combine, const void *x,
                                const void *init, const void *y, int64_t rows,
                                int64_t cols, DType dtype);

/// Whether sumRows (and shardlin.sum_rows) take `from` to `to`: the same
/// type, or f32 of f16/bf16.
bool isSumRowsResult(DType from, DType to);

/// The checks every device's sumRows makes before it touches memory: the
/// types (isSumRowsResult), non-negative sizes whose elements fit in int64
/// bytes, and non-null pointers where there is something to read or write.
/// InvalidArgument, naming what is wrong.
Status checkSumRowsArguments(const void *x, DType from, const void *y,
                             DType to, int64_t rows, int64_t cols);

/// The checks every device's convert makes before it touches memory: a
/// supported pair of types, n >= 0 and n elements within int64 bytes, and
/// non-null pointers when n > 0. InvalidArgument, naming what is wrong.
Status checkConvertArguments(const void *x, DType from, const void *y,
                             DType to, int64_t n);

/// The checks every device's elementwise makes before it touches memory:
/// sizes (non-negative, rows * cols in int64 elements and bytes), a known
/// dtype, the expression (validateExpr), and non-null pointers when there
/// is something to compute. InvalidArgument, naming what is wrong.
Status checkElementwiseArguments(const ExprProgram &expr,
                                 const std::vector<ExprOperand> &operands,
                                 const void *y, int64_t rows, int64_t cols,
                                 DType dtype);

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_LOCALOPS_H
