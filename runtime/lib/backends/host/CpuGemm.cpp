//===- CpuGemm.cpp - GEMM on OpenBLAS --------------------------------------===//
//
// f32 and f64 go straight to cblas_sgemm / cblas_dgemm, with the transposes
// passed as flags (BLAS reads the transposed operand in place) and the bias
// folded into the one call by pre-filling C and using beta = 1.
//
// f16 and bf16 have no portable BLAS routine, so the operands are widened to
// f32 (exactly: every f16/bf16 value is an f32 value), multiplied by sgemm into
// an f32 C, and that C is rounded once into the caller's buffer. The widened
// copies live in workspaces owned by the backend that only ever grow, so a
// plan replayed many times allocates once. With GemmOp::f32Result the
// caller's C is that f32 C, and nothing is rounded.
//
// With an epilogue (GemmBackend::runWithEpilogue), C is computed in blocks
// of rows, one BLAS call each (B widened once for all of them), and the
// elementwise expression runs on each block right after it, while the block
// is still in cache, instead of in a second pass over all of C.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/exec/Gemm.h"

#include "exec/GemmValidation.h"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace shardlin::rt {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

/// C's rows = bias (exact copy of the caller's elements) or +0 (all-zero
/// bytes are +0 in every supported dtype).
void fillRows(void *c, int64_t ldc, const void *bias, int64_t m, int64_t n,
              size_t elemSize) {
  auto *row = static_cast<unsigned char *>(c);
  const size_t rowBytes = size_t(n) * elemSize;
  const size_t strideBytes = size_t(ldc) * elemSize;
  for (int64_t i = 0; i < m; ++i, row += strideBytes) {
    if (bias)
      std::memcpy(row, bias, rowBytes);
    else
      std::memset(row, 0, rowBytes);
  }
}

CBLAS_TRANSPOSE blasTrans(bool t) { return t ? CblasTrans : CblasNoTrans; }

/// Bytes of a `rows` x `cols` f32 matrix, failing instead of wrapping.
Status f32Bytes(const char *what, int64_t rows, int64_t cols, size_t &bytes) {
  // rows, cols <= INT_MAX after validation, so rows * cols fits in uint64.
  const uint64_t elems = uint64_t(rows) * uint64_t(cols);
  if (elems > std::numeric_limits<size_t>::max() / sizeof(float))
    return Status::resourceExhausted(std::string("the f32 workspace for ") + what + " (" +
                         str(rows) + " x " + str(cols) +
                         ") exceeds the address space");
  bytes = size_t(elems) * sizeof(float);
  return Status::ok();
}

/// The rows [row0, row0 + rows) of op's product: op with A and C offset to
/// them (A stored k x m when transposed: its columns).
GemmOp rowBlock(const GemmOp &op, int64_t row0, int64_t rows) {
  GemmOp block = op;
  block.m = rows;
  const size_t aElt = dtypeSize(op.dtype), cElt = dtypeSize(op.cDtype());
  const int64_t aOffset = op.transA ? row0 : row0 * op.lda;
  block.a = static_cast<const char *>(op.a) + size_t(aOffset) * aElt;
  block.c = static_cast<char *>(op.c) + size_t(row0 * op.ldc) * cElt;
  return block;
}

/// Rows per block of a GEMM with an epilogue. Each block is one sgemm call,
/// and OpenBLAS packs B (the weight, n x k) again for every call; what a
/// block saves is the epilogue's second pass over C from memory, which it
/// reads from cache instead. Measured here with OpenBLAS's SkylakeX kernels
/// (one thread, 2026-12-04): one extra call costs about 0.5 ns per weight
/// element, the pass it saves about 0.3 ns per element of C (512 x 4096 x
/// 2048 in 256-row blocks: 1.07x the time of one call; 2048 x 1024 x 1024:
/// 1.11x). So a block needs about 2k rows to pay for its packing, and
/// blocking pays only where 2k rows of C still fit in about 1 MiB (in f32);
/// otherwise the GEMM is one call and the chain one pass after it.
int64_t epilogueRows(const GemmOp &op) {
  constexpr int64_t kBlockBytes = int64_t(1) << 20;
  const int64_t rowBytes = std::max<int64_t>(1, op.n) * int64_t(sizeof(float));
  const int64_t amortized = 2 * std::max<int64_t>(1, op.k);
  if (amortized * rowBytes > kBlockBytes)
    return std::max<int64_t>(1, op.m);
  return std::max(amortized, kBlockBytes / rowBytes);
}

class CpuGemm final : public GemmBackend {
public:
  const char *name() const override { return "openblas"; }

  Status run(const GemmOp &op) override {
    Status st = runChecked(op, nullptr, nullptr);
    // The context string is built only on failure: run() sits on the replay
    // path, which should not allocate.
    if (st.isOk())
      return st;
    return st.withContext(describe(op));
  }

  Status runWithEpilogue(const GemmOp &op, const GemmEpilogue &epilogue,
                         LocalOps &ops) override {
    Status st = runChecked(op, &epilogue, &ops);
    if (st.isOk())
      return st;
    return st.withContext(describe(op) + " with an elementwise epilogue");
  }

private:
  static std::string describe(const GemmOp &op) {
    return "openblas gemm (" + std::string(dtypeName(op.dtype)) +
           (op.f32Result ? " -> f32" : "") + ", m=" + str(op.m) +
           " n=" + str(op.n) + " k=" + str(op.k) + ")";
  }

  /// The GEMM, in blocks of rows when there is an epilogue, each block's
  /// epilogue right after it.
  Status runChecked(const GemmOp &op, const GemmEpilogue *epilogue,
                    LocalOps *ops) {
    SHARDLIN_RETURN_IF_ERROR(validateGemmOp(op, "OpenBLAS"));
    if (epilogue)
      SHARDLIN_RETURN_IF_ERROR(checkGemmEpilogue(op, *epilogue));
    if (op.m == 0 || op.n == 0)
      return Status::ok();
    const bool narrow = op.k > 0 && (op.dtype == DType::F16 ||
                                     op.dtype == DType::BF16);
    if (narrow)
      SHARDLIN_RETURN_IF_ERROR(widenB(op));
    const int64_t step = epilogue ? epilogueRows(op) : op.m;
    for (int64_t row0 = 0; row0 < op.m; row0 += step) {
      const int64_t rows = std::min(step, op.m - row0);
      const GemmOp block = rowBlock(op, row0, rows);
      SHARDLIN_RETURN_IF_ERROR(narrow ? runNarrow(block) : runDirect(block));
      if (epilogue)
        SHARDLIN_RETURN_IF_ERROR(runEpilogue(op, *epilogue, *ops, row0, rows));
    }
    return Status::ok();
  }

  /// The epilogue on rows [row0, row0 + rows) of the result.
  Status runEpilogue(const GemmOp &op, const GemmEpilogue &epilogue,
                     LocalOps &ops, int64_t row0, int64_t rows) {
    const size_t offset = size_t(row0 * op.n) * dtypeSize(op.cDtype());
    // Reused between calls: no allocation once it has its size.
    blockOperands_ = *epilogue.operands;
    for (ExprOperand &operand : blockOperands_)
      if (!operand.rowVector)
        operand.data = static_cast<const char *>(operand.data) + offset;
    return ops.elementwise(*epilogue.expr, blockOperands_,
                           static_cast<char *>(epilogue.y) + offset, rows,
                           op.n, op.cDtype());
  }

  /// f32 and f64 (and k == 0 of every type): one BLAS call.
  Status runDirect(const GemmOp &op) {
    const size_t elemSize = dtypeSize(op.dtype);
    if (op.k == 0) {
      // An empty sum: C = bias (or 0) exactly. BLAS is skipped because
      // reference BLAS treats k == 0 as "scale C by beta", which would need
      // the same pre-fill anyway.
      fillRows(op.c, op.ldc, op.bias, op.m, op.n, dtypeSize(op.cDtype()));
      return Status::ok();
    }
    const int m = int(op.m), n = int(op.n), k = int(op.k);
    switch (op.dtype) {
    case DType::F32: {
      if (op.bias)
        fillRows(op.c, op.ldc, op.bias, op.m, op.n, elemSize);
      // beta = 0 tells BLAS not to read C, so an uninitialised (even NaN) C
      // does not leak into the result.
      cblas_sgemm(CblasRowMajor, blasTrans(op.transA), blasTrans(op.transB), m,
                  n, k, 1.0f, static_cast<const float *>(op.a), int(op.lda),
                  static_cast<const float *>(op.b), int(op.ldb),
                  op.bias ? 1.0f : 0.0f, static_cast<float *>(op.c),
                  int(op.ldc));
      return Status::ok();
    }
    case DType::F64: {
      if (op.bias)
        fillRows(op.c, op.ldc, op.bias, op.m, op.n, elemSize);
      cblas_dgemm(CblasRowMajor, blasTrans(op.transA), blasTrans(op.transB), m,
                  n, k, 1.0, static_cast<const double *>(op.a), int(op.lda),
                  static_cast<const double *>(op.b), int(op.ldb),
                  op.bias ? 1.0 : 0.0, static_cast<double *>(op.c),
                  int(op.ldc));
      return Status::ok();
    }
    case DType::F16:
    case DType::BF16:
      break;
    }
    return Status::internal("unreachable dtype");
  }

  /// f16/bf16: B widened to f32 once per GEMM (keeping its stored
  /// orientation, so the transpose remains a BLAS flag), for all its row
  /// blocks.
  Status widenB(const GemmOp &op) {
    const int64_t bRows = op.transB ? op.n : op.k;
    const int64_t bCols = op.transB ? op.k : op.n;
    size_t bBytes = 0;
    SHARDLIN_RETURN_IF_ERROR(f32Bytes("b", bRows, bCols, bBytes));
    SHARDLIN_RETURN_IF_ERROR(reserve(workB_, bBytes, "b"));
    widen(op.dtype, op.b, op.ldb, bRows, bCols, dtypeSize(op.dtype),
          static_cast<float *>(workB_.data()));
    return Status::ok();
  }

  /// f16/bf16 rows through f32 (B already widened by widenB): widen A,
  /// sgemm, round C once (or, for an f32 result, sgemm straight into the
  /// caller's C).
  Status runNarrow(const GemmOp &op) {
    const int64_t aRows = op.transA ? op.k : op.m;
    const int64_t aCols = op.transA ? op.m : op.k;
    const int64_t bCols = op.transB ? op.k : op.n;

    size_t aBytes = 0, cBytes = 0;
    SHARDLIN_RETURN_IF_ERROR(f32Bytes("a", aRows, aCols, aBytes));
    SHARDLIN_RETURN_IF_ERROR(reserve(workA_, aBytes, "a"));

    auto *a32 = static_cast<float *>(workA_.data());
    auto *b32 = static_cast<float *>(workB_.data());
    const size_t elemSize = dtypeSize(op.dtype);
    widen(op.dtype, op.a, op.lda, aRows, aCols, elemSize, a32);
    if (op.f32Result) {
      // No bias here (validateGemmOp): beta = 0, C is not read.
      cblas_sgemm(CblasRowMajor, blasTrans(op.transA), blasTrans(op.transB),
                  int(op.m), int(op.n), int(op.k), 1.0f, a32, int(aCols), b32,
                  int(bCols), 0.0f, static_cast<float *>(op.c), int(op.ldc));
      return Status::ok();
    }
    SHARDLIN_RETURN_IF_ERROR(f32Bytes("c", op.m, op.n, cBytes));
    SHARDLIN_RETURN_IF_ERROR(reserve(workC_, cBytes, "c"));
    auto *c32 = static_cast<float *>(workC_.data());

    // The bias is widened once into row 0 and copied to the other rows, so
    // sgemm's beta = 1 adds it inside the f32 accumulation.
    if (op.bias) {
      convertToF32(op.dtype, op.bias, c32, size_t(op.n));
      for (int64_t i = 1; i < op.m; ++i)
        std::memcpy(c32 + size_t(i) * size_t(op.n), c32,
                    size_t(op.n) * sizeof(float));
    }
    cblas_sgemm(CblasRowMajor, blasTrans(op.transA), blasTrans(op.transB),
                int(op.m), int(op.n), int(op.k), 1.0f, a32, int(aCols), b32,
                int(bCols), op.bias ? 1.0f : 0.0f, c32, int(op.n));

    auto *c = static_cast<unsigned char *>(op.c);
    for (int64_t i = 0; i < op.m; ++i)
      convertFromF32(op.dtype, c32 + size_t(i) * size_t(op.n),
                     c + size_t(i) * size_t(op.ldc) * elemSize, size_t(op.n));
    return Status::ok();
  }

  /// Densely packs a strided `rows` x `cols` matrix into f32.
  static void widen(DType t, const void *src, int64_t ld, int64_t rows,
                    int64_t cols, size_t elemSize, float *dst) {
    const auto *s = static_cast<const unsigned char *>(src);
    for (int64_t i = 0; i < rows; ++i)
      convertToF32(t, s + size_t(i) * size_t(ld) * elemSize,
                   dst + size_t(i) * size_t(cols), size_t(cols));
  }

  /// Grows `buf` to at least `bytes`; never shrinks, so steady-state replays
  /// do not allocate.
  static Status reserve(Buffer &buf, size_t bytes, const char *what) {
    if (buf.bytes() >= bytes)
      return Status::ok();
    return Buffer::allocate(hostAllocator(), bytes, buf)
        .withContext(std::string("f32 workspace for ") + what);
  }

  Buffer workA_, workB_, workC_;
  std::vector<ExprOperand> blockOperands_;
};

} // namespace

std::unique_ptr<GemmBackend> createCpuGemm() {
  return std::make_unique<CpuGemm>();
}

void setBlasThreads(int n) {
  // OpenBLAS does not document what n < 1 means. Clamp to one thread: a
  // caller asking for 0 most plausibly wants no BLAS parallelism, and falling
  // back to all cores would oversubscribe the ranks sharing a node.
  openblas_set_num_threads(n < 1 ? 1 : n);
}

int getBlasThreads() { return openblas_get_num_threads(); }

} // namespace shardlin::rt
