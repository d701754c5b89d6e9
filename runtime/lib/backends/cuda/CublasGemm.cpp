//===- CublasGemm.cpp - GEMM on cuBLAS / cuBLASLt
//--------------------------===//
//
// Row-major C[m x n] = op(A) op(B) (+ bias) through column-major cuBLAS
// without moving data: a row-major matrix is the column-major view of its
// transpose, so the product is computed as C^T = op(B)^T op(A)^T, i.e. a
// column-major (n x m) GEMM with the operands swapped, B first. The
// transpose flags pass through unchanged (row-major B stored k x n is the
// column-major n x k matrix B^T, read with OP_N; stored n x k it is read
// with OP_T), and every leading dimension keeps its meaning.
//
// In that column-major problem the bias, indexed by our n, runs along the
// ROWS of D (n x m). cuBLASLt's CUBLASLT_EPILOGUE_BIAS adds a vector whose
// length is D's row count, broadcast over D's columns: exactly our bias,
// one value per output feature, the same for every one of our rows. The
// epilogue adds it to the f32 (f64) accumulator before the single rounding
// to the output type.
//
// Paths:
//  - k == 0: a kernel writes C = bias (exact copy) or +0.
//  - runWithEpilogue with an expression that is a bias or a GELU(tanh) of
//    C written over C (an f16/bf16 C: a GELU without a bias only):
//    cublasLtMatmul with CUBLASLT_EPILOGUE_BIAS, GELU or GELU_BIAS
//    (ltEpilogueFor); any other epilogue (ReLU included: its cuBLASLt
//    epilogue loses NaNs) runs as the elementwise kernel after the GEMM.
//  - an f16/bf16 C with a bias: the product into an f32 accumulator, then a
//    kernel adds the bias and rounds once (runThroughAccumulator says why
//    neither cuBLASLt's bias epilogue nor beta = 1 onto the bias is used).
//  - bias (f32, f64), fuseBiasEpilogue, and cuBLASLt has an algorithm:
//    cublasLtMatmul with the bias epilogue. Plans (descriptors, layouts and
//    the heuristic's algorithm) are cached per shape, leading dimensions and
//    pointer alignment, so replaying a plan queries the heuristic once.
//  - otherwise cublasGemmEx (the only path of an f32 result from f16/bf16
//    operands, GemmOp::f32Result: C's type CUDA_R_32F, which cuBLAS takes
//    with CUBLAS_COMPUTE_32F; such a GEMM has no bias); with a bias (f32,
//    f64), a kernel first fills C's rows with it and the GEMM runs with
//    beta = 1.
// f16 and bf16 accumulate in f32 (CUBLAS_COMPUTE_32F) and split-K partial
// sums are reduced in f32 as well (cuBLASLt: reduction schemes restricted to
// COMPUTE_TYPE; cuBLAS: CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION).
// f32 uses TF32 only when allowed (CUBLAS_COMPUTE_32F_FAST_TF32).
//
// One cuBLAS handle, one cuBLASLt handle and one workspace per backend, all
// bound to the backend's stream; run() only enqueues and never waits.
//
//===----------------------------------------------------------------------===//

#include "backends/cuda/CudaCheck.h"
#include "backends/cuda/Kernels.h"

#include "exec/GemmValidation.h"

#include "shardlin/runtime/backends/Cuda.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace shardlin::rt {
namespace {

using namespace cuda;

std::string str(int64_t v) { return std::to_string(v); }

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

cudaDataType_t dataType(DType t) {
  switch (t) {
  case DType::F16:
    return CUDA_R_16F;
  case DType::BF16:
    return CUDA_R_16BF;
  case DType::F32:
    return CUDA_R_32F;
  case DType::F64:
    return CUDA_R_64F;
  }
  return CUDA_R_32F;
}

cublasComputeType_t computeType(DType t, bool allowTf32) {
  if (t == DType::F64)
    return CUBLAS_COMPUTE_64F;
  if (t == DType::F32 && allowTf32)
    return CUBLAS_COMPUTE_32F_FAST_TF32;
  return CUBLAS_COMPUTE_32F;
}

/// alpha and beta in the scale type: double for f64, float otherwise.
struct Scalars {
  float f[2];
  double d[2];
  Scalars(double alpha, double beta)
      : f{float(alpha), float(beta)}, d{alpha, beta} {}
  const void *alpha(DType t) const {
    return t == DType::F64 ? static_cast<const void *>(&d[0]) : &f[0];
  }
  const void *beta(DType t) const {
    return t == DType::F64 ? static_cast<const void *>(&d[1]) : &f[1];
  }
};

cublasOperation_t blasOp(bool trans) {
  return trans ? CUBLAS_OP_T : CUBLAS_OP_N;
}

/// The largest power of two (up to 256) dividing the address: what the
/// cuBLASLt heuristic needs to know to pick kernels with wide loads.
uint32_t alignmentOf(const void *p) {
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  if (a == 0)
    return 256;
  uint32_t align = 1;
  while (align < 256 && (a & align) == 0)
    align <<= 1;
  return align;
}

//===----------------------------------------------------------------------===//
// cuBLASLt descriptors (RAII) and the plan cache
//===----------------------------------------------------------------------===//

class MatmulDesc {
public:
  ~MatmulDesc() {
    if (desc_)
      (void)cublasLtMatmulDescDestroy(desc_);
  }
  cublasLtMatmulDesc_t *out() { return &desc_; }
  cublasLtMatmulDesc_t get() const { return desc_; }

private:
  cublasLtMatmulDesc_t desc_ = nullptr;
};

class MatrixLayout {
public:
  ~MatrixLayout() {
    if (layout_)
      (void)cublasLtMatrixLayoutDestroy(layout_);
  }
  cublasLtMatrixLayout_t *out() { return &layout_; }
  cublasLtMatrixLayout_t get() const { return layout_; }

private:
  cublasLtMatrixLayout_t layout_ = nullptr;
};

class MatmulPreference {
public:
  ~MatmulPreference() {
    if (pref_)
      (void)cublasLtMatmulPreferenceDestroy(pref_);
  }
  cublasLtMatmulPreference_t *out() { return &pref_; }
  cublasLtMatmulPreference_t get() const { return pref_; }

private:
  cublasLtMatmulPreference_t pref_ = nullptr;
};

/// What cuBLASLt applies after the product: CUBLASLT_EPILOGUE_BIAS, GELU
/// or GELU_BIAS, with the bias vector when there is one.
struct LtEpilogue {
  uint32_t kind = CUBLASLT_EPILOGUE_BIAS;
  const void *bias = nullptr;
};

struct LtKey {
  DType dtype;
  bool transA, transB;
  int64_t m, n, k, lda, ldb, ldc;
  uint32_t alignA, alignB, alignC, alignBias;
  uint32_t epilogue;
  bool operator==(const LtKey &o) const {
    return dtype == o.dtype && transA == o.transA && transB == o.transB &&
           m == o.m && n == o.n && k == o.k && lda == o.lda && ldb == o.ldb &&
           ldc == o.ldc && alignA == o.alignA && alignB == o.alignB &&
           alignC == o.alignC && alignBias == o.alignBias &&
           epilogue == o.epilogue;
  }
};

/// An epilogue matmul for one key, or the finding that cuBLASLt has no
/// algorithm for it (then `supported` is false and the GEMM takes the
/// fill-and-accumulate path, and a kernel the activation).
struct LtPlan {
  bool supported = false;
  MatmulDesc desc;
  MatrixLayout first, second, out; // op(B) side, op(A) side, C/D
  cublasLtMatmulAlgo_t algo{};
};

/// Plans kept per backend; a plan replays a handful of shapes. Past this
/// many the cache is cleared rather than grown without bound.
constexpr size_t kMaxCachedPlans = 64;

//===----------------------------------------------------------------------===//
// The backend
//===----------------------------------------------------------------------===//

class CublasGemm final : public GemmBackend {
public:
  CublasGemm(std::shared_ptr<ExecutionStream> stream, const GemmOptions &o)
      : stream_(std::move(stream)), device_(stream_->device()), options_(o) {}

  Status init() {
    ScopedDevice guard;
    SHARDLIN_RETURN_IF_ERROR(guard.enter(device_));
    SHARDLIN_RETURN_IF_ERROR(cublas_.create(device_));
    SHARDLIN_RETURN_IF_ERROR(lt_.create(device_));
    SHARDLIN_RETURN_IF_ERROR(
        workspace_.allocate(device_, options_.workspaceBytes)
            .withContext("cuBLAS workspace"));
    // SetStream first: it resets the handle's workspace to the default pool.
    SHARDLIN_CUBLAS_RETURN_IF_ERROR(
        device_, cublasSetStream(cublas_.get(), nativeStream(*stream_)));
    if (workspace_.bytes() > 0)
      SHARDLIN_CUBLAS_RETURN_IF_ERROR(
          device_, cublasSetWorkspace(cublas_.get(), workspace_.get(),
                                      workspace_.bytes()));
    SHARDLIN_CUBLAS_RETURN_IF_ERROR(
        device_, cublasSetMathMode(
                     cublas_.get(),
                     static_cast<cublasMath_t>(
                         CUBLAS_DEFAULT_MATH |
                         CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
    SHARDLIN_RETURN_IF_ERROR(pageableMemoryAccess(device_, pageableOk_));
    return Status::ok();
  }

  const char *name() const override { return "cublas"; }
  Device device() const override { return Device{DeviceKind::Cuda, device_}; }

  Status run(const GemmOp &op) override {
    Status st = runChecked(op);
    if (st.isOk())
      return st;
    return st.withContext("cublas gemm (" + std::string(dtypeName(op.dtype)) +
                          (op.f32Result ? " -> f32" : "") +
                          ", m=" + str(op.m) + " n=" + str(op.n) +
                          " k=" + str(op.k) + ", cuda:" + str(device_) + ")");
  }

  Status runWithEpilogue(const GemmOp &op, const GemmEpilogue &epilogue,
                         LocalOps &ops) override {
    Status st = runEpilogueChecked(op, epilogue, ops);
    if (st.isOk())
      return st;
    return st.withContext("cublas gemm (" + std::string(dtypeName(op.dtype)) +
                          ", m=" + str(op.m) + " n=" + str(op.n) +
                          " k=" + str(op.k) + ", cuda:" + str(device_) +
                          ") with an elementwise epilogue");
  }

private:
  /// cuBLASLt's epilogue for the elementwise one where the expression is
  /// exactly a bias or a GELU of C (recognizeActivation) written over C
  /// itself, C's type is not f64 (cuBLASLt computes its activations in
  /// f32) and there is at most one bias: the GEMM's own or a row vector
  /// added before the activation, and none for an f16/bf16 C (that bias
  /// goes through runThroughAccumulator). cuBLASLt's GELU is the tanh form
  /// (cublasLt.h documents it only as "x := GELU(x)"; PyTorch uses this
  /// epilogue for gelu(approximate='tanh') only), so only a GELU-tanh with
  /// the standard constants matches it. ReLU is not fused: arith.maximumf
  /// keeps a NaN, and on an H200 (CUDA 13, 2026-12-04) cuBLASLt's
  /// RELU and RELU_BIAS epilogues turned a NaN of C into 0 for f16 and
  /// bf16 (GemmConformance.EpilogueReluOfNaNAndInfinities,
  /// GemmEpilogueSuite.cpp), so ReLU runs as the elementwise kernel.
  static bool ltEpilogueFor(const GemmOp &op, const GemmEpilogue &e,
                            LtEpilogue &out) {
    if (e.y != op.c || op.k == 0 || op.f32Result || op.dtype == DType::F64)
      return false;
    const std::optional<ActivationForm> form = recognizeActivation(*e.expr);
    if (!form || form->post != ActivationForm::Post::None)
      return false;
    const std::vector<ExprOperand> &operands = *e.operands;
    auto isC = [&](int k) {
      return !operands[k].rowVector && operands[k].data == op.c;
    };
    // v = C, or C + a row vector (in either order).
    const void *bias = op.bias;
    if (form->bias < 0) {
      if (!isC(form->x))
        return false;
    } else {
      const int vector = isC(form->x)      ? form->bias
                         : isC(form->bias) ? form->x
                                           : -1;
      if (vector < 0 || !operands[vector].rowVector || op.bias)
        return false;
      bias = operands[vector].data;
    }
    // A bias of an f16/bf16 C goes through runThroughAccumulator instead.
    if (bias && narrowOutput(op))
      return false;
    auto f32 = [](double v) { return static_cast<float>(v); };
    switch (form->act) {
    case Activation::Identity:
      if (!bias)
        return false;
      out.kind = CUBLASLT_EPILOGUE_BIAS;
      break;
    case Activation::Relu:
      return false; // NaN -> 0 in cuBLASLt's epilogue (see above)
    case Activation::GeluTanh:
      if (f32(form->c[0]) != 0.5f || f32(form->c[1]) != 1.0f ||
          f32(form->c[2]) != f32(0.7978845608028654) ||
          f32(form->c[3]) != f32(0.044715))
        return false;
      out.kind = bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
      break;
    case Activation::GeluErf:
    case Activation::Silu:
      return false;
    }
    out.bias = bias;
    return true;
  }

  Status runEpilogueChecked(const GemmOp &op, const GemmEpilogue &epilogue,
                            LocalOps &ops) {
    SHARDLIN_RETURN_IF_ERROR(validateGemmOp(op, "cuBLAS"));
    SHARDLIN_RETURN_IF_ERROR(checkGemmEpilogue(op, epilogue));
    if (op.m == 0 || op.n == 0)
      return Status::ok();
    LtEpilogue lt;
    if (options_.fuseActivationEpilogue && ltEpilogueFor(op, epilogue, lt)) {
      ScopedDevice guard;
      SHARDLIN_RETURN_IF_ERROR(guard.enter(device_));
      SHARDLIN_RETURN_IF_ERROR(checkPointers(op));
      if (lt.bias && lt.bias != op.bias) {
        std::string problem = checkDeviceBuffer("bias", lt.bias, op.n,
                                                op.dtype, device_, pageableOk_);
        if (!problem.empty())
          return Status::invalidArgument(problem);
      }
      const LtPlan *plan = nullptr;
      SHARDLIN_RETURN_IF_ERROR(ltPlan(op, lt, plan));
      if (plan->supported)
        return runLt(op, lt, *plan, nativeStream(*stream_));
    }
    SHARDLIN_RETURN_IF_ERROR(runChecked(op));
    return ops.elementwise(*epilogue.expr, *epilogue.operands, epilogue.y,
                           op.m, op.n, op.cDtype());
  }

  Status runChecked(const GemmOp &op) {
    SHARDLIN_RETURN_IF_ERROR(validateGemmOp(op, "cuBLAS"));
    if (op.m == 0 || op.n == 0)
      return Status::ok();
    ScopedDevice guard;
    SHARDLIN_RETURN_IF_ERROR(guard.enter(device_));
    SHARDLIN_RETURN_IF_ERROR(checkPointers(op));
    cudaStream_t s = nativeStream(*stream_);

    if (op.k == 0) {
      SHARDLIN_CUDA_RETURN_IF_ERROR(
          device_,
          launchFillRows(op.cDtype(), op.c, op.ldc, op.bias, op.m, op.n, s));
      return Status::ok();
    }
    if (op.bias && narrowOutput(op))
      return runThroughAccumulator(op, s);
    if (op.bias && options_.fuseBiasEpilogue) {
      const LtEpilogue epilogue{CUBLASLT_EPILOGUE_BIAS, op.bias};
      const LtPlan *plan = nullptr;
      SHARDLIN_RETURN_IF_ERROR(ltPlan(op, epilogue, plan));
      if (plan->supported)
        return runLt(op, epilogue, *plan, s);
    }
    if (op.bias)
      SHARDLIN_CUDA_RETURN_IF_ERROR(
          device_,
          launchFillRows(op.dtype, op.c, op.ldc, op.bias, op.m, op.n, s));
    // beta = 0 tells cuBLAS not to read C, so poison in C cannot leak in.
    const Scalars scalars(1.0, op.bias ? 1.0 : 0.0);
    const cudaDataType_t t = dataType(op.dtype);
    SHARDLIN_CUBLAS_RETURN_IF_ERROR(
        device_,
        cublasGemmEx(
            cublas_.get(), blasOp(op.transB), blasOp(op.transA), int(op.n),
            int(op.m), int(op.k), scalars.alpha(op.dtype), op.b, t, int(op.ldb),
            op.a, t, int(op.lda), scalars.beta(op.dtype), op.c,
            dataType(op.cDtype()), int(op.ldc),
            computeType(op.dtype, options_.allowTf32), CUBLAS_GEMM_DEFAULT));
    return Status::ok();
  }

  /// An f16 or bf16 C (not an f32 result of f16/bf16 operands).
  static bool narrowOutput(const GemmOp &op) {
    return (op.dtype == DType::F16 || op.dtype == DType::BF16) &&
           !op.f32Result;
  }

  /// C = round(A B + bias) for an f16/bf16 C with a bias: the product into
  /// an f32 accumulator (the f32Result GEMM), then one kernel adds the bias
  /// in f32 and rounds once. Neither cuBLAS way of adding the bias did that
  /// on an H200 (CUDA 13, 2026-12-04): with cuBLASLt's bias epilogue and
  /// with C pre-filled and beta = 1, GemmConformance.AllTransposesAndBias
  /// and others found f16/bf16 results up to 3.3 ulp from the float64
  /// reference where the bias cancels most of the product (C[1][4] =
  /// 0.09375 against 0.095379 in bf16), as if the product were rounded to
  /// the output type before the bias was added; the same GEMMs without a
  /// bias were within their bound (docs/gpu-results.md).
  Status runThroughAccumulator(const GemmOp &op, cudaStream_t s) {
    const size_t bytes = size_t(op.m) * size_t(op.n) * sizeof(float);
    SHARDLIN_RETURN_IF_ERROR(accumulator_.reserve(bytes, device_, s)
                                 .withContext("cuBLAS f32 accumulator"));
    float *acc = static_cast<float *>(accumulator_.get());
    const Scalars scalars(1.0, 0.0);
    const cudaDataType_t t = dataType(op.dtype);
    SHARDLIN_CUBLAS_RETURN_IF_ERROR(
        device_,
        cublasGemmEx(cublas_.get(), blasOp(op.transB), blasOp(op.transA),
                     int(op.n), int(op.m), int(op.k), scalars.alpha(op.dtype),
                     op.b, t, int(op.ldb), op.a, t, int(op.lda),
                     scalars.beta(op.dtype), acc, CUDA_R_32F, int(op.n),
                     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    SHARDLIN_CUDA_RETURN_IF_ERROR(
        device_, launchAccumulatorBias(op.dtype, acc, op.n, op.bias, op.c,
                                       op.ldc, op.m, op.n, s));
    return Status::ok();
  }

  /// A host pointer (or another device's) handed to a kernel would fault
  /// and poison the context for every later call; catch it here instead.
  Status checkPointers(const GemmOp &op) const {
    const int64_t aElems = op.k > 0 ? 1 : 0; // m, n > 0 here
    const struct {
      const char *name;
      const void *ptr;
      int64_t elements;
      DType dtype;
    } buffers[] = {{"a", op.a, aElems, op.dtype},
                   {"b", op.b, aElems, op.dtype},
                   {"bias", op.bias, op.bias ? op.n : 0, op.dtype},
                   {"c", op.c, 1, op.cDtype()}};
    for (const auto &b : buffers) {
      std::string problem = checkDeviceBuffer(b.name, b.ptr, b.elements,
                                              b.dtype, device_, pageableOk_);
      if (!problem.empty())
        return Status::invalidArgument(problem);
    }
    return Status::ok();
  }

  Status ltPlan(const GemmOp &op, const LtEpilogue &epilogue,
                const LtPlan *&result) {
    LtKey key{op.dtype,
              op.transA,
              op.transB,
              op.m,
              op.n,
              op.k,
              op.lda,
              op.ldb,
              op.ldc,
              alignmentOf(op.a),
              alignmentOf(op.b),
              alignmentOf(op.c),
              alignmentOf(epilogue.bias),
              epilogue.kind};
    for (const auto &entry : plans_)
      if (entry.first == key) {
        result = entry.second.get();
        return Status::ok();
      }
    auto plan = std::make_unique<LtPlan>();
    SHARDLIN_RETURN_IF_ERROR(buildLtPlan(op, epilogue, key, *plan));
    if (plans_.size() >= kMaxCachedPlans)
      plans_.clear();
    plans_.emplace_back(key, std::move(plan));
    result = plans_.back().second.get();
    return Status::ok();
  }

  Status buildLtPlan(const GemmOp &op, const LtEpilogue &epilogue,
                     const LtKey &key, LtPlan &plan) {
    const cudaDataType_t t = dataType(op.dtype);
    const cudaDataType_t scale =
        op.dtype == DType::F64 ? CUDA_R_64F : CUDA_R_32F;
    SHARDLIN_CUBLAS_RETURN_IF_ERROR(
        device_,
        cublasLtMatmulDescCreate(
            plan.desc.out(), computeType(op.dtype, options_.allowTf32), scale));
    const int32_t opFirst = blasOp(op.transB), opSecond = blasOp(op.transA);
    SHARDLIN_CUBLAS_RETURN_IF_ERROR(
        device_, cublasLtMatmulDescSetAttribute(plan.desc.get(),
                                                CUBLASLT_MATMUL_DESC_TRANSA,
                                                &opFirst, sizeof(opFirst)));
    SHARDLIN_CUBLAS_RETURN_IF_ERROR(
        device_, cublasLtMatmulDescSetAttribute(plan.desc.get(),
                                                CUBLASLT_MATMUL_DESC_TRANSB,
                                                &opSecond, sizeof(opSecond)));
    SHARDLIN_CUBLAS_RETURN_IF_ERROR(
        device_, cublasLtMatmulDescSetAttribute(
                     plan.desc.get(), CUBLASLT_MATMUL_DESC_EPILOGUE,
                     &epilogue.kind, sizeof(epilogue.kind)));
    // The bias type defaults to D's, which is the caller's dtype; the
    // pointer is set here because the heuristic reads its alignment, and
    // again before every call.
    if (epilogue.bias)
      SHARDLIN_CUBLAS_RETURN_IF_ERROR(
          device_, cublasLtMatmulDescSetAttribute(
                       plan.desc.get(), CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                       &epilogue.bias, sizeof(epilogue.bias)));

    // Stored (pre-op) shapes in column-major terms; see the file comment.
    const uint64_t firstRows = op.transB ? op.k : op.n;
    const uint64_t firstCols = op.transB ? op.n : op.k;
    const uint64_t secondRows = op.transA ? op.m : op.k;
    const uint64_t secondCols = op.transA ? op.k : op.m;
    SHARDLIN_CUBLAS_RETURN_IF_ERROR(
        device_, cublasLtMatrixLayoutCreate(plan.first.out(), t, firstRows,
                                            firstCols, op.ldb));
    SHARDLIN_CUBLAS_RETURN_IF_ERROR(
        device_, cublasLtMatrixLayoutCreate(plan.second.out(), t, secondRows,
                                            secondCols, op.lda));
    SHARDLIN_CUBLAS_RETURN_IF_ERROR(
        device_, cublasLtMatrixLayoutCreate(plan.out.out(), t, uint64_t(op.n),
                                            uint64_t(op.m), op.ldc));

    MatmulPreference pref;
    SHARDLIN_CUBLAS_RETURN_IF_ERROR(device_,
                                    cublasLtMatmulPreferenceCreate(pref.out()));
    const uint64_t wsBytes = workspace_.bytes();
    SHARDLIN_CUBLAS_RETURN_IF_ERROR(
        device_, cublasLtMatmulPreferenceSetAttribute(
                     pref.get(), CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                     &wsBytes, sizeof(wsBytes)));
    // Split-K partial sums in the compute type only: INPLACE and
    // OUTPUT_TYPE would round f16/bf16 partial sums to the output type,
    // i.e. more than once. (For f32/f64 output and compute type coincide.)
    const bool narrow = op.dtype == DType::F16 || op.dtype == DType::BF16;
    const uint32_t reductions =
        narrow ? uint32_t(CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE)
               : uint32_t(CUBLASLT_REDUCTION_SCHEME_MASK);
    SHARDLIN_CUBLAS_RETURN_IF_ERROR(
        device_, cublasLtMatmulPreferenceSetAttribute(
                     pref.get(), CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                     &reductions, sizeof(reductions)));
    const struct {
      cublasLtMatmulPreferenceAttributes_t attr;
      uint32_t value;
    } alignments[] = {{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, key.alignB},
                      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, key.alignA},
                      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, key.alignC},
                      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, key.alignC}};
    for (const auto &a : alignments)
      SHARDLIN_CUBLAS_RETURN_IF_ERROR(
          device_, cublasLtMatmulPreferenceSetAttribute(
                       pref.get(), a.attr, &a.value, sizeof(a.value)));

    cublasLtMatmulHeuristicResult_t heuristic{};
    int found = 0;
    cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(
        lt_.get(), plan.desc.get(), plan.first.get(), plan.second.get(),
        plan.out.get(), plan.out.get(), pref.get(), 1, &heuristic, &found);
    // NOT_SUPPORTED (or no result): no kernel fuses this epilogue for the
    // type, layout or alignment. Not an error: the fill-and-accumulate path
    // handles it. INVALID_VALUE is treated alike because the descriptors
    // above are valid for every op that passed validate(); what cuBLASLt
    // rejects then is the combination (e.g. the bias epilogue with f64),
    // and the unfused path computes the same result.
    if (st == CUBLAS_STATUS_NOT_SUPPORTED ||
        st == CUBLAS_STATUS_INVALID_VALUE ||
        (st == CUBLAS_STATUS_SUCCESS && found == 0)) {
      plan.supported = false;
      return Status::ok();
    }
    if (st != CUBLAS_STATUS_SUCCESS)
      return cublasFailure(st, "cublasLtMatmulAlgoGetHeuristic", device_);
    plan.algo = heuristic.algo;
    plan.supported = true;
    return Status::ok();
  }

  Status runLt(const GemmOp &op, const LtEpilogue &epilogue,
               const LtPlan &plan, cudaStream_t s) {
    if (epilogue.bias)
      SHARDLIN_CUBLAS_RETURN_IF_ERROR(
          device_, cublasLtMatmulDescSetAttribute(
                       plan.desc.get(), CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                       &epilogue.bias, sizeof(epilogue.bias)));
    const Scalars scalars(1.0, 0.0);
    SHARDLIN_CUBLAS_RETURN_IF_ERROR(
        device_,
        cublasLtMatmul(lt_.get(), plan.desc.get(), scalars.alpha(op.dtype),
                       op.b, plan.first.get(), op.a, plan.second.get(),
                       scalars.beta(op.dtype), op.c, plan.out.get(), op.c,
                       plan.out.get(), &plan.algo, workspace_.get(),
                       workspace_.bytes(), s));
    return Status::ok();
  }

  // Destroyed last: the handles and the workspace may still be referenced
  // by work queued on the stream until they are released.
  std::shared_ptr<ExecutionStream> stream_;
  const int device_;
  const GemmOptions options_;
  bool pageableOk_ = false;
  CublasHandle cublas_;
  CublasLtHandle lt_;
  DeviceMemory workspace_;
  StreamScratch accumulator_; // runThroughAccumulator's f32 product
  std::vector<std::pair<LtKey, std::unique_ptr<LtPlan>>> plans_;
};

} // namespace

Status createCublasGemm(std::shared_ptr<ExecutionStream> stream,
                        const GemmOptions &options,
                        std::unique_ptr<GemmBackend> &out) {
  out.reset();
  if (!stream)
    return Status::invalidArgument("createCublasGemm: null stream");
  const int device = stream->device();
  auto gemm = std::make_unique<CublasGemm>(std::move(stream), options);
  SHARDLIN_RETURN_IF_ERROR(gemm->init().withContext(
      "createCublasGemm on cuda:" + std::to_string(device)));
  out = std::move(gemm);
  return Status::ok();
}

} // namespace shardlin::rt
