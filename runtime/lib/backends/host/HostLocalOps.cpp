//===- HostLocalOps.cpp - Local operations on host memory -----------------===//

#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/exec/LocalOps.h"

#include "backends/host/HostAttention.h"
#include "backends/host/HostElementwise.h"
#include "backends/host/HostReductions.h"

#include <cstring>
#include <vector>

namespace shardlin::rt {

namespace {

template <typename T>
void addRows(const T *x, const T *bias, T *y, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      y[i * cols + j] = x[i * cols + j] + bias[j];
}

class HostLocalOps final : public LocalOps {
public:
  explicit HostLocalOps(const HostLocalOpsOptions &options)
      : options_(options) {}
  Device device() const override { return Device{}; }

  Status copyRows(const void *src, size_t srcStride, void *dst,
                  size_t dstStride, int64_t rows, size_t rowBytes) override {
    if (rows < 0)
      return Status::invalidArgument("copyRows: negative row count " +
                           std::to_string(rows));
    if (rowBytes == 0 || rows == 0)
      return Status::ok();
    const char *s = static_cast<const char *>(src);
    char *d = static_cast<char *>(dst);
    if (srcStride == rowBytes && dstStride == rowBytes) {
      std::memcpy(d, s, rowBytes * rows);
      return Status::ok();
    }
    for (int64_t i = 0; i < rows; ++i)
      std::memcpy(d + i * dstStride, s + i * srcStride, rowBytes);
    return Status::ok();
  }

  Status biasAdd(const void *x, const void *bias, void *y, int64_t rows,
                 int64_t cols, DType dtype) override {
    if (rows < 0 || cols < 0)
      return Status::invalidArgument("biasAdd: negative size " + std::to_string(rows) +
                           " x " + std::to_string(cols));
    if (rows == 0 || cols == 0)
      return Status::ok();
    switch (dtype) {
    case DType::F64:
      addRows(static_cast<const double *>(x),
              static_cast<const double *>(bias), static_cast<double *>(y),
              rows, cols);
      return Status::ok();
    case DType::F32:
      addRows(static_cast<const float *>(x), static_cast<const float *>(bias),
              static_cast<float *>(y), rows, cols);
      return Status::ok();
    case DType::F16:
    case DType::BF16: {
      // Widen one row at a time, add in f32, round once.
      const size_t elt = dtypeSize(dtype);
      std::vector<float> b32(cols), row(cols);
      convertToF32(dtype, bias, b32.data(), cols);
      for (int64_t i = 0; i < rows; ++i) {
        convertToF32(dtype, static_cast<const char *>(x) + i * cols * elt,
                     row.data(), cols);
        for (int64_t j = 0; j < cols; ++j)
          row[j] += b32[j];
        convertFromF32(dtype, row.data(),
                       static_cast<char *>(y) + i * cols * elt, cols);
      }
      return Status::ok();
    }
    }
    return Status::invalidArgument("biasAdd: unknown element type");
  }

  Status convert(const void *x, DType from, void *y, DType to,
                 int64_t n) override {
    SHARDLIN_RETURN_IF_ERROR(checkConvertArguments(x, from, y, to, n));
    if (from == DType::F32)
      convertFromF32(to, static_cast<const float *>(x), y, size_t(n));
    else
      convertToF32(from, x, static_cast<float *>(y), size_t(n));
    return Status::ok();
  }

  Status sumRows(const void *x, DType from, void *y, DType to, int64_t rows,
                 int64_t cols) override {
    SHARDLIN_RETURN_IF_ERROR(
        checkSumRowsArguments(x, from, y, to, rows, cols));
    sumRowsOnHost(x, from, y, to, rows, cols);
    return Status::ok();
  }

  Status reduceLast(ExprOp combine, const void *x, const void *init, void *y,
                    int64_t rows, int64_t cols, DType dtype) override {
    SHARDLIN_RETURN_IF_ERROR(
        checkReduceLastArguments(combine, x, init, y, rows, cols, dtype));
    reduceLastOnHost(combine, x, init, y, rows, cols, dtype);
    return Status::ok();
  }

  Status elementwise(const ExprProgram &expr,
                     const std::vector<ExprOperand> &operands, void *y,
                     int64_t rows, int64_t cols, DType dtype) override {
    SHARDLIN_RETURN_IF_ERROR(
        checkElementwiseArguments(expr, operands, y, rows, cols, dtype));
    return evaluateElementwiseOnHost(expr, operands, y, rows, cols, dtype,
                                     options_);
  }

  Status attentionSoftmax(void *s, const void *mask, int64_t rows,
                          int64_t cols, double scale, bool causal,
                          DType dtype) override {
    SHARDLIN_RETURN_IF_ERROR(checkAttentionSoftmaxArguments(
        false, s, nullptr, rows, cols, scale, dtype));
    attentionSoftmaxOnHost(s, mask, rows, cols, scale, causal, dtype);
    return Status::ok();
  }

  Status attentionSoftmaxGrad(const void *p, void *ds, int64_t rows,
                              int64_t cols, double scale,
                              DType dtype) override {
    SHARDLIN_RETURN_IF_ERROR(checkAttentionSoftmaxArguments(
        true, ds, p, rows, cols, scale, dtype));
    attentionSoftmaxGradOnHost(p, ds, rows, cols, scale, dtype);
    return Status::ok();
  }

  Status rope(const void *x, const void *cos, const void *sin,
              DType tableType, void *y, int64_t batch, int64_t seq,
              int64_t heads, int64_t headDim, bool inverse,
              DType dtype) override {
    SHARDLIN_RETURN_IF_ERROR(checkRopeArguments(x, cos, sin, tableType, y,
                                                batch, seq, heads, headDim,
                                                dtype));
    ropeOnHost(x, cos, sin, tableType, y, batch, seq, heads, headDim,
               inverse, dtype);
    return Status::ok();
  }

private:
  const HostLocalOpsOptions options_;
};

} // namespace

std::unique_ptr<LocalOps>
createHostLocalOps(const HostLocalOpsOptions &options) {
  return std::make_unique<HostLocalOps>(options);
}

} // namespace shardlin::rt
