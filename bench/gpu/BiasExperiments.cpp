//===- BiasExperiments.cpp - Bias epilogue trials on cuBLAS ---------------===//
//
// See BiasExperiments.h. Row-major y[m x n] = x[m x k] W[n x k]^T + b[n] is
// the column-major D (n x m) = op(W) x with W read transposed (as
// CublasGemm.cpp and section (a) compute it), so the bias runs along D's
// rows: what CUBLASLT_EPILOGUE_BIAS adds.
//
//===----------------------------------------------------------------------===//

#include "BiasExperiments.h"
#include "GpuBenchSupport.h"

#include "shardlin/runtime/backends/Cuda.h"
#include "shardlin/runtime/base/Buffer.h"
#include "shardlin/runtime/base/DType.h"
#include "shardlin/runtime/exec/Gemm.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace shardlin::gpubench {

namespace {

namespace rt = ::shardlin::rt;

[[noreturn]] void die(const std::string &message) {
  std::cerr << ("shardlin-gpu-bench: error: bias experiments: " + message +
                "\n")
            << std::flush;
  std::exit(1);
}

void cudaCheck(cudaError_t e, const char *call) {
  if (e != cudaSuccess)
    die(std::string(call) + ": " + cudaGetErrorName(e));
}

void blasCheck(cublasStatus_t s, const char *call) {
  if (s != CUBLAS_STATUS_SUCCESS)
    die(std::string(call) + ": " + cublasGetStatusName(s));
}

#define CUDA_OK(expr) cudaCheck((expr), #expr)
#define BLAS_OK(expr) blasCheck((expr), #expr)

struct Shape {
  int64_t m, n, k;
};

enum class Kind { LtPlain, Lt, GemmExBeta1, Runtime };

struct Variant {
  const char *name;
  Kind kind;
  uint32_t reductions = CUBLASLT_REDUCTION_SCHEME_MASK;
  bool f32Bias = false;
  bool workspace = true;
};

const Variant kVariants[] = {
    {"cuBLASLt, no bias (the baseline)", Kind::LtPlain},
    {"cuBLASLt BIAS, every reduction (PyTorch's settings)", Kind::Lt},
    {"cuBLASLt BIAS, no split-K reduction", Kind::Lt,
     CUBLASLT_REDUCTION_SCHEME_NONE},
    {"cuBLASLt BIAS, COMPUTE_TYPE reduction only (the runtime's plan)",
     Kind::Lt, CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE},
    {"cuBLASLt BIAS, INPLACE reduction only (output type)", Kind::Lt,
     CUBLASLT_REDUCTION_SCHEME_INPLACE},
    {"cuBLASLt BIAS, f32 bias vector", Kind::Lt, CUBLASLT_REDUCTION_SCHEME_MASK,
     true},
    {"cuBLASLt BIAS, no workspace", Kind::Lt, CUBLASLT_REDUCTION_SCHEME_MASK,
     false, false},
    {"cublasGemmEx, beta = 1 onto C = bias", Kind::GemmExBeta1},
    {"the runtime (f32 accumulator, then bias and one rounding)",
     Kind::Runtime},
};

constexpr size_t kWorkspaceBytes = size_t(32) << 20;

/// The problem's operands on the device and the host (bf16), and the
/// float64 reference with the magnitude its rounding errors scale with.
struct Problem {
  Shape s;
  std::vector<uint16_t> x, w, b;
  std::vector<float> b32;
  std::vector<double> ref, scale;
  void *dx = nullptr, *dw = nullptr, *db = nullptr, *db32 = nullptr,
       *dy = nullptr, *dbiasRows = nullptr;
};

double bf16Value(uint16_t v) {
  double d = 0;
  rt::convertToF64(rt::DType::BF16, &v, &d, 1);
  return d;
}

uint16_t toBf16(double v) {
  uint16_t out = 0;
  rt::convertFromF64(rt::DType::BF16, &v, &out, 1);
  return out;
}

/// Random values +-[0.25, 1]; in half the columns the bias cancels row 0's
/// product (rounded to bf16), leaving a small result whose last place a
/// second rounding of the product would miss by several units.
Problem makeProblem(Shape s, uint64_t seed, bool reference = true) {
  Problem p;
  p.s = s;
  SplitMix mix(seed);
  auto random = [&] { return toBf16(mix.signedUnit()); };
  p.x.resize(size_t(s.m * s.k));
  p.w.resize(size_t(s.n * s.k));
  p.b.resize(size_t(s.n));
  for (uint16_t &v : p.x)
    v = random();
  for (uint16_t &v : p.w)
    v = random();
  for (int64_t j = 0; j < s.n; ++j) {
    double row0 = 0;
    for (int64_t q = 0; q < s.k; ++q)
      row0 += bf16Value(p.x[size_t(q)]) * bf16Value(p.w[size_t(j * s.k + q)]);
    p.b[size_t(j)] = j % 2 ? toBf16(-row0) : random();
  }
  p.b32.resize(p.b.size());
  for (size_t j = 0; j < p.b.size(); ++j)
    p.b32[j] = float(bf16Value(p.b[j]));
  p.ref.resize(reference ? size_t(s.m * s.n) : 0);
  p.scale.resize(p.ref.size());
  for (int64_t i = 0; reference && i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) {
      double sum = bf16Value(p.b[size_t(j)]), mag = std::fabs(sum);
      for (int64_t q = 0; q < s.k; ++q) {
        const double t = bf16Value(p.x[size_t(i * s.k + q)]) *
                         bf16Value(p.w[size_t(j * s.k + q)]);
        sum += t;
        mag += std::fabs(t);
      }
      p.ref[size_t(i * s.n + j)] = sum;
      p.scale[size_t(i * s.n + j)] = mag;
    }
  auto upload = [](const void *src, size_t bytes, void *&dst) {
    CUDA_OK(cudaMalloc(&dst, bytes));
    CUDA_OK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
  };
  upload(p.x.data(), p.x.size() * 2, p.dx);
  upload(p.w.data(), p.w.size() * 2, p.dw);
  upload(p.b.data(), p.b.size() * 2, p.db);
  upload(p.b32.data(), p.b32.size() * 4, p.db32);
  std::vector<uint16_t> rows(size_t(s.m * s.n));
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j)
      rows[size_t(i * s.n + j)] = p.b[size_t(j)];
  upload(rows.data(), rows.size() * 2, p.dbiasRows);
  CUDA_OK(cudaMalloc(&p.dy, size_t(s.m * s.n) * 2));
  return p;
}

void freeProblem(Problem &p) {
  for (void *q : {p.dx, p.dw, p.db, p.db32, p.dy, p.dbiasRows})
    (void)cudaFree(q);
}

/// The largest error beyond f32 accumulation's allowance, in units of the
/// bf16 result's last place: one rounding keeps it <= 0.5.
double excessUlps(const Problem &p) {
  std::vector<uint16_t> y(p.ref.size());
  CUDA_OK(cudaMemcpy(y.data(), p.dy, y.size() * 2, cudaMemcpyDeviceToHost));
  double worst = 0;
  for (size_t e = 0; e < y.size(); ++e) {
    const double got = bf16Value(y[e]), ref = p.ref[e];
    if (!std::isfinite(got))
      return INFINITY;
    int exp = 0;
    std::frexp(ref, &exp); // |ref| in [2^(exp-1), 2^exp)
    const double ulp = std::ldexp(1.0, std::max(exp, -125) - 8);
    const double allowance =
        double(p.s.k + 2) * std::ldexp(1.0, -24) * p.scale[e];
    worst = std::max(worst,
                     std::max(0.0, std::fabs(got - ref) - allowance) / ulp);
  }
  return worst;
}

/// One cuBLASLt configuration for a problem: its descriptors and the
/// heuristic's algorithm.
class LtCall {
public:
  LtCall(cublasLtHandle_t lt, const Problem &p, const Variant &v,
         void *workspace)
      : lt_(lt), workspace_(v.workspace ? workspace : nullptr),
        wsBytes_(v.workspace ? kWorkspaceBytes : 0) {
    BLAS_OK(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const int32_t opT = CUBLAS_OP_T, opN = CUBLAS_OP_N;
    BLAS_OK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA,
                                           &opT, sizeof opT));
    BLAS_OK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB,
                                           &opN, sizeof opN));
    if (v.kind == Kind::Lt) {
      const uint32_t epilogue = CUBLASLT_EPILOGUE_BIAS;
      BLAS_OK(cublasLtMatmulDescSetAttribute(
          desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue));
      const void *bias = v.f32Bias ? p.db32 : p.db;
      BLAS_OK(cublasLtMatmulDescSetAttribute(
          desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
      if (v.f32Bias) {
        const int32_t type = CUDA_R_32F;
        BLAS_OK(cublasLtMatmulDescSetAttribute(
            desc_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &type, sizeof type));
      }
    }
    const Shape s = p.s;
    BLAS_OK(cublasLtMatrixLayoutCreate(&a_, CUDA_R_16BF, uint64_t(s.k),
                                       uint64_t(s.n), s.k));
    BLAS_OK(cublasLtMatrixLayoutCreate(&b_, CUDA_R_16BF, uint64_t(s.k),
                                       uint64_t(s.m), s.k));
    BLAS_OK(cublasLtMatrixLayoutCreate(&d_, CUDA_R_16BF, uint64_t(s.n),
                                       uint64_t(s.m), s.n));
    cublasLtMatmulPreference_t pref = nullptr;
    BLAS_OK(cublasLtMatmulPreferenceCreate(&pref));
    BLAS_OK(cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsBytes_,
        sizeof wsBytes_));
    BLAS_OK(cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &v.reductions,
        sizeof v.reductions));
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(
        lt_, desc_, a_, b_, d_, d_, pref, 1, &result, &found);
    (void)cublasLtMatmulPreferenceDestroy(pref);
    if (st == CUBLAS_STATUS_SUCCESS && found > 0) {
      supported_ = true;
      algo_ = result.algo;
      size_t written = 0;
      (void)cublasLtMatmulAlgoConfigGetAttribute(
          &algo_, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitK_, sizeof splitK_,
          &written);
      (void)cublasLtMatmulAlgoConfigGetAttribute(
          &algo_, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &scheme_,
          sizeof scheme_, &written);
    } else if (st != CUBLAS_STATUS_SUCCESS &&
               st != CUBLAS_STATUS_NOT_SUPPORTED &&
               st != CUBLAS_STATUS_INVALID_VALUE) {
      blasCheck(st, "cublasLtMatmulAlgoGetHeuristic");
    }
  }
  ~LtCall() {
    (void)cublasLtMatrixLayoutDestroy(a_);
    (void)cublasLtMatrixLayoutDestroy(b_);
    (void)cublasLtMatrixLayoutDestroy(d_);
    (void)cublasLtMatmulDescDestroy(desc_);
  }
  LtCall(const LtCall &) = delete;
  LtCall &operator=(const LtCall &) = delete;

  bool supported() const { return supported_; }
  /// "split-K 4, COMPUTE_TYPE", or "no split-K".
  std::string algorithm() const {
    if (splitK_ <= 1)
      return "no split-K";
    const char *scheme = scheme_ == CUBLASLT_REDUCTION_SCHEME_INPLACE
                             ? "INPLACE"
                         : scheme_ == CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE
                             ? "COMPUTE_TYPE"
                         : scheme_ == CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE
                             ? "OUTPUT_TYPE"
                             : "NONE";
    return "split-K " + std::to_string(splitK_) + ", " + scheme;
  }
  void run(const Problem &p, cudaStream_t s) const {
    const float one = 1.0f, zero = 0.0f;
    BLAS_OK(cublasLtMatmul(lt_, desc_, &one, p.dw, a_, p.dx, b_, &zero, p.dy,
                           d_, p.dy, d_, &algo_, workspace_, wsBytes_, s));
  }

private:
  cublasLtHandle_t lt_;
  void *workspace_;
  uint64_t wsBytes_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  bool supported_ = false;
  int32_t splitK_ = 1;
  uint32_t scheme_ = 0;
};

/// The handles and buffers every variant shares, on one stream.
struct Context {
  std::shared_ptr<rt::ExecutionStream> stream;
  cudaStream_t s = nullptr;
  cublasLtHandle_t lt = nullptr;
  cublasHandle_t blas = nullptr;
  void *workspace = nullptr;
  std::unique_ptr<rt::GemmBackend> runtime;
};

/// Runs variant `v` once on `p` (for the check: the result in p.dy); the
/// algorithm's description, or "" where cuBLAS has none (then nothing ran).
std::string runOnce(Context &c, const Variant &v, const Problem &p,
                    const LtCall *lt) {
  const Shape s = p.s;
  switch (v.kind) {
  case Kind::LtPlain:
  case Kind::Lt:
    if (!lt->supported())
      return "";
    lt->run(p, c.s);
    return lt->algorithm();
  case Kind::GemmExBeta1: {
    CUDA_OK(cudaMemcpyAsync(p.dy, p.dbiasRows, size_t(s.m * s.n) * 2,
                            cudaMemcpyDeviceToDevice, c.s));
    const float one = 1.0f;
    BLAS_OK(cublasGemmEx(c.blas, CUBLAS_OP_T, CUBLAS_OP_N, int(s.n), int(s.m),
                         int(s.k), &one, p.dw, CUDA_R_16BF, int(s.k), p.dx,
                         CUDA_R_16BF, int(s.k), &one, p.dy, CUDA_R_16BF,
                         int(s.n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    return "cuBLAS's choice";
  }
  case Kind::Runtime: {
    rt::GemmOp op;
    op.m = s.m;
    op.n = s.n;
    op.k = s.k;
    op.transB = true;
    op.dtype = rt::DType::BF16;
    op.a = p.dx;
    op.lda = s.k;
    op.b = p.dw;
    op.ldb = s.k;
    op.bias = p.db;
    op.c = p.dy;
    op.ldc = s.n;
    rt::Status st = c.runtime->run(op);
    if (!st.isOk())
      die("the runtime's GEMM: " + st.message());
    return "f32 product, then a kernel";
  }
  }
  return "";
}

/// The median CUDA-event time (ms) of `v` on `p` after warm-up; -1 where it
/// has no algorithm.
double timeVariant(Context &c, const Variant &v, const Problem &p, int reps) {
  std::unique_ptr<LtCall> lt;
  if (v.kind == Kind::Lt || v.kind == Kind::LtPlain) {
    lt = std::make_unique<LtCall>(c.lt, p, v, c.workspace);
    if (!lt->supported())
      return -1;
  }
  for (int i = 0; i < 3; ++i)
    runOnce(c, v, p, lt.get());
  std::vector<cudaEvent_t> events(2 * size_t(reps));
  for (cudaEvent_t &e : events)
    CUDA_OK(cudaEventCreate(&e));
  for (int i = 0; i < reps; ++i) {
    CUDA_OK(cudaEventRecord(events[2 * i], c.s));
    runOnce(c, v, p, lt.get());
    CUDA_OK(cudaEventRecord(events[2 * i + 1], c.s));
  }
  CUDA_OK(cudaStreamSynchronize(c.s));
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    float t = 0;
    CUDA_OK(cudaEventElapsedTime(&t, events[2 * i], events[2 * i + 1]));
    ms.push_back(t);
  }
  for (cudaEvent_t e : events)
    (void)cudaEventDestroy(e);
  return median(ms);
}

} // namespace

void runBiasExperiments(int device, int64_t size, int reps) {
  const struct {
    int device;
    int64_t size;
    int reps;
  } o{device, size, reps};
  Context c;
  rt::Status st = rt::ExecutionStream::create(o.device, c.stream);
  if (!st.isOk())
    die(st.message());
  c.s = static_cast<cudaStream_t>(c.stream->nativeHandle());
  CUDA_OK(cudaSetDevice(o.device));
  BLAS_OK(cublasLtCreate(&c.lt));
  BLAS_OK(cublasCreate(&c.blas));
  BLAS_OK(cublasSetStream(c.blas, c.s));
  BLAS_OK(cublasSetMathMode(c.blas,
                            CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION));
  CUDA_OK(cudaMalloc(&c.workspace, kWorkspaceBytes));
  st = rt::createCublasGemm(c.stream, rt::GemmOptions(), c.runtime);
  if (!st.isOk())
    die(st.message());

  const Shape small[] = {{33, 17, 67}, {64, 128, 256}, {128, 96, 1024},
                         {600, 1024, 8}};
  std::vector<Problem> problems;
  for (const Shape &s : small)
    problems.push_back(makeProblem(s, uint64_t(s.m * 7 + s.n)));
  // Timed only: no reference (a float64 product of that size on the host
  // would take minutes).
  Problem big = makeProblem({o.size, o.size, o.size}, 99, false);

  Table table({"variant", "max ulps beyond f32 (33x17x67, 64x128x256, "
                          "128x96x1024, 600x1024x8)",
               "algorithms there", std::to_string(o.size) + "^3 ms",
               "vs no bias", "one rounding"});
  double plainMs = -1;
  for (const Variant &v : kVariants) {
    std::string ulps, algos;
    double worst = 0;
    bool all = true;
    for (Problem &p : problems) {
      std::unique_ptr<LtCall> lt;
      if (v.kind == Kind::Lt || v.kind == Kind::LtPlain)
        lt = std::make_unique<LtCall>(c.lt, p, v, c.workspace);
      const std::string algo = runOnce(c, v, p, lt.get());
      CUDA_OK(cudaStreamSynchronize(c.s));
      if (algo.empty()) {
        ulps += std::string(ulps.empty() ? "" : ", ") + "unsupported";
        all = false;
        continue;
      }
      // The baseline has no bias: its error counts the missing bias.
      const double e = v.kind == Kind::LtPlain ? NAN : excessUlps(p);
      worst = std::max(worst, e);
      ulps += std::string(ulps.empty() ? "" : ", ") +
              (v.kind == Kind::LtPlain ? "-" : fixed(e, 2));
      if (algos.find(algo) == std::string::npos)
        algos += std::string(algos.empty() ? "" : "; ") + algo;
    }
    const double ms = timeVariant(c, v, big, o.reps);
    if (v.kind == Kind::LtPlain)
      plainMs = ms;
    table.add({v.name, ulps, algos, ms < 0 ? "unsupported" : fixed(ms, 3),
               ms < 0 || plainMs <= 0 ? "-" : fixed(ms / plainMs, 3),
               v.kind == Kind::LtPlain ? "-"
               : !all                  ? "-"
               : worst <= 0.5          ? "yes"
                                       : "no"});
  }
  std::cout << "\n(d) bf16 GEMM with a bias: which cuBLAS settings round once "
               "(max error beyond the f32 accumulation's allowance, in units "
               "of the result's last place; one rounding: <= 0.5; biases "
               "cancel row 0 in half the columns) and at what cost (CUDA "
               "events, median of "
            << o.reps << " after 3 warm-up)\n";
  table.print();
  for (Problem &p : problems)
    freeProblem(p);
  freeProblem(big);
  (void)cudaFree(c.workspace);
  (void)cublasDestroy(c.blas);
  (void)cublasLtDestroy(c.lt);
}

} // namespace shardlin::gpubench
