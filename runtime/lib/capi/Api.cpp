//===- Api.cpp - The C functions of shardlin-c/Runtime.h ------------------===//
//
// Every extern "C" function of the ABI, each a thin shell: the work is in
// the files Entries.h lists, and the shell turns a Status into a
// shardlin_status (a context's ops through runOp, Context.h, the others
// through guarded, Errors.h), so that no C++ exception crosses.
//
// They live in this one file on purpose: ShardlinRuntimeC is a static
// archive, and its link option --undefined=shardlin_context_create pulls
// this object, and with it every function of the ABI, into each program
// that links it, where --export-dynamic-symbol exports them for code that a
// JIT compiles (runtime/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#include "capi/Context.h"
#include "capi/Entries.h"
#include "capi/Errors.h"
#include "shardlin-c/Runtime.h"

#include <optional>

using namespace shardlin::rt;
using namespace shardlin::rt::capi;

extern "C" {

const char *shardlin_status_name(shardlin_status status) {
  return statusName(status);
}

const char *shardlin_last_error_message(void) { return lastErrorMessage(); }

shardlin_status shardlin_view_init(shardlin_memref *view,
                                   shardlin_view_storage *storage, void *data,
                                   int64_t rank, const int64_t *sizes) {
  return guarded("shardlin_view_init",
                 [&] { return viewInit(view, storage, data, rank, sizes); });
}

//===-- Contexts ----------------------------------------------------------===//

shardlin_status shardlin_options_set(shardlin_options *options,
                                     const char *name, const char *value) {
  return guarded("shardlin_options_set",
                 [&] { return setOption(options, name, value); });
}

shardlin_status shardlin_context_create(const char *backend, int world_size,
                                        const shardlin_options *options,
                                        shardlin_context **contexts) {
  const char *fn = "shardlin_context_create";
  return guarded(fn, [&] {
    return createContexts(fn, "contexts", backend, world_size, options,
                          contexts);
  });
}

shardlin_status shardlin_threads_group_create(int world_size,
                                              const shardlin_options *options,
                                              shardlin_context **contexts) {
  const char *fn = "shardlin_threads_group_create";
  return guarded(fn, [&] {
    return createContexts(fn, "contexts", "threads", world_size, options,
                          contexts);
  });
}

shardlin_status shardlin_mpi_context_create(const shardlin_options *options,
                                            shardlin_context **context) {
  const char *fn = "shardlin_mpi_context_create";
  return guarded(fn, [&] {
    return createContexts(fn, "context", "mpi", 0, options, context);
  });
}

shardlin_status shardlin_context_split(shardlin_context *context, int color,
                                       int key, shardlin_context **out) {
  if (out)
    *out = nullptr;
  return runOp(context, "shardlin_context_split", std::nullopt, -1,
               [&](bool &) -> Status {
                 if (!out)
                   return invalid("out is null");
                 return splitContext(context, color, key, out);
               });
}

void shardlin_context_destroy(shardlin_context *context) {
  destroyContext(context);
}

int shardlin_context_rank(const shardlin_context *context) {
  return context ? context->comm->rank() : -1;
}

int shardlin_context_world_size(const shardlin_context *context) {
  return context ? context->comm->worldSize() : -1;
}

shardlin_status shardlin_context_status(const shardlin_context *context) {
  return context ? context->status : SHARDLIN_INVALID_ARGUMENT;
}

const char *shardlin_context_message(const shardlin_context *context) {
  return context ? context->message.c_str() : "context is null";
}

uint64_t shardlin_context_bytes_sent(const shardlin_context *context) {
  return context ? context->comm->stats().bytesSent : 0;
}

uint64_t shardlin_context_collective_calls(const shardlin_context *context) {
  return context ? context->comm->stats().calls : 0;
}

void shardlin_set_thread_context(shardlin_context *context) {
  setThreadContext(context);
}

shardlin_context *shardlin_thread_context(void) { return threadContext(); }

//===-- Chunks ------------------------------------------------------------===//

shardlin_status shardlin_chunk_range(int64_t n, int64_t world_size,
                                     const int64_t *placements, int64_t rank,
                                     int64_t *offset, int64_t *size) {
  return guarded("shardlin_chunk_range", [&] {
    return chunkRange(n, world_size, placements, nullptr, rank, offset, size);
  });
}

shardlin_status shardlin_chunk_range_bounds(int64_t n, int64_t world_size,
                                            const int64_t *placements,
                                            const int64_t *bounds,
                                            int64_t rank, int64_t *offset,
                                            int64_t *size) {
  return guarded("shardlin_chunk_range_bounds", [&] {
    return chunkRange(n, world_size, placements, bounds, rank, offset, size);
  });
}

//===-- Parameters --------------------------------------------------------===//

shardlin_status shardlin_parameter_read(const char *path, const char *name,
                                        shardlin_dtype dtype, int64_t dim,
                                        int64_t offset, int64_t size,
                                        const shardlin_memref *out) {
  return guarded("shardlin_parameter_read", [&] {
    return readParameter(path, name, dtype, dim, offset, size, out);
  });
}

//===-- Ops ---------------------------------------------------------------===//

shardlin_status
shardlin_all_gather(shardlin_context *context, shardlin_dtype dtype,
                    const shardlin_memref *in, const shardlin_memref *out,
                    int64_t along_dim, const int64_t *along_placements) {
  return shardlin_all_gather_bounds(context, dtype, in, out, along_dim,
                                    along_placements, nullptr);
}

shardlin_status shardlin_all_gather_bounds(shardlin_context *context,
                                           shardlin_dtype dtype,
                                           const shardlin_memref *in,
                                           const shardlin_memref *out,
                                           int64_t along_dim,
                                           const int64_t *along_placements,
                                           const int64_t *along_bounds) {
  return runOp(context, "shardlin_all_gather", CollectiveKind::AllGatherV,
               dtype, [&](bool &joined) {
                 return allGather(context, dtype, in, out, along_dim,
                                  along_placements, along_bounds, joined);
               });
}

shardlin_status
shardlin_all_to_all(shardlin_context *context, shardlin_dtype dtype,
                    const shardlin_memref *in, const shardlin_memref *out,
                    int64_t split_dim, const int64_t *split_placements,
                    int64_t concat_dim, const int64_t *concat_placements) {
  return shardlin_all_to_all_bounds(context, dtype, in, out, split_dim,
                                    split_placements, nullptr, concat_dim,
                                    concat_placements, nullptr);
}

shardlin_status shardlin_all_to_all_bounds(
    shardlin_context *context, shardlin_dtype dtype, const shardlin_memref *in,
    const shardlin_memref *out, int64_t split_dim,
    const int64_t *split_placements, const int64_t *split_bounds,
    int64_t concat_dim, const int64_t *concat_placements,
    const int64_t *concat_bounds) {
  return runOp(context, "shardlin_all_to_all", CollectiveKind::AllToAllV, dtype,
               [&](bool &joined) {
                 return allToAll(context, dtype, in, out, split_dim,
                                 split_placements, split_bounds, concat_dim,
                                 concat_placements, concat_bounds, joined);
               });
}

shardlin_status
shardlin_reduce_scatter(shardlin_context *context, shardlin_dtype dtype,
                        const shardlin_memref *in, const shardlin_memref *out,
                        int64_t along_dim, const int64_t *along_placements) {
  return shardlin_reduce_scatter_bounds(context, dtype, in, out, along_dim,
                                        along_placements, nullptr);
}

shardlin_status shardlin_reduce_scatter_bounds(
    shardlin_context *context, shardlin_dtype dtype, const shardlin_memref *in,
    const shardlin_memref *out, int64_t along_dim,
    const int64_t *along_placements, const int64_t *along_bounds) {
  return runOp(context, "shardlin_reduce_scatter",
               CollectiveKind::ReduceScatterV, dtype, [&](bool &joined) {
                 return reduceScatter(context, dtype, in, out, along_dim,
                                      along_placements, along_bounds, joined);
               });
}

shardlin_status shardlin_gather_bounds(shardlin_context *context,
                                       int64_t size, const int64_t *placements,
                                       int64_t *bounds) {
  // The sizes travel as f64 (exact below 2^53), like the plan executor's
  // exchange of dynamic sizes.
  return runOp(context, "shardlin_gather_bounds", CollectiveKind::AllGatherV,
               SHARDLIN_F64, [&](bool &joined) {
                 return gatherBounds(context, size, placements, bounds,
                                     joined);
               });
}

shardlin_status shardlin_all_reduce(shardlin_context *context,
                                    shardlin_dtype dtype,
                                    const shardlin_memref *in,
                                    const shardlin_memref *out) {
  return runOp(context, "shardlin_all_reduce", CollectiveKind::AllReduce, dtype,
               [&](bool &joined) {
                 return allReduce(context, dtype, in, out, joined);
               });
}

shardlin_status shardlin_gemm(shardlin_context *context, shardlin_dtype dtype,
                              const shardlin_memref *lhs,
                              const shardlin_memref *rhs,
                              const shardlin_memref *bias,
                              shardlin_dtype out_dtype,
                              const shardlin_memref *out, int transpose_lhs,
                              int transpose_rhs) {
  return runOp(context, "shardlin_gemm", std::nullopt, dtype, [&](bool &) {
    return gemm(context, dtype, lhs, rhs, bias, out_dtype, out,
                transpose_lhs != 0, transpose_rhs != 0);
  });
}

shardlin_status shardlin_bias_add(shardlin_context *context,
                                  shardlin_dtype dtype,
                                  const shardlin_memref *in,
                                  const shardlin_memref *bias,
                                  const shardlin_memref *out) {
  return runOp(context, "shardlin_bias_add", std::nullopt, dtype,
               [&](bool &) { return biasAdd(context, dtype, in, bias, out); });
}

shardlin_status shardlin_convert(shardlin_context *context,
                                 const shardlin_memref *in, shardlin_dtype from,
                                 const shardlin_memref *out,
                                 shardlin_dtype to) {
  return runOp(context, "shardlin_convert", std::nullopt, from,
               [&](bool &) { return convert(context, in, from, out, to); });
}

shardlin_status shardlin_sum_rows(shardlin_context *context,
                                  shardlin_dtype dtype,
                                  const shardlin_memref *in,
                                  shardlin_dtype out_dtype,
                                  const shardlin_memref *out) {
  return runOp(context, "shardlin_sum_rows", std::nullopt, dtype, [&](bool &) {
    return sumRows(context, dtype, in, out_dtype, out);
  });
}

shardlin_status
shardlin_attention(shardlin_context *context, shardlin_dtype dtype,
                   const shardlin_memref *q, const shardlin_memref *k,
                   const shardlin_memref *v, const shardlin_memref *mask,
                   const shardlin_memref *out, int64_t head_dim, int64_t group,
                   const int64_t *q_heads, const int64_t *kv_heads,
                   double scale, int causal) {
  AttentionArgs a;
  a.dtype = dtype;
  a.q = q;
  a.k = k;
  a.v = v;
  a.mask = mask;
  a.out = out;
  a.headDim = head_dim;
  a.group = group;
  a.qHeads = q_heads;
  a.kvHeads = kv_heads;
  a.scale = scale;
  a.causal = causal != 0;
  return runOp(context, "shardlin_attention", std::nullopt, dtype,
               [&](bool &) { return attention(context, a); });
}

shardlin_status shardlin_attention_grad(
    shardlin_context *context, shardlin_dtype dtype, const shardlin_memref *q,
    const shardlin_memref *k, const shardlin_memref *v,
    const shardlin_memref *dout, const shardlin_memref *mask,
    const shardlin_memref *out, int wrt, int64_t head_dim, int64_t group,
    const int64_t *q_heads, const int64_t *kv_heads, double scale, int causal) {
  AttentionArgs a;
  a.part = wrt == 0   ? AttentionPart::GradQ
           : wrt == 1 ? AttentionPart::GradK
                      : AttentionPart::GradV;
  a.wrt = wrt;
  a.dtype = dtype;
  a.q = q;
  a.k = k;
  a.v = v;
  a.dO = dout;
  a.mask = mask;
  a.out = out;
  a.headDim = head_dim;
  a.group = group;
  a.qHeads = q_heads;
  a.kvHeads = kv_heads;
  a.scale = scale;
  a.causal = causal != 0;
  return runOp(context, "shardlin_attention_grad", std::nullopt, dtype,
               [&](bool &) { return attention(context, a); });
}

shardlin_status
shardlin_rope(shardlin_context *context, shardlin_dtype dtype,
              const shardlin_memref *x, shardlin_dtype table_dtype,
              const shardlin_memref *cos, const shardlin_memref *sin,
              const shardlin_memref *out, int64_t head_dim, int inverse) {
  return runOp(context, "shardlin_rope", std::nullopt, dtype, [&](bool &) {
    return rope(context, dtype, x, table_dtype, cos, sin, out, head_dim,
                inverse != 0);
  });
}

} // extern "C"
