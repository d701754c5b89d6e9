/*===- shardlin-c/Runtime.h - The runtime's C ABI -------------------*- C
-*-===*\
|*                                                                            *|
|* The shardlin runtime for C callers and for compiled code: a context per    *|
|* rank (its communicator, its GEMM and its local ops), the collectives of    *|
|* the lowered SPMD IR with their chunk specs, the GEMM, bias_add, convert,   *|
|* sum_rows and the attention ops, over strided views in the layout of       *|
|* MLIR's memref descriptors.                                                 *|
|*                                                                            *|
|* It is what `shardlin-convert-to-llvm` lowers shardlin's ops to (one call   *|
|* per op), and what a C program links to use the runtime directly. Plain C:  *|
|* no C++ types, no exceptions across it; the C++ runtime is the              *|
|* implementation and this layer is thin (runtime/lib/capi/).                 *|
|*                                                                            *|
|* Errors. Every function returns a shardlin_status. A context is sticky:     *|
|* after a call on it fails, every later call on it returns the same status   *|
|* without doing anything, and shardlin_context_status/_message report the    *|
|* first failure. Compiled code can therefore ignore the returned statuses    *|
|* and let whoever called its entry check the context afterwards; results     *|
|* computed after a failure are not valid. A call given a NULL context fails  *|
|* with INVALID_ARGUMENT and records nothing; shardlin_last_error_message has *|
|* the message of every failing call.                                         *|
|*                                                                            *|
|* Failing collectives. A rank whose collective fails before it starts (its   *|
|* views are wrong, or its context failed earlier) still enters it on the     *|
|* threads backend, so that every rank's call fails at once with a message    *|
|* naming that rank. The mpi backend cannot tell the other ranks: they fail   *|
|* when the context's timeout passes, as on every backend when a rank stops   *|
|* calling.                                                                   *|
|*                                                                            *|
|* Threads. A context belongs to one rank and is used by one thread at a     *|
|* time. Several contexts (ranks) may live in one process.                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef SHARDLIN_C_RUNTIME_H
#define SHARDLIN_C_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*===-- Statuses and element types ----------------------------------------===*/

/* In C++ the enums below have int as their fixed underlying type, so that
 * every int a caller passes (compiled code passes i32 constants) is a value
 * of the type, which the functions check; without it a C++ compiler may
 * assume an out-of-range value never occurs. Either way they are ints. */
#ifdef __cplusplus
#define SHARDLIN_ENUM_BASE : int
#else
#define SHARDLIN_ENUM_BASE
#endif

/* The codes of the C++ runtime's Status (shardlin/runtime/base/Status.h). */
typedef enum shardlin_status SHARDLIN_ENUM_BASE {
  SHARDLIN_OK = 0,
  SHARDLIN_INVALID_ARGUMENT = 1,
  SHARDLIN_DEADLINE_EXCEEDED = 2,
  SHARDLIN_ABORTED = 3,
  SHARDLIN_IO_ERROR = 4,
  SHARDLIN_UNAVAILABLE = 5,
  SHARDLIN_INTERNAL = 6,
  SHARDLIN_NOT_FOUND = 7,
  SHARDLIN_RESOURCE_EXHAUSTED = 8
} shardlin_status;

/* "ok", "invalid argument", ... (a static string). */
const char *shardlin_status_name(shardlin_status status);

/* The message of the last call on this thread that returned an error ("" if
 * none): the only message of a call without a context (creating one,
 * shardlin_view_init, shardlin_chunk_range, an op given a NULL context).
 * Valid until the next failing call on this thread. */
const char *shardlin_last_error_message(void);

/* Element types; the values are part of the ABI (compiled code passes them
 * as i32 constants). */
typedef enum shardlin_dtype SHARDLIN_ENUM_BASE {
  SHARDLIN_F16 = 0,
  SHARDLIN_BF16 = 1,
  SHARDLIN_F32 = 2,
  SHARDLIN_F64 = 3
} shardlin_dtype;

#undef SHARDLIN_ENUM_BASE

/*===-- Strided views ------------------------------------------------------===*/

/* A strided view: MLIR's unranked memref descriptor, the C interface of
 * `memref<*xT>` (what `llvm.emit_c_interface` passes for an unranked memref
 * and what mlir/ExecutionEngine/CRunnerUtils.h calls UnrankedMemRefType).
 * `descriptor` points at the ranked descriptor
 *   { void *allocated; void *aligned; int64_t offset;
 *     int64_t sizes[rank]; int64_t strides[rank]; }
 * Element (i0, .., in) is at aligned + offset + sum(ik * strides[k]), in
 * elements. A C caller may fill one with shardlin_view_init. */
typedef struct shardlin_memref {
  int64_t rank;
  void *descriptor;
} shardlin_memref;

/* Room for a ranked descriptor of rank <= SHARDLIN_MAX_VIEW_RANK, for C
 * callers that build views by hand. */
#define SHARDLIN_MAX_VIEW_RANK 8
typedef struct shardlin_view_storage {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes_and_strides[2 * SHARDLIN_MAX_VIEW_RANK];
} shardlin_view_storage;

/* Fills `storage` and `view` with a row-major (contiguous) view of `data`
 * with the given sizes. INVALID_ARGUMENT if rank is not in
 * [0, SHARDLIN_MAX_VIEW_RANK] or a size is negative. */
shardlin_status shardlin_view_init(shardlin_memref *view,
                                   shardlin_view_storage *storage, void *data,
                                   int64_t rank, const int64_t *sizes);

/*===-- Contexts: one per rank -------------------------------------------===*/

typedef struct shardlin_context shardlin_context;

/* A context's options, a struct that grows without breaking compiled
 * callers, as NCCL's ncclConfig_t does: the caller's struct states its own
 * size, a magic number and the version of this header it was compiled
 * with, and the runtime reads only the fields that lie within that size
 * (the others take their defaults), so a program built against an older,
 * smaller struct keeps working with a newer runtime. Start from
 * SHARDLIN_OPTIONS_INIT or shardlin_default_options() and set what you
 * need:
 *
 *   shardlin_options options = SHARDLIN_OPTIONS_INIT;
 *   options.timeout_seconds = 60;
 *
 * Where a function takes options, NULL means the defaults. A struct whose
 * magic is not SHARDLIN_OPTIONS_MAGIC (one that was not initialized),
 * whose version is 0 or newer than the runtime's, or whose size does not
 * cover the three header fields or exceeds the runtime's struct, is
 * INVALID_ARGUMENT; so are a NaN timeout and negative BLAS threads.
 *
 * Growing it (docs/runtime.md): append fields at the end only (never
 * reorder, resize or remove one), give each its default in
 * SHARDLIN_OPTIONS_INIT (the runtime's defaults too), read it in the
 * runtime (runtime/lib/capi/Contexts.cpp), and add one to
 * SHARDLIN_OPTIONS_VERSION. */
#define SHARDLIN_OPTIONS_MAGIC 0x53484c4fu /* "SHLO" */
#define SHARDLIN_OPTIONS_VERSION 1u

typedef struct shardlin_options {
  /* sizeof(shardlin_options) where the caller was compiled. */
  size_t size;
  /* SHARDLIN_OPTIONS_MAGIC. */
  uint32_t magic;
  /* SHARDLIN_OPTIONS_VERSION where the caller was compiled. */
  uint32_t version;

  /* Version 1. */
  /* A collective that has not completed after this many seconds fails on
   * every rank instead of hanging (the C++ CommOptions::timeoutSeconds);
   * <= 0 means the default, 300. */
  double timeout_seconds;
  /* OpenBLAS threads (a process-wide setting); 0: cores / ranks per host. */
  int blas_threads;
} shardlin_options;

/* The defaults, for this header's struct: timeout 300 s, BLAS threads 0. */
#define SHARDLIN_OPTIONS_INIT                                                  \
  {sizeof(shardlin_options), SHARDLIN_OPTIONS_MAGIC,                           \
   SHARDLIN_OPTIONS_VERSION, 300.0, 0}

/* SHARDLIN_OPTIONS_INIT as a value. Inline, not a function of the runtime:
 * a struct returned by value from a newer runtime would be larger than an
 * older caller's and overrun it. */
static inline shardlin_options shardlin_default_options(void) {
  shardlin_options options = SHARDLIN_OPTIONS_INIT;
  return options;
}

/* Sets the option that shardlin-run's and shardlin-exec's flag `name`
 * (without dashes: "timeout", "blas-threads") sets, from its text `value`
 * as the flag takes it ("60", "4"): configuration read from a command line
 * or a file goes into a context through the tools' own table of run flags
 * (shardlin/runtime/tooling/Flags.h), with their checks and their messages.
 * `options` must be initialized (SHARDLIN_OPTIONS_INIT) and may be an
 * older, smaller struct: the runtime writes only the fields within its
 * size, and an option whose field lies beyond it is INVALID_ARGUMENT.
 * A run flag a context has no use for ("world-size", "backend", "device",
 * "arg", "out", "overlap-chunks", "verbose", "check-replicated") is
 * INVALID_ARGUMENT with the reason (where a context takes that setting
 * instead, if it does); a
 * name that is no run flag is NOT_FOUND, the message listing the options
 * a context takes; a value the flag refuses is INVALID_ARGUMENT and
 * leaves `options` as it was. */
shardlin_status shardlin_options_set(shardlin_options *options,
                                     const char *name, const char *value);

/* A backend by its registry name, the launcher's choice, as shardlin-run's
 * --backend, with its rules: "threads" fills contexts[0..world_size-1], one
 * per rank (rank r in contexts[r]) sharing one in-process group, each then
 * driven by its own thread, and is refused in a process that mpirun started
 * with others (each would run every rank); "mpi" fills contexts[0], this
 * process's rank, and world_size is 0 or the MPI job's size. An unknown
 * name is INVALID_ARGUMENT; the GPU backends are not available through the
 * C ABI (UNAVAILABLE), nor is a backend this runtime was built without. On
 * failure no context is created and contexts[0] is NULL. */
shardlin_status shardlin_context_create(const char *backend, int world_size,
                                        const shardlin_options *options,
                                        shardlin_context **contexts);

/* shardlin_context_create("threads", world_size, options, contexts). */
shardlin_status shardlin_threads_group_create(int world_size,
                                              const shardlin_options *options,
                                              shardlin_context **contexts);

/* shardlin_context_create("mpi", 0, options, context): this process as one
 * rank of an MPI job (MPI is initialized if the caller has not, and
 * finalized at exit by the runtime). UNAVAILABLE if the runtime was built
 * without MPI. MPI is initialized with MPI_THREAD_FUNNELED: call the
 * context's collectives from the thread that initialized MPI. Creating one
 * is collective (a duplicate of MPI_COMM_WORLD). */
shardlin_status shardlin_mpi_context_create(const shardlin_options *options,
                                            shardlin_context **context);

/* Splits the context's ranks into groups, as MPI_Comm_split does: every
 * rank of the context calls it (a collective of the context); the ranks that
 * pass the same color (>= 0) form one new context each, ranked by key, then
 * by their rank here. For a data-parallel x tensor-parallel grid
 * (docs/training.md, "Grids"), world rank g of DP * TP splits twice: color
 * g / TP gives its replica's TP group, on which compiled code runs
 * (shardlin_set_thread_context), and color g % TP the ranks that hold its
 * chunks in every replica, whose shardlin_all_reduce sums the parameters'
 * gradients. The new context has this one's backend and timeout and a
 * device of its own; it may outlive this one (destroy both). A failure is
 * recorded on this context (the sticky rule), and *out is then NULL; a
 * context that failed earlier takes no part (the others fail after the
 * timeout). */
shardlin_status shardlin_context_split(shardlin_context *context, int color,
                                       int key, shardlin_context **out);

/* Frees a context (NULL is allowed). The contexts of one threads group may be
 * destroyed in any order once no thread uses them. */
void shardlin_context_destroy(shardlin_context *context);

/* -1 for a NULL context. */
int shardlin_context_rank(const shardlin_context *context);
int shardlin_context_world_size(const shardlin_context *context);

/* The first failure on this context (SHARDLIN_OK if none) and its message
 * ("" if none). The message stays valid until the context is destroyed. */
shardlin_status shardlin_context_status(const shardlin_context *context);
const char *shardlin_context_message(const shardlin_context *context);

/* Payload bytes this rank sent to other ranks, and collective calls, since
 * the context was created (the C++ CommStats). */
uint64_t shardlin_context_bytes_sent(const shardlin_context *context);
uint64_t shardlin_context_collective_calls(const shardlin_context *context);

/* The context of the calling thread, for compiled code: a launcher (shardlin-run
 * --jit, an AOT main) sets it on each rank's thread before calling the entry,
 * and the code that shardlin-convert-to-llvm emits reads it once per call of
 * the entry. NULL if none was set. */
void shardlin_set_thread_context(shardlin_context *context);
shardlin_context *shardlin_thread_context(void);

/*===-- Chunks (PyTorch's ChunkShardingSpec) ------------------------------===*/

/* A chunk spec is passed as two or three arguments: the dim, `placements`,
 * where placements[i] is the rank that holds chunk i, a permutation of
 * 0..world_size-1 (world_size entries, the context's world size), and in
 * the functions named *_bounds its `bounds`: NULL for PyTorch's ceil rule
 * (split = ceil(n / W), chunk i = [i * split, min(n, (i + 1) * split))), or
 * world_size + 1 non-decreasing boundaries from 0 to the dim's size n, chunk
 * i being [bounds[i], bounds[i + 1]) (upstream shard's sharded_dims_offsets;
 * chunks may be empty). A function without _bounds is its _bounds form with
 * NULL bounds: callers compiled before bounds existed keep working. No
 * struct is passed by value anywhere in this ABI, so that compiled code
 * calls it with plain integers and pointers. */

/* The [offset, offset + size) range that `rank` holds of a dim of size n
 * under `placements` (world_size entries) and the ceil rule. No context: it
 * is pure. */
shardlin_status shardlin_chunk_range(int64_t n, int64_t world_size,
                                     const int64_t *placements, int64_t rank,
                                     int64_t *offset, int64_t *size);
/* The same under `bounds` (NULL: the ceil rule); INVALID_ARGUMENT if they do
 * not split a dim of n. */
shardlin_status shardlin_chunk_range_bounds(int64_t n, int64_t world_size,
                                            const int64_t *placements,
                                            const int64_t *bounds,
                                            int64_t rank, int64_t *offset,
                                            int64_t *size);

/*===-- Parameters kept outside the module --------------------------------===*/
/* A module's constants moved out by --shardlin-externalize-parameters are
 * entry arguments marked `shardlin.parameter = "NAME"`, their values the
 * tensors of that name in a safetensors file (docs/interop.md,
 * "Externalized parameters"). shardlin_parameter_read reads the range
 * [offset, offset + size) of dim `dim` of tensor `name` of the safetensors
 * file `path` (every other dim whole: a rank's chunk of a split parameter,
 * its range from shardlin_chunk_range_bounds), or with dim = -1 the whole
 * tensor (offset and size ignored), into `out`, a view of `dtype` with the
 * chunk's sizes (it may be strided). Only the chunk's bytes are read (with
 * pread), and the file's header is checked as shardlin-run checks a
 * --arg=FILE.safetensors:NAME. NOT_FOUND for a missing file or tensor,
 * INVALID_ARGUMENT for a dtype, dim, range or view that does not match,
 * IO_ERROR for a failed read. No context: it only reads a file. */
shardlin_status shardlin_parameter_read(const char *path, const char *name,
                                        shardlin_dtype dtype, int64_t dim,
                                        int64_t offset, int64_t size,
                                        const shardlin_memref *out);

/*===-- The ops of the lowered IR -----------------------------------------===*/
/* Each is the op of the same name in the shardlin dialect
 * (docs/generated/ShardlinDialect.md), on this rank, with the views' sizes
 * already resolved for the rank. Every op is collective where the dialect's
 * op is: each rank of the context's group must make the same sequence of
 * calls. Views may be strided (strides >= 0; the stride of a dim of size 1
 * is not used); the runtime packs what a collective or BLAS needs
 * contiguous. An output view must not overlap an input view and must have
 * one address per element. Each view is checked against the op's rules
 * (ranks, sizes against the chunk rule with the context's rank and world
 * size, dtype values, null pointers, overlap): INVALID_ARGUMENT, with a
 * message naming the argument, and nothing written. */

/* out = the ranks' `in` blocks concatenated along `along_dim` in chunk order:
 * rank along_placements[i]'s block at chunk i's offset. in's size along the dim is
 * the rank's chunk of out's. */
shardlin_status shardlin_all_gather(shardlin_context *context,
                                    shardlin_dtype dtype,
                                    const shardlin_memref *in,
                                    const shardlin_memref *out,
                                    int64_t along_dim,
                                    const int64_t *along_placements);

/* `in` is split along `split_dim` into the ranks' chunks (chunk i goes to
 * rank split_placements[i]); what arrives from each rank is concatenated
 * along `concat_dim` at the offset of that rank's chunk under
 * concat_placements. */
shardlin_status shardlin_all_to_all(shardlin_context *context,
                                    shardlin_dtype dtype,
                                    const shardlin_memref *in,
                                    const shardlin_memref *out,
                                    int64_t split_dim,
                                    const int64_t *split_placements,
                                    int64_t concat_dim,
                                    const int64_t *concat_placements);

/* out = this rank's chunk, along `along_dim`, of the sum over ranks of `in`
 * (f16/bf16 summed in f32 and rounded once). `dtype` is in's and out's (f32
 * for a K split's f32 partial sums of f16/bf16). */
shardlin_status shardlin_reduce_scatter(shardlin_context *context,
                                        shardlin_dtype dtype,
                                        const shardlin_memref *in,
                                        const shardlin_memref *out,
                                        int64_t along_dim,
                                        const int64_t *along_placements);

/* The three collectives above with each chunk spec's bounds (NULL: the ceil
 * rule): the chunks of the dim a spec splits (all_gather's out,
 * reduce_scatter's in, all_to_all's in along split_dim and out along
 * concat_dim) are those of its bounds, which must end at that dim's size. */
shardlin_status shardlin_all_gather_bounds(shardlin_context *context,
                                           shardlin_dtype dtype,
                                           const shardlin_memref *in,
                                           const shardlin_memref *out,
                                           int64_t along_dim,
                                           const int64_t *along_placements,
                                           const int64_t *along_bounds);
shardlin_status shardlin_all_to_all_bounds(
    shardlin_context *context, shardlin_dtype dtype, const shardlin_memref *in,
    const shardlin_memref *out, int64_t split_dim,
    const int64_t *split_placements, const int64_t *split_bounds,
    int64_t concat_dim, const int64_t *concat_placements,
    const int64_t *concat_bounds);
shardlin_status shardlin_reduce_scatter_bounds(
    shardlin_context *context, shardlin_dtype dtype, const shardlin_memref *in,
    const shardlin_memref *out, int64_t along_dim,
    const int64_t *along_placements, const int64_t *along_bounds);

/* The chunk bounds of a dim whose size is known only at run time and may
 * differ by rank (a dynamic batch, a rank's uneven chunk): every rank passes
 * its own `size` (>= 0, < 2^53) of that dim; each receives in bounds[0 ..
 * world_size] the bounds of the ranks' blocks stacked in chunk order, chunk
 * i being rank placements[i]'s block: bounds[0] = 0 and bounds[i + 1] =
 * bounds[i] + the size of rank placements[i]. A collective (one 8-byte
 * all_gather): the compiled code of a collective that stacks or splits such
 * a dim calls it first and passes `bounds` to the *_bounds call
 * (shardlin.gather_bounds). INVALID_ARGUMENT for a bad size, placements or
 * a null `bounds`, or a total that overflows int64. */
shardlin_status shardlin_gather_bounds(shardlin_context *context, int64_t size,
                                       const int64_t *placements,
                                       int64_t *bounds);

/* out = the elementwise sum over ranks of `in`, on every rank (in and out of
 * one shape, the same on every rank; out may be in: the same view). f16/bf16
 * are summed in f32 and rounded once. shardlin.all_reduce. */
shardlin_status shardlin_all_reduce(shardlin_context *context,
                                    shardlin_dtype dtype,
                                    const shardlin_memref *in,
                                    const shardlin_memref *out);

/* out[m x n] = op(lhs) op(rhs) (+ bias[n] on every row, bias may be NULL):
 * 2-D views, lhs m x k (k x m if transpose_lhs), rhs k x n (n x k if
 * transpose_rhs). `dtype` is lhs's, rhs's and bias's; out_dtype is dtype, or
 * f32 for f16/bf16 operands without a bias (the unrounded f32 accumulation;
 * shardlin.gemm with an f32 result). */
shardlin_status shardlin_gemm(shardlin_context *context, shardlin_dtype dtype,
                              const shardlin_memref *lhs,
                              const shardlin_memref *rhs,
                              const shardlin_memref *bias,
                              shardlin_dtype out_dtype,
                              const shardlin_memref *out, int transpose_lhs,
                              int transpose_rhs);

/* out[i, j] = in[i, j] + bias[j] for 2-D in/out (rows x cols) and a 1-D
 * bias (cols); out may be in (in place: the same view). f16/bf16 added in
 * f32, rounded once. in/out may also have any rank >= 1 of the same shape:
 * the bias runs along the last dim (as shardlin.bias_add). */
shardlin_status shardlin_bias_add(shardlin_context *context,
                                  shardlin_dtype dtype,
                                  const shardlin_memref *in,
                                  const shardlin_memref *bias,
                                  const shardlin_memref *out);

/* out = in converted from `from` to `to` (f32 <-> f16/bf16), same shape. */
shardlin_status shardlin_convert(shardlin_context *context,
                                 const shardlin_memref *in, shardlin_dtype from,
                                 const shardlin_memref *out, shardlin_dtype to);

/* out[j] = the sum over i of in[i, j] (shardlin.sum_rows): a 2-D in (rows x
 * cols) of `dtype` and a 1-D out (cols) of out_dtype, which is dtype or f32
 * for f16/bf16. Each column is summed from +0 in row order, in f32 (f64 for
 * f64), and rounded once to out_dtype; 0 rows give zeros. */
shardlin_status shardlin_sum_rows(shardlin_context *context,
                                  shardlin_dtype dtype,
                                  const shardlin_memref *in,
                                  shardlin_dtype out_dtype,
                                  const shardlin_memref *out);

/*===-- Attention (docs/attention.md)
 * --------------------------------------===*/
/* The rank-local attention ops on the host, the kernels the plan executor
 * runs for its `attention`, `attention_grad` and `rope` instructions
 * (docs/runtime.md, "Attention and RoPE"): the per-head products are the
 * context's GEMM, the softmax in f32 (f64 for f64), f16/bf16 widened first
 * and the result rounded once. Not collective. */

/* out = shardlin.attention on this rank's heads. q is [B, S, nq * head_dim]
 * (or [S, nq * head_dim]), k and v [B, S, nkv * head_dim] with q's leading
 * dims, out q's shape, `mask` NULL or an additive [S, S]; all of `dtype`.
 * Query head h reads kv head h / group. `q_heads` and `kv_heads` are the
 * op's head tables, world_size pairs [begin, end) of global head indices
 * (the context's rank reads its pair; nq and nkv are its sizes), or both
 * NULL for the op's global form: every head of the views, [0, nq) and
 * [0, nkv). Every query head's kv head must be among the rank's; `scale`
 * finite (scores = scale * q.k + mask), `causal` masks keys after the
 * query. head_dim and group in (0, 2^24]. */
shardlin_status
shardlin_attention(shardlin_context *context, shardlin_dtype dtype,
                   const shardlin_memref *q, const shardlin_memref *k,
                   const shardlin_memref *v, const shardlin_memref *mask,
                   const shardlin_memref *out, int64_t head_dim, int64_t group,
                   const int64_t *q_heads, const int64_t *kv_heads,
                   double scale, int causal);

/* out = one gradient of shardlin_attention's result, given its gradient
 * `dout` (q's shape): wrt 0 dq (q's shape), 1 dk, 2 dv (k's shape, the
 * sums over this rank's query heads only: a kv head that no local query
 * head reads gets zeros). The probabilities are recomputed. The other
 * arguments are shardlin_attention's. shardlin.attention_grad. */
shardlin_status shardlin_attention_grad(
    shardlin_context *context, shardlin_dtype dtype, const shardlin_memref *q,
    const shardlin_memref *k, const shardlin_memref *v,
    const shardlin_memref *dout, const shardlin_memref *mask,
    const shardlin_memref *out, int wrt, int64_t head_dim, int64_t group,
    const int64_t *q_heads, const int64_t *kv_heads, double scale, int causal);

/* out = shardlin.rope of x: x and out [B, S, heads * head_dim] (or
 * [S, heads * head_dim]) of `dtype`, cos and sin [S, head_dim / 2] of
 * table_dtype (f32 or dtype); head_dim even. Within each head the pair
 * (i, i + head_dim / 2) at position p rotates by the angle of cos[p, i],
 * sin[p, i] (by its opposite when `inverse`). out may be x (in place: the
 * same view). */
shardlin_status
shardlin_rope(shardlin_context *context, shardlin_dtype dtype,
              const shardlin_memref *x, shardlin_dtype table_dtype,
              const shardlin_memref *cos, const shardlin_memref *sin,
              const shardlin_memref *out, int64_t head_dim, int inverse);

#ifdef __cplusplus
}
#endif

#endif /* SHARDLIN_C_RUNTIME_H */
