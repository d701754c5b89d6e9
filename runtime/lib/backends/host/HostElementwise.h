//===- HostElementwise.h - The host's elementwise evaluator -----*- C++ -*-===//
#ifndef SHARDLIN_RUNTIME_LIB_CPU_HOSTELEMENTWISE_H
#define SHARDLIN_RUNTIME_LIB_CPU_HOSTELEMENTWISE_H

#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/exec/LocalOps.h"

namespace shardlin::rt {

/// LocalOps::elementwise on host memory (see LocalOps.h), for a validated
/// expression and checked sizes: rows, cols >= 0, non-null pointers when
/// rows * cols > 0.
Status evaluateElementwiseOnHost(const ExprProgram &expr,
                                 const std::vector<ExprOperand> &operands,
                                 void *y, int64_t rows, int64_t cols,
                                 DType dtype,
                                 const HostLocalOpsOptions &options);

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_LIB_CPU_HOSTELEMENTWISE_H
