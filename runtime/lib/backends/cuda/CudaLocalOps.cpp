//===- CudaLocalOps.cpp - Local operations on one GPU's memory ------------===//
//
// The LocalOps of a GPU rank (LocalOps.h): what a Plan does besides its
// collectives and GEMMs, enqueued on the rank's ExecutionStream so it is
// ordered with them and never synchronizes:
//  - copyRows: one cudaMemcpy2DAsync, which moves a whole strided piece (the
//    [outer, n, inner] blocks a collective packs and unpacks) in one call
//    instead of one copy per row; a single cudaMemcpyAsync when the rows are
//    contiguous on both sides. cudaMemcpyDefault lets the driver infer the
//    direction from the pointers (unified addressing), so a copy between two
//    devices' memory or from registered host memory also works.
//  - biasAdd: the biasAdd kernel (Kernels.h), which rounds exactly as the
//    host's LocalOps do, so GPU and CPU plans agree bit for bit on this step.
//  - elementwise: one kernel that evaluates the expression per element, the
//    program passed by value as a kernel argument (DeviceExpr).
//  - convert: the convert kernel, rounding as the host's conversions do.
//  - sumRows: the sumRows kernel, in the host's order (bit for bit).
//  - attentionSoftmax, attentionSoftmaxGrad, rope: AttentionKernels.cu's,
//    which agree with the host's to rounding (tree reductions over a row).
//
//===----------------------------------------------------------------------===//

#include "backends/cuda/CudaCheck.h"
#include "backends/cuda/Kernels.h"

#include "shardlin/runtime/backends/Cuda.h"
#include "shardlin/runtime/exec/LocalOps.h"

#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <utility>

namespace shardlin::rt {
namespace {

using namespace cuda;

class CudaLocalOps final : public LocalOps {
public:
  explicit CudaLocalOps(std::shared_ptr<ExecutionStream> stream)
      : stream_(std::move(stream)), device_(stream_->device()) {}

  Status init() {
    ScopedDevice guard;
    SHARDLIN_RETURN_IF_ERROR(guard.enter(device_));
    int pitch = 0;
    SHARDLIN_CUDA_RETURN_IF_ERROR(
        device_, cudaDeviceGetAttribute(&pitch, cudaDevAttrMaxPitch, device_));
    maxPitch_ = size_t(pitch);
    SHARDLIN_RETURN_IF_ERROR(pageableMemoryAccess(device_, pageableOk_));
    return Status::ok();
  }

  Device device() const override { return Device{DeviceKind::Cuda, device_}; }

  Status copyRows(const void *src, size_t srcStride, void *dst,
                  size_t dstStride, int64_t rows, size_t rowBytes) override {
    Status st = copyRowsChecked(src, srcStride, dst, dstStride, rows, rowBytes);
    if (st.isOk())
      return st;
    return st.withContext("cuda copyRows (" + std::to_string(rows) + " x " +
                          std::to_string(rowBytes) + " bytes, strides " +
                          std::to_string(srcStride) + " -> " +
                          std::to_string(dstStride) +
                          ", cuda:" + std::to_string(device_) + ")");
  }

  Status biasAdd(const void *x, const void *bias, void *y, int64_t rows,
                 int64_t cols, DType dtype) override {
    Status st = biasAddChecked(x, bias, y, rows, cols, dtype);
    if (st.isOk())
      return st;
    return st.withContext("cuda biasAdd (" + std::string(dtypeName(dtype)) +
                          ", " + std::to_string(rows) + " x " +
                          std::to_string(cols) +
                          ", cuda:" + std::to_string(device_) + ")");
  }

  Status elementwise(const ExprProgram &expr,
                     const std::vector<ExprOperand> &operands, void *y,
                     int64_t rows, int64_t cols, DType dtype) override {
    Status st = elementwiseChecked(expr, operands, y, rows, cols, dtype);
    if (st.isOk())
      return st;
    return st.withContext("cuda elementwise (" +
                          std::string(dtypeName(dtype)) + ", " +
                          std::to_string(rows) + " x " + std::to_string(cols) +
                          ", cuda:" + std::to_string(device_) + ")");
  }

  Status convert(const void *x, DType from, void *y, DType to,
                 int64_t n) override {
    Status st = convertChecked(x, from, y, to, n);
    if (st.isOk())
      return st;
    return st.withContext("cuda convert (" + std::string(dtypeName(from)) +
                          " to " + dtypeName(to) + ", " + std::to_string(n) +
                          " elements, cuda:" + std::to_string(device_) + ")");
  }

  Status sumRows(const void *x, DType from, void *y, DType to, int64_t rows,
                 int64_t cols) override {
    Status st = sumRowsChecked(x, from, y, to, rows, cols);
    if (st.isOk())
      return st;
    return st.withContext("cuda sumRows (" + std::string(dtypeName(from)) +
                          " to " + dtypeName(to) + ", " +
                          std::to_string(rows) + " x " + std::to_string(cols) +
                          ", cuda:" + std::to_string(device_) + ")");
  }

  Status reduceLast(ExprOp combine, const void *x, const void *init, void *y,
                    int64_t rows, int64_t cols, DType dtype) override {
    Status st = reduceLastChecked(combine, x, init, y, rows, cols, dtype);
    if (st.isOk())
      return st;
    return st.withContext("cuda reduceLast (" + std::string(dtypeName(dtype)) +
                          ", " + std::to_string(rows) + " x " +
                          std::to_string(cols) +
                          ", cuda:" + std::to_string(device_) + ")");
  }

  Status attentionSoftmax(void *scores, const void *mask, int64_t rows,
                          int64_t cols, double scale, bool causal,
                          DType dtype) override {
    Status st = softmaxChecked(scores, nullptr, mask, rows, cols, scale,
                               causal, dtype);
    if (st.isOk())
      return st;
    return st.withContext("cuda attentionSoftmax (" +
                          std::string(dtypeName(dtype)) + ", " +
                          std::to_string(rows) + " x " + std::to_string(cols) +
                          ", cuda:" + std::to_string(device_) + ")");
  }

  Status attentionSoftmaxGrad(const void *p, void *ds, int64_t rows,
                              int64_t cols, double scale,
                              DType dtype) override {
    Status st =
        softmaxChecked(ds, p, nullptr, rows, cols, scale, false, dtype);
    if (st.isOk())
      return st;
    return st.withContext("cuda attentionSoftmaxGrad (" +
                          std::string(dtypeName(dtype)) + ", " +
                          std::to_string(rows) + " x " + std::to_string(cols) +
                          ", cuda:" + std::to_string(device_) + ")");
  }

  Status rope(const void *x, const void *cos, const void *sin,
              DType tableType, void *y, int64_t batch, int64_t seq,
              int64_t heads, int64_t headDim, bool inverse,
              DType dtype) override {
    Status st = ropeChecked(x, cos, sin, tableType, y, batch, seq, heads,
                            headDim, inverse, dtype);
    if (st.isOk())
      return st;
    return st.withContext("cuda rope (" + std::string(dtypeName(dtype)) +
                          ", cuda:" + std::to_string(device_) + ")");
  }

private:
  cudaStream_t s() const { return nativeStream(*stream_); }

  /// attentionSoftmax (p null) or attentionSoftmaxGrad (p set, in place on
  /// scores = ds).
  Status softmaxChecked(void *scores, const void *p, const void *mask,
                        int64_t rows, int64_t cols, double scale, bool causal,
                        DType dtype) {
    SHARDLIN_RETURN_IF_ERROR(checkAttentionSoftmaxArguments(
        p != nullptr, scores, p, rows, cols, scale, dtype));
    if (rows == 0 || cols == 0)
      return Status::ok();
    ScopedDevice guard;
    SHARDLIN_RETURN_IF_ERROR(guard.enter(device_));
    const int64_t n = rows * cols;
    for (const auto &[name, ptr] :
         {std::pair<const char *, const void *>{"s", scores},
          {"p", p},
          {"mask", mask}}) {
      if (!ptr)
        continue;
      std::string problem =
          checkDeviceBuffer(name, ptr, n, dtype, device_, pageableOk_);
      if (!problem.empty())
        return Status::invalidArgument(problem);
    }
    SHARDLIN_CUDA_RETURN_IF_ERROR(
        device_, p ? launchAttentionSoftmaxGrad(dtype, p, scores, rows, cols,
                                                scale, s())
                   : launchAttentionSoftmax(dtype, scores, mask, rows, cols,
                                            scale, causal, s()));
    return Status::ok();
  }

  Status ropeChecked(const void *x, const void *cos, const void *sin,
                     DType tableType, void *y, int64_t batch, int64_t seq,
                     int64_t heads, int64_t headDim, bool inverse,
                     DType dtype) {
    SHARDLIN_RETURN_IF_ERROR(checkRopeArguments(
        x, cos, sin, tableType, y, batch, seq, heads, headDim, dtype));
    const int64_t n = batch * seq * heads * headDim;
    if (n == 0)
      return Status::ok();
    ScopedDevice guard;
    SHARDLIN_RETURN_IF_ERROR(guard.enter(device_));
    const int64_t table = seq * (headDim / 2);
    for (const auto &[name, ptr, count, type] :
         {std::tuple<const char *, const void *, int64_t, DType>{"x", x, n,
                                                                 dtype},
          {"y", y, n, dtype},
          {"cos", cos, table, tableType},
          {"sin", sin, table, tableType}}) {
      std::string problem =
          checkDeviceBuffer(name, ptr, count, type, device_, pageableOk_);
      if (!problem.empty())
        return Status::invalidArgument(problem);
    }
    SHARDLIN_CUDA_RETURN_IF_ERROR(
        device_, launchRope(dtype, tableType, x, cos, sin, y, batch, seq,
                            heads, headDim, inverse, s()));
    return Status::ok();
  }

  Status reduceLastChecked(ExprOp combine, const void *x, const void *init,
                           void *y, int64_t rows, int64_t cols, DType dtype) {
    SHARDLIN_RETURN_IF_ERROR(
        checkReduceLastArguments(combine, x, init, y, rows, cols, dtype));
    if (rows == 0)
      return Status::ok();
    ScopedDevice guard;
    SHARDLIN_RETURN_IF_ERROR(guard.enter(device_));
    std::string problem =
        checkDeviceBuffer("y", y, rows, dtype, device_, pageableOk_);
    if (problem.empty())
      problem = checkDeviceBuffer("init", init, rows, dtype, device_,
                                  pageableOk_);
    if (problem.empty() && cols > 0)
      problem = checkDeviceBuffer("x", x, rows * cols, dtype, device_,
                                  pageableOk_);
    if (!problem.empty())
      return Status::invalidArgument(problem);
    SHARDLIN_CUDA_RETURN_IF_ERROR(
        device_, launchReduceLast(dtype, static_cast<int>(combine), x, init,
                                  y, rows, cols, s()));
    return Status::ok();
  }

  Status sumRowsChecked(const void *x, DType from, void *y, DType to,
                        int64_t rows, int64_t cols) {
    SHARDLIN_RETURN_IF_ERROR(
        checkSumRowsArguments(x, from, y, to, rows, cols));
    if (cols == 0)
      return Status::ok();
    ScopedDevice guard;
    SHARDLIN_RETURN_IF_ERROR(guard.enter(device_));
    // As biasAdd: a host pointer, or another device's, would fault inside
    // the kernel. (0 rows read nothing: y gets zeros.)
    std::string problem =
        checkDeviceBuffer("y", y, cols, to, device_, pageableOk_);
    if (problem.empty() && rows > 0)
      problem = checkDeviceBuffer("x", x, rows * cols, from, device_,
                                  pageableOk_);
    if (!problem.empty())
      return Status::invalidArgument(problem);
    SHARDLIN_CUDA_RETURN_IF_ERROR(
        device_, launchSumRows(from, x, to, y, rows, cols, s()));
    return Status::ok();
  }

  Status convertChecked(const void *x, DType from, void *y, DType to,
                        int64_t n) {
    SHARDLIN_RETURN_IF_ERROR(checkConvertArguments(x, from, y, to, n));
    if (n == 0)
      return Status::ok();
    ScopedDevice guard;
    SHARDLIN_RETURN_IF_ERROR(guard.enter(device_));
    // As biasAdd: a host pointer, or another device's, would fault inside
    // the kernel.
    for (const auto &[name, ptr, dtype] :
         {std::tuple<const char *, const void *, DType>{"x", x, from},
          {"y", y, to}}) {
      std::string problem =
          checkDeviceBuffer(name, ptr, n, dtype, device_, pageableOk_);
      if (!problem.empty())
        return Status::invalidArgument(problem);
    }
    SHARDLIN_CUDA_RETURN_IF_ERROR(device_,
                                  launchConvert(from, x, to, y, n, s()));
    return Status::ok();
  }

  Status elementwiseChecked(const ExprProgram &expr,
                            const std::vector<ExprOperand> &operands, void *y,
                            int64_t rows, int64_t cols, DType dtype) {
    SHARDLIN_RETURN_IF_ERROR(
        checkElementwiseArguments(expr, operands, y, rows, cols, dtype));
    if (rows == 0 || cols == 0)
      return Status::ok();
    if (operands.size() > kMaxExprNodes)
      return Status::invalidArgument(
          std::to_string(operands.size()) + " operands (at most " +
          std::to_string(kMaxExprNodes) + ")");
    const int64_t elements = rows * cols;
    ScopedDevice guard;
    SHARDLIN_RETURN_IF_ERROR(guard.enter(device_));
    // As biasAdd: a host pointer, or another device's, would fault inside
    // the kernel.
    std::string problem =
        checkDeviceBuffer("y", y, elements, dtype, device_, pageableOk_);
    if (!problem.empty())
      return Status::invalidArgument(problem);
    DeviceExpr e;
    e.numNodes = static_cast<int>(expr.nodes.size());
    for (size_t n = 0; n < expr.nodes.size(); ++n) {
      const ExprNode &node = expr.nodes[n];
      e.op[n] = static_cast<uint8_t>(node.op);
      for (int k = 0; k < 3; ++k)
        e.args[n][k] = static_cast<int8_t>(node.args[k]);
      e.input[n] = static_cast<uint8_t>(node.op == ExprOp::Input ? node.input
                                                                 : 0);
      e.predicate[n] = static_cast<uint8_t>(node.predicate);
      e.value[n] = node.value;
    }
    e.numOperands = static_cast<int>(operands.size());
    for (size_t k = 0; k < operands.size(); ++k) {
      const ExprOperand &o = operands[k];
      problem = checkDeviceBuffer(("operand " + std::to_string(k)).c_str(),
                                  o.data,
                                  o.rowVector ? cols
                                  : o.column  ? rows
                                              : elements,
                                  dtype,
                                  device_, pageableOk_);
      if (!problem.empty())
        return Status::invalidArgument(problem);
      e.operand[k] = o.data;
      e.rowVector[k] = o.rowVector ? 1 : o.column ? 2 : 0;
    }
    SHARDLIN_CUDA_RETURN_IF_ERROR(
        device_, launchElementwise(dtype, e, y, rows, cols, s()));
    return Status::ok();
  }

  Status copyRowsChecked(const void *src, size_t srcStride, void *dst,
                         size_t dstStride, int64_t rows, size_t rowBytes) {
    if (rows < 0)
      return Status::invalidArgument("negative row count " + std::to_string(rows));
    if (rows == 0 || rowBytes == 0)
      return Status::ok();
    if (!src || !dst)
      return Status::invalidArgument(std::string(!src ? "src" : "dst") + " is null");
    ScopedDevice guard;
    SHARDLIN_RETURN_IF_ERROR(guard.enter(device_));
    // One row, or rows packed on both sides: a single linear copy (the
    // strides do not matter for one row).
    if (rows == 1 || (srcStride == rowBytes && dstStride == rowBytes)) {
      if (uint64_t(rows) > UINT64_MAX / rowBytes)
        return Status::invalidArgument("the byte count overflows");
      SHARDLIN_CUDA_RETURN_IF_ERROR(
          device_, cudaMemcpyAsync(dst, src, size_t(rows) * rowBytes,
                                   cudaMemcpyDefault, s()));
      return Status::ok();
    }
    // Rows would overlap within one side: not a layout any plan makes, and
    // the copy's result would depend on the order the engine copies rows in.
    if (srcStride < rowBytes || dstStride < rowBytes)
      return Status::invalidArgument("a stride is smaller than the row length");
    if (srcStride <= maxPitch_ && dstStride <= maxPitch_) {
      SHARDLIN_CUDA_RETURN_IF_ERROR(
          device_, cudaMemcpy2DAsync(dst, dstStride, src, srcStride, rowBytes,
                                     size_t(rows), cudaMemcpyDefault, s()));
      return Status::ok();
    }
    // Pitches beyond what the copy engine's 2-D descriptor takes (2 GiB
    // rows on current GPUs): one copy per row, still in stream order.
    const char *from = static_cast<const char *>(src);
    char *to = static_cast<char *>(dst);
    for (int64_t i = 0; i < rows; ++i)
      SHARDLIN_CUDA_RETURN_IF_ERROR(
          device_, cudaMemcpyAsync(to + size_t(i) * dstStride,
                                   from + size_t(i) * srcStride, rowBytes,
                                   cudaMemcpyDefault, s()));
    return Status::ok();
  }

  Status biasAddChecked(const void *x, const void *bias, void *y, int64_t rows,
                        int64_t cols, DType dtype) {
    if (rows < 0 || cols < 0)
      return Status::invalidArgument("negative size " + std::to_string(rows) + " x " +
                           std::to_string(cols));
    if (dtype != DType::F16 && dtype != DType::BF16 && dtype != DType::F32 &&
        dtype != DType::F64)
      return Status::invalidArgument("invalid dtype value " +
                           std::to_string(static_cast<int>(dtype)));
    if (rows == 0 || cols == 0)
      return Status::ok();
    if (rows > INT64_MAX / cols)
      return Status::invalidArgument("rows * cols overflows");
    const int64_t elements = rows * cols;
    const std::string tooLarge =
        checkCount("rows * cols", elements, dtypeSize(dtype));
    if (!tooLarge.empty())
      return Status::invalidArgument(tooLarge);
    ScopedDevice guard;
    SHARDLIN_RETURN_IF_ERROR(guard.enter(device_));
    // A host pointer (or another device's) would fault inside the kernel and
    // poison the context for every later call on this device: refuse it
    // here, as the GEMM backend does.
    const struct {
      const char *name;
      const void *ptr;
      int64_t elements;
    } buffers[] = {
        {"x", x, elements}, {"bias", bias, cols}, {"y", y, elements}};
    for (const auto &b : buffers) {
      std::string problem = checkDeviceBuffer(b.name, b.ptr, b.elements, dtype,
                                              device_, pageableOk_);
      if (!problem.empty())
        return Status::invalidArgument(problem);
    }
    SHARDLIN_CUDA_RETURN_IF_ERROR(
        device_, launchBiasAdd(dtype, x, bias, y, rows, cols, s()));
    return Status::ok();
  }

  // The stream outlives every copy and kernel enqueued on it through here.
  std::shared_ptr<ExecutionStream> stream_;
  const int device_;
  size_t maxPitch_ = 0;
  bool pageableOk_ = false;
};

} // namespace

Status createCudaLocalOps(std::shared_ptr<ExecutionStream> stream,
                          std::unique_ptr<LocalOps> &out) {
  out.reset();
  if (!stream)
    return Status::invalidArgument("createCudaLocalOps: null stream");
  auto ops = std::make_unique<CudaLocalOps>(std::move(stream));
  SHARDLIN_RETURN_IF_ERROR(ops->init().withContext("createCudaLocalOps"));
  out = std::move(ops);
  return Status::ok();
}

} // namespace shardlin::rt
