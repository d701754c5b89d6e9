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
 * Exit status 0 if every rank's max |y - ref| is within 1e-5 |y|max (f32,
 * sums of at most K products of values in [-1, 1]).
 */
#define _POSIX_C_SOURCE 200809L

#include "shardlin-c/Runtime.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 3, K = 7, N = 10, MAX_W = 64 };

/* Deterministic inputs in [-1, 1]: x of rank r, A, b. */
static float input(int tensor, int r, int i, int j) {
  unsigned h = (unsigned)(tensor * 7919 + r * 104729 + i * 131 + j * 17);
  h ^= h >> 13;
  h *= 0x5bd1e995u;
  h ^= h >> 15;
  return (float)((double)(h % 2001u) / 1000.0 - 1.0);
}

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

/* Compares y with the dense float64 reference x A^T + b (strategy s). */
static void check(rank_job *job, int s, const float *x, const float *bias,
                  const float *y) {
  int i, p;
  job->max_error[s] = 0;
  job->max_abs[s] = 0;
  for (i = 0; i < B * N; ++i) {
    double ref = bias[i % N], err;
    for (p = 0; p < K; ++p)
      ref += (double)x[(i / N) * K + p] * input(1, 0, i % N, p);
    err = fabs(y[i] - ref);
    if (!(err <= job->max_error[s])) /* a NaN (an unwritten y) counts */
      job->max_error[s] = isnan(err) ? INFINITY : err;
    if (fabs(ref) > job->max_abs[s])
      job->max_abs[s] = fabs(ref);
  }
}

/* y for this rank by both strategies; max error against the reference. */
static void run_rank(rank_job *job) {
  shardlin_context *ctx = job->ctx;
  const int w = shardlin_context_world_size(ctx);
  const int r = shardlin_context_rank(ctx);
  int64_t weight[MAX_W], rows[MAX_W], koff, ksize, noff, nsize;
  float x[B * K], bias[N], y[B * N];
  float *shard, *stacked, *partial;
  view vx, vb, vy, vshard, vstacked, vpartial;
  int i, j, s;

  /* Chunk specs: the weight's reversed, the stacked rows' in rank order. */
  for (i = 0; i < w; ++i) {
    weight[i] = w - 1 - i;
    rows[i] = i;
  }
  for (i = 0; i < B; ++i)
    for (j = 0; j < K; ++j)
      x[i * K + j] = input(0, r, i, j);
  for (j = 0; j < N; ++j)
    bias[j] = input(2, 0, 0, j);
  make_view(&vx, x, B, K);
  make_view(&vb, bias, N, -1);
  make_view(&vy, y, B, N);
  job->max_error[0] = job->max_error[1] = INFINITY; /* until checked */

  /* Row-wise: this rank holds A[:, K chunk]. */
  shardlin_chunk_range(K, w, weight, r, &koff, &ksize);
  shard = malloc(sizeof(float) * N * (ksize ? ksize : 1));
  stacked = malloc(sizeof(float) * w * B * (ksize ? ksize : 1));
  partial = malloc(sizeof(float) * w * B * N);
  for (i = 0; i < N; ++i)
    for (j = 0; j < ksize; ++j)
      shard[i * ksize + j] = input(1, 0, i, (int)koff + j);
  make_view(&vshard, shard, N, ksize);
  make_view(&vstacked, stacked, (int64_t)w * B, ksize);
  make_view(&vpartial, partial, (int64_t)w * B, N);
  memset(y, 0xFF, sizeof y); /* NaN: an element left unwritten shows */
  if (ok(job,
         shardlin_all_to_all(ctx, SHARDLIN_F32, &vx.ref, &vstacked.ref, 1,
                             weight, 0, rows),
         "all_to_all") &&
      ok(job,
         shardlin_gemm(ctx, SHARDLIN_F32, &vstacked.ref, &vshard.ref, NULL,
                       SHARDLIN_F32, &vpartial.ref, 0, 1),
         "gemm") &&
      ok(job,
         shardlin_reduce_scatter(ctx, SHARDLIN_F32, &vpartial.ref, &vy.ref, 0,
                                 rows),
         "reduce_scatter") &&
      ok(job, shardlin_bias_add(ctx, SHARDLIN_F32, &vy.ref, &vb.ref, &vy.ref),
         "bias_add"))
    check(job, 0, x, bias, y);
  free(shard);
  free(stacked);
  free(partial);

  /* Col-wise: this rank holds A[N chunk, :]. */
  shardlin_chunk_range(N, w, weight, r, &noff, &nsize);
  shard = malloc(sizeof(float) * (nsize ? nsize : 1) * K);
  stacked = malloc(sizeof(float) * w * B * K);
  partial = malloc(sizeof(float) * w * B * (nsize ? nsize : 1));
  for (i = 0; i < nsize; ++i)
    for (j = 0; j < K; ++j)
      shard[i * K + j] = input(1, 0, (int)noff + i, j);
  make_view(&vshard, shard, nsize, K);
  make_view(&vstacked, stacked, (int64_t)w * B, K);
  make_view(&vpartial, partial, (int64_t)w * B, nsize);
  memset(y, 0xFF, sizeof y); /* NaN: an element left unwritten shows */
  if (ok(job,
         shardlin_all_gather(ctx, SHARDLIN_F32, &vx.ref, &vstacked.ref, 0,
                             rows),
         "all_gather") &&
      ok(job,
         shardlin_gemm(ctx, SHARDLIN_F32, &vstacked.ref, &vshard.ref, NULL,
                       SHARDLIN_F32, &vpartial.ref, 0, 1),
         "gemm") &&
      ok(job,
         shardlin_all_to_all(ctx, SHARDLIN_F32, &vpartial.ref, &vy.ref, 0, rows,
                             1, weight),
         "all_to_all") &&
      ok(job, shardlin_bias_add(ctx, SHARDLIN_F32, &vy.ref, &vb.ref, &vy.ref),
         "bias_add"))
    check(job, 1, x, bias, y);
  free(shard);
  free(stacked);
  free(partial);

  for (s = 0; s < 2; ++s)
    if (!(job->max_error[s] <= 1e-5 * job->max_abs[s]))
      job->failed = 1;
  printf("rank %d of %d: row-wise max |y - ref| = %.3g, col-wise %.3g "
         "(|y| up to %.3g): %s\n",
         r, w, job->max_error[0], job->max_error[1], job->max_abs[0],
         job->failed ? "FAILED" : "ok");
  fflush(stdout);
}

static void *rank_thread(void *arg) {
  run_rank((rank_job *)arg);
  return NULL;
}

int main(int argc, char **argv) {
  shardlin_options options = SHARDLIN_OPTIONS_INIT;
  shardlin_context *contexts[MAX_W];
  rank_job jobs[MAX_W];
  pthread_t threads[MAX_W];
  const char *backend = argc > 1 ? argv[1] : "threads";
  int w = argc > 2 ? atoi(argv[2]) : 4, r, failed = 0;
  shardlin_status st;

  options.timeout_seconds = 60;
  if (strcmp(backend, "mpi") == 0)
    w = 0; /* the job's size */
  if (w < 0 || w > MAX_W) {
    fprintf(stderr, "usage: %s threads [W <= %d] | mpi\n", argv[0], MAX_W);
    return 2;
  }
  st = shardlin_context_create(backend, w, &options, contexts);
  if (st != SHARDLIN_OK) {
    fprintf(stderr, "%s: %s: %s\n", argv[0], shardlin_status_name(st),
            shardlin_last_error_message());
    return 1;
  }
  if (strcmp(backend, "mpi") == 0) {
    /* One context: this process's rank. */
    memset(&jobs[0], 0, sizeof jobs[0]);
    jobs[0].ctx = contexts[0];
    run_rank(&jobs[0]);
    shardlin_context_destroy(contexts[0]);
    return jobs[0].failed;
  }
  for (r = 0; r < w; ++r) {
    memset(&jobs[r], 0, sizeof jobs[r]);
    jobs[r].ctx = contexts[r];
    pthread_create(&threads[r], NULL, rank_thread, &jobs[r]);
  }
  for (r = 0; r < w; ++r) {
    pthread_join(threads[r], NULL);
    failed |= jobs[r].failed;
    shardlin_context_destroy(contexts[r]);
  }
  return failed;
}
