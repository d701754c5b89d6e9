/*===- DynamicAotTest.c - Dynamic batch dims compiled ahead of time -------===*/
/*
 * dynamic_layers.mlir compiled to an object file at build time
 * (shardlin-opt --lower-sharded-linear=strategy=S --shardlin-lower-to-llvm,
 * mlir-translate, llc), once per strategy S (gather-weight, activations:
 * one executable each), linked with the runtime's C ABI, and called on
 * W = 4 ranks (`threads`, or `mpi` under mpirun -np 4):
 *
 *   @two    x: ?x?x19 (two dynamic dims), weight split along K, a bias;
 *   @three  x: ?x?x?x19 (three dynamic dims), weight split along N;
 *   @mlp    x: ?x?x19, a col-wise linear with a bias, ReLU, a row-wise
 *           linear (fused when the strategy moves activations).
 *
 * Each rank has batch sizes of its own (one rank has no rows in each
 * entry), so moving activations exchanges the ranks' row counts
 * (shardlin_gather_bounds) before it stacks them. Every element of every
 * rank's result is compared with the dense float64 reference computed from
 * the whole weights: within (K + 2) 2^-24 (sum_p |x a| + |b|) for a linear
 * (f32 products and sums, K terms), and (K + F + 4) 2^-24 sum_f |w2| (|h| +
 * sum_p |x w1| + |b1|) for the MLP; the result's sizes with the input's.
 * Issue 27, finding 1: the module could not be compiled before
 * (expand-strided-metadata crashed), and then not with moving activations.
 */
#define _POSIX_C_SOURCE 200809L

#include "shardlin-c/Runtime.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { K = 19, N = 11, F = 18, W = 4 };
static const int64_t kTwoPlacements[W] = {2, 3, 0, 1};   /* along K */
static const int64_t kThreePlacements[W] = {1, 3, 0, 2}; /* along N */
static const int64_t kMlpPlacements[W] = {1, 3, 0, 2};   /* along F */

/* MLIR's memref descriptors, as llvm.emit_c_interface passes them. */
typedef struct memref1 {
  float *allocated, *aligned;
  int64_t offset, sizes[1], strides[1];
} memref1;
typedef struct memref2 {
  float *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
} memref2;
typedef struct memref3 {
  float *allocated, *aligned;
  int64_t offset, sizes[3], strides[3];
} memref3;
typedef struct memref4 {
  float *allocated, *aligned;
  int64_t offset, sizes[4], strides[4];
} memref4;

void _mlir_ciface_two(memref3 *result, memref3 *x, memref2 *w, memref1 *b);
void _mlir_ciface_three(memref4 *result, memref4 *x, memref2 *w);
void _mlir_ciface_mlp(memref3 *result, memref3 *x, memref2 *w1, memref1 *b1,
                      memref2 *w2);

/* Deterministic values in [-1, 1], never all zero. */
static float value(int tensor, int r, int i, int j) {
  unsigned h = (unsigned)(tensor * 7919 + r * 104729 + i * 131 + j * 17 + 1);
  h ^= h >> 13;
  h *= 0x5bd1e995u;
  h ^= h >> 15;
  return (float)((double)(h % 2001u) / 1000.0 - 1.0);
}

/* Rank r's batch dims for each entry. */
static void two_batch(int r, int64_t b[2]) {
  b[0] = r == 2 ? 0 : 1 + r % 3;
  b[1] = 2 + r;
}
static void three_batch(int r, int64_t b[3]) {
  b[0] = 2;
  b[1] = r; /* rank 0: no rows */
  b[2] = 3 - r % 2;
}

static void mlp_batch(int r, int64_t b[2]) {
  b[0] = 1 + r % 2;
  b[1] = r == 1 ? 0 : r + 1; /* rank 1: no rows */
}

/* Fills a memref2 / memref3 descriptor of row-major data. */
static void view2(memref2 *m, float *data, int64_t d0, int64_t d1) {
  m->allocated = m->aligned = data;
  m->offset = 0;
  m->sizes[0] = d0;
  m->sizes[1] = d1;
  m->strides[0] = d1;
  m->strides[1] = 1;
}
static void view3(memref3 *m, float *data, int64_t d0, int64_t d1,
                  int64_t d2) {
  m->allocated = m->aligned = data;
  m->offset = 0;
  m->sizes[0] = d0;
  m->sizes[1] = d1;
  m->sizes[2] = d2;
  m->strides[0] = d1 * d2;
  m->strides[1] = d2;
  m->strides[2] = 1;
}

/* Compares rows x rows of y (strided: y[i * ys + j * yc]) with x A^T + b;
 * returns the number of elements outside the bound. */
static long check(const char *what, int rank, int64_t rows, const float *x,
                  const float *y, int64_t ys, int64_t yc, int bias,
                  double *max_ratio) {
  long bad = 0;
  int64_t i;
  int j, p;
  for (i = 0; i < rows; ++i)
    for (j = 0; j < N; ++j) {
      double ref = bias ? value(2, 0, j, 0) : 0;
      double mag = fabs(ref);
      for (p = 0; p < K; ++p) {
        const double t = (double)x[i * K + p] * value(1, 0, j, p);
        ref += t;
        mag += fabs(t);
      }
      const double bound = (K + 2) * ldexp(1.0, -24) * mag;
      const double err = fabs((double)y[i * ys + j * yc] - ref);
      if (!(err <= bound)) {
        if (bad < 5)
          fprintf(stderr, "%s rank %d: y[%lld][%d] = %.9g, reference %.9g\n",
                  what, rank, (long long)i, j, y[i * ys + j * yc], ref);
        ++bad;
      }
      if (bound > 0 && err / bound > *max_ratio)
        *max_ratio = err / bound;
    }
  return bad;
}

typedef struct rank_job {
  shardlin_context *ctx;
  int failed;
} rank_job;

static int fail_rank(int rank, const char *what, shardlin_context *ctx) {
  fprintf(stderr, "%s rank %d: %s\n", what, rank,
          ctx ? shardlin_context_message(ctx) : shardlin_last_error_message());
  return 1;
}

/* @two: this rank's columns [offset, offset + size) of A (N x size). */
static int run_two(shardlin_context *ctx, int rank) {
  int64_t batch[2], offset = 0, size = 0, rows, i;
  float *x, *chunk, bias[N];
  memref3 xm, result;
  memref2 wm;
  memref1 bm;
  int j, p;
  long bad;
  double ratio = 0;
  two_batch(rank, batch);
  rows = batch[0] * batch[1];
  if (shardlin_chunk_range(K, W, kTwoPlacements, rank, &offset, &size) !=
      SHARDLIN_OK)
    return fail_rank(rank, "two", NULL);
  x = malloc(sizeof(float) * (size_t)(rows * K + 1));
  chunk = malloc(sizeof(float) * (size_t)(N * size + 1));
  if (!x || !chunk)
    return 1;
  for (i = 0; i < rows; ++i)
    for (p = 0; p < K; ++p)
      x[i * K + p] = value(0, rank, (int)i, p);
  for (j = 0; j < N; ++j) {
    bias[j] = value(2, 0, j, 0);
    for (p = 0; p < size; ++p)
      chunk[j * size + p] = value(1, 0, j, (int)offset + p);
  }
  xm.allocated = xm.aligned = x;
  xm.offset = 0;
  xm.sizes[0] = batch[0];
  xm.sizes[1] = batch[1];
  xm.sizes[2] = K;
  xm.strides[0] = batch[1] * K;
  xm.strides[1] = K;
  xm.strides[2] = 1;
  wm.allocated = wm.aligned = chunk;
  wm.offset = 0;
  wm.sizes[0] = N;
  wm.sizes[1] = size;
  wm.strides[0] = size;
  wm.strides[1] = 1;
  bm.allocated = bm.aligned = bias;
  bm.offset = 0;
  bm.sizes[0] = N;
  bm.strides[0] = 1;
  memset(&result, 0, sizeof result);
  shardlin_set_thread_context(ctx);
  _mlir_ciface_two(&result, &xm, &wm, &bm);
  shardlin_set_thread_context(NULL);
  free(chunk);
  if (shardlin_context_status(ctx) != SHARDLIN_OK) {
    free(x);
    free(result.allocated);
    return fail_rank(rank, "two", ctx);
  }
  if (result.sizes[0] != batch[0] || result.sizes[1] != batch[1] ||
      result.sizes[2] != N || result.strides[0] != result.strides[1] * batch[1]) {
    fprintf(stderr, "two rank %d: the result is %lldx%lldx%lld\n", rank,
            (long long)result.sizes[0], (long long)result.sizes[1],
            (long long)result.sizes[2]);
    free(x);
    free(result.allocated);
    return 1;
  }
  bad = check("two", rank, rows, x, result.aligned + result.offset,
              result.strides[1], result.strides[2], 1, &ratio);
  printf("two rank %d: %lldx%lld rows, max error / bound = %.3g\n", rank,
         (long long)batch[0], (long long)batch[1], ratio);
  free(x);
  free(result.allocated);
  return bad != 0;
}

/* @three: this rank's rows [offset, offset + size) of A (size x K). */
static int run_three(shardlin_context *ctx, int rank) {
  int64_t batch[3], offset = 0, size = 0, rows, i;
  float *x, *chunk;
  memref4 xm, result;
  memref2 wm;
  int j, p;
  long bad;
  double ratio = 0;
  three_batch(rank, batch);
  rows = batch[0] * batch[1] * batch[2];
  if (shardlin_chunk_range(N, W, kThreePlacements, rank, &offset, &size) !=
      SHARDLIN_OK)
    return fail_rank(rank, "three", NULL);
  x = malloc(sizeof(float) * (size_t)(rows * K + 1));
  chunk = malloc(sizeof(float) * (size_t)(size * K + 1));
  if (!x || !chunk)
    return 1;
  for (i = 0; i < rows; ++i)
    for (p = 0; p < K; ++p)
      x[i * K + p] = value(0, rank, (int)i, p);
  for (j = 0; j < size; ++j)
    for (p = 0; p < K; ++p)
      chunk[j * K + p] = value(1, 0, (int)offset + j, p);
  xm.allocated = xm.aligned = x;
  xm.offset = 0;
  xm.sizes[0] = batch[0];
  xm.sizes[1] = batch[1];
  xm.sizes[2] = batch[2];
  xm.sizes[3] = K;
  xm.strides[3] = 1;
  xm.strides[2] = K;
  xm.strides[1] = batch[2] * K;
  xm.strides[0] = batch[1] * batch[2] * K;
  wm.allocated = wm.aligned = chunk;
  wm.offset = 0;
  wm.sizes[0] = size;
  wm.sizes[1] = K;
  wm.strides[0] = K;
  wm.strides[1] = 1;
  memset(&result, 0, sizeof result);
  shardlin_set_thread_context(ctx);
  _mlir_ciface_three(&result, &xm, &wm);
  shardlin_set_thread_context(NULL);
  free(chunk);
  if (shardlin_context_status(ctx) != SHARDLIN_OK) {
    free(x);
    free(result.allocated);
    return fail_rank(rank, "three", ctx);
  }
  for (j = 0; j < 3; ++j)
    if (result.sizes[j] != batch[j]) {
      fprintf(stderr, "three rank %d: result dim %d is %lld, not %lld\n", rank,
              j, (long long)result.sizes[j], (long long)batch[j]);
      free(x);
      free(result.allocated);
      return 1;
    }
  if (result.sizes[3] != N ||
      result.strides[1] != result.strides[2] * batch[2] ||
      result.strides[0] != result.strides[1] * batch[1]) {
    fprintf(stderr, "three rank %d: unexpected result layout\n", rank);
    free(x);
    free(result.allocated);
    return 1;
  }
  bad = check("three", rank, rows, x, result.aligned + result.offset,
              result.strides[2], result.strides[3], 0, &ratio);
  printf("three rank %d: %lldx%lldx%lld rows, max error / bound = %.3g\n",
         rank, (long long)batch[0], (long long)batch[1], (long long)batch[2],
         ratio);
  free(x);
  free(result.allocated);
  return bad != 0;
}

/* Compares rows x rows of y (strided as in check) with relu(x W1^T + b1)
 * W2^T; returns the number of elements outside the bound. */
static long check_mlp(int rank, int64_t rows, const float *x, const float *y,
                      int64_t ys, int64_t yc, double *max_ratio) {
  long bad = 0;
  int64_t i;
  int j, f, p;
  for (i = 0; i < rows; ++i) {
    double a[F], mag_h[F];
    for (f = 0; f < F; ++f) {
      double h = value(5, 0, f, 0);
      mag_h[f] = fabs(h);
      for (p = 0; p < K; ++p) {
        const double t = (double)x[i * K + p] * value(4, 0, f, p);
        h += t;
        mag_h[f] += fabs(t);
      }
      a[f] = h > 0 ? h : 0;
    }
    for (j = 0; j < K; ++j) {
      double ref = 0, mag = 0;
      for (f = 0; f < F; ++f) {
        const double w2 = value(6, 0, j, f);
        ref += a[f] * w2;
        mag += fabs(w2) * (fabs(a[f]) + mag_h[f]);
      }
      const double bound = (K + F + 4) * ldexp(1.0, -24) * mag;
      const double err = fabs((double)y[i * ys + j * yc] - ref);
      if (!(err <= bound)) {
        if (bad < 5)
          fprintf(stderr, "mlp rank %d: y[%lld][%d] = %.9g, reference %.9g\n",
                  rank, (long long)i, j, y[i * ys + j * yc], ref);
        ++bad;
      }
      if (bound > 0 && err / bound > *max_ratio)
        *max_ratio = err / bound;
    }
  }
  return bad;
}

/* @mlp: this rank's rows [offset, offset + size) of W1 (size x K) and the
 * same columns of W2 (K x size). */
static int run_mlp(shardlin_context *ctx, int rank) {
  int64_t batch[2], offset = 0, size = 0, rows, i;
  float *x, *w1, *w2, b1[F];
  memref3 xm, result;
  memref2 w1m, w2m;
  memref1 bm;
  int j, f, p;
  long bad;
  double ratio = 0;
  mlp_batch(rank, batch);
  rows = batch[0] * batch[1];
  if (shardlin_chunk_range(F, W, kMlpPlacements, rank, &offset, &size) !=
      SHARDLIN_OK)
    return fail_rank(rank, "mlp", NULL);
  x = malloc(sizeof(float) * (size_t)(rows * K + 1));
  w1 = malloc(sizeof(float) * (size_t)(size * K + 1));
  w2 = malloc(sizeof(float) * (size_t)(K * size + 1));
  if (!x || !w1 || !w2)
    return 1;
  for (i = 0; i < rows; ++i)
    for (p = 0; p < K; ++p)
      x[i * K + p] = value(3, rank, (int)i, p);
  for (f = 0; f < F; ++f)
    b1[f] = value(5, 0, f, 0);
  for (f = 0; f < size; ++f)
    for (p = 0; p < K; ++p)
      w1[f * K + p] = value(4, 0, (int)offset + f, p);
  for (j = 0; j < K; ++j)
    for (f = 0; f < size; ++f)
      w2[j * size + f] = value(6, 0, j, (int)offset + f);
  view3(&xm, x, batch[0], batch[1], K);
  view2(&w1m, w1, size, K);
  view2(&w2m, w2, K, size);
  bm.allocated = bm.aligned = b1;
  bm.offset = 0;
  bm.sizes[0] = F;
  bm.strides[0] = 1;
  memset(&result, 0, sizeof result);
  shardlin_set_thread_context(ctx);
  _mlir_ciface_mlp(&result, &xm, &w1m, &bm, &w2m);
  shardlin_set_thread_context(NULL);
  free(w1);
  free(w2);
  if (shardlin_context_status(ctx) != SHARDLIN_OK) {
    free(x);
    free(result.allocated);
    return fail_rank(rank, "mlp", ctx);
  }
  if (result.sizes[0] != batch[0] || result.sizes[1] != batch[1] ||
      result.sizes[2] != K || result.strides[0] != result.strides[1] * batch[1]) {
    fprintf(stderr, "mlp rank %d: the result is %lldx%lldx%lld\n", rank,
            (long long)result.sizes[0], (long long)result.sizes[1],
            (long long)result.sizes[2]);
    free(x);
    free(result.allocated);
    return 1;
  }
  bad = check_mlp(rank, rows, x, result.aligned + result.offset,
                  result.strides[1], result.strides[2], &ratio);
  printf("mlp rank %d: %lldx%lld rows, max error / bound = %.3g\n", rank,
         (long long)batch[0], (long long)batch[1], ratio);
  free(x);
  free(result.allocated);
  return bad != 0;
}

static void *run_rank(void *arg) {
  rank_job *job = (rank_job *)arg;
  const int rank = shardlin_context_rank(job->ctx);
  job->failed = run_two(job->ctx, rank);
  job->failed |= run_three(job->ctx, rank);
  job->failed |= run_mlp(job->ctx, rank);
  return NULL;
}

int main(int argc, char **argv) {
  const char *backend = argc > 1 ? argv[1] : "mpi";
  shardlin_context *contexts[W] = {NULL};
  rank_job jobs[W];
  pthread_t threads[W];
  int ranks = 1, r, failed = 0;
  if (strcmp(backend, "threads") == 0)
    ranks = W;
  else if (strcmp(backend, "mpi") != 0) {
    fprintf(stderr, "usage: %s [mpi|threads]\n", argv[0]);
    return 2;
  }
  if (shardlin_context_create(backend, ranks == W ? W : 0, NULL, contexts) !=
      SHARDLIN_OK) {
    fprintf(stderr, "%s\n", shardlin_last_error_message());
    return 1;
  }
  if (shardlin_context_world_size(contexts[0]) != W) {
    fprintf(stderr, "the module runs on %d ranks (mpirun -np %d)\n", W, W);
    shardlin_context_destroy(contexts[0]);
    return 1;
  }
  memset(jobs, 0, sizeof jobs);
  for (r = 0; r < ranks; ++r)
    jobs[r].ctx = contexts[r];
  if (ranks == 1) {
    run_rank(&jobs[0]);
  } else {
    for (r = 0; r < ranks; ++r)
      if (pthread_create(&threads[r], NULL, run_rank, &jobs[r]) != 0) {
        fprintf(stderr, "pthread_create failed\n");
        return 1;
      }
    for (r = 0; r < ranks; ++r)
      pthread_join(threads[r], NULL);
  }
  for (r = 0; r < ranks; ++r) {
    failed |= jobs[r].failed;
    shardlin_context_destroy(contexts[r]);
  }
  if (!failed)
    printf("ok: %d rank(s)\n", ranks);
  return failed ? 1 : 0;
}
