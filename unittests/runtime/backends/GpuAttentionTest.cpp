//===- GpuAttentionTest.cpp - attention and RoPE on a GPU -----------------===//
//
// exec/Attention.h's runAttention on device memory with cuBLAS and the CUDA
// local ops (AttentionKernels.cu), every part, GQA with KV heads, causal
// with a mask and a fully masked row, f64/f32/f16/bf16, against the float64
// reference of AttentionReference.h with the host tests' bounds (f64 1e-12,
// f32 1e-5 normwise, f16/bf16 their unit roundoff plus 1e-5); and
// LocalOps::rope against the reference. Every test skips without a device.
//
//===----------------------------------------------------------------------===//

#include "GpuTestSupport.h"

#include "AttentionReference.h"
#include "RandomValues.h"

#include "exec/Attention.h"

#include <cmath>
#include <limits>

using namespace shardlin::rt;
using namespace shardlin::rt::testing;
using shardlin::rt::test::AttnInputs;
using shardlin::rt::test::AttnOutputs;
using shardlin::rt::test::AttnSpec;
using shardlin::rt::test::headsOfTensor;
using shardlin::rt::test::randomValues;
using shardlin::rt::test::referenceAttention;
using shardlin::rt::test::referenceRope;
using shardlin::rt::test::relativeError;
using shardlin::rt::test::storeAs;

namespace {

std::vector<double> randomDoubles(size_t n, uint64_t seed) {
  std::vector<float> f = randomValues(n, seed);
  return std::vector<double>(f.begin(), f.end());
}

double boundOf(DType t) {
  return t == DType::F64   ? 1e-12
         : t == DType::F32 ? 1e-5
         : t == DType::F16 ? std::ldexp(1.0, -11) + 1e-5
                           : std::ldexp(1.0, -8) + 1e-5;
}

class GpuAttentionTest : public CudaLocalOpsTest {
protected:
  /// Bytes on the device; the caller keeps the buffer.
  void *put(std::vector<uint8_t> host, Buffer &dev) {
    EXPECT_TRUE(upload(Bytes(host.begin(), host.end()), dev).isOk());
    return dev.data();
  }
};

TEST_F(GpuAttentionTest, EveryPartMatchesTheReference) {
  std::unique_ptr<GemmBackend> gemm;
  ASSERT_TRUE(createCublasGemm(stream_, GemmOptions(), gemm).isOk());
  AttnSpec sp;
  sp.b = 2;
  sp.s = 37;
  sp.hq = 12;
  sp.hkv = 4; // g = 3
  sp.d = 16;
  sp.scale = 0.25;
  sp.causal = true;
  sp.mask = true;
  // This rank: query heads [2, 7), kv heads [0, 3) (kv 0 shared).
  const int64_t qb = 2, qe = 7, kb = 0, ke = 3;
  for (DType t : {DType::F64, DType::F32, DType::F16, DType::BF16}) {
    SCOPED_TRACE(dtypeName(t));
    AttnInputs in;
    in.q = randomDoubles(size_t(sp.b * sp.s * sp.hq * sp.d), 1);
    in.k = randomDoubles(size_t(sp.b * sp.s * sp.hkv * sp.d), 2);
    in.v = randomDoubles(size_t(sp.b * sp.s * sp.hkv * sp.d), 3);
    in.dO = randomDoubles(size_t(sp.b * sp.s * sp.hq * sp.d), 4);
    in.mask = randomDoubles(size_t(sp.s * sp.s), 5);
    for (int64_t j = 0; j < sp.s; ++j) // row 3 fully masked
      in.mask[size_t(3 * sp.s + j)] = -std::numeric_limits<double>::infinity();
    for (std::vector<double> *x : {&in.q, &in.k, &in.v, &in.dO, &in.mask})
      storeAs(t, *x);
    const AttnOutputs want = referenceAttention(sp, in, qb, qe, kb, ke);
    std::vector<double> q = headsOfTensor(in.q, sp, sp.hq, qb, qe);
    std::vector<double> k = headsOfTensor(in.k, sp, sp.hkv, kb, ke);
    std::vector<double> v = headsOfTensor(in.v, sp, sp.hkv, kb, ke);
    std::vector<double> dO = headsOfTensor(in.dO, sp, sp.hq, qb, qe);
    std::vector<double> mask = in.mask;
    Buffer dq, dk, dv, ddo, dmask, dout, dscratch;
    AttentionTensors tensors;
    tensors.q = put(storeAs(t, q), dq);
    tensors.k = put(storeAs(t, k), dk);
    tensors.v = put(storeAs(t, v), dv);
    tensors.dO = put(storeAs(t, dO), ddo);
    tensors.mask = put(storeAs(t, mask), dmask);
    for (AttentionPart part : {AttentionPart::Forward, AttentionPart::GradQ,
                               AttentionPart::GradK, AttentionPart::GradV}) {
      const bool kvOut =
          part == AttentionPart::GradK || part == AttentionPart::GradV;
      AttentionProblem p;
      p.batch = sp.b;
      p.seq = sp.s;
      p.heads.headDim = sp.d;
      p.heads.group = sp.group();
      p.heads.q = {qb, qe};
      p.heads.kv = {kb, ke};
      p.scale = sp.scale;
      p.causal = sp.causal;
      p.hasMask = true;
      p.dtype = t;
      p.part = part;
      const size_t n = kvOut ? k.size() : q.size();
      tensors.out = put(std::vector<uint8_t>(n * dtypeSize(t), 0xff), dout);
      tensors.scratch = put(
          std::vector<uint8_t>(size_t(attentionScratchBytes(p)), 0xff),
          dscratch);
      Status st = runAttention(*gemm, *ops_, p, tensors);
      ASSERT_TRUE(st.isOk()) << st.message();
      Bytes got;
      ASSERT_TRUE(download(dout, got).isOk());
      std::vector<double> out(n);
      convertToF64(t, got.data(), out.data(), n);
      const std::vector<double> &ref = part == AttentionPart::Forward ? want.o
                                       : part == AttentionPart::GradQ ? want.dq
                                       : part == AttentionPart::GradK ? want.dk
                                                                      : want.dv;
      EXPECT_LE(relativeError(out, ref), boundOf(t))
          << static_cast<int>(part);
    }
  }
}

TEST_F(GpuAttentionTest, RopeMatchesTheReference) {
  const int64_t b = 2, s = 33, heads = 3, d = 64;
  std::vector<double> cos, sin;
  for (int64_t p = 0; p < s; ++p)
    for (int64_t i = 0; i < d / 2; ++i) {
      const double theta = double(p) * std::pow(10000.0, -2.0 * i / d);
      cos.push_back(std::cos(theta));
      sin.push_back(std::sin(theta));
    }
  for (DType t : {DType::F64, DType::F32, DType::F16, DType::BF16})
    for (bool inverse : {false, true}) {
      SCOPED_TRACE(std::string(dtypeName(t)) + " inverse " +
                   std::to_string(inverse));
      std::vector<double> x = randomDoubles(size_t(b * s * heads * d), 9);
      std::vector<double> c = cos, sn = sin;
      Buffer dx, dc, ds, dy;
      void *px = put(storeAs(t, x), dx);
      void *pc = put(storeAs(DType::F32, c), dc);
      void *ps = put(storeAs(DType::F32, sn), ds);
      void *py = put(std::vector<uint8_t>(x.size() * dtypeSize(t), 0xff), dy);
      Status st = ops_->rope(px, pc, ps, DType::F32, py, b, s, heads, d,
                             inverse, t);
      ASSERT_TRUE(st.isOk()) << st.message();
      Bytes got;
      ASSERT_TRUE(download(dy, got).isOk());
      std::vector<double> y(x.size());
      convertToF64(t, got.data(), y.data(), y.size());
      const double bound = t == DType::F64   ? 1e-7 // f32 tables
                           : t == DType::F32 ? 1e-6
                                             : boundOf(t);
      EXPECT_LE(relativeError(y, referenceRope(x, c, sn, b, s, heads, d,
                                               inverse)),
                bound);
    }
}

} // namespace
