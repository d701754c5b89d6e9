//===- AttentionProgramTest.cpp - attention, attention_grad, rope in programs -===//
//
// The three instructions as programs hold them (docs/runtime.md,
// "Attention and RoPE"):
//  - rope on the host against the float64 rotate-half reference (tables of
//    f32 and of x's type), inverse o rope = identity, and rope's backward
//    (the inverse rotation) as the adjoint: <rope(x), dy> = <x, rope^-1(dy)>;
//  - the text form of all three, read back exactly; the verifier's
//    rejections with their messages;
//  - a whole program (rope on q and k, attention, its three gradients, the
//    gradients of q and k through rope's backward) through runProgram on
//    the threads backend with W = 4 ranks, S dynamic, GQA g = 3 with KV
//    replicated, every rank's every result against the float64 reference
//    (f32: 1e-5 normwise; f64: 1e-12; bf16: 2^-8 per rounding step).
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/backends/Registry.h"
#include "shardlin/runtime/exec/LocalOps.h"
#include "shardlin/runtime/program/OpTable.h"
#include "shardlin/runtime/program/ProgramText.h"

#include "AttentionReference.h"
#include "ProgramEdit.h"
#include "RandomValues.h"

#include <gtest/gtest.h>

#include <cmath>
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
using rt::test::referenceRope;
using rt::test::relativeError;
using rt::test::storeAs;

namespace {

std::vector<double> randomDoubles(size_t n, uint64_t seed) {
  std::vector<float> f = randomValues(n, seed);
  return std::vector<double>(f.begin(), f.end());
}

/// Tables of angles p * 10000^(-2i/D), as RoPE's.
void ropeTables(int64_t s, int64_t d, std::vector<double> &cos,
                std::vector<double> &sin) {
  cos.clear();
  sin.clear();
  for (int64_t p = 0; p < s; ++p)
    for (int64_t i = 0; i < d / 2; ++i) {
      const double theta = double(p) * std::pow(10000.0, -2.0 * double(i) / double(d));
      cos.push_back(std::cos(theta));
      sin.push_back(std::sin(theta));
    }
}

/// rope on the host of x (rounded to t) with tables of `tables`.
std::vector<double> hostRope(std::vector<double> x, std::vector<double> cos,
                             std::vector<double> sin, rt::DType t,
                             rt::DType tables, int64_t b, int64_t s,
                             int64_t heads, int64_t d, bool inverse) {
  std::unique_ptr<rt::LocalOps> ops = rt::createHostLocalOps();
  std::vector<uint8_t> xb = storeAs(t, x), cb = storeAs(tables, cos),
                       sb = storeAs(tables, sin);
  std::vector<uint8_t> yb(x.size() * rt::dtypeSize(t) + 1, 0xff);
  rt::Status st = ops->rope(xb.data(), cb.data(), sb.data(), tables,
                            yb.data(), b, s, heads, d, inverse, t);
  EXPECT_TRUE(st) << st.message();
  std::vector<double> y(x.size());
  rt::convertToF64(t, yb.data(), y.data(), y.size());
  return y;
}

TEST(Rope, MatchesTheReferenceAndItsInverseUndoesIt) {
  const int64_t b = 2, s = 7, heads = 3, d = 8;
  std::vector<double> cos, sin;
  ropeTables(s, d, cos, sin);
  const struct {
    rt::DType x, tables;
    double bound;
  } types[] = {{rt::DType::F64, rt::DType::F64, 1e-15},
               {rt::DType::F64, rt::DType::F32, 1e-7},
               {rt::DType::F32, rt::DType::F32, 1e-6},
               {rt::DType::F16, rt::DType::F32, std::ldexp(1.0, -11) + 1e-6},
               {rt::DType::F16, rt::DType::F16, std::ldexp(1.0, -11) + 1e-6},
               {rt::DType::BF16, rt::DType::F32, std::ldexp(1.0, -8) + 1e-6},
               {rt::DType::BF16, rt::DType::BF16, std::ldexp(1.0, -8) + 1e-6}};
  for (const auto &ty : types)
    for (bool inverse : {false, true}) {
      SCOPED_TRACE(std::string(rt::dtypeName(ty.x)) + " tables " +
                   rt::dtypeName(ty.tables) + " inverse " +
                   std::to_string(inverse));
      std::vector<double> x = randomDoubles(size_t(b * s * heads * d), 31);
      storeAs(ty.x, x);
      std::vector<double> c = cos, sn = sin;
      storeAs(ty.tables, c);
      storeAs(ty.tables, sn);
      const std::vector<double> want =
          referenceRope(x, c, sn, b, s, heads, d, inverse);
      const std::vector<double> got =
          hostRope(x, c, sn, ty.x, ty.tables, b, s, heads, d, inverse);
      EXPECT_LE(relativeError(got, want), ty.bound);
    }
  // inverse o rope = identity (f64: the rotation by -theta after theta;
  // f32: within two roundings).
  std::vector<double> x = randomDoubles(size_t(b * s * heads * d), 32);
  for (rt::DType t : {rt::DType::F64, rt::DType::F32}) {
    const std::vector<double> y =
        hostRope(x, cos, sin, t, t, b, s, heads, d, false);
    const std::vector<double> back =
        hostRope(y, cos, sin, t, t, b, s, heads, d, true);
    storeAs(t, x);
    EXPECT_LE(relativeError(back, x), t == rt::DType::F64 ? 1e-15 : 1e-6)
        << rt::dtypeName(t);
  }
}

TEST(Rope, ItsBackwardIsTheInverseRotation) {
  // y = R x is linear: dL/dx = R^T dy, and R^T = rope with inverse 1 iff
  // <R x, dy> = <x, R^-1 dy> for every x, dy.
  const int64_t b = 2, s = 5, heads = 2, d = 6;
  std::vector<double> cos, sin;
  ropeTables(s, d, cos, sin);
  for (int trial = 0; trial < 4; ++trial) {
    std::vector<double> x = randomDoubles(size_t(b * s * heads * d), 40 + trial);
    std::vector<double> dy =
        randomDoubles(size_t(b * s * heads * d), 50 + trial);
    const std::vector<double> y =
        hostRope(x, cos, sin, rt::DType::F64, rt::DType::F64, b, s, heads, d,
                 false);
    const std::vector<double> dx =
        hostRope(dy, cos, sin, rt::DType::F64, rt::DType::F64, b, s, heads, d,
                 true);
    double lhs = 0, rhs = 0, mag = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      lhs += y[i] * dy[i];
      rhs += x[i] * dx[i];
      mag += std::fabs(y[i] * dy[i]);
    }
    EXPECT_LE(std::fabs(lhs - rhs), 1e-14 * mag);
  }
}

// q, k, v, dO [2, ?, heads * 4] per rank, mask [?, ?], cos/sin [?, 2];
// Hq = 6, Hkv = 2 (g = 3) on 4 ranks: query heads [0,1) [1,3) [3,4) [4,6),
// kv heads [0,1) [0,1) [1,2) [1,2) (each kv head on two ranks).
const char *kAttn = R"(shardlin-program v1
name attn
world_size 0
values 17
value 0 f32 3 2 ? ?
value 1 f32 3 2 ? ?
value 2 f32 3 2 ? ?
value 3 f32 3 2 ? ?
value 4 f32 2 ? ?
value 5 f32 2 ? 2
value 6 f32 2 ? 2
value 7 f32 3 2 ? ?
value 8 f32 3 2 ? ?
value 9 f32 3 2 ? ?
value 10 f32 3 2 ? ?
value 11 f32 3 2 ? ?
value 12 f32 3 2 ? ?
value 13 f32 3 2 ? ?
value 14 f32 3 2 ? ?
value 15 f32 3 2 ? ?
value 16 f32 3 2 ? ?
arg 0 plain
arg 1 plain
arg 2 plain
arg 3 plain
arg 4 plain
arg 5 plain
arg 6 plain
instr rope result 7 operands 3 0 5 6 head_dim 1 4 inverse 0 loc a.mlir:1:1
instr rope result 8 operands 3 1 5 6 head_dim 1 4 inverse 0 loc a.mlir:2:1
instr attention result 9 operands 4 7 8 2 4 head_dim 1 4 scale 0x1.8p-1 causal 1 group 1 3 q_heads 8 0 1 1 3 3 4 4 6 kv_heads 8 0 1 0 1 1 2 1 2 loc a.mlir:3:1
instr attention_grad result 10 operands 5 7 8 2 3 4 head_dim 1 4 scale 0x1.8p-1 causal 1 group 1 3 q_heads 8 0 1 1 3 3 4 4 6 kv_heads 8 0 1 0 1 1 2 1 2 wrt 1 0 loc a.mlir:4:1
instr attention_grad result 11 operands 5 7 8 2 3 4 head_dim 1 4 scale 0x1.8p-1 causal 1 group 1 3 q_heads 8 0 1 1 3 3 4 4 6 kv_heads 8 0 1 0 1 1 2 1 2 wrt 1 1 loc a.mlir:5:1
instr attention_grad result 12 operands 5 7 8 2 3 4 head_dim 1 4 scale 0x1.8p-1 causal 1 group 1 3 q_heads 8 0 1 1 3 3 4 4 6 kv_heads 8 0 1 0 1 1 2 1 2 wrt 1 2 loc a.mlir:6:1
instr rope result 13 operands 3 10 5 6 head_dim 1 4 inverse 1 loc a.mlir:7:1
instr rope result 14 operands 3 11 5 6 head_dim 1 4 inverse 1 loc a.mlir:8:1
instr attention result 15 operands 3 0 1 2 head_dim 1 4 scale 0x1p-1 causal 0 group 1 3 q_heads 8 0 1 1 3 3 4 4 6 kv_heads 8 0 1 0 1 1 2 1 2 loc a.mlir:9:1
instr rope result 16 operands 3 15 5 6 head_dim 1 4 inverse 0 loc a.mlir:10:1
results 5 9 13 14 12 16
end
)";

TEST(AttentionProgram, TextFormReadsBackExactly) {
  rt::Program p;
  rt::Status s = rt::parseProgram(kAttn, p);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(rt::serializeProgram(p), kAttn);
  const rt::Instr &a = p.instrs[2];
  EXPECT_EQ(a.op, rt::OpCode::Attention);
  EXPECT_EQ(a.headDim, std::vector<int64_t>{4});
  EXPECT_EQ(a.scale, 0.75);
  EXPECT_TRUE(a.causal);
  EXPECT_EQ(a.group, std::vector<int64_t>{3});
  EXPECT_EQ(a.qHeads, (std::vector<int64_t>{0, 1, 1, 3, 3, 4, 4, 6}));
  EXPECT_EQ(a.kvHeads, (std::vector<int64_t>{0, 1, 0, 1, 1, 2, 1, 2}));
  EXPECT_EQ(p.instrs[4].wrt, std::vector<int64_t>{1});
  EXPECT_EQ(p.instrs[6].op, rt::OpCode::Rope);
  EXPECT_TRUE(p.instrs[6].inverse);
  // A decimal scale reads as the same double.
  rt::Program q;
  ASSERT_TRUE(rt::testutil::parseEdited(kAttn, "scale 0x1.8p-1", "scale 0.75",
                                        q));
  EXPECT_EQ(q.instrs[2].scale, 0.75);
}

TEST(AttentionProgram, TheVerifierNamesWhatIsWrong) {
  rt::testutil::expectRefused(
      kAttn,
      {{"kv_heads 8 0 1 0 1 1 2 1 2 loc a.mlir:3:1",
        "kv_heads 8 0 1 1 2 1 2 1 2 loc a.mlir:3:1",
        "instruction 2 (attention): rank 1's query head 1 needs kv head 0 "
        "(group 3), which is not among its kv heads [1, 2)"},
       {"q_heads 8 0 1 1 3 3 4 4 6 kv_heads 8 0 1 0 1 1 2 1 2 loc a.mlir:3:1",
        "q_heads 6 0 1 1 3 3 4 kv_heads 8 0 1 0 1 1 2 1 2 loc a.mlir:3:1",
        "instruction 2 (attention): `q_heads` and `kv_heads` have pairs for "
        "different numbers of ranks"},
       {"q_heads 8 0 1 1 3 3 4 4 6 kv_heads 8 0 1 0 1 1 2 1 2 loc a.mlir:3:1",
        "q_heads 8 0 1 3 1 3 4 4 6 kv_heads 8 0 1 0 1 1 2 1 2 loc a.mlir:3:1",
        "instruction 2 (attention): `q_heads` gives rank 1 the heads [3, 1) "
        "(begin after end, or beyond 16777216)"},
       {"operands 4 7 8 2 4 head_dim 1 4", "operands 4 7 8 2 4 head_dim 1 0",
        "instruction 2 (attention) needs `head_dim 1 N` with 0 < N <= "
        "16777216"},
       {"2 4 head_dim 1 4 scale 0x1.8p-1 causal 1 group 1 3",
        "2 4 head_dim 1 4 scale 0x1.8p-1 causal 1 group 1 0",
        "instruction 2 (attention) needs `group 1 N` with 0 < N <= 16777216"},
       {"2 4 head_dim 1 4 scale 0x1.8p-1 causal 1 group 1 3",
        "2 4 head_dim 1 4 scale 0x1.8p-1 causal 1 group 1 99999999999",
        "instruction 2 (attention) needs `group 1 N` with 0 < N <= 16777216"},
       {"2 4 head_dim 1 4 scale 0x1.8p-1", "2 4 head_dim 1 4 scale inf",
        "instruction 2 (attention): the scale is not finite"},
       {"1 2 wrt 1 0 loc a.mlir:4:1", "1 2 wrt 1 3 loc a.mlir:4:1",
        "instruction 3 (attention_grad) needs `wrt 1 K` with K 0 (dq), 1 "
        "(dk) or 2 (dv)"},
       {"value 9 f32 3 2 ? ?", "value 9 f32 3 2 ? 8",
        "instruction 2 (attention): the result [2, ?, 8] has a last dim of 8 "
        "but rank 0 holds 1 heads of 4 (4)"},
       {"value 4 f32 2 ? ?", "value 4 f32 3 2 ? ?",
        "instruction 2 (attention): the mask [2, ?, ?] is not [S, S] for q "
        "[2, ?, ?]"},
       {"value 9 f32 3 2 ? ?", "value 9 f32 3 3 ? ?",
        "instruction 2 (attention): [3, ?, ?] and q [2, ?, ?] differ in "
        "their batch or sequence dims"},
       {"value 9 f32 3 2 ? ?", "value 9 f16 3 2 ? ?",
        "instruction 2 (attention) mixes element types"},
       {"head_dim 1 4 inverse 0 loc a.mlir:1:1",
        "head_dim 1 3 inverse 0 loc a.mlir:1:1",
        "instruction 0 (rope): head_dim 3 is odd (rotate-half pairs i, i + "
        "D/2)"},
       {"value 5 f32 2 ? 2", "value 5 f32 2 ? 3",
        "instruction 0 (rope): the cos table [?, 3] is not [S, D/2] = [?, 2]"},
       {"value 5 f32 2 ? 2", "value 5 f64 2 ? 2",
        "instruction 0 (rope): the cos table is f64 (f32 or x's f32)"},
       {"value 7 f32 3 2 ? ?", "value 7 f16 3 2 ? ?",
        "instruction 0 (rope) has a f16 result of a f32 input"},
       {"scale 0x1.8p-1 causal 1 group 1 3 q_heads 8 0 1 1 3 3 4 4 6 kv_heads "
        "8 0 1 0 1 1 2 1 2 loc a.mlir:3:1",
        "scale 0x1.8p-1 causal 2 group 1 3 q_heads 8 0 1 1 3 3 4 4 6 kv_heads "
        "8 0 1 0 1 1 2 1 2 loc a.mlir:3:1",
        "program line 31: integer 2 out of range"}});
}

/// Runs kAttn (in type t) on 4 threads; checks every rank's results.
void runAttentionProgram(rt::DType t, double bound) {
  SCOPED_TRACE(rt::dtypeName(t));
  std::string text = kAttn;
  const std::string type = std::string(" ") + rt::dtypeName(t) + " ";
  for (size_t at = text.find(" f32 "); at != std::string::npos;
       at = text.find(" f32 ", at + type.size()))
    text.replace(at, 5, type);
  rt::Program program;
  rt::Status parsed = rt::parseProgram(text, program);
  ASSERT_TRUE(parsed) << parsed.message();
  const int w = 4;
  AttnSpec sp;
  sp.b = 2;
  sp.s = 6;
  sp.hq = 6;
  sp.hkv = 2;
  sp.d = 4;
  sp.mask = true;
  const int64_t qh[5] = {0, 1, 3, 4, 6};
  const int64_t kvh[4][2] = {{0, 1}, {0, 1}, {1, 2}, {1, 2}};
  AttnInputs in;
  in.q = randomDoubles(size_t(sp.b * sp.s * sp.hq * sp.d), 71);
  in.k = randomDoubles(size_t(sp.b * sp.s * sp.hkv * sp.d), 72);
  in.v = randomDoubles(size_t(sp.b * sp.s * sp.hkv * sp.d), 73);
  in.dO = randomDoubles(size_t(sp.b * sp.s * sp.hq * sp.d), 74);
  in.mask = randomDoubles(size_t(sp.s * sp.s), 75);
  std::vector<double> cos, sin;
  ropeTables(sp.s, sp.d, cos, sin);
  for (std::vector<double> *x : {&in.q, &in.k, &in.v, &in.dO, &in.mask, &cos,
                                 &sin})
    storeAs(t, *x);
  std::vector<std::vector<std::vector<uint8_t>>> args(w), results(w);
  rt::RankCallbacks callbacks;
  callbacks.argShapes = [&](int r, std::vector<std::vector<int64_t>> &shapes,
                            std::vector<std::string> &) {
    const int64_t nq = qh[r + 1] - qh[r], nkv = kvh[r][1] - kvh[r][0];
    shapes = {{2, 6, nq * 4}, {2, 6, nkv * 4}, {2, 6, nkv * 4},
              {2, 6, nq * 4}, {6, 6},          {6, 2},
              {6, 2}};
    return rt::Status::ok();
  };
  callbacks.bind = [&](const rt::Plan &plan, rt::RankDevice &,
                       rt::RankBuffers &buffers) {
    const int r = plan.rank();
    std::vector<double> local[7] = {
        headsOfTensor(in.q, sp, sp.hq, qh[r], qh[r + 1]),
        headsOfTensor(in.k, sp, sp.hkv, kvh[r][0], kvh[r][1]),
        headsOfTensor(in.v, sp, sp.hkv, kvh[r][0], kvh[r][1]),
        headsOfTensor(in.dO, sp, sp.hq, qh[r], qh[r + 1]),
        in.mask, cos, sin};
    args[r].clear();
    for (std::vector<double> &x : local)
      args[r].push_back(storeAs(t, x));
    buffers.args.clear();
    for (std::vector<uint8_t> &a : args[r])
      buffers.args.push_back(a.data());
    results[r].clear();
    buffers.results.clear();
    for (size_t i = 0; i < plan.numResults(); ++i) {
      int64_t n = 1;
      for (int64_t d : plan.resultShape(i))
        n *= d;
      results[r].emplace_back(size_t(n) * rt::dtypeSize(t) + 1, 0xff);
      buffers.results.push_back(results[r].back().data());
    }
    return rt::Status::ok();
  };
  rt::RunOptions options;
  options.worldSize = w;
  rt::Status s = rt::runProgram(program, options, callbacks);
  ASSERT_TRUE(s) << s.message();
  // The reference: rope'd q and k, then the float64 attention.
  AttnInputs roped = in;
  roped.q = referenceRope(in.q, cos, sin, sp.b, sp.s, sp.hq, sp.d, false);
  roped.k = referenceRope(in.k, cos, sin, sp.b, sp.s, sp.hkv, sp.d, false);
  for (int r = 0; r < w; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    const int64_t nq = qh[r + 1] - qh[r], nkv = kvh[r][1] - kvh[r][0];
    AttnSpec causal = sp;
    causal.scale = 0.75;
    causal.causal = true;
    const AttnOutputs g = referenceAttention(causal, roped, qh[r], qh[r + 1],
                                             kvh[r][0], kvh[r][1]);
    AttnSpec plain = sp;
    plain.scale = 0.5;
    plain.mask = false;
    const AttnOutputs f = referenceAttention(plain, in, qh[r], qh[r + 1],
                                             kvh[r][0], kvh[r][1]);
    const std::vector<double> want[5] = {
        g.o,
        referenceRope(g.dq, cos, sin, sp.b, sp.s, nq, sp.d, true),
        referenceRope(g.dk, cos, sin, sp.b, sp.s, nkv, sp.d, true), g.dv,
        referenceRope(f.o, cos, sin, sp.b, sp.s, nq, sp.d, false)};
    for (size_t i = 0; i < 5; ++i) {
      std::vector<double> got(want[i].size());
      rt::convertToF64(t, results[r][i].data(), got.data(), got.size());
      EXPECT_LE(relativeError(got, want[i]), bound) << "result " << i;
    }
  }
}

TEST(AttentionProgram, RunsOnFourRanksWithReplicatedKvHeads) {
  runAttentionProgram(rt::DType::F64, 1e-12);
  runAttentionProgram(rt::DType::F32, 1e-5);
  // bf16: q and k rounded after rope, the gradients before rope's
  // backward: a few roundings of 2^-8 each.
  runAttentionProgram(rt::DType::BF16, 4 * std::ldexp(1.0, -8));
}

} // namespace
