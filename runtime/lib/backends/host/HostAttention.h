//===- HostAttention.h - attention's softmax and RoPE on the host -*- C++ -*-===//
//
// Internal to the host backend: LocalOps::attentionSoftmax,
// attentionSoftmaxGrad and rope on host memory, for arguments that passed
// checkAttentionSoftmaxArguments / checkRopeArguments (LocalOps.h).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_BACKENDS_HOST_HOSTATTENTION_H
#define SHARDLIN_RUNTIME_LIB_BACKENDS_HOST_HOSTATTENTION_H

#include "shardlin/runtime/base/DType.h"

#include <cstdint>

namespace shardlin::rt {

void attentionSoftmaxOnHost(void *s, const void *mask, int64_t rows,
                            int64_t cols, double scale, bool causal,
                            DType dtype);
void attentionSoftmaxGradOnHost(const void *p, void *ds, int64_t rows,
                                int64_t cols, double scale, DType dtype);
void ropeOnHost(const void *x, const void *cos, const void *sin,
                DType tableType, void *y, int64_t batch, int64_t seq,
                int64_t heads, int64_t headDim, bool inverse, DType dtype);

} // namespace shardlin::rt

#endif // SHARDLIN_RUNTIME_LIB_BACKENDS_HOST_HOSTATTENTION_H
