//===- GemmValidation.h - Argument checks shared by GEMM backends -*- C++
//-*-===//
//
// Every GEMM backend accepts the same GemmOp contract (Gemm.h), so they check
// it with one function: the same rules and the same messages on every
// backend, differing only in the BLAS library whose integer range bounds the
// sizes and leading dimensions.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_GEMMVALIDATION_H
#define SHARDLIN_RUNTIME_LIB_GEMMVALIDATION_H

#include "shardlin/runtime/exec/Gemm.h"

namespace shardlin::rt {

/// Checks `op` against GemmOp's contract: a known dtype, an f32 result only
/// for f16/bf16 operands and without a bias, m, n, k >= 0, each
/// operand's leading dimension at least its stored row length, no null
/// operand that has elements, and every size and leading dimension within a
/// 32-bit int (the range of `blasLibrary`, named in the message, e.g.
/// "OpenBLAS" or "cuBLAS"). A failure is InvalidArgument.
Status validateGemmOp(const GemmOp &op, const char *blasLibrary);

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_LIB_GEMMVALIDATION_H
