//===- GemmSuite.h - The conformance suite of every GEMM backend -*- C++
//-*-===//
//
// Every GemmBackend promises the same contract (Gemm.h), so one suite checks
// it: GemmConformance, a value-parameterized GoogleTest suite over a
// GemmTarget (a backend plus a way to put bytes where it reads them). Its
// tests are defined once in GemmSuite.cpp; GemmTest.cpp instantiates them
// for openblas and GpuGemmTest.cpp for cublas. What only one backend does
// (BLAS threads, TF32, cuBLASLt plan replay, device pointer checks) stays in
// that backend's file.
//
// Every element of C is compared with a float64 reference computed from the
// exact stored input values. With S = |bias| + sum_p |a_ip b_pj| (the
// condition of the dot product), the bounds are:
//
//  * f64: |c - ref| <= 1e-12 S. Any summation order of k + 1 terms has error
//    below (k+1) * 2^-53 S (about 1e-14 S for the sizes here, 5e-13 S for
//    the largest k); the reference itself is computed in double and has the
//    same order of error.
//  * f32: |c - ref| <= 1e-5 S, the same argument with 2^-24: (k+1) 2^-24 is
//    below 5e-6 for k <= 67; for the long-k shapes the backends' blocked
//    (or split-K) sums stay far inside it, as a sum of k terms in blocks of
//    b errs by about (k/b + b) 2^-24 S.
//  * f16/bf16: the backend widens the inputs exactly, accumulates in f32
//    (error e <= (k+1) 2^-24 S as above) and rounds once to the narrow type,
//    which moves the value by at most half an ulp of the narrow type: at most
//    u |s| (u = 2^-11 for f16, 2^-8 for bf16) for |s| in the normal range,
//    plus half the smallest subnormal. With |s| <= |ref| + e:
//      |c - ref| <= e + u (|ref| + e) + minSubnormal / 2.
//    e is taken as (k+2) 2^-24 S: the extra 2^-24 S covers the second-order
//    term of gamma_{k+1} = (k+1)u / (1 - (k+1)u) and the reference's own
//    double rounding error (about 1e-14 S).
//    Accumulating in f16/bf16 instead of f32, or a result off by a whole ulp
//    of the narrow type, exceeds it wherever cancellation does not make e
//    dominate, which is most elements.
//  * k == 0: C is the bias (or zero) exactly.
//
// C is filled with 0xFF bytes (a NaN in every dtype) before each call, so an
// element the backend fails to write shows up, and the padding columns
// between n and ldc must still hold those bytes afterwards. The padding of A
// and B is NaN too, so reading it would poison the result.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_TEST_GEMMSUITE_H
#define SHARDLIN_RUNTIME_TEST_GEMMSUITE_H

#include "shardlin/runtime/exec/Gemm.h"
#include "shardlin/runtime/exec/LocalOps.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace shardlin::rt::testing {

/// A matrix stored as rows x cols with leading dimension ld, in `dtype`,
/// with the exact double value of every stored element.
struct Matrix {
  int64_t rows = 0, cols = 0, ld = 0;
  DType dtype = DType::F32;
  std::vector<unsigned char> bytes;
  std::vector<double> values; // rows x cols, dense

  double at(int64_t i, int64_t j) const { return values[size_t(i * cols + j)]; }
};

/// Random values with magnitude in [0.25, 1) and random sign: never zero, so
/// a dropped term always changes the result. The padding is NaN.
Matrix randomMatrix(std::mt19937 &rng, DType t, int64_t rows, int64_t cols,
                    int64_t ld);

using Bytes = std::vector<unsigned char>;

/// Rounding to f16 or bf16: half an ulp relative (`unit`, 2^-11 or 2^-8) in
/// the normal range and half the smallest subnormal below it; 0 for f32 and
/// f64, whose bounds are stated otherwise.
struct RoundingOf {
  double unit, minSubnormalHalf;
};
RoundingOf roundingOf(DType t);

/// The bound on |C - ref| of one element (the header's rules): `ref` its
/// float64 value, `cond` = |bias| + sum |a b|, `f32Bound` the f32 one.
double gemmBound(DType t, bool f32Result, int64_t k, double ref, double cond,
                 double f32Bound = 1e-5);

/// One GEMM backend under test, with the memory it reads and writes.
class GemmTarget {
public:
  virtual ~GemmTarget() = default;
  /// Creates the backend. On a machine that cannot run it, sets `skip` to
  /// the reason (the test then skips with it) and returns ok.
  virtual Status setUp(std::string &skip) = 0;
  virtual GemmBackend &gemm() = 0;
  /// The LocalOps of the backend's device (for GEMM epilogues).
  virtual LocalOps &localOps() = 0;
  /// A copy of `host` in memory the backend can use (null for no bytes); it
  /// lives until release() or the target's end.
  virtual Status upload(const std::vector<unsigned char> &host, void *&ptr) = 0;
  /// Waits for the backend's work and copies `bytes` bytes at `ptr` back.
  virtual Status download(const void *ptr, size_t bytes,
                          std::vector<unsigned char> &host) = 0;
  /// Frees everything upload() made.
  virtual void release() = 0;
};

/// Frees the target's uploads when a check returns, however it returns.
struct Releaser {
  GemmTarget &target;
  ~Releaser() { target.release(); }
};

/// One instantiation of the suite.
struct GemmSuiteParam {
  /// The test name's suffix ("openblas", "cublas_unfused").
  std::string name;
  std::function<std::unique_ptr<GemmTarget>()> make;
  /// The library whose int range bounds the sizes, as the errors name it.
  std::string blasLibrary;
  /// The relative error allowed on an epilogue's GELU beyond the GEMM's
  /// (GemmEpilogueSuite.cpp); the backends' own evaluators are within
  /// 4e-6.
  double epilogueGeluRel = 4e-6;
};

/// What GoogleTest (and so ctest's test list) prints for a parameter.
inline void PrintTo(const GemmSuiteParam &param, std::ostream *os) {
  *os << param.name;
}

inline std::string
gemmParamName(const ::testing::TestParamInfo<GemmSuiteParam> &info) {
  return info.param.name;
}

struct Shape {
  int64_t m, n, k;
};

struct GemmCase {
  bool transA = false, transB = false, bias = false;
  int64_t padA = 0, padB = 0, padC = 0;
  /// GemmOp::f32Result (f16/bf16, no bias): C is f32, checked against the
  /// accumulation bound alone, (k+2) 2^-24 S, which one rounding to f16 or
  /// bf16 exceeds wherever cancellation does not dominate.
  bool f32Result = false;
};

/// The op of shape `s` and case `o` (its transposes, bias, f32 result)
/// over uploaded operands: `a` and `b` give the leading dimensions of `da`
/// and `db`; `dbias` is used only with o.bias.
GemmOp gemmOpOf(DType t, Shape s, const GemmCase &o, const Matrix &a,
                const void *da, const Matrix &b, const void *db,
                const void *dbias, void *dc, int64_t ldc);

/// Uploads each (bytes, where the pointer goes) in order; stops at the
/// first failure.
Status uploadAll(GemmTarget &target,
                 const std::vector<std::pair<const Bytes *, void **>> &uploads);

/// C (m x n) = A (m x k) B (k x n), or times B^T with B stored n x k
/// (`transB`), in dtype `t`, every operand dense row-major (lda = k, ldb =
/// n or k, ldc = n); no bias.
GemmOp denseGemmOp(DType t, int64_t m, int64_t n, int64_t k, bool transB,
                   const void *da, const void *db, void *dc);

/// A valid 2 x 3 x 4 f32 op (no transposes, no bias) over A (2 x 4), B
/// (4 x 3) and C (2 x 3), for tests of argument checks to break.
GemmOp smallF32Op(const void *da, const void *db, void *dc);

/// The epilogue tests' bound (GemmEpilogueSuite.cpp): lipschitz gemmErr +
/// rel |ref| + abs, plus one rounding to f16/bf16.
double epilogueBound(DType t, double lipschitz, double gemmErr, double ref,
                     double rel, double abs);

/// Whether the epilogue tests check row i of m against the float64
/// reference: every row of a small result, else the rows at and around
/// multiples of 256 (OpenBLAS's blocks of rows), every 37th and the last.
bool epilogueReferenceRow(int64_t i, int64_t m);

/// Runs one GEMM on `target` and checks every element of C against the f64
/// reference, and that C's padding was not written. `f32Bound` replaces the
/// f32 bound (TF32). Frees its uploads before returning.
void checkGemm(GemmTarget &target, std::mt19937 &rng, DType t, Shape s,
               const GemmCase &o, double f32Bound = 1e-5);

class GemmConformance : public ::testing::TestWithParam<GemmSuiteParam> {
protected:
  void SetUp() override;

  std::unique_ptr<GemmTarget> target_;
};

} // namespace shardlin::rt::testing

#endif // SHARDLIN_RUNTIME_TEST_GEMMSUITE_H
