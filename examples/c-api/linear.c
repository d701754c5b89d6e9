/*===- linear.c - A sharded linear layer through the runtime's C ABI -----===*/
/*
 * y = x A^T + b with the weight A (N x K) split over W ranks, both ways of
 * docs/lowering.md, written directly against shardlin-c/Runtime.h:
 *
 *   row-wise (K split): all_to_all x's K chunks, one GEMM, reduce_scatter
 *                       the partial products, bias_add;
 *   col-wise (N split): all_gather x, one GEMM, all_to_all the column
 *                       blocks back to their ranks, bias_add.
 *
 * Every rank has its own x (B x K) and the whole bias, holds its shard of
 * A, and checks its y against a dense float64 reference it computes itself
 * from the whole A. The chunks are uneven (K = 7, N = 10 on 4 ranks) and
 * the weight's placements are reversed (rank W-1 holds chunk 0).
 *
 *   shardlin-c-linear threads [W]          W ranks as threads (default 4)
 *   mpirun -np W shardlin-c-linear mpi     one rank per process
 *
 * ../common/ranks.h (shared with the AOT example) gives the inputs and
 * runs each rank.
 *
 * Exit status 0 if every rank's max |y - ref| is within 1e-5 |y|max (f32,
 * sums of at most K products of values in [-1, 1]).
 */
#define _POSIX_C_SOURCE 200809L

#include "../common/ranks.h"
#include "shardlin-c/Runtime.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 3, K = 7, N = 10, MAX_W = EXAMPLE_MAX_RANKS };

/* A dense view of `data`. */
typedef struct view {
  shardlin_view_storage storage;
  shardlin_memref ref;
} view;

static view *make_view(view *v, void *data, int64_t rows, int64_t cols) {
  const int64_t sizes[2] = {rows, cols};
  shardlin_view_init(&v->ref, &v->storage, data, cols < 0 ? 1 : 2, sizes);
  return v;
}

typedef struct rank_job {
  shardlin_context *ctx;
  double max_error[2], max_abs[2];
  int failed;
} rank_job;

/* Reports a failed call and marks the rank failed; 1 if it succeeded. */
static int ok(rank_job *job, shardlin_status st, const char *call) {
  if (st == SHARDLIN_OK)
    return 1;
  fprintf(stderr, "rank %d: %s: %s: %s\n", shardlin_context_rank(job->ctx),
          call, shardlin_status_name(st), shardlin_context_message(job->ctx));
  job->failed = 1;
  return 0;
}

/* Compares y with the dense float64 reference x A^T + b (strategy s); the
 * inputs are ranks.h's example_input: tensor 0 is x (per rank), 1 A, 2 b. */
static void check(rank_job *job, int s, const float *x, const float *bias,
                  const float *y) {
  int i, p;
  job->max_error[s] = 0;
  job->max_abs[s] = 0;
  for (i = 0; i < B * N; ++i) {
    double ref = bias[i % N], err;
    for (p = 0; p < K; ++p)
      ref += (double)x[(i / N) * K + p] * example_input(1, 0, i % N, p);
    err = fabs(y[i] - ref);
    if (!(err <= job->max_error[s])) /* a NaN (an unwritten y) counts */
      job->max_error[s] = isnan(err) ? INFINITY : err;
    if (fabs(ref) > job->max_abs[s])
      job->max_abs[s] = fabs(ref);
  }
}

/* One strategy's buffers: this rank's shard of A (shard_rows x shard_cols),
 * the stacked activations (w B x stacked_cols) and the partial products
 * (w B x partial_cols) the GEMM writes. */
typedef struct buffers {
  float *shard, *stacked, *partial;
  view vshard, vstacked, vpartial;
} buffers;

static float *alloc_floats(int64_t n) {
  return malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
}

static void alloc_buffers(buffers *bufs, int w, int64_t shard_rows,
                          int64_t shard_cols, int64_t stacked_cols,
                          int64_t partial_cols) {
  bufs->shard = alloc_floats(shard_rows * shard_cols);
  bufs->stacked = alloc_floats((int64_t)w * B * stacked_cols);
  bufs->partial = alloc_floats((int64_t)w * B * partial_cols);
  make_view(&bufs->vshard, bufs->shard, shard_rows, shard_cols);
  make_view(&bufs->vstacked, bufs->stacked, (int64_t)w * B, stacked_cols);
  make_view(&bufs->vpartial, bufs->partial, (int64_t)w * B, partial_cols);
}

static void free_buffers(buffers *bufs) {
  free(bufs->shard);
  free(bufs->stacked);
  free(bufs->partial);
}

/* What both strategies do between their collectives: the GEMM of the
 * stacked activations with the shard (transposed) into the partial
 * products. */
static int gemm(rank_job *job, buffers *bufs) {
  return ok(job,
            shardlin_gemm(job->ctx, SHARDLIN_F32, &bufs->vstacked.ref,
                          &bufs->vshard.ref, NULL, SHARDLIN_F32,
                          &bufs->vpartial.ref, 0, 1),
            "gemm");
}

/* ... and after them: y += b. */
static int bias_add(rank_job *job, view *vy, view *vb) {
  return ok(job,
            shardlin_bias_add(job->ctx, SHARDLIN_F32, &vy->ref, &vb->ref,
                              &vy->ref),
            "bias_add");
}

/* y for this rank by both strategies; max error against the reference.
 * Returns 0 if both are within the bound. */
static int run_rank(shardlin_context *ctx) {
  rank_job state, *job = &state;
  const int w = shardlin_context_world_size(ctx);
  const int r = shardlin_context_rank(ctx);
  int64_t weight[MAX_W], rows[MAX_W], koff, ksize, noff, nsize;
  float x[B * K], bias[N], y[B * N];
  buffers bufs;
  view vx, vb, vy;
  int i, j, s;

  memset(job, 0, sizeof *job);
  job->ctx = ctx;
  /* Chunk specs: the weight's reversed, the stacked rows' in rank order. */
  for (i = 0; i < w; ++i) {
    weight[i] = w - 1 - i;
    rows[i] = i;
  }
  for (i = 0; i < B; ++i)
    for (j = 0; j < K; ++j)
      x[i * K + j] = example_input(0, r, i, j);
  for (j = 0; j < N; ++j)
    bias[j] = example_input(2, 0, 0, j);
  make_view(&vx, x, B, K);
  make_view(&vb, bias, N, -1);
  make_view(&vy, y, B, N);
  job->max_error[0] = job->max_error[1] = INFINITY; /* until checked */

  /* Row-wise: this rank holds A[:, K chunk]; all_to_all x's K chunks, the
   * GEMM, reduce_scatter the partial products. */
  shardlin_chunk_range(K, w, weight, r, &koff, &ksize);
  alloc_buffers(&bufs, w, N, ksize, ksize, N);
  for (i = 0; i < N; ++i)
    for (j = 0; j < ksize; ++j)
      bufs.shard[i * ksize + j] = example_input(1, 0, i, (int)koff + j);
  memset(y, 0xFF, sizeof y); /* NaN: an element left unwritten shows */
  if (ok(job,
         shardlin_all_to_all(ctx, SHARDLIN_F32, &vx.ref, &bufs.vstacked.ref, 1,
                             weight, 0, rows),
         "all_to_all") &&
      gemm(job, &bufs) &&
      ok(job,
         shardlin_reduce_scatter(ctx, SHARDLIN_F32, &bufs.vpartial.ref,
                                 &vy.ref, 0, rows),
         "reduce_scatter") &&
      bias_add(job, &vy, &vb))
    check(job, 0, x, bias, y);
  free_buffers(&bufs);

  /* Col-wise: this rank holds A[N chunk, :]; all_gather x, the GEMM,
   * all_to_all the column blocks back to their ranks. */
  shardlin_chunk_range(N, w, weight, r, &noff, &nsize);
  alloc_buffers(&bufs, w, nsize, K, K, nsize);
  for (i = 0; i < nsize; ++i)
    for (j = 0; j < K; ++j)
      bufs.shard[i * K + j] = example_input(1, 0, (int)noff + i, j);
  memset(y, 0xFF, sizeof y);
  if (ok(job,
         shardlin_all_gather(ctx, SHARDLIN_F32, &vx.ref, &bufs.vstacked.ref, 0,
                             rows),
         "all_gather") &&
      gemm(job, &bufs) &&
      ok(job,
         shardlin_all_to_all(ctx, SHARDLIN_F32, &bufs.vpartial.ref, &vy.ref, 0,
                             rows, 1, weight),
         "all_to_all") &&
      bias_add(job, &vy, &vb))
    check(job, 1, x, bias, y);
  free_buffers(&bufs);

  for (s = 0; s < 2; ++s)
    if (!(job->max_error[s] <= 1e-5 * job->max_abs[s]))
      job->failed = 1;
  printf("rank %d of %d: row-wise max |y - ref| = %.3g, col-wise %.3g "
         "(|y| up to %.3g): %s\n",
         r, w, job->max_error[0], job->max_error[1], job->max_abs[0],
         job->failed ? "FAILED" : "ok");
  fflush(stdout);
  return job->failed;
}

int main(int argc, char **argv) {
  shardlin_options options = SHARDLIN_OPTIONS_INIT;
  const char *backend = argc > 1 ? argv[1] : "threads";
  const int w = argc > 2 ? atoi(argv[2]) : 4;

  options.timeout_seconds = 60;
  if (strcmp(backend, "mpi") != 0 && (w < 1 || w > MAX_W)) {
    fprintf(stderr, "usage: %s threads [W <= %d] | mpi\n", argv[0], MAX_W);
    return 2;
  }
  /* ranks.h: run_rank on each rank of this process (threads: all W;
   * mpi: the job's size, one rank here). */
  return example_run_ranks(backend, w, 0, &options, run_rank);
}
