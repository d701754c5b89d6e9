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

#include "aot/memref.h"     /* examples/aot's memref descriptors */
#include "common/ranks.h"   /* the C examples' inputs and ranks */
#include "shardlin-c/Runtime.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { K = 19, N = 11, F = 18, W = 4 };
static const int64_t kTwoPlacements[W] = {2, 3, 0, 1};   /* along K */
static const int64_t kThreePlacements[W] = {1, 3, 0, 2}; /* along N */
static const int64_t kMlpPlacements[W] = {1, 3, 0, 2};   /* along F */

void _mlir_ciface_two(memref3 *result, memref3 *x, memref2 *w, memref1 *b);
void _mlir_ciface_three(memref4 *result, memref4 *x, memref2 *w);
void _mlir_ciface_mlp(memref3 *result, memref3 *x, memref2 *w1, memref1 *b1,
                      memref2 *w2);

/* Deterministic values in [-1, 1]: example_input (ranks.h). */
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

/* One element y[i][j] = got of `what` on rank `rank` against its
 * reference: counted in *bad (the first 5 printed) if outside the bound,
 * the largest error / bound kept in *max_ratio. */
static void tally(const char *what, int rank, int64_t i, int j, float got,
                  double ref, double bound, long *bad, double *max_ratio) {
  const double err = fabs((double)got - ref);
  if (!(err <= bound)) {
    if (*bad < 5)
      fprintf(stderr, "%s rank %d: y[%lld][%d] = %.9g, reference %.9g\n",
              what, rank, (long long)i, j, got, ref);
    ++*bad;
  }
  if (bound > 0 && err / bound > *max_ratio)
    *max_ratio = err / bound;
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
      double ref = bias ? example_input(2, 0, j, 0) : 0;
      double mag = fabs(ref);
      for (p = 0; p < K; ++p) {
        const double t = (double)x[i * K + p] * example_input(1, 0, j, p);
        ref += t;
        mag += fabs(t);
      }
      tally(what, rank, i, j, y[i * ys + j * yc], ref,
            (K + 2) * ldexp(1.0, -24) * mag, &bad, max_ratio);
    }
  return bad;
}

/* Rank `rank`'s x of `rows` rows of K: tensor `tensor`, malloc'ed (NULL if
 * that failed). */
static float *make_x(int tensor, int rank, int64_t rows) {
  float *x = malloc(sizeof(float) * (size_t)(rows * K + 1));
  int64_t i;
  int p;
  if (x)
    for (i = 0; i < rows; ++i)
      for (p = 0; p < K; ++p)
        x[i * K + p] = example_input(tensor, rank, (int)i, p);
  return x;
}

/* After a compiled entry's call on rank `rank`: 1 if it failed (says so),
 * 0 if its result can be read. */
static int call_failed(const char *what, int rank, shardlin_context *ctx) {
  if (shardlin_context_status(ctx) == SHARDLIN_OK)
    return 0;
  fprintf(stderr, "%s rank %d: %s\n", what, rank,
          shardlin_context_message(ctx));
  return 1;
}

/* This rank's chunk [offset, offset + size) of a dim of `dim` elements
 * split by `placements`; 1 if that failed (says so). */
static int chunk_failed(const char *what, int rank, int64_t dim,
                        const int64_t *placements, int64_t *offset,
                        int64_t *size) {
  if (shardlin_chunk_range(dim, W, placements, rank, offset, size) ==
      SHARDLIN_OK)
    return 0;
  fprintf(stderr, "%s rank %d: %s\n", what, rank,
          shardlin_last_error_message());
  return 1;
}

/* @two: this rank's columns [offset, offset + size) of A (N x size). */
static int run_two(shardlin_context *ctx, int rank) {
  int64_t batch[2], offset = 0, size = 0, rows;
  float *x, *chunk, bias[N];
  memref3 xm, result;
  memref2 wm;
  memref1 bm;
  int j, p, failed;
  double ratio = 0;
  two_batch(rank, batch);
  rows = batch[0] * batch[1];
  if (chunk_failed("two", rank, K, kTwoPlacements, &offset, &size))
    return 1;
  x = make_x(0, rank, rows);
  chunk = malloc(sizeof(float) * (size_t)(N * size + 1));
  if (!x || !chunk)
    return 1;
  for (j = 0; j < N; ++j) {
    bias[j] = example_input(2, 0, j, 0);
    for (p = 0; p < size; ++p)
      chunk[j * size + p] = example_input(1, 0, j, (int)offset + p);
  }
  MEMREF_DENSE(&xm, x, batch[0], batch[1], K);
  MEMREF_DENSE(&wm, chunk, N, size);
  MEMREF_DENSE(&bm, bias, N);
  memset(&result, 0, sizeof result);
  shardlin_set_thread_context(ctx);
  _mlir_ciface_two(&result, &xm, &wm, &bm);
  shardlin_set_thread_context(NULL);
  free(chunk);
  failed = call_failed("two", rank, ctx) ||
           !MEMREF_HAS_SIZES("two", rank, &result, batch[0], batch[1], N);
  if (!failed) {
    failed = check("two", rank, rows, x, result.aligned + result.offset,
                   result.strides[1], result.strides[2], 1, &ratio) != 0;
    printf("two rank %d: %lldx%lld rows, max error / bound = %.3g\n", rank,
           (long long)batch[0], (long long)batch[1], ratio);
  }
  free(x);
  free(result.allocated);
  return failed;
}

/* @three: this rank's rows [offset, offset + size) of A (size x K). */
static int run_three(shardlin_context *ctx, int rank) {
  int64_t batch[3], offset = 0, size = 0, rows;
  float *x, *chunk;
  memref4 xm, result;
  memref2 wm;
  int j, p, failed;
  double ratio = 0;
  three_batch(rank, batch);
  rows = batch[0] * batch[1] * batch[2];
  if (chunk_failed("three", rank, N, kThreePlacements, &offset, &size))
    return 1;
  x = make_x(0, rank, rows);
  chunk = malloc(sizeof(float) * (size_t)(size * K + 1));
  if (!x || !chunk)
    return 1;
  for (j = 0; j < size; ++j)
    for (p = 0; p < K; ++p)
      chunk[j * K + p] = example_input(1, 0, (int)offset + j, p);
  MEMREF_DENSE(&xm, x, batch[0], batch[1], batch[2], K);
  MEMREF_DENSE(&wm, chunk, size, K);
  memset(&result, 0, sizeof result);
  shardlin_set_thread_context(ctx);
  _mlir_ciface_three(&result, &xm, &wm);
  shardlin_set_thread_context(NULL);
  free(chunk);
  failed = call_failed("three", rank, ctx) ||
           !MEMREF_HAS_SIZES("three", rank, &result, batch[0], batch[1],
                             batch[2], N);
  if (!failed) {
    failed = check("three", rank, rows, x, result.aligned + result.offset,
                   result.strides[2], result.strides[3], 0, &ratio) != 0;
    printf("three rank %d: %lldx%lldx%lld rows, max error / bound = %.3g\n",
           rank, (long long)batch[0], (long long)batch[1],
           (long long)batch[2], ratio);
  }
  free(x);
  free(result.allocated);
  return failed;
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
      double h = example_input(5, 0, f, 0);
      mag_h[f] = fabs(h);
      for (p = 0; p < K; ++p) {
        const double t = (double)x[i * K + p] * example_input(4, 0, f, p);
        h += t;
        mag_h[f] += fabs(t);
      }
      a[f] = h > 0 ? h : 0;
    }
    for (j = 0; j < K; ++j) {
      double ref = 0, mag = 0;
      for (f = 0; f < F; ++f) {
        const double w2 = example_input(6, 0, j, f);
        ref += a[f] * w2;
        mag += fabs(w2) * (fabs(a[f]) + mag_h[f]);
      }
      tally("mlp", rank, i, j, y[i * ys + j * yc], ref,
            (K + F + 4) * ldexp(1.0, -24) * mag, &bad, max_ratio);
    }
  }
  return bad;
}

/* @mlp: this rank's rows [offset, offset + size) of W1 (size x K) and the
 * same columns of W2 (K x size). */
static int run_mlp(shardlin_context *ctx, int rank) {
  int64_t batch[2], offset = 0, size = 0, rows;
  float *x, *w1, *w2, b1[F];
  memref3 xm, result;
  memref2 w1m, w2m;
  memref1 bm;
  int j, f, p, failed;
  double ratio = 0;
  mlp_batch(rank, batch);
  rows = batch[0] * batch[1];
  if (chunk_failed("mlp", rank, F, kMlpPlacements, &offset, &size))
    return 1;
  x = make_x(3, rank, rows);
  w1 = malloc(sizeof(float) * (size_t)(size * K + 1));
  w2 = malloc(sizeof(float) * (size_t)(K * size + 1));
  if (!x || !w1 || !w2)
    return 1;
  for (f = 0; f < F; ++f)
    b1[f] = example_input(5, 0, f, 0);
  for (f = 0; f < size; ++f)
    for (p = 0; p < K; ++p)
      w1[f * K + p] = example_input(4, 0, (int)offset + f, p);
  for (j = 0; j < K; ++j)
    for (f = 0; f < size; ++f)
      w2[j * size + f] = example_input(6, 0, j, (int)offset + f);
  MEMREF_DENSE(&xm, x, batch[0], batch[1], K);
  MEMREF_DENSE(&w1m, w1, size, K);
  MEMREF_DENSE(&w2m, w2, K, size);
  MEMREF_DENSE(&bm, b1, F);
  memset(&result, 0, sizeof result);
  shardlin_set_thread_context(ctx);
  _mlir_ciface_mlp(&result, &xm, &w1m, &bm, &w2m);
  shardlin_set_thread_context(NULL);
  free(w1);
  free(w2);
  failed = call_failed("mlp", rank, ctx) ||
           !MEMREF_HAS_SIZES("mlp", rank, &result, batch[0], batch[1], K);
  if (!failed) {
    failed = check_mlp(rank, rows, x, result.aligned + result.offset,
                       result.strides[1], result.strides[2], &ratio) != 0;
    printf("mlp rank %d: %lldx%lld rows, max error / bound = %.3g\n", rank,
           (long long)batch[0], (long long)batch[1], ratio);
  }
  free(x);
  free(result.allocated);
  return failed;
}

/* Every entry on this rank (ranks.h's example_run_ranks runs it on each):
 * 0 if all passed. */
static int run_rank(shardlin_context *ctx) {
  const int rank = shardlin_context_rank(ctx);
  int failed = run_two(ctx, rank);
  failed |= run_three(ctx, rank);
  failed |= run_mlp(ctx, rank);
  return failed;
}

int main(int argc, char **argv) {
  const char *backend = argc > 1 ? argv[1] : "mpi";
  int status;
  if (strcmp(backend, "threads") != 0 && strcmp(backend, "mpi") != 0) {
    fprintf(stderr, "usage: %s [mpi|threads]\n", argv[0]);
    return 2;
  }
  /* The module was compiled for W ranks: the job must have that many. */
  status = example_run_ranks(backend, W, W, NULL, run_rank);
  if (status == 0)
    printf("ok: %s\n", backend);
  return status;
}
