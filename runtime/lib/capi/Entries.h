//===- Entries.h - What the C functions call --------------------*- C++ -*-===//
//
// Internal to the C ABI: the implementations behind the extern "C"
// functions of Api.cpp, by the file that holds them. Each returns a Status
// (Api.cpp turns it into a shardlin_status and the thread's last error) and
// may throw only std::bad_alloc and the like, which Api.cpp catches.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_LIB_CAPI_ENTRIES_H
#define SHARDLIN_RUNTIME_LIB_CAPI_ENTRIES_H

#include "exec/Attention.h"
#include "shardlin-c/Runtime.h"
#include "shardlin/runtime/base/Status.h"

#include <cstdint>

namespace shardlin::rt::capi {

//===-- Contexts.cpp ------------------------------------------------------===//

/// The contexts of the registry's backend `backend` (BackendInfo::connect),
/// for the C function `fn` whose output argument is called `outName`.
Status createContexts(const char *fn, const char *outName, const char *backend,
                      int worldSize, const shardlin_options *options,
                      shardlin_context **contexts);

/// shardlin_options_set's work: the run flag `name` of the tools' table
/// (runFlags, tooling/Flags.h) applied to `options`.
Status setOption(shardlin_options *options, const char *name,
                 const char *value);

/// shardlin_context_split's work: `context`'s communicator split
/// (Communicator::split) into a new context with a host device of its own.
Status splitContext(shardlin_context *context, int color, int key,
                    shardlin_context **out);

/// Frees a context, and forgets it as its thread's.
void destroyContext(shardlin_context *context);

void setThreadContext(shardlin_context *context);
shardlin_context *threadContext();

//===-- Collectives.cpp ---------------------------------------------------===//

/// Each collective sets `joined` right before it calls the communicator
/// (OpCall, Context.h). A chunk spec is its dim, its placements and its
/// bounds (null: the ceil rule).
Status allGather(shardlin_context *ctx, int dtypeValue,
                 const shardlin_memref *inRef, const shardlin_memref *outRef,
                 int64_t dim, const int64_t *placements, const int64_t *bounds,
                 bool &joined);
Status allToAll(shardlin_context *ctx, int dtypeValue,
                const shardlin_memref *inRef, const shardlin_memref *outRef,
                int64_t splitDim, const int64_t *splitPlacements,
                const int64_t *splitBounds, int64_t concatDim,
                const int64_t *concatPlacements, const int64_t *concatBounds,
                bool &joined);
Status reduceScatter(shardlin_context *ctx, int dtypeValue,
                     const shardlin_memref *inRef,
                     const shardlin_memref *outRef, int64_t dim,
                     const int64_t *placements, const int64_t *bounds,
                     bool &joined);
Status gatherBounds(shardlin_context *ctx, int64_t size,
                    const int64_t *placements, int64_t *bounds, bool &joined);
Status allReduce(shardlin_context *ctx, int dtypeValue,
                 const shardlin_memref *inRef, const shardlin_memref *outRef,
                 bool &joined);

Status chunkRange(int64_t n, int64_t worldSize, const int64_t *placements,
                  const int64_t *bounds, int64_t rank, int64_t *offset,
                  int64_t *size);

//===-- Compute.cpp -------------------------------------------------------===//

Status gemm(shardlin_context *ctx, int dtypeValue,
            const shardlin_memref *lhsRef, const shardlin_memref *rhsRef,
            const shardlin_memref *biasRef, int outDtypeValue,
            const shardlin_memref *outRef, bool transLhs, bool transRhs);
Status biasAdd(shardlin_context *ctx, int dtypeValue,
               const shardlin_memref *inRef, const shardlin_memref *biasRef,
               const shardlin_memref *outRef);
Status convert(shardlin_context *ctx, const shardlin_memref *inRef,
               int fromValue, const shardlin_memref *outRef, int toValue);
Status sumRows(shardlin_context *ctx, int dtypeValue,
               const shardlin_memref *inRef, int outDtypeValue,
               const shardlin_memref *outRef);

//===-- Attention.cpp -----------------------------------------------------===//

/// The arguments of shardlin_attention and shardlin_attention_grad (dO
/// null and wrt unused for the forward; qHeads and kvHeads both null for
/// every head of the views).
struct AttentionArgs {
  AttentionPart part = AttentionPart::Forward;
  int dtype = 0;
  const shardlin_memref *q = nullptr, *k = nullptr, *v = nullptr, *dO = nullptr,
                        *mask = nullptr, *out = nullptr;
  int64_t wrt = 0, headDim = 0, group = 0;
  const int64_t *qHeads = nullptr, *kvHeads = nullptr;
  double scale = 1.0;
  bool causal = false;
};

Status attention(shardlin_context *ctx, const AttentionArgs &args);
Status rope(shardlin_context *ctx, int dtypeValue, const shardlin_memref *xRef,
            int tableDtypeValue, const shardlin_memref *cosRef,
            const shardlin_memref *sinRef, const shardlin_memref *outRef,
            int64_t headDim, bool inverse);

//===-- Parameters.cpp ----------------------------------------------------===//

/// shardlin_parameter_read's work: the range [offset, offset + size) of dim
/// `dim` (-1: the whole tensor) of tensor `name` of the safetensors file
/// `path`, into `out`.
Status readParameter(const char *path, const char *name, int dtypeValue,
                     int64_t dim, int64_t offset, int64_t size,
                     const shardlin_memref *out);

//===-- Views.cpp ---------------------------------------------------------===//

Status viewInit(shardlin_memref *view, shardlin_view_storage *storage,
                void *data, int64_t rank, const int64_t *sizes);

} // namespace shardlin::rt::capi

#endif // SHARDLIN_RUNTIME_LIB_CAPI_ENTRIES_H
