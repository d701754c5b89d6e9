//===- HostReductions.h - The host's row sums -------------------*- C++ -*-===//
#ifndef SHARDLIN_RUNTIME_LIB_BACKENDS_HOST_HOSTREDUCTIONS_H
#define SHARDLIN_RUNTIME_LIB_BACKENDS_HOST_HOSTREDUCTIONS_H

#include "shardlin/runtime/base/DType.h"
#include "shardlin/runtime/base/Expr.h"

#include <cstdint>

namespace shardlin::rt {

/// LocalOps::sumRows on host memory (see LocalOps.h), for arguments that
/// passed checkSumRowsArguments.
void sumRowsOnHost(const void *x, DType from, void *y, DType to, int64_t rows,
                   int64_t cols);

/// LocalOps::reduceLast on host memory, for arguments that passed
/// checkReduceLastArguments.
void reduceLastOnHost(ExprOp op, const void *x, const void *init, void *y,
                      int64_t rows, int64_t cols, DType dtype);

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_LIB_BACKENDS_HOST_HOSTREDUCTIONS_H
