//===- AttentionTest.cpp - Rank-local attention and its gradients ---------===//
//
// Issue 41's runtime half, at the level of one rank's run (exec/
// Attention.h over the host's BLAS GEMM and LocalOps):
//  - the output and every gradient of every rank of the issue's head
//    tables (GQA with g = 1, 3, 4, 5; KV heads replicated on several ranks
//    when W > Hkv; a rank with no heads; a kv head no local query head
//    reads), causal or not, with a mask or not, f64/f32/f16/bf16, against
//    the float64 reference of AttentionReference.h on random non-zero
//    inputs. Bounds, normwise (max error / max |reference| of the tensor):
//    f64 1e-12, f32 1e-5, f16 and bf16 their unit roundoff (2^-11, 2^-8:
//    the one rounding of the result) plus f32's 1e-5 (their inputs are
//    rounded to the type before the reference sees them);
//  - the ranks' partial dK/dV summed over the ranks holding a kv head (the
//    compiler's collective) equal the global gradient;
//  - the gradients against central differences of the forward (f64);
//  - fully masked rows give 0, never NaN; the kernels' argument checks.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/exec/Gemm.h"
#include "shardlin/runtime/exec/LocalOps.h"

#include "exec/Attention.h"

#include "AttentionReference.h"
#include "RandomValues.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace rt = shardlin::rt;
using rt::test::AttnInputs;
using rt::test::AttnOutputs;
using rt::test::AttnSpec;
using rt::test::headsOfTensor;
using rt::test::randomValues;
using rt::test::referenceAttention;
using rt::test::relativeError;
using rt::test::storeAs;

namespace {

const rt::AttentionPart kParts[] = {
    rt::AttentionPart::Forward, rt::AttentionPart::GradQ,
    rt::AttentionPart::GradK, rt::AttentionPart::GradV};
const char *partName(rt::AttentionPart p) {
  const char *names[] = {"o", "dq", "dk", "dv"};
  return names[static_cast<int>(p)];
}

std::vector<double> randomDoubles(size_t n, uint64_t seed) {
  std::vector<float> f = randomValues(n, seed);
  return std::vector<double>(f.begin(), f.end());
}

AttnInputs randomInputs(const AttnSpec &sp, uint64_t seed) {
  AttnInputs in;
  in.q = randomDoubles(size_t(sp.b * sp.s * sp.hq * sp.d), seed);
  in.k = randomDoubles(size_t(sp.b * sp.s * sp.hkv * sp.d), seed + 1);
  in.v = randomDoubles(size_t(sp.b * sp.s * sp.hkv * sp.d), seed + 2);
  in.dO = randomDoubles(size_t(sp.b * sp.s * sp.hq * sp.d), seed + 3);
  if (sp.mask)
    in.mask = randomDoubles(size_t(sp.s * sp.s), seed + 4);
  return in;
}

/// One rank of a global attention: its heads of the inputs.
struct RankHeads {
  int64_t qb, qe, kb, ke;
};

/// Runs `part` on one rank's heads in type t; the result in f64.
rt::Status runRank(const AttnSpec &sp, const AttnInputs &in, RankHeads r,
                   rt::DType t, rt::AttentionPart part,
                   std::vector<double> &out) {
  std::unique_ptr<rt::GemmBackend> gemm = rt::createCpuGemm();
  std::unique_ptr<rt::LocalOps> ops = rt::createHostLocalOps();
  rt::AttentionProblem p;
  p.batch = sp.b;
  p.seq = sp.s;
  p.heads.headDim = sp.d;
  p.heads.group = sp.group();
  p.heads.q = {r.qb, r.qe};
  p.heads.kv = {r.kb, r.ke};
  p.scale = sp.scale;
  p.causal = sp.causal;
  p.hasMask = sp.mask;
  p.dtype = t;
  p.part = part;
  std::vector<double> q = headsOfTensor(in.q, sp, sp.hq, r.qb, r.qe);
  std::vector<double> k = headsOfTensor(in.k, sp, sp.hkv, r.kb, r.ke);
  std::vector<double> v = headsOfTensor(in.v, sp, sp.hkv, r.kb, r.ke);
  std::vector<double> dO = headsOfTensor(in.dO, sp, sp.hq, r.qb, r.qe);
  std::vector<double> mask = in.mask;
  std::vector<uint8_t> qb = storeAs(t, q), kb = storeAs(t, k),
                       vb = storeAs(t, v), db = storeAs(t, dO),
                       mb = storeAs(t, mask);
  const bool kvOut = part == rt::AttentionPart::GradK ||
                     part == rt::AttentionPart::GradV;
  const size_t n = kvOut ? k.size() : q.size();
  // Poisoned: NaN in every type, so an unwritten element fails the check.
  std::vector<uint8_t> ob(n * rt::dtypeSize(t) + 1, 0xff);
  const int64_t bytes = rt::attentionScratchBytes(p);
  if (bytes < 0)
    return rt::Status::invalidArgument("scratch overflows");
  std::vector<uint8_t> scratch(size_t(bytes) + 1, 0xff);
  rt::AttentionTensors tensors;
  tensors.q = qb.data();
  tensors.k = kb.data();
  tensors.v = vb.data();
  tensors.dO = db.data();
  tensors.mask = sp.mask ? mb.data() : nullptr;
  tensors.out = ob.data();
  tensors.scratch = scratch.data();
  SHARDLIN_RETURN_IF_ERROR(rt::runAttention(*gemm, *ops, p, tensors));
  out.assign(n, 0.0);
  rt::convertToF64(t, ob.data(), out.data(), n);
  return rt::Status::ok();
}

double boundOf(rt::DType t) {
  switch (t) {
  case rt::DType::F64:
    return 1e-12;
  case rt::DType::F32:
    return 1e-5;
  case rt::DType::F16:
    return std::ldexp(1.0, -11) + 1e-5;
  case rt::DType::BF16:
    return std::ldexp(1.0, -8) + 1e-5;
  }
  return 0;
}

/// Rank r's heads when Hq query heads are split into W head-aligned
/// chunks (rank r: [floor(r Hq / W), floor((r + 1) Hq / W))) and it holds
/// the kv heads its query heads need (replicated where chunks share one).
std::vector<RankHeads> splitHeads(int64_t hq, int64_t hkv, int64_t w) {
  std::vector<RankHeads> ranks;
  const int64_t g = hq / hkv;
  for (int64_t r = 0; r < w; ++r) {
    const int64_t qb = r * hq / w, qe = (r + 1) * hq / w;
    ranks.push_back(qb == qe ? RankHeads{qb, qe, 0, 0}
                             : RankHeads{qb, qe, qb / g, (qe - 1) / g + 1});
  }
  return ranks;
}

struct Case {
  int64_t hq, hkv, w;
};

/// Every part on every rank of `ranks` in type t, against the reference.
void checkRanks(const AttnSpec &sp, const std::vector<RankHeads> &ranks,
                rt::DType t, uint64_t seed) {
  AttnInputs in = randomInputs(sp, seed);
  // The reference sees the inputs the type holds.
  for (std::vector<double> *x : {&in.q, &in.k, &in.v, &in.dO, &in.mask})
    storeAs(t, *x);
  const AttnOutputs global = referenceAttention(sp, in, 0, sp.hq, 0, sp.hkv);
  std::vector<double> dkSum(global.dk.size(), 0.0), dvSum = dkSum;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const RankHeads h = ranks[r];
    const AttnOutputs want =
        referenceAttention(sp, in, h.qb, h.qe, h.kb, h.ke);
    for (rt::AttentionPart part : kParts) {
      SCOPED_TRACE("rank " + std::to_string(r) + " " + partName(part));
      std::vector<double> got;
      rt::Status s = runRank(sp, in, h, t, part, got);
      ASSERT_TRUE(s) << s.message();
      const std::vector<double> &ref =
          part == rt::AttentionPart::Forward ? want.o
          : part == rt::AttentionPart::GradQ ? want.dq
          : part == rt::AttentionPart::GradK ? want.dk
                                             : want.dv;
      ASSERT_LE(relativeError(got, ref), boundOf(t));
      if (part != rt::AttentionPart::GradK && part != rt::AttentionPart::GradV)
        continue;
      // The compiler's sum over the ranks holding each kv head.
      std::vector<double> &sum =
          part == rt::AttentionPart::GradK ? dkSum : dvSum;
      const int64_t nkv = h.ke - h.kb;
      for (int64_t row = 0; row < sp.b * sp.s; ++row)
        for (int64_t j = 0; j < nkv; ++j)
          for (int64_t d = 0; d < sp.d; ++d)
            sum[size_t((row * sp.hkv + h.kb + j) * sp.d + d)] +=
                got[size_t((row * nkv + j) * sp.d + d)];
    }
  }
  // Each query head is on one rank: the sums are the global gradients.
  EXPECT_LE(relativeError(dkSum, global.dk), 2 * boundOf(t));
  EXPECT_LE(relativeError(dvSum, global.dv), 2 * boundOf(t));
}

TEST(Attention, EveryRankOfTheIssuesHeadTablesMatchesTheReference) {
  // Hq=12, Hkv=4, W=8: g = 3, KV heads replicated; Hq=25, Hkv=5, W=4:
  // g = 5; Hq=7, Hkv=7, W=3: g = 1; Hq=32, Hkv=8, W=6: g = 4; Hq=3,
  // Hkv=1, W=4: rank 0 holds no head.
  const Case cases[] = {{12, 4, 8}, {25, 5, 4}, {7, 7, 3}, {32, 8, 6},
                        {3, 1, 4}};
  const rt::DType types[] = {rt::DType::F64, rt::DType::F32, rt::DType::F16,
                             rt::DType::BF16};
  uint64_t seed = 100;
  for (const Case &c : cases)
    for (rt::DType t : types)
      for (int options = 0; options < 4; ++options) {
        AttnSpec sp;
        sp.b = 2;
        sp.s = 5 + options;
        sp.hq = c.hq;
        sp.hkv = c.hkv;
        sp.d = options % 2 ? 8 : 4;
        sp.scale = 1.0 / std::sqrt(double(sp.d));
        sp.causal = options & 1;
        sp.mask = options & 2;
        SCOPED_TRACE("Hq " + std::to_string(c.hq) + " Hkv " +
                     std::to_string(c.hkv) + " W " + std::to_string(c.w) +
                     " " + rt::dtypeName(t) + " causal " +
                     std::to_string(sp.causal) + " mask " +
                     std::to_string(sp.mask));
        checkRanks(sp, splitHeads(c.hq, c.hkv, c.w), t, seed += 10);
        if (HasFatalFailure())
          return;
      }
}

TEST(Attention, AKvHeadNoLocalQueryHeadReadsGetsAZeroGradient) {
  // Rank 0 holds kv heads [0, 2) but only query heads [0, 2) of group 2:
  // kv head 1's partial gradients are 0 there (rank 1 holds its queries).
  AttnSpec sp;
  sp.b = 2;
  sp.s = 6;
  sp.hq = 4;
  sp.hkv = 2;
  sp.d = 4;
  sp.scale = 0.5;
  sp.causal = true;
  checkRanks(sp, {{0, 2, 0, 2}, {2, 4, 1, 2}}, rt::DType::F32, 7);
  checkRanks(sp, {{0, 2, 0, 2}, {2, 4, 1, 2}}, rt::DType::F64, 8);
}

/// L = sum(O * dO) through the runtime's f64 forward on one rank with
/// every head.
double loss(const AttnSpec &sp, const AttnInputs &in) {
  std::vector<double> o;
  rt::Status s = runRank(sp, in, {0, sp.hq, 0, sp.hkv}, rt::DType::F64,
                         rt::AttentionPart::Forward, o);
  EXPECT_TRUE(s) << s.message();
  double l = 0;
  for (size_t i = 0; i < o.size(); ++i)
    l += o[i] * in.dO[i];
  return l;
}

TEST(Attention, GradientsAreTheForwardsCentralDifferences) {
  for (int options = 0; options < 4; ++options) {
    AttnSpec sp;
    sp.b = 2;
    sp.s = 5;
    sp.hq = 6;
    sp.hkv = 2; // g = 3
    sp.d = 3;
    sp.scale = 0.7;
    sp.causal = options & 1;
    sp.mask = options & 2;
    SCOPED_TRACE("causal " + std::to_string(sp.causal) + " mask " +
                 std::to_string(sp.mask));
    AttnInputs in = randomInputs(sp, 500 + options);
    const rt::AttentionPart parts[] = {rt::AttentionPart::GradQ,
                                       rt::AttentionPart::GradK,
                                       rt::AttentionPart::GradV};
    std::vector<double> *inputs[] = {&in.q, &in.k, &in.v};
    for (int i = 0; i < 3; ++i) {
      std::vector<double> grad;
      rt::Status s = runRank(sp, in, {0, sp.hq, 0, sp.hkv}, rt::DType::F64,
                             parts[i], grad);
      ASSERT_TRUE(s) << s.message();
      std::vector<double> &x = *inputs[i];
      std::vector<double> diff(x.size());
      const double eps = 1e-5;
      for (size_t e = 0; e < x.size(); ++e) {
        const double keep = x[e];
        x[e] = keep + eps;
        const double up = loss(sp, in);
        x[e] = keep - eps;
        const double down = loss(sp, in);
        x[e] = keep;
        diff[e] = (up - down) / (2 * eps);
      }
      // Central differences: O(eps^2) truncation, O(u / eps) rounding.
      EXPECT_LE(relativeError(grad, diff), 1e-8) << partName(parts[i]);
    }
  }
}

TEST(Attention, FullyMaskedRowsGiveZerosNotNaN) {
  AttnSpec sp;
  sp.b = 1;
  sp.s = 4;
  sp.hq = 2;
  sp.hkv = 1;
  sp.d = 4;
  sp.mask = true;
  for (rt::DType t : {rt::DType::F32, rt::DType::F16, rt::DType::F64}) {
    SCOPED_TRACE(rt::dtypeName(t));
    AttnInputs in = randomInputs(sp, 900);
    for (int64_t j = 0; j < sp.s; ++j)
      in.mask[size_t(1 * sp.s + j)] = -std::numeric_limits<double>::infinity();
    in.mask[size_t(3 * sp.s + 2)] = -std::numeric_limits<double>::infinity();
    for (std::vector<double> *x : {&in.q, &in.k, &in.v, &in.dO, &in.mask})
      storeAs(t, *x);
    const AttnOutputs want = referenceAttention(sp, in, 0, 2, 0, 1);
    for (rt::AttentionPart part : kParts) {
      std::vector<double> got;
      rt::Status s = runRank(sp, in, {0, 2, 0, 1}, t, part, got);
      ASSERT_TRUE(s) << s.message();
      const std::vector<double> &ref =
          part == rt::AttentionPart::Forward ? want.o
          : part == rt::AttentionPart::GradQ ? want.dq
          : part == rt::AttentionPart::GradK ? want.dk
                                             : want.dv;
      EXPECT_LE(relativeError(got, ref), boundOf(t)) << partName(part);
      if (part == rt::AttentionPart::Forward || part == rt::AttentionPart::GradQ)
        for (int64_t i = 0; i < 2 * sp.d; ++i) // row 1, both heads
          EXPECT_EQ(got[size_t(1 * 2 * sp.d + i)], 0.0) << partName(part);
    }
  }
}

TEST(Attention, SoftmaxKernelsCheckTheirArguments) {
  std::unique_ptr<rt::LocalOps> ops = rt::createHostLocalOps();
  float s[4] = {1, 2, 3, 4}, p[4] = {0.25f, 0.25f, 0.25f, 0.25f};
  rt::Status st = ops->attentionSoftmax(s, nullptr, 2, 2, 1.0, false,
                                        rt::DType::F16);
  EXPECT_EQ(st.message(), "attentionSoftmax: element type f16 (f32 or f64)");
  st = ops->attentionSoftmax(s, nullptr, -1, 2, 1.0, false, rt::DType::F32);
  EXPECT_EQ(st.message(), "attentionSoftmax: negative size -1 x 2");
  st = ops->attentionSoftmax(s, nullptr, 2, 2, INFINITY, false,
                             rt::DType::F32);
  EXPECT_EQ(st.message(), "attentionSoftmax: the scale is not finite");
  st = ops->attentionSoftmaxGrad(nullptr, s, 2, 2, 1.0, rt::DType::F32);
  EXPECT_EQ(st.message(), "attentionSoftmaxGrad: p is null");
  st = ops->rope(s, p, p, rt::DType::F16, s, 1, 1, 1, 4, false,
                 rt::DType::F32);
  EXPECT_EQ(st.message(), "rope: f16 tables for f32 (f32 or x's type)");
  st = ops->rope(s, p, p, rt::DType::F32, s, 1, 1, 1, 3, false,
                 rt::DType::F32);
  EXPECT_EQ(st.message(),
            "rope: bad sizes 1 x 1 x 1 x 3 (non-negative, an even head size)");
  // Causal, in place: row 0 keeps only key 0.
  ASSERT_TRUE(ops->attentionSoftmax(s, nullptr, 2, 2, 1.0, true,
                                    rt::DType::F32));
  EXPECT_EQ(s[0], 1.0f);
  EXPECT_EQ(s[1], 0.0f);
  EXPECT_NEAR(s[2] + s[3], 1.0f, 1e-7f);
}

} // namespace
