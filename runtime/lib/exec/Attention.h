//===- Attention.h - Rank-local attention over any device -------*- C++ -*-===//
//
// Internal to the runtime: attention and its gradients (docs/runtime.md,
// "Attention and RoPE") for one rank's heads, written once over the device
// interfaces: the per-head products are GEMMs of the rank's GemmBackend
// (BLAS on the host, cuBLAS on a GPU), the softmax and its backward are
// LocalOps row kernels, and f16/bf16 tensors are widened to f32 first
// (LocalOps::convert) and the result rounded once at the end. Each head
// materializes its S x S block of scores in the scratch.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_EXEC_ATTENTION_H
#define SHARDLIN_RUNTIME_LIB_EXEC_ATTENTION_H

#include "shardlin/runtime/exec/Gemm.h"
#include "shardlin/runtime/exec/LocalOps.h"
#include "shardlin/runtime/program/AttentionHeads.h"

#include <cstdint>

namespace shardlin::rt {

/// What attention computes: the output, or the gradient of one input.
enum class AttentionPart { Forward, GradQ, GradK, GradV };

/// One rank's attention: q [batch, seq, nq * D], k and v [batch, seq,
/// nkv * D], nq and nkv the sizes of heads.q and heads.kv.
struct AttentionProblem {
  int64_t batch = 1, seq = 0;
  AttentionHeads heads;
  double scale = 1.0;
  bool causal = false;
  bool hasMask = false;
  /// Of every tensor (the mask's too).
  DType dtype = DType::F32;
  AttentionPart part = AttentionPart::Forward;
};

/// Device memory (the rank's) the run reads and writes; dO only for the
/// gradients, mask only with hasMask, scratch of attentionScratchBytes.
struct AttentionTensors {
  const void *q = nullptr, *k = nullptr, *v = nullptr, *dO = nullptr,
             *mask = nullptr;
  void *out = nullptr;
  void *scratch = nullptr;
};

/// The scratch bytes `run` needs, or -1 if they overflow int64.
int64_t attentionScratchBytes(const AttentionProblem &problem);

/// Computes the output [batch, seq, nq * D] (Forward, GradQ) or
/// [batch, seq, nkv * D] (GradK, GradV; a kv head that no local query
/// head uses gets zeros). The gradients recompute the probabilities:
/// dV = P^T dO, dP = dO V^T, dS = P (dP - rowsum(P dP)), dQ = scale dS K,
/// dK = scale dS^T Q, summed over the local query heads of a kv head.
Status runAttention(GemmBackend &gemm, LocalOps &ops,
                    const AttentionProblem &problem,
                    const AttentionTensors &tensors);

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_LIB_EXEC_ATTENTION_H
