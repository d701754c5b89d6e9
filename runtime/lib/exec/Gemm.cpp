//===- Gemm.cpp - What every GEMM backend shares --------------------------===//
//
// The epilogue's checks and its default: the GEMM, then the expression in a
// pass of its own over C. Backends that can do better override
// GemmBackend::runWithEpilogue (cpu/CpuGemm.cpp, cuda/CublasGemm.cpp).
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/exec/Gemm.h"

#include <string>

namespace shardlin::rt {

Status checkGemmEpilogue(const GemmOp &op, const GemmEpilogue &epilogue) {
  if (!epilogue.expr || !epilogue.operands)
    return Status::invalidArgument(
        "the GEMM epilogue has no expression or no operands");
  if (op.m > 0 && op.n > 0 && op.ldc != op.n)
    return Status::invalidArgument(
        "the GEMM epilogue needs a dense C, but ldc (" +
        std::to_string(op.ldc) + ") is not n (" + std::to_string(op.n) + ")");
  return checkElementwiseArguments(*epilogue.expr, *epilogue.operands,
                                   epilogue.y, op.m, op.n, op.cDtype())
      .withContext("GEMM epilogue");
}

Status GemmBackend::runWithEpilogue(const GemmOp &op,
                                    const GemmEpilogue &epilogue,
                                    LocalOps &ops) {
  SHARDLIN_RETURN_IF_ERROR(checkGemmEpilogue(op, epilogue));
  SHARDLIN_RETURN_IF_ERROR(run(op));
  return ops.elementwise(*epilogue.expr, *epilogue.operands, epilogue.y, op.m,
                         op.n, op.cDtype());
}

} // namespace shardlin::rt
