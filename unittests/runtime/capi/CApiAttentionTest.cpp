//===- CApiAttentionTest.cpp - shardlin_attention(_grad), shardlin_rope ---===//
//
// The C ABI's attention ops (what shardlin-convert-to-llvm calls for
// shardlin.buffer.attention and buffer.rope):
//  - every rank of head tables with GQA, replicated kv heads and a rank
//    without heads (Hq, Hkv, W) = (12, 4, 8) and (25, 5, 4) with a mask,
//    f32, bf16 and f64, each rank's output and gradients against the
//    float64 reference of AttentionReference.h (f64 1e-12, f32 1e-5, bf16
//    2^-8 + 1e-5, normwise), and equal bit for bit to the plan executor's
//    kernel (runAttention on the same device objects): the ABI adds no
//    arithmetic of its own;
//  - the global form (NULL tables: every head of the views);
//  - strided views (packed by the ABI) give the dense views' bits;
//  - rope against the reference and LocalOps::rope, also in place;
//  - the errors, each naming the argument.
//
//===----------------------------------------------------------------------===//

#include "shardlin-c/Runtime.h"
#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/exec/Gemm.h"
#include "shardlin/runtime/exec/LocalOps.h"

#include "exec/Attention.h"

#include "AttentionReference.h"
#include "CApiTestSupport.h"
#include "RandomValues.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace rt = shardlin::rt;
using shardlin::capi_test::contains;
using shardlin::capi_test::Group;

namespace {

shardlin_dtype abiOf(rt::DType t) {
  switch (t) {
  case rt::DType::F16:
    return SHARDLIN_F16;
  case rt::DType::BF16:
    return SHARDLIN_BF16;
  case rt::DType::F32:
    return SHARDLIN_F32;
  default:
    return SHARDLIN_F64;
  }
}

double boundOf(rt::DType t) {
  if (t == rt::DType::F64)
    return 1e-12;
  if (t == rt::DType::F32)
    return 1e-5;
  return 1.0 / 256 + 1e-5; // bf16: its unit roundoff, the result's rounding
}

/// A view of `data` with sizes and element strides (row-major by default).
struct View {
  shardlin_view_storage storage = {};
  shardlin_memref ref = {};
  View(void *data, std::vector<int64_t> sizes,
       std::vector<int64_t> strides = {}) {
    if (strides.empty()) {
      strides.assign(sizes.size(), 1);
      for (size_t d = sizes.size(); d-- > 1;)
        strides[d - 1] = strides[d] * sizes[d];
    }
    storage.allocated = storage.aligned = data;
    for (size_t d = 0; d < sizes.size(); ++d) {
      storage.sizes_and_strides[d] = sizes[d];
      storage.sizes_and_strides[sizes.size() + d] = strides[d];
    }
    ref = {static_cast<int64_t>(sizes.size()), &storage};
  }
};

std::vector<double> randomDoubles(size_t n, uint64_t seed) {
  std::vector<float> f = rt::test::randomValues(n, seed);
  return std::vector<double>(f.begin(), f.end());
}

std::vector<double> toF64(rt::DType t, const std::vector<uint8_t> &bytes,
                          size_t n) {
  std::vector<double> out(n);
  rt::convertToF64(t, bytes.data(), out.data(), n);
  return out;
}

/// The tables: rank r's query heads [qb, qe) and kv heads [kb, ke).
struct Tables {
  std::vector<int64_t> q, kv;
};

/// Every rank of `tables` (W = tables.q.size() / 2) through the C ABI:
/// each output and gradient against the reference and bitwise against
/// runAttention.
void checkEveryRank(const rt::test::AttnSpec &sp, const Tables &tables,
                    rt::DType t, uint64_t seed) {
  const int w = static_cast<int>(tables.q.size() / 2);
  Group group(w);
  rt::test::AttnInputs in;
  in.q = randomDoubles(size_t(sp.b * sp.s * sp.hq * sp.d), seed);
  in.k = randomDoubles(size_t(sp.b * sp.s * sp.hkv * sp.d), seed + 1);
  in.v = randomDoubles(size_t(sp.b * sp.s * sp.hkv * sp.d), seed + 2);
  in.dO = randomDoubles(size_t(sp.b * sp.s * sp.hq * sp.d), seed + 3);
  in.mask = sp.mask ? randomDoubles(size_t(sp.s * sp.s), seed + 4)
                    : std::vector<double>{};
  // The inputs rounded to t, which the reference then sees.
  for (std::vector<double> *x : {&in.q, &in.k, &in.v, &in.dO})
    (void)rt::test::storeAs(t, *x);
  std::vector<uint8_t> mb = rt::test::storeAs(t, in.mask);
  std::unique_ptr<rt::GemmBackend> gemm = rt::createCpuGemm();
  std::unique_ptr<rt::LocalOps> ops = rt::createHostLocalOps();
  for (int r = 0; r < w; ++r) {
    const int64_t qb = tables.q[2 * r], qe = tables.q[2 * r + 1];
    const int64_t kb = tables.kv[2 * r], ke = tables.kv[2 * r + 1];
    std::vector<double> q = rt::test::headsOfTensor(in.q, sp, sp.hq, qb, qe);
    std::vector<double> k = rt::test::headsOfTensor(in.k, sp, sp.hkv, kb, ke);
    std::vector<double> v = rt::test::headsOfTensor(in.v, sp, sp.hkv, kb, ke);
    std::vector<double> dO = rt::test::headsOfTensor(in.dO, sp, sp.hq, qb, qe);
    std::vector<uint8_t> qs = rt::test::storeAs(t, q),
                         ks = rt::test::storeAs(t, k),
                         vs = rt::test::storeAs(t, v),
                         ds = rt::test::storeAs(t, dO);
    rt::test::AttnOutputs want =
        rt::test::referenceAttention(sp, in, qb, qe, kb, ke);
    const std::vector<int64_t> qShape = {sp.b, sp.s, (qe - qb) * sp.d};
    const std::vector<int64_t> kShape = {sp.b, sp.s, (ke - kb) * sp.d};
    View qv(qs.data(), qShape), kv(ks.data(), kShape), vv(vs.data(), kShape),
        dv(ds.data(), qShape), mv(mb.data(), {sp.s, sp.s});
    for (int part = 0; part < 4; ++part) {
      const bool kvOut = part >= 2;
      const size_t n = kvOut ? k.size() : q.size();
      const size_t bytes = n * rt::dtypeSize(t);
      std::vector<uint8_t> got(bytes + 1, 0xff), ref(bytes + 1, 0xff);
      View ov(got.data(), kvOut ? kShape : qShape);
      shardlin_context *ctx = group.ctx[size_t(r)];
      const shardlin_memref *mask = sp.mask ? &mv.ref : nullptr;
      shardlin_status st =
          part == 0 ? shardlin_attention(ctx, abiOf(t), &qv.ref, &kv.ref,
                                         &vv.ref, mask, &ov.ref, sp.d,
                                         sp.group(), tables.q.data(),
                                         tables.kv.data(), sp.scale, sp.causal)
                    : shardlin_attention_grad(ctx, abiOf(t), &qv.ref, &kv.ref,
                                              &vv.ref, &dv.ref, mask, &ov.ref,
                                              part - 1, sp.d, sp.group(),
                                              tables.q.data(), tables.kv.data(),
                                              sp.scale, sp.causal);
      ASSERT_EQ(st, SHARDLIN_OK) << shardlin_context_message(ctx);
      // The plan executor's kernel on the same bytes.
      rt::AttentionProblem p;
      p.batch = sp.b;
      p.seq = sp.s;
      p.heads.headDim = sp.d;
      p.heads.group = sp.group();
      p.heads.q = {qb, qe};
      p.heads.kv = {kb, ke};
      p.scale = sp.scale;
      p.causal = sp.causal;
      p.hasMask = sp.mask;
      p.dtype = t;
      p.part = static_cast<rt::AttentionPart>(part);
      std::vector<uint8_t> scratch(size_t(rt::attentionScratchBytes(p)) + 1);
      rt::AttentionTensors tensors;
      tensors.q = qs.data();
      tensors.k = ks.data();
      tensors.v = vs.data();
      tensors.dO = ds.data();
      tensors.mask = sp.mask ? mb.data() : nullptr;
      tensors.out = ref.data();
      tensors.scratch = scratch.data();
      ASSERT_TRUE(rt::runAttention(*gemm, *ops, p, tensors));
      EXPECT_EQ(std::memcmp(got.data(), ref.data(), bytes), 0)
          << "rank " << r << " part " << part;
      const std::vector<double> &w0 = part == 0   ? want.o
                                      : part == 1 ? want.dq
                                      : part == 2 ? want.dk
                                                  : want.dv;
      EXPECT_LE(rt::test::relativeError(toF64(t, got, n), w0), boundOf(t))
          << "rank " << r << " part " << part << " " << rt::dtypeName(t);
    }
  }
}

TEST(CApiAttention, EveryRankOfReplicatedKvHeadsMatchesTheReference) {
  // (12, 4, 8): g = 3, kv heads on several ranks, ranks 6 and 7 none.
  rt::test::AttnSpec sp;
  sp.b = 2;
  sp.s = 5;
  sp.hq = 12;
  sp.hkv = 4;
  sp.d = 4;
  sp.scale = 0.5;
  sp.causal = true;
  Tables t{{0, 2, 2, 4, 4, 6, 6, 8, 8, 10, 10, 12, 12, 12, 12, 12},
           {0, 1, 0, 2, 1, 2, 2, 3, 2, 4, 3, 4, 0, 0, 0, 0}};
  for (rt::DType dt : {rt::DType::F32, rt::DType::BF16, rt::DType::F64})
    checkEveryRank(sp, t, dt, 11);
}

TEST(CApiAttention, WholeGroupsWithAMaskMatchTheReference) {
  // (25, 5, 4): groups of 5 query heads, rank 3 none; a mask, not causal.
  rt::test::AttnSpec sp;
  sp.s = 6;
  sp.hq = 25;
  sp.hkv = 5;
  sp.d = 2;
  sp.scale = 0.7;
  sp.mask = true;
  Tables t{{0, 10, 10, 20, 20, 25, 25, 25}, {0, 2, 2, 4, 4, 5, 5, 5}};
  checkEveryRank(sp, t, rt::DType::F32, 21);
}

/// One rank's f32 attention of [s, nq * d] and [s, nkv * d] inputs.
struct Problem {
  int64_t s = 4, nq = 6, nkv = 2, d = 4;
  std::vector<float> q, k, v;
  Problem() {
    q = rt::test::randomValues(size_t(s * nq * d), 31);
    k = rt::test::randomValues(size_t(s * nkv * d), 32);
    v = rt::test::randomValues(size_t(s * nkv * d), 33);
  }
};

TEST(CApiAttention, NullTablesAreEveryHeadAndStridedViewsGiveTheSameBits) {
  Group group(2);
  Problem pr;
  // Global form on rank 1: the rank-local form with [0, 6) and [0, 2).
  std::vector<float> dense(pr.q.size(), NAN), global(pr.q.size(), NAN);
  View q(pr.q.data(), {pr.s, pr.nq * pr.d}), k(pr.k.data(), {pr.s, 8}),
      v(pr.v.data(), {pr.s, 8}), o(dense.data(), {pr.s, pr.nq * pr.d}),
      og(global.data(), {pr.s, pr.nq * pr.d});
  std::vector<int64_t> qh = {0, 6, 0, 6}, kvh = {0, 2, 0, 2};
  ASSERT_EQ(shardlin_attention(group.ctx[1], SHARDLIN_F32, &q.ref, &k.ref,
                               &v.ref, nullptr, &o.ref, pr.d, 3, qh.data(),
                               kvh.data(), 0.5, 1),
            SHARDLIN_OK)
      << shardlin_context_message(group.ctx[1]);
  ASSERT_EQ(shardlin_attention(group.ctx[1], SHARDLIN_F32, &q.ref, &k.ref,
                               &v.ref, nullptr, &og.ref, pr.d, 3, nullptr,
                               nullptr, 0.5, 1),
            SHARDLIN_OK);
  EXPECT_EQ(std::memcmp(dense.data(), global.data(), dense.size() * 4), 0);
  // k stored column-major and the output every other element: packed and
  // unpacked by the ABI, the same bits.
  std::vector<float> kt(pr.k.size()), strided(2 * pr.q.size(), -3.0f);
  for (int64_t i = 0; i < pr.s; ++i)
    for (int64_t j = 0; j < 8; ++j)
      kt[size_t(j * pr.s + i)] = pr.k[size_t(i * 8 + j)];
  View ks(kt.data(), {pr.s, 8}, {1, pr.s}),
      os(strided.data(), {pr.s, pr.nq * pr.d}, {2 * pr.nq * pr.d, 2});
  ASSERT_EQ(shardlin_attention(group.ctx[1], SHARDLIN_F32, &q.ref, &ks.ref,
                               &v.ref, nullptr, &os.ref, pr.d, 3, nullptr,
                               nullptr, 0.5, 1),
            SHARDLIN_OK)
      << shardlin_context_message(group.ctx[1]);
  for (size_t i = 0; i < dense.size(); ++i) {
    EXPECT_EQ(std::memcmp(&strided[2 * i], &dense[i], 4), 0) << i;
    EXPECT_EQ(strided[2 * i + 1], -3.0f) << i;
  }
}

TEST(CApiAttention, RopeMatchesTheReferenceAndTheHostKernelInPlace) {
  Group group(1);
  const int64_t b = 2, s = 3, heads = 3, d = 4;
  std::vector<float> x = rt::test::randomValues(size_t(b * s * heads * d), 41);
  std::vector<float> cos = rt::test::randomValues(size_t(s * d / 2), 42);
  std::vector<float> sin = rt::test::randomValues(size_t(s * d / 2), 43);
  std::vector<float> y(x.size(), NAN), host(x.size(), NAN);
  View xv(x.data(), {b, s, heads * d}), cv(cos.data(), {s, d / 2}),
      sv(sin.data(), {s, d / 2}), yv(y.data(), {b, s, heads * d});
  for (int inverse : {0, 1}) {
    ASSERT_EQ(shardlin_rope(group.ctx[0], SHARDLIN_F32, &xv.ref, SHARDLIN_F32,
                            &cv.ref, &sv.ref, &yv.ref, d, inverse),
              SHARDLIN_OK)
        << shardlin_context_message(group.ctx[0]);
    ASSERT_TRUE(rt::createHostLocalOps()->rope(
        x.data(), cos.data(), sin.data(), rt::DType::F32, host.data(), b, s,
        heads, d, inverse != 0, rt::DType::F32));
    EXPECT_EQ(std::memcmp(y.data(), host.data(), y.size() * 4), 0);
    std::vector<double> xd(x.begin(), x.end()), cd(cos.begin(), cos.end()),
        sd(sin.begin(), sin.end()), yd(y.begin(), y.end());
    EXPECT_LE(rt::test::relativeError(
                  yd, rt::test::referenceRope(xd, cd, sd, b, s, heads, d,
                                              inverse != 0)),
              1e-6);
  }
  // In place: out is x's view.
  std::vector<float> inPlace = x;
  View iv(inPlace.data(), {b, s, heads * d});
  ASSERT_EQ(shardlin_rope(group.ctx[0], SHARDLIN_F32, &iv.ref, SHARDLIN_F32,
                          &cv.ref, &sv.ref, &iv.ref, d, 1),
            SHARDLIN_OK);
  EXPECT_EQ(std::memcmp(inPlace.data(), y.data(), y.size() * 4), 0);
}

TEST(CApiAttention, Errors) {
  Problem pr;
  std::vector<float> out(pr.q.size());
  View q(pr.q.data(), {pr.s, pr.nq * pr.d}), k(pr.k.data(), {pr.s, 8}),
      v(pr.v.data(), {pr.s, 8}), o(out.data(), {pr.s, pr.nq * pr.d}),
      shortK(pr.k.data(), {pr.s, 4}), mask(pr.k.data(), {pr.s, 3}),
      overlap(pr.q.data(), {pr.s, pr.nq * pr.d});
  std::vector<int64_t> qh = {0, 6, 6, 6}, kvh = {0, 2, 2, 2};
  // Rank 0's query head 5 needs kv head 1 (group 3), not among [0, 1).
  std::vector<int64_t> badKv = {0, 1, 2, 2};
  auto expect = [&](const std::string &text, auto call) {
    Group group(2);
    EXPECT_EQ(call(group.ctx[0]), SHARDLIN_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(shardlin_context_message(group.ctx[0]), text));
  };
  expect("q_heads and kv_heads must both be given or both be NULL",
         [&](shardlin_context *c) {
           return shardlin_attention(c, SHARDLIN_F32, &q.ref, &k.ref, &v.ref,
                                     nullptr, &o.ref, 4, 3, qh.data(), nullptr,
                                     0.5, 1);
         });
  expect("rank 0's query head 5 needs kv head 1 (group 3), which is not "
         "among its kv heads [0, 1)",
         [&](shardlin_context *c) {
           return shardlin_attention(c, SHARDLIN_F32, &q.ref, &k.ref, &v.ref,
                                     nullptr, &o.ref, 4, 3, qh.data(),
                                     badKv.data(), 0.5, 1);
         });
  expect("k is [4, 4], expected [4, 8] (q's leading dims, 2 heads of 4)",
         [&](shardlin_context *c) {
           return shardlin_attention(c, SHARDLIN_F32, &q.ref, &shortK.ref,
                                     &v.ref, nullptr, &o.ref, 4, 3, qh.data(),
                                     kvh.data(), 0.5, 1);
         });
  expect("mask is [4, 3], expected [4, 4]", [&](shardlin_context *c) {
    return shardlin_attention(c, SHARDLIN_F32, &q.ref, &k.ref, &v.ref,
                              &mask.ref, &o.ref, 4, 3, qh.data(), kvh.data(),
                              0.5, 1);
  });
  expect("out overlaps q in memory", [&](shardlin_context *c) {
    return shardlin_attention(c, SHARDLIN_F32, &q.ref, &k.ref, &v.ref, nullptr,
                              &overlap.ref, 4, 3, qh.data(), kvh.data(), 0.5,
                              1);
  });
  expect("wrt is 3; expected 0 (dq), 1 (dk) or 2 (dv)",
         [&](shardlin_context *c) {
           return shardlin_attention_grad(c, SHARDLIN_F32, &q.ref, &k.ref,
                                          &v.ref, &q.ref, nullptr, &o.ref, 3, 4,
                                          3, qh.data(), kvh.data(), 0.5, 1);
         });
  expect("the scale is not finite", [&](shardlin_context *c) {
    return shardlin_attention(c, SHARDLIN_F32, &q.ref, &k.ref, &v.ref, nullptr,
                              &o.ref, 4, 3, qh.data(), kvh.data(), NAN, 1);
  });
  std::vector<float> table(8);
  View t(table.data(), {pr.s, 2}), t3(table.data(), {pr.s - 1, 2});
  expect("head_dim is 3; it must be positive and even",
         [&](shardlin_context *c) {
           return shardlin_rope(c, SHARDLIN_F32, &q.ref, SHARDLIN_F32, &t.ref,
                                &t.ref, &o.ref, 3, 0);
         });
  expect("cos is [3, 2], expected [4, 2]", [&](shardlin_context *c) {
    return shardlin_rope(c, SHARDLIN_F32, &q.ref, SHARDLIN_F32, &t3.ref, &t.ref,
                         &o.ref, 4, 0);
  });
  expect("table_dtype is f16; the tables are f32 or x's f32",
         [&](shardlin_context *c) {
           return shardlin_rope(c, SHARDLIN_F32, &q.ref, SHARDLIN_F16, &t.ref,
                                &t.ref, &o.ref, 4, 0);
         });
  EXPECT_EQ(shardlin_attention(nullptr, SHARDLIN_F32, &q.ref, &k.ref, &v.ref,
                               nullptr, &o.ref, 4, 3, nullptr, nullptr, 0.5, 1),
            SHARDLIN_INVALID_ARGUMENT);
}

} // namespace
