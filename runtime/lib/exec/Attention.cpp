//===- Attention.cpp - Rank-local attention over any device ---------------===//
//
// Attention.h's runAttention. Every tensor is [batch, seq, heads * D]
// row-major, so head h of batch b is a seq x D matrix at element
// (b * seq * heads + h) * D with leading dimension heads * D: each per-head
// product is one GEMM on those strided views, with no copy. The compute
// type C is f64 for f64 and f32 otherwise; f16/bf16 inputs are widened to
// f32 copies in the scratch, and the f32 result is rounded once into the
// caller's. Rows of dS already hold the factor `scale` (LocalOps::
// attentionSoftmaxGrad), so dQ = dS K and dK = dS^T Q need no other.
//
// The rowsum(dO o O) of the softmax backward is computed as the equal
// rowsum(P o dP) (O = P V, so dO . O_i = sum_j P_ij (dO V^T)_ij): no O.
//
//===----------------------------------------------------------------------===//

#include "exec/Attention.h"

#include "shardlin/runtime/base/Buffer.h"

#include <algorithm>
#include <vector>

namespace shardlin::rt {

namespace {

/// The problem's sizes and the scratch's layout, in elements of C.
struct Layout {
  DType c = DType::F32;
  size_t ce = 4;
  int64_t s = 0, d = 0, nq = 0, nkv = 0, nOut = 0;
  bool widen = false, grad = false;
  /// Offsets in the scratch (elements of C); -1: not used.
  int64_t q = -1, k = -1, v = -1, dO = -1, mask = -1, out = -1;
  int64_t block1 = 0, block2 = 0, acc = 0, tmp = 0, total = 0;
};

bool layoutOf(const AttentionProblem &p, Layout &l) {
  l.c = p.dtype == DType::F64 ? DType::F64 : DType::F32;
  l.ce = dtypeSize(l.c);
  l.s = p.seq;
  l.d = p.heads.headDim;
  l.nq = p.heads.q.size();
  l.nkv = p.heads.kv.size();
  l.grad = p.part != AttentionPart::Forward;
  const bool kvOut = p.part == AttentionPart::GradK ||
                     p.part == AttentionPart::GradV;
  l.nOut = kvOut ? l.nkv : l.nq;
  l.widen = p.dtype != l.c;
  int64_t qn = 0, kvn = 0, sn = 0, sd = 0, outn = 0;
  if (!checkedNumElements({p.batch, l.s, l.nq, l.d}, qn, l.ce) ||
      !checkedNumElements({p.batch, l.s, l.nkv, l.d}, kvn, l.ce) ||
      !checkedNumElements({l.s, l.s, 4}, sn, l.ce) ||
      !checkedNumElements({l.s, l.d, 2}, sd, l.ce) ||
      !checkedNumElements({p.batch, l.s, l.nOut, l.d}, outn, l.ce))
    return false;
  int64_t at = 0;
  auto take = [&](int64_t n) {
    const int64_t here = at;
    at += n;
    return here;
  };
  if (l.widen) {
    l.q = take(qn);
    l.k = take(kvn);
    l.v = take(kvn);
    if (l.grad)
      l.dO = take(qn);
    if (p.hasMask)
      l.mask = take(l.s * l.s);
    l.out = take(outn);
  }
  l.block1 = take(l.s * l.s);
  l.block2 = l.grad ? take(l.s * l.s) : at;
  l.acc = kvOut ? take(l.s * l.d) : at;
  l.tmp = kvOut ? take(l.s * l.d) : at;
  l.total = at;
  int64_t bytes = 0;
  return static_cast<bool>(checkedNumElements({l.total}, bytes, l.ce));
}

/// The tensors the GEMMs read and write, all of type C.
struct Views {
  const char *q, *k, *v, *dO, *mask;
  char *out, *scratch;
};

class Runner {
public:
  Runner(GemmBackend &gemm, LocalOps &ops, const AttentionProblem &p,
         const Layout &l, const Views &t)
      : gemm_(gemm), ops_(ops), p_(p), l_(l), t_(t) {}

  Status run() {
    for (int64_t b = 0; b < p_.batch; ++b) {
      if (p_.part == AttentionPart::Forward || p_.part == AttentionPart::GradQ)
        for (int64_t j = 0; j < l_.nq; ++j)
          SHARDLIN_RETURN_IF_ERROR(queryHead(b, j));
      else
        for (int64_t t = 0; t < l_.nkv; ++t)
          SHARDLIN_RETURN_IF_ERROR(kvHead(b, t));
    }
    return Status::ok();
  }

private:
  /// Head h of batch b of a tensor of `heads` heads.
  const char *head(const char *x, int64_t b, int64_t h, int64_t heads) const {
    return x + size_t((b * l_.s * heads + h) * l_.d) * l_.ce;
  }
  char *outHead(int64_t b, int64_t h, int64_t heads) const {
    return t_.out + size_t((b * l_.s * heads + h) * l_.d) * l_.ce;
  }
  char *scratch(int64_t offset) const {
    return t_.scratch + size_t(offset) * l_.ce;
  }

  /// C[m x n] (ldc) = op(A) op(B) in type C.
  Status gemm(int64_t m, int64_t n, int64_t k, const char *a, int64_t lda,
              bool transA, const char *b, int64_t ldb, bool transB, char *c,
              int64_t ldc) {
    GemmOp op;
    op.m = m;
    op.n = n;
    op.k = k;
    op.transA = transA;
    op.transB = transB;
    op.dtype = l_.c;
    op.a = a;
    op.lda = std::max<int64_t>(1, lda);
    op.b = b;
    op.ldb = std::max<int64_t>(1, ldb);
    op.c = c;
    op.ldc = std::max<int64_t>(1, ldc);
    return gemm_.run(op);
  }

  /// block1 = P of local query head j (batch b) with kv head t.
  Status probabilities(int64_t b, int64_t j, int64_t t) {
    SHARDLIN_RETURN_IF_ERROR(gemm(l_.s, l_.s, l_.d, head(t_.q, b, j, l_.nq),
                                  l_.nq * l_.d, false, head(t_.k, b, t, l_.nkv),
                                  l_.nkv * l_.d, true, scratch(l_.block1),
                                  l_.s));
    return ops_.attentionSoftmax(scratch(l_.block1), t_.mask, l_.s, l_.s,
                                 p_.scale, p_.causal, l_.c);
  }

  /// block2 = dS of query head j (after probabilities(b, j, t)).
  Status scoresGrad(int64_t b, int64_t j, int64_t t) {
    SHARDLIN_RETURN_IF_ERROR(gemm(
        l_.s, l_.s, l_.d, head(t_.dO, b, j, l_.nq), l_.nq * l_.d, false,
        head(t_.v, b, t, l_.nkv), l_.nkv * l_.d, true, scratch(l_.block2),
        l_.s));
    return ops_.attentionSoftmaxGrad(scratch(l_.block1), scratch(l_.block2),
                                     l_.s, l_.s, p_.scale, l_.c);
  }

  /// Forward: O_j = P V_t; GradQ: dQ_j = dS K_t.
  Status queryHead(int64_t b, int64_t j) {
    const int64_t t = p_.heads.kvOf(j);
    char *out = outHead(b, j, l_.nq);
    SHARDLIN_RETURN_IF_ERROR(probabilities(b, j, t));
    if (p_.part == AttentionPart::Forward)
      return gemm(l_.s, l_.d, l_.s, scratch(l_.block1), l_.s, false,
                  head(t_.v, b, t, l_.nkv), l_.nkv * l_.d, false, out,
                  l_.nq * l_.d);
    SHARDLIN_RETURN_IF_ERROR(scoresGrad(b, j, t));
    return gemm(l_.s, l_.d, l_.s, scratch(l_.block2), l_.s, false,
                head(t_.k, b, t, l_.nkv), l_.nkv * l_.d, false, out,
                l_.nq * l_.d);
  }

  /// dK_t = sum over its query heads j of dS_j^T Q_j; dV_t of P_j^T dO_j.
  Status kvHead(int64_t b, int64_t t) {
    char *out = outHead(b, t, l_.nkv);
    const int64_t ld = l_.nkv * l_.d;
    // The local query heads of kv head t: global (kv.begin + t) * g ...
    const int64_t g = p_.heads.group;
    const int64_t first = std::max<int64_t>(
        (p_.heads.kv.begin + t) * g - p_.heads.q.begin, 0);
    const int64_t last = std::min<int64_t>(
        (p_.heads.kv.begin + t + 1) * g - p_.heads.q.begin, l_.nq);
    if (first >= last) // No query head here reads it: a zero gradient.
      return gemm(l_.s, l_.d, 0, nullptr, 0, false, nullptr, 0, false, out,
                  ld);
    const bool one = last - first == 1;
    for (int64_t j = first; j < last; ++j) {
      SHARDLIN_RETURN_IF_ERROR(probabilities(b, j, t));
      const bool dk = p_.part == AttentionPart::GradK;
      if (dk)
        SHARDLIN_RETURN_IF_ERROR(scoresGrad(b, j, t));
      char *into = one ? out : scratch(j == first ? l_.acc : l_.tmp);
      SHARDLIN_RETURN_IF_ERROR(
          gemm(l_.s, l_.d, l_.s, scratch(dk ? l_.block2 : l_.block1), l_.s,
               true, head(dk ? t_.q : t_.dO, b, j, l_.nq), l_.nq * l_.d, false,
               into, one ? ld : l_.d));
      if (!one && j != first)
        SHARDLIN_RETURN_IF_ERROR(accumulate());
    }
    if (one)
      return Status::ok();
    return ops_.copyRows(scratch(l_.acc), size_t(l_.d) * l_.ce, out,
                         size_t(ld) * l_.ce, l_.s, size_t(l_.d) * l_.ce);
  }

  /// acc += tmp (S x D).
  Status accumulate() {
    static const ExprProgram add = [] {
      ExprProgram e;
      e.nodes.resize(3);
      e.nodes[0].op = e.nodes[1].op = ExprOp::Input;
      e.nodes[0].input = 0;
      e.nodes[1].input = 1;
      e.nodes[2].op = ExprOp::Add;
      e.nodes[2].args[0] = 0;
      e.nodes[2].args[1] = 1;
      return e;
    }();
    std::vector<ExprOperand> operands(2);
    operands[0].data = scratch(l_.acc);
    operands[1].data = scratch(l_.tmp);
    return ops_.elementwise(add, operands, scratch(l_.acc), l_.s, l_.d, l_.c);
  }

  GemmBackend &gemm_;
  LocalOps &ops_;
  const AttentionProblem &p_;
  const Layout &l_;
  const Views &t_;
};

} // namespace

int64_t attentionScratchBytes(const AttentionProblem &problem) {
  Layout l;
  if (!layoutOf(problem, l))
    return -1;
  return l.total * int64_t(l.ce);
}

Status runAttention(GemmBackend &gemm, LocalOps &ops,
                    const AttentionProblem &problem,
                    const AttentionTensors &tensors) {
  Layout l;
  if (!layoutOf(problem, l))
    return Status::invalidArgument("attention: the sizes overflow");
  const int64_t qn = problem.batch * l.s * l.nq * l.d;
  const int64_t kvn = problem.batch * l.s * l.nkv * l.d;
  const int64_t outn = problem.batch * l.s * l.nOut * l.d;
  if (outn == 0)
    return Status::ok();
  char *scratch = static_cast<char *>(tensors.scratch);
  Views v{static_cast<const char *>(tensors.q),
          static_cast<const char *>(tensors.k),
          static_cast<const char *>(tensors.v),
          static_cast<const char *>(tensors.dO),
          static_cast<const char *>(problem.hasMask ? tensors.mask : nullptr),
          static_cast<char *>(tensors.out), scratch};
  if (l.widen) {
    // f16/bf16: every input widened to an f32 copy, the result computed
    // there and rounded once below.
    auto widen = [&](const void *from, int64_t offset, int64_t n,
                     const char *&to) {
      char *at = scratch + size_t(offset) * l.ce;
      to = at;
      return ops.convert(from, problem.dtype, at, l.c, n);
    };
    SHARDLIN_RETURN_IF_ERROR(widen(tensors.q, l.q, qn, v.q));
    SHARDLIN_RETURN_IF_ERROR(widen(tensors.k, l.k, kvn, v.k));
    SHARDLIN_RETURN_IF_ERROR(widen(tensors.v, l.v, kvn, v.v));
    if (l.grad)
      SHARDLIN_RETURN_IF_ERROR(widen(tensors.dO, l.dO, qn, v.dO));
    if (problem.hasMask)
      SHARDLIN_RETURN_IF_ERROR(widen(tensors.mask, l.mask, l.s * l.s, v.mask));
    v.out = scratch + size_t(l.out) * l.ce;
  }
  Runner runner(gemm, ops, problem, l, v);
  SHARDLIN_RETURN_IF_ERROR(runner.run());
  if (l.widen)
    return ops.convert(v.out, l.c, tensors.out, problem.dtype, outn);
  return Status::ok();
}

} // namespace shardlin::rt
