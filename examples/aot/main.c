/*===- main.c - Calling a module compiled ahead of time ------------------===*/
/*
 * layer.mlir compiled to an object file before this program was built
 * (CMakeLists.txt):
 *
 *   shardlin-opt layer.mlir --shardlin-lower-to-llvm -o layer.llvm.mlir
 *   mlir-translate-22 --mlir-to-llvmir layer.llvm.mlir -o layer.ll
 *   llc-22 -filetype=obj -relocation-model=pic layer.ll -o layer.o
 *
 * and linked with this file and the runtime (which provides the shardlin_*
 * functions the object calls). No MLIR or LLVM at run time. Each rank:
 *
 *   1. gets its context: `mpi` (one rank per process under mpirun) or
 *      `threads` (W = 4 ranks as threads of this process);
 *   2. sets it as its thread's context (the compiled code reads it);
 *   3. builds memref descriptors for its x (5 x 19), its chunk of the
 *      weight (the columns shardlin_chunk_range gives it) and the bias;
 *   4. calls _mlir_ciface_layer, checks the context's status;
 *   5. compares the result with softmax(x A^T + b) computed in float64 from
 *      the whole weight, prints its max error, and frees the result.
 *
 *   mpirun -np 4 shardlin-aot-layer mpi
 *   shardlin-aot-layer threads
 *
 * Exit status 0 if every rank's max |y - ref| <= 1e-5: the linear's f32
 * error is below K * 2^-24 * sum |x a| < 2e-5 before the softmax, whose
 * derivative is at most 1/4 per input, and its results are below 1.
 */
#define _POSIX_C_SOURCE 200809L

#include "shardlin-c/Runtime.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 5, K = 19, N = 11, W = 4 };
static const int64_t kPlacements[W] = {2, 3, 0, 1};

/* MLIR's memref descriptors (mlir/ExecutionEngine/CRunnerUtils.h's
 * StridedMemRefType<float, R>), as llvm.emit_c_interface passes them. */
typedef struct memref2 {
  float *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
} memref2;
typedef struct memref1 {
  float *allocated, *aligned;
  int64_t offset, sizes[1], strides[1];
} memref1;

/* The compiled entry (layer.o): the result's descriptor first. */
void _mlir_ciface_layer(memref2 *result, memref2 *x, memref2 *w, memref1 *b);

static memref2 dense2(float *data, int64_t rows, int64_t cols) {
  memref2 m = {data, data, 0, {rows, cols}, {cols, 1}};
  return m;
}

/* Deterministic inputs in [-1, 1]: tensor 0 is x (per rank), 1 A, 2 b. */
static float input(int tensor, int r, int i, int j) {
  unsigned h = (unsigned)(tensor * 7919 + r * 104729 + i * 131 + j * 17);
  h ^= h >> 13;
  h *= 0x5bd1e995u;
  h ^= h >> 15;
  return (float)((double)(h % 2001u) / 1000.0 - 1.0);
}

typedef struct rank_job {
  shardlin_context *ctx;
  double max_error;
  int failed;
} rank_job;

static void *run_rank(void *arg) {
  rank_job *job = (rank_job *)arg;
  const int rank = shardlin_context_rank(job->ctx);
  float x[B * K], bias[N], *chunk;
  int64_t offset = 0, size = 0;
  int i, j, p;
  memref2 xm, wm, result;
  memref1 bm;
  job->failed = 1;
  if (shardlin_chunk_range(K, W, kPlacements, rank, &offset, &size) !=
      SHARDLIN_OK) {
    fprintf(stderr, "rank %d: %s\n", rank, shardlin_last_error_message());
    return NULL;
  }
  for (i = 0; i < B; ++i)
    for (p = 0; p < K; ++p)
      x[i * K + p] = input(0, rank, i, p);
  for (j = 0; j < N; ++j)
    bias[j] = input(2, 0, j, 0);
  /* This rank's columns [offset, offset + size) of A, contiguous. */
  chunk = malloc(sizeof(float) * (size_t)(N * (size > 0 ? size : 1)));
  if (!chunk)
    return NULL;
  for (j = 0; j < N; ++j)
    for (p = 0; p < size; ++p)
      chunk[j * size + p] = input(1, 0, j, (int)offset + p);

  xm = dense2(x, B, K);
  wm = dense2(chunk, N, size);
  bm.allocated = bm.aligned = bias;
  bm.offset = 0;
  bm.sizes[0] = N;
  bm.strides[0] = 1;
  memset(&result, 0, sizeof result);
  shardlin_set_thread_context(job->ctx);
  _mlir_ciface_layer(&result, &xm, &wm, &bm);
  shardlin_set_thread_context(NULL);
  free(chunk);
  if (shardlin_context_status(job->ctx) != SHARDLIN_OK) {
    fprintf(stderr, "rank %d: %s\n", rank, shardlin_context_message(job->ctx));
    free(result.allocated);
    return NULL;
  }
  if (result.sizes[0] != B || result.sizes[1] != N) {
    fprintf(stderr, "rank %d: the result is %lld x %lld, not %d x %d\n", rank,
            (long long)result.sizes[0], (long long)result.sizes[1], B, N);
    free(result.allocated);
    return NULL;
  }
  /* softmax(x A^T + b) in float64 from the whole A. */
  job->max_error = 0;
  for (i = 0; i < B; ++i) {
    double y[N], top = -INFINITY, total = 0;
    for (j = 0; j < N; ++j) {
      y[j] = bias[j];
      for (p = 0; p < K; ++p)
        y[j] += (double)x[i * K + p] * input(1, 0, j, p);
      top = y[j] > top ? y[j] : top;
    }
    for (j = 0; j < N; ++j)
      total += exp(y[j] - top);
    for (j = 0; j < N; ++j) {
      const float got = result.aligned[result.offset +
                                       i * result.strides[0] +
                                       j * result.strides[1]];
      const double err = fabs((double)got - exp(y[j] - top) / total);
      if (!(err <= job->max_error))
        job->max_error = err; /* NaN stays: it fails the check below */
    }
  }
  free(result.allocated);
  printf("rank %d: max |y - ref| = %.3g\n", rank, job->max_error);
  job->failed = !(job->max_error <= 1e-5);
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
  /* The module was compiled for W ranks; under mpirun the job must have
   * that many (the compiled code also asserts it). */
  if (shardlin_context_create(backend, ranks == W ? W : 0, NULL, contexts) !=
      SHARDLIN_OK) {
    fprintf(stderr, "%s\n", shardlin_last_error_message());
    return 1;
  }
  if (shardlin_context_world_size(contexts[0]) != W) {
    fprintf(stderr, "layer.mlir runs on %d ranks, not %d (mpirun -np %d)\n", W,
            shardlin_context_world_size(contexts[0]), W);
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
        return 1; /* the threads started wait in a collective: exit */
      }
    for (r = 0; r < ranks; ++r)
      pthread_join(threads[r], NULL);
  }
  for (r = 0; r < ranks; ++r) {
    failed |= jobs[r].failed;
    shardlin_context_destroy(contexts[r]);
  }
  return failed ? 1 : 0;
}
