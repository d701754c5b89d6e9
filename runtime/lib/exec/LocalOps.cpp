//===- LocalOps.cpp - The argument checks every device's local ops make ---===//
//
// elementwise, convert, sumRows and reduceLast are the local ops every device
// implements with kernels of its own (backends/host, backends/cuda); their
// argument checks are written once, here.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/exec/LocalOps.h"
#include "shardlin/runtime/base/Buffer.h"

#include <cmath>

namespace shardlin::rt {

namespace {

/// `op`'s rows x cols elements of `elemSize` bytes: neither negative, and a
/// byte count that fits.
Status checkMatrixSize(const char *op, int64_t rows, int64_t cols,
                       size_t elemSize) {
  if (rows < 0 || cols < 0)
    return Status::invalidArgument(std::string(op) + ": negative size " +
                                   std::to_string(rows) + " x " +
                                   std::to_string(cols));
  int64_t count = 0;
  return checkedNumElements({rows, cols}, count, elemSize).withContext(op);
}

} // namespace

Status checkElementwiseArguments(const ExprProgram &expr,
                                 const std::vector<ExprOperand> &operands,
                                 const void *y, int64_t rows, int64_t cols,
                                 DType dtype) {
  if (dtype != DType::F16 && dtype != DType::BF16 && dtype != DType::F32 &&
      dtype != DType::F64)
    return Status::invalidArgument("elementwise: unknown element type " +
                                   std::to_string(static_cast<int>(dtype)));
  SHARDLIN_RETURN_IF_ERROR(
      checkMatrixSize("elementwise", rows, cols, dtypeSize(dtype)));
  SHARDLIN_RETURN_IF_ERROR(
      validateExpr(expr, operands.size(), "elementwise"));
  if (rows == 0 || cols == 0)
    return Status::ok();
  if (!y)
    return Status::invalidArgument("elementwise: the result is null");
  for (size_t k = 0; k < operands.size(); ++k)
    if (!operands[k].data)
      return Status::invalidArgument("elementwise: operand " +
                                     std::to_string(k) + " is null");
  return Status::ok();
}

Status checkConvertArguments(const void *x, DType from, const void *y,
                             DType to, int64_t n) {
  if (!isConversion(from, to))
    return Status::invalidArgument(
        "convert: no conversion from element type " +
        std::to_string(static_cast<int>(from)) + " to " +
        std::to_string(static_cast<int>(to)) +
        " (f32 to f16 or bf16, or back)");
  if (n < 0)
    return Status::invalidArgument("convert: negative size " +
                                   std::to_string(n));
  int64_t count = 0;
  SHARDLIN_RETURN_IF_ERROR(
      checkedNumElements({n}, count, dtypeSize(DType::F32))
          .withContext("convert"));
  if (n > 0 && (!x || !y))
    return Status::invalidArgument(std::string("convert: ") +
                                   (!x ? "the source" : "the result") +
                                   " is null");
  return Status::ok();
}

bool isSumRowsResult(DType from, DType to) {
  const bool known = from == DType::F16 || from == DType::BF16 ||
                     from == DType::F32 || from == DType::F64;
  return known && (to == from || (to == DType::F32 && from != DType::F64));
}

Status checkSumRowsArguments(const void *x, DType from, const void *y,
                             DType to, int64_t rows, int64_t cols) {
  if (!isSumRowsResult(from, to))
    return Status::invalidArgument(
        "sumRows: no sum of element type " +
        std::to_string(static_cast<int>(from)) + " into " +
        std::to_string(static_cast<int>(to)) +
        " (the input's type, or f32 for f16 and bf16)");
  SHARDLIN_RETURN_IF_ERROR(
      checkMatrixSize("sumRows", rows, cols, dtypeSize(from)));
  int64_t count = 0;
  SHARDLIN_RETURN_IF_ERROR(checkedNumElements({cols}, count, dtypeSize(to))
                               .withContext("sumRows"));
  if (cols > 0 && !y)
    return Status::invalidArgument("sumRows: the result is null");
  if (rows > 0 && cols > 0 && !x)
    return Status::invalidArgument("sumRows: the input is null");
  return Status::ok();
}

Status checkReduceLastArguments(ExprOp combine, const void *x,
                                const void *init, const void *y, int64_t rows,
                                int64_t cols, DType dtype) {
  if (dtype != DType::F16 && dtype != DType::BF16 && dtype != DType::F32 &&
      dtype != DType::F64)
    return Status::invalidArgument("reduceLast: unknown element type " +
                                   std::to_string(static_cast<int>(dtype)));
  if (combine != ExprOp::Add && combine != ExprOp::Maximum &&
      combine != ExprOp::MaxNum)
    return Status::invalidArgument(
        std::string("reduceLast: no reduction by ") + exprOpName(combine) +
        " (add, maximum or maxnum)");
  SHARDLIN_RETURN_IF_ERROR(
      checkMatrixSize("reduceLast", rows, cols, dtypeSize(dtype)));
  if (rows > 0 && (!init || !y))
    return Status::invalidArgument(std::string("reduceLast: ") +
                                   (!init ? "the init" : "the result") +
                                   " is null");
  if (rows > 0 && cols > 0 && !x)
    return Status::invalidArgument("reduceLast: the input is null");
  return Status::ok();
}

Status checkAttentionSoftmaxArguments(bool grad, const void *s, const void *p,
                                      int64_t rows, int64_t cols, double scale,
                                      DType dtype) {
  const std::string op = grad ? "attentionSoftmaxGrad" : "attentionSoftmax";
  if (dtype != DType::F32 && dtype != DType::F64)
    return Status::invalidArgument(op + ": element type " + dtypeName(dtype) +
                                   " (f32 or f64)");
  SHARDLIN_RETURN_IF_ERROR(
      checkMatrixSize(op.c_str(), rows, cols, dtypeSize(dtype)));
  if (!std::isfinite(scale))
    return Status::invalidArgument(op + ": the scale is not finite");
  if (rows == 0 || cols == 0)
    return Status::ok();
  if (!s)
    return Status::invalidArgument(op + (grad ? ": ds is null"
                                              : ": the scores are null"));
  if (grad && !p)
    return Status::invalidArgument(op + ": p is null");
  return Status::ok();
}

Status checkRopeArguments(const void *x, const void *cos, const void *sin,
                          DType tableType, const void *y, int64_t batch,
                          int64_t seq, int64_t heads, int64_t headDim,
                          DType dtype) {
  if (dtype != DType::F16 && dtype != DType::BF16 && dtype != DType::F32 &&
      dtype != DType::F64)
    return Status::invalidArgument("rope: unknown element type " +
                                   std::to_string(static_cast<int>(dtype)));
  if (tableType != DType::F32 && tableType != dtype)
    return Status::invalidArgument(std::string("rope: ") +
                                   dtypeName(tableType) + " tables for " +
                                   dtypeName(dtype) + " (f32 or x's type)");
  if (batch < 0 || seq < 0 || heads < 0 || headDim < 0 || headDim % 2 != 0)
    return Status::invalidArgument(
        "rope: bad sizes " + std::to_string(batch) + " x " +
        std::to_string(seq) + " x " + std::to_string(heads) + " x " +
        std::to_string(headDim) + " (non-negative, an even head size)");
  int64_t count = 0;
  SHARDLIN_RETURN_IF_ERROR(
      checkedNumElements({batch, seq, heads, headDim}, count, dtypeSize(dtype))
          .withContext("rope"));
  if (count > 0 && (!x || !y || !cos || !sin))
    return Status::invalidArgument("rope: a null operand or result");
  return Status::ok();
}

} // namespace shardlin::rt
